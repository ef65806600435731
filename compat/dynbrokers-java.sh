#!/usr/bin/env bash
# compat/dynbrokers-java.sh: brokers on a dynamic metadata quorum (KIP-853:
# controller.quorum.bootstrap.servers, no controller.quorum.voters), as
# Kafka 4.4's own tools and clients see it:
#   three controller-only nodes 1-3 formatted with --initial-controllers
#   (each voter's id, controller endpoint and directory id) and two
#   broker-only nodes 4 and 5, formatted with no quorum option; the
#   brokers find the leader through the bootstrap servers and the voter
#   set (there is no voter list in their config);
#   kafka-metadata-quorum --bootstrap-controller describe --status: three
#   voters with their directory ids and endpoints, the brokers 4 and 5
#   observers with theirs; describe --replication: a Leader, two
#   Followers and two Observer rows;
#   the controllers register (ControllerRegistration): Admin
#   describeCluster() through bootstrap.controllers lists controllers 1-3
#   at their controller endpoints and the leader as the active controller;
#   kafka-dump-log of the leader's metadata log shows the three
#   RegisterControllerRecords (id, incarnation, endpoint, features);
#   kafka-topics --create through broker 5 (forwarded to the active
#   controller) of a topic of 4 partitions, replication factor 1; its
#   --describe through both brokers the same, the leaders on both;
#   ConsoleProducer through broker 4: 40 keyed records; ConsoleConsumer
#   through broker 5, partition by partition from the earliest offset:
#   every record once, each partition's offsets 0, 1, 2, ... in the order
#   produced, keys and values as sent;
#   every node exits 0 on SIGTERM (brokers first; combined nodes all at
#   once, as the last one alone would have no quorum).
# COMBINED=1: three combined nodes (process.roles=broker,controller) of a
# dynamic quorum formatted with --initial-controllers instead: three
# voters, no observers; the same topic, produce and consume through nodes
# 1 and 2.
# MIXED=1: the controllers 1-3 are Apache Kafka 4.4 nodes, the brokers 4 and
# 5 strand: the same checks, Strand's brokers following a Kafka quorum.
# The nodes are strand (STRAND_BIN, default ./strand) or, with KAFKA_REF=1,
# Apache Kafka 4.4 nodes (scripts/kafka-ref.sh, given the same keys and
# format options). Exit 0 pass, 1 fail, 77 skip (no Java/Maven).
set -u
# java_run, expect, show; WORK (compat/lib/java-tool.sh).
# shellcheck source=lib/java-tool.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/java-tool.sh"
# at_exit, free_port, start_node, wait_started, stop_node, stop_together
# (compat/lib/nodes.sh).
# shellcheck source=lib/nodes.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/nodes.sh"
KAFKA_REF=${KAFKA_REF:-}
[ "$KAFKA_REF" = 0 ] && KAFKA_REF=
COMBINED=${COMBINED:-}
[ "$COMBINED" = 0 ] && COMBINED=
MIXED=${MIXED:-}
[ "$MIXED" = 0 ] && MIXED=
if [ -n "$MIXED" ]; then KAFKA_NODES="1 2 3" COMBINED=; fi
STRAND_BIN=${STRAND_BIN:-$PWD/strand}
REF=$ROOT/scripts/kafka-ref.sh
export KAFKA_HEAP_OPTS=${KAFKA_HEAP_OPTS:--Xmx256m -Xms256m}
if [ -n "$COMBINED" ]; then
    NODES="1 2 3" BROKERS="1 2 3" PRODUCE_AT=1 CONSUME_AT=2 CREATE_AT=2
else
    NODES="1 2 3 4 5" BROKERS="4 5" PRODUCE_AT=4 CONSUME_AT=5 CREATE_AT=5
fi
declare -a PORT CPORT PID DIRID

if [ -z "$KAFKA_REF" ]; then
    [ -x "$STRAND_BIN" ] || skip "no strand binary at $STRAND_BIN"
fi
java_tool_setup dynbrokers-java
trap 'exit 143' TERM INT
# Kafka formats at its own metadata.version, above Strand's levels, with
# group.version 1 and transaction.version 2, which its controllers refuse
# a broker without (Strand's are 0): a mixed cluster is formatted at
# 4.0-IV3 with those two at 0, as 0714-cluster-mixed formats one.
MIXED_FORMAT="--release-version=4.0-IV3 --feature=group.version=0 --feature=transaction.version=0"
node_format_args()
{
    [ "$1" -le 3 ] || return 0
    echo "--initial-controllers $INITIAL${MIXED:+ $MIXED_FORMAT}"
}

# node_props I: node I's keys, one a line. PORT[I] is its first listener
# (a broker's, or a controller-only node's controller listener), CPORT[I]
# its controller listener.
node_props()
{
    local i=$1 roles listeners adv=
    if [ -n "$COMBINED" ]; then
        roles=broker,controller
        listeners=PLAINTEXT://127.0.0.1:${PORT[$i]},CONTROLLER://127.0.0.1:${CPORT[$i]}
        adv=PLAINTEXT://127.0.0.1:${PORT[$i]}
    elif [ "$i" -le 3 ]; then
        roles=controller listeners=CONTROLLER://127.0.0.1:${CPORT[$i]}
    else
        roles=broker listeners=PLAINTEXT://127.0.0.1:${PORT[$i]} adv=PLAINTEXT://127.0.0.1:${PORT[$i]}
    fi
    cat <<PROPS
process.roles=$roles
node.id=$i
controller.quorum.voters=
controller.quorum.bootstrap.servers=$CTRL
listeners=$listeners
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$WORK/node-$i/data
PROPS
    [ -z "$adv" ] || echo "advertised.listeners=$adv"
    [ "$i" -le 3 ] && [ -z "$COMBINED" ] || echo "inter.broker.listener.name=PLAINTEXT"
}

quorum()
{
    local n=$1
    shift
    [ -f "$WORK/tool.properties" ] ||
        printf 'request.timeout.ms=3000\ndefault.api.timeout.ms=6000\n' > "$WORK/tool.properties"
    java_run "$n" org.apache.kafka.tools.MetadataQuorumCommand --bootstrap-controller "$CTRL" \
        --command-config "$WORK/tool.properties" "$@"
}
field() { awk -v k="$2:" '$1 == k { print $2; exit }' "$WORK/$1.out"; }
dir_id() { sed -n 's/^directory\.id=//p' "$WORK/node-$1/data/meta.properties"; }
# new_uuid: a directory id as Kafka's Uuid prints one (22 base64url chars)
new_uuid() { head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n'; }

# topics NAME NODE ARGS...: kafka-topics through the broker of node NODE.
topics()
{
    local n=$1 b=$2
    shift 2
    java_run "$n" org.apache.kafka.tools.TopicCommand --bootstrap-server "127.0.0.1:${PORT[$b]}" "$@"
}

# ---- the nodes, formatted with one cluster id and the initial voters ----
W='[[:space:]]+'
for i in $NODES; do PORT[$i]=$(free_port); done
for i in 1 2 3; do
    # a combined node's controller port kept in PORT past the node ids,
    # so that free_port does not hand it out again
    if [ -n "$COMBINED" ]; then CPORT[$i]=$(free_port); PORT[$((10 + i))]=${CPORT[$i]}; else CPORT[$i]=${PORT[$i]}; fi
done
CTRL= INITIAL=
for i in 1 2 3; do
    DIRID[$i]=$(new_uuid)
    CTRL+="${CTRL:+,}127.0.0.1:${CPORT[$i]}"
    INITIAL+="${INITIAL:+,}$i@127.0.0.1:${CPORT[$i]}:${DIRID[$i]}"
done
if [ -n "$KAFKA_REF" ]; then ID=$(new_uuid); else ID=$("$STRAND_BIN" random-uuid) || fail "strand random-uuid"; fi
for i in $NODES; do start_node "$i"; done
wait_started $NODES
if [ -n "$COMBINED" ]; then echo "three combined nodes of a dynamic quorum started"
else echo "three controllers (--initial-controllers) and brokers 4, 5 of a dynamic quorum started"; fi

# ---- describe --status: three voters, the brokers observers ----
if [ -n "$COMBINED" ]; then OBS='^CurrentObservers:[[:space:]]+\[\]$'
else OBS='^CurrentObservers:.*"id": 4, "directoryId".*|^CurrentObservers:.*"id": 5, "directoryId".*'; fi
# status_done: a leader, no lag, every observer expected listed
status_done()
{
    [ "$RC" = 0 ] && [ "${LEADER:--1}" -ge 1 ] && [ "$LAG" = 0 ] || return 1
    [ -n "$COMBINED" ] && { grep -Eq "$OBS" "$WORK/status.out"; return; }
    grep -q '^CurrentObservers:.*"id": 4, "directoryId"' "$WORK/status.out" &&
        grep -q '^CurrentObservers:.*"id": 5, "directoryId"' "$WORK/status.out"
}
END=$((SECONDS + 90))
while :; do
    quorum status describe --status
    LEADER=$(field status LeaderId) LAG=$(field status MaxFollowerLag)
    status_done && break
    [ $SECONDS -lt $END ] || { show status; fail "describe --status: no leader with every node caught up"; }
    sleep 0.5
done
VOTERS=
for i in 1 2 3; do
    [ "$(dir_id "$i")" = "${DIRID[$i]}" ] || fail "node $i's directory.id is not the one --initial-controllers gave"
    VOTERS+="${VOTERS:+, }\\{\"id\": $i, \"directoryId\": \"${DIRID[$i]}\", \"endpoints\": \\[\"CONTROLLER://127\\.0\\.0\\.1:${CPORT[$i]}\"\\]\\}"
done
expect status 0 "^ClusterId:${W}$ID$" "^LeaderId:${W}[1-3]$" "^CurrentVoters:${W}\[$VOTERS\]$" "$OBS"
if [ -z "$COMBINED" ]; then
    expect status 0 "^CurrentObservers:${W}\[.*\{\"id\": 4, \"directoryId\": \"$(dir_id 4)\"\}" \
        "^CurrentObservers:${W}\[.*\{\"id\": 5, \"directoryId\": \"$(dir_id 5)\"\}"
    [ "$(grep -o '"id": [0-9]*' <<< "$(grep '^CurrentObservers:' "$WORK/status.out")" | sort -u | tr '\n' ' ')" = '"id": 4 "id": 5 ' ] ||
        { show status; fail "the observers are not brokers 4 and 5 alone"; }
    echo "describe --status: voters 1-3 as formatted, brokers 4 and 5 observers with their directory ids: ok"
else
    echo "describe --status: voters 1-3 as formatted, no observers: ok"
fi

# ---- describe --replication: Leader, Followers, Observers ----
TAIL="${W}[0-9]+${W}[0-9]+${W}[0-9]{13}${W}[0-9]{13}${W}"
ROW="${W}[A-Za-z0-9_-]{22}$TAIL"
WANT=$([ -n "$COMBINED" ] && echo 3 || echo 5)
for try in $(seq 1 20); do
    quorum repl describe --replication
    [ "$RC" = 0 ] && [ "$(grep -Ec "^[1-5]${ROW}(Leader|Follower|Observer)${W}?$" "$WORK/repl.out")" = "$WANT" ] &&
        [ "$(grep -Ec "${W}Follower${W}?$" "$WORK/repl.out")" = 2 ] && break
    [ "$try" = 20 ] || sleep 0.5
done
expect repl 0 "^$LEADER${W}${DIRID[$LEADER]}${W}[0-9]+${W}0${W}.*Leader${W}?$"
for i in 1 2 3; do
    [ "$i" = "$LEADER" ] || expect repl 0 "^$i${W}${DIRID[$i]}${TAIL}Follower${W}?$"
done
if [ -z "$COMBINED" ]; then
    expect repl 0 "^4${W}$(dir_id 4)${TAIL}Observer${W}?$" "^5${W}$(dir_id 5)${TAIL}Observer${W}?$"
    echo "describe --replication: Leader $LEADER, two Followers, brokers 4 and 5 Observers: ok"
else
    absent repl "Observer"
    echo "describe --replication: Leader $LEADER, two Followers, no Observer: ok"
fi

# ---- the controllers' registrations: describeCluster() via bootstrap.controllers ----
# Each controller sends ControllerRegistration to the active controller,
# which writes its RegisterControllerRecord; a controller lists them.
END=$((SECONDS + 30))
WANT_NODES=
for i in 1 2 3; do WANT_NODES+="node $i 127.0.0.1 ${CPORT[$i]}"$'\n'; done
while :; do
    java_run dc strand.compat.Features cluster "$CTRL"
    [ "$RC" = 0 ] && [ "$(grep '^node ' "$WORK/dc.out")"$'\n' = "$WANT_NODES" ] &&
        grep -Eq '^controller [1-3]$' "$WORK/dc.out" && break
    [ $SECONDS -lt $END ] || { show dc; fail "describeCluster(): not the three controllers registered"; }
    sleep 0.5
done
expect dc 0 "^cluster $ID$"
ACTIVE=$(awk '$1 == "controller" { print $2 }' "$WORK/dc.out")
quorum status2 describe --status
[ "$(field status2 LeaderId)" = "$ACTIVE" ] || { show status2; fail "describeCluster()'s controller $ACTIVE is not the leader"; }
LOG=$(ls "$WORK/node-$ACTIVE/data/__cluster_metadata-0/"*.log | sort | head -n 1)
java_run dump org.apache.kafka.tools.DumpLogSegments --cluster-metadata-decoder --files "$LOG"
for i in 1 2 3; do
    expect dump 0 "\"type\":\"REGISTER_CONTROLLER_RECORD\",\"version\":0,\"data\":\{\"controllerId\":$i,\"incarnationId\":\"[A-Za-z0-9_-]{22}\",\"zkMigrationReady\":false,\"endPoints\":\[\{\"name\":\"CONTROLLER\",\"host\":\"127\.0\.0\.1\",\"port\":${CPORT[$i]},\"securityProtocol\":0\}\],\"features\":\[.*\{\"name\":\"metadata\.version\",\"minSupportedVersion\":[0-9]+,\"maxSupportedVersion\":[0-9]+\}"
done
echo "describeCluster() via bootstrap.controllers: controllers 1-3 registered, the leader $ACTIVE active; their RegisterControllerRecords in node $ACTIVE's log: ok"

# ---- kafka-topics --create through a broker (forwarded to the controller) ----
T=dyn-topic
# every broker unfenced first, else the partitions may all go to one
wait_unfenced unfenced "${PORT[$CREATE_AT]}" $BROKERS
END=$((SECONDS + 60))
while :; do
    # INVALID_REPLICATION_FACTOR until the brokers are registered and unfenced
    topics create "$CREATE_AT" --create --topic "$T" --partitions 4 --replication-factor 1
    [ "$RC" = 0 ] && break
    [ $SECONDS -lt $END ] || { show create; fail "--create of $T through node $CREATE_AT"; }
    sleep 1
done
expect create 0 "^Created topic $T\.$"
FIRST=
for b in $BROKERS; do
    for try in $(seq 1 20); do
        topics "desc-$b" "$b" --describe --topic "$T"
        [ "$RC" = 0 ] && [ "$(grep -c 'Partition: ' "$WORK/desc-$b.out")" = 4 ] && ! grep -q 'Leader: none\|Leader: -1' "$WORK/desc-$b.out" && break
        [ "$try" = 20 ] || sleep 0.5
    done
    expect "desc-$b" 0 "Topic: $T${W}TopicId: [A-Za-z0-9_-]{22}${W}PartitionCount: 4${W}ReplicationFactor: 1"
    GOT=$(awk '/Partition: / { for (i = 1; i <= NF; i++) { if ($i == "Partition:") p = $(i+1); if ($i == "Leader:") l = $(i+1) }; print p, l }' "$WORK/desc-$b.out" | sort -n)
    if [ -z "$FIRST" ]; then FIRST=$GOT; continue; fi
    [ "$GOT" = "$FIRST" ] || { printf '%s\n--\n%s\n' "$FIRST" "$GOT" >&2; fail "node $b describes $T otherwise"; }
done
LEADERS=$(awk '{ print $2 }' <<< "$FIRST" | sort -u | tr '\n' ' ')
for l in $LEADERS; do [[ " $BROKERS " == *" $l "* ]] || fail "$T: leader $l is not a broker"; done
[ "$(wc -w <<< "$LEADERS")" -ge 2 ] || fail "$T: every partition on one broker ($LEADERS)"
echo "kafka-topics --create through node $CREATE_AT, --describe through $BROKERS: the same 4 partitions, leaders $LEADERS: ok"

# ---- produce through one broker, consume through another ----
for i in $(seq 0 39); do printf 'k%d:value-%d-%s\n' "$i" "$i" "$(printf '%03d' $((i * 7 % 1000)))"; done > "$WORK/in"
STDIN=$WORK/in java_run produce org.apache.kafka.tools.ConsoleProducer \
    --bootstrap-server "127.0.0.1:${PORT[$PRODUCE_AT]}" --topic "$T" \
    --reader-property parse.key=true --reader-property key.separator=: \
    --producer-property acks=all
expect produce 0
: > "$WORK/got"
for p in 0 1 2 3; do
    java_run "cons-$p" org.apache.kafka.tools.consumer.ConsoleConsumer \
        --bootstrap-server "127.0.0.1:${PORT[$CONSUME_AT]}" --topic "$T" --partition "$p" \
        --offset earliest --timeout-ms 6000 \
        --formatter-property print.partition=true --formatter-property print.offset=true \
        --formatter-property print.key=true
    # Partition:P<TAB>Offset:O<TAB>KEY<TAB>VALUE
    grep -E '^Partition:' "$WORK/cons-$p.out" >> "$WORK/got"
done
awk -F'\t' -v f="$WORK/in" '
    BEGIN { while ((getline line < f) > 0) { split(line, kv, ":"); want[kv[1]] = kv[2]; order[kv[1]] = ++n } }
    { sub(/^Partition:/, "", $1); sub(/^Offset:/, "", $2)
      if ($2 != next_off[$1] + 0) { print "partition " $1 ": offset " $2 ", expected " next_off[$1] + 0; bad = 1 }
      next_off[$1] = $2 + 1
      if (!($3 in want) || want[$3] != $4) { print "unexpected record " $3 "=" $4; bad = 1 }
      if (seen[$3]++) { print "record " $3 " twice"; bad = 1 }
      if (order[$3] < last[$1]) { print "partition " $1 ": " $3 " out of order"; bad = 1 }
      last[$1] = order[$3]; total++ }
    END { if (total != n) { print total + 0 " records read of " n; bad = 1 }; exit bad }' "$WORK/got" > "$WORK/check.out" ||
    { cat "$WORK/got" "$WORK/check.out" >&2; fail "the records read back are not the records produced"; }
PARTS=$(cut -f1 "$WORK/got" | sort | uniq -c | awk '{ printf "%s%s=%d", sep, substr($2, 11), $1; sep = " " }')
echo "40 records produced through node $PRODUCE_AT, read back through node $CONSUME_AT: each once, offsets 0.. in order per partition ($PARTS): ok"

# ---- every node stops cleanly: the brokers first; combined nodes together ----
if [ -n "$COMBINED" ]; then
    stop_together $NODES
else
    for i in $(tr ' ' '\n' <<< "$NODES" | sort -rn); do stop_node "$i"; done
fi
echo "SIGTERM: every node exits 0: ok"

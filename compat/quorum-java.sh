#!/usr/bin/env bash
# compat/quorum-java.sh: a metadata quorum of three controller-only nodes
# (process.roles=controller, a static quorum in controller.quorum.voters:
# the sample configs etc/controller-1..3.properties, each formatted, with
# ports and a directory of its own under a scratch dir) as Kafka 4.4's own
# tools and Java Admin client see it:
#   kafka-metadata-quorum --bootstrap-controller describe --status
#   (MetadataQuorumCommand): the leader one of the voters, epoch >= 1, the
#   three voters with their endpoints, a high watermark > 0, no lag once
#   caught up, no observers; describe --replication: three rows, one
#   Leader and two Followers, lag 0;
#   describeMetadataQuorum() and describeCluster() through
#   bootstrap.controllers (compat/java/.../Features.java): the same leader
#   and epoch, three voters (a majority at the high watermark), the
#   leader the active controller;
#   kafka-features --bootstrap-controller describe (FeatureCommand):
#   metadata.version finalized;
#   kafka-dump-log --cluster-metadata-decoder (DumpLogSegments) of a
#   follower's __cluster_metadata-0: the leader's LeaderChange record and
#   the bootstrap records, one batch that is a metadata transaction
#   (BeginTransactionRecord "Bootstrap records", the FeatureLevelRecord of
#   metadata.version, EndTransactionRecord);
#   kill -9 of the leader: the two others elect a new leader at a higher
#   epoch within 60 s, as the tool shows (the time is printed); the two
#   exit 0 on SIGTERM.
# The nodes are strand (STRAND_BIN, default ./strand) or, with KAFKA_REF=1,
# Apache Kafka 4.4 controllers (scripts/kafka-ref.sh, given the same keys).
# It starts its own nodes: the shared broker of make check is not used.
# Exit 0 pass, 1 fail, 77 skip (no Java/Maven to be had).
set -u
# java_run, expect, show; WORK (compat/lib/java-tool.sh).
# shellcheck source=lib/java-tool.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/java-tool.sh"
# at_exit, free_port, start_node, wait_started, stop_node (compat/lib/nodes.sh).
# shellcheck source=lib/nodes.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/nodes.sh"
nodes_setup quorum-java
N=3
NODES="1 2 3"
declare -a PORT PID

node_kafka_props() { echo "listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT"; }

# node_props I: the keys of node I (Strand's server.properties, Kafka's
# overrides of kafka-ref.sh's own), one a line: the sample
# etc/controller-I.properties (README, "A cluster on one machine") with
# this run's ports for 9093-9095 and its data dir under WORK.
node_props()
{
    sed -e '/^#/d; /^$/d' -e "s/127\.0\.0\.1:9093\b/127.0.0.1:${PORT[1]}/g" \
        -e "s/127\.0\.0\.1:9094\b/127.0.0.1:${PORT[2]}/g" -e "s/127\.0\.0\.1:9095\b/127.0.0.1:${PORT[3]}/g" \
        -e "s#^log\.dirs=.*#log.dirs=$WORK/node-$1/data#" "$ROOT/etc/controller-$1.properties"
}

# quorum NAME CONTROLLERS ARGS...: kafka-metadata-quorum through them.
# Short client timeouts: a look that finds a dead controller (the one
# just killed, which the others name until they elect) gives up in
# seconds and the next look asks again.
quorum()
{
    local n=$1 c=$2
    shift 2
    [ -f "$WORK/tool.properties" ] ||
        printf 'request.timeout.ms=3000\ndefault.api.timeout.ms=6000\n' > "$WORK/tool.properties"
    java_run "$n" org.apache.kafka.tools.MetadataQuorumCommand --bootstrap-controller "$c" \
        --command-config "$WORK/tool.properties" "$@"
}
# field NAME KEY: the value of "KEY:" in NAME's output
field() { awk -v k="$2:" '$1 == k { print $2; exit }' "$WORK/$1.out"; }

# wait_status NAME CONTROLLERS SECS COND: describe --status until COND (a
# shell test of LEADER, EPOCH, LAG) holds, for at most SECS seconds.
wait_status()
{
    local n=$1 c=$2 end=$((SECONDS + $3)) cond=$4
    while :; do
        quorum "$n" "$c" describe --status
        if [ "$RC" = 0 ]; then
            LEADER=$(field "$n" LeaderId) EPOCH=$(field "$n" LeaderEpoch) LAG=$(field "$n" MaxFollowerLag)
            eval "$cond" && return 0
        fi
        [ $SECONDS -lt $end ] || { show "$n"; fail "$n: not '$cond' after $3 s"; }
        sleep 0.5
    done
}

# ---- three controllers, formatted with one cluster id ----
for i in $(seq 1 $N); do PORT[$i]=$(free_port); done
VOTERS= CTRL=
for i in $(seq 1 $N); do
    VOTERS+="${VOTERS:+,}$i@127.0.0.1:${PORT[$i]}"
    CTRL+="${CTRL:+,}127.0.0.1:${PORT[$i]}"
done
nodes_start_all
echo "three controllers started (voters $VOTERS)"

# ---- describe --status: a leader, caught up ----
W='[[:space:]]+'
wait_status status "$CTRL" 60 '[ "$LEADER" -ge 1 ] && [ "$LAG" = 0 ]'
expect status 0 "^ClusterId:${W}$ID$" "^LeaderId:${W}[1-3]$" "^LeaderEpoch:${W}[1-9][0-9]*$" \
    "^HighWatermark:${W}[1-9][0-9]*$" "^MaxFollowerLag:${W}0$" "^CurrentObservers:${W}\[\]$"
VOTERS_RE=
for i in $(seq 1 $N); do
    VOTERS_RE+="${VOTERS_RE:+, }\{\"id\": $i, \"endpoints\": \[\"CONTROLLER://127\.0\.0\.1:${PORT[$i]}\"\]\}"
done
expect status 0 "^CurrentVoters:${W}\[$VOTERS_RE\]$"
HW=$(field status HighWatermark)
echo "kafka-metadata-quorum describe --status: leader $LEADER, epoch $EPOCH, high watermark $HW: ok"

# ---- describe --replication: one Leader, two Followers, no lag ----
# Again when a follower is a record behind: a Kafka leader appends a
# NoOpRecord every metadata.max.idle.interval.ms (500 ms).
for try in 1 2 3 4 5 6; do
    quorum repl "$CTRL" describe --replication
    ROWS=$(grep -Ec "^[1-3]${W}[A-Za-z0-9_-]{22}${W}[0-9]+${W}0${W}[0-9]{13}${W}[0-9]{13}${W}(Leader|Follower)" "$WORK/repl.out")
    [ "$RC" = 0 ] && [ "$ROWS" = 3 ] && break
    [ "$try" = 6 ] || sleep 0.2
done
expect repl 0 "^NodeId${W}DirectoryId${W}LogEndOffset${W}Lag${W}LastFetchTimestamp${W}LastCaughtUpTimestamp${W}Status" \
    "^$LEADER${W}[A-Za-z0-9_-]{22}${W}[0-9]+${W}0${W}[0-9]{13}${W}[0-9]{13}${W}Leader${W}?$"
FOLLOWERS=$(grep -Ec "${W}Follower${W}?$" "$WORK/repl.out")
[ "$ROWS" = 3 ] && [ "$FOLLOWERS" = 2 ] || { show repl; fail "replication: $ROWS rows at lag 0, $FOLLOWERS followers"; }
echo "kafka-metadata-quorum describe --replication: ok"

# ---- describeMetadataQuorum() and describeCluster() through the controllers ----
java_run admin strand.compat.Features quorum "$CTRL"
expect admin 0 "^quorum $LEADER $EPOCH [1-9][0-9]*$" "^observers 0$" "^cluster $ID$" "^controller $LEADER$"
AHW=$(awk '$1 == "quorum" { print $4 }' "$WORK/admin.out")
# Three voters, a majority of them at the high watermark (a Kafka
# follower may be a NoOpRecord behind).
[ "$(grep -Ec '^voter [1-3] [0-9]+ [0-9]{13} [0-9]{13}$' "$WORK/admin.out")" = $N ] &&
    [ "$(awk -v hw="$AHW" '$1 == "voter" && $3 >= hw' "$WORK/admin.out" | wc -l)" -ge 2 ] ||
    { show admin; fail "describeMetadataQuorum(): not three voters, a majority at the high watermark"; }
echo "describeMetadataQuorum(), describeCluster() via bootstrap.controllers: ok"

# ---- kafka-features --bootstrap-controller describe ----
java_run features org.apache.kafka.tools.FeatureCommand --bootstrap-controller "$CTRL" describe
expect features 0 "^Feature: metadata\.version${W}SupportedMinVersion: [0-9.]+-IV[0-9]+${W}SupportedMaxVersion: [0-9.]+-IV[0-9]+${W}FinalizedVersionLevel: [0-9.]+-IV[0-9]+${W}Epoch: [0-9]+$"
echo "kafka-features describe: metadata.version $(grep '^Feature: metadata.version' "$WORK/features.out" | sed 's/.*FinalizedVersionLevel: \([^ ]*\).*/\1/'): ok"

# ---- kafka-dump-log of a follower's metadata log ----
F=$(( LEADER % N + 1 ))
java_run dump org.apache.kafka.tools.DumpLogSegments --cluster-metadata-decoder \
    --files "$WORK/node-$F/data/__cluster_metadata-0/00000000000000000000.log"
expect dump 0 "isControl: true" "LeaderChange: \{\"version\":0,\"leaderId\":$LEADER,\"voters\":\[\{\"voterId\":1\},\{\"voterId\":2\},\{\"voterId\":3\}\]" \
    "payload: \{\"type\":\"FEATURE_LEVEL_RECORD\",\"version\":0,\"data\":\{\"name\":\"metadata\.version\",\"featureLevel\":[0-9]+\}\}" \
    "payload: \{\"type\":\"BEGIN_TRANSACTION_RECORD\",\"version\":0,\"data\":\{\"name\":\"Bootstrap records\"\}\}" \
    "payload: \{\"type\":\"END_TRANSACTION_RECORD\",\"version\":0,\"data\":\{\}\}"
# the transaction is the bootstrap batch: it ends where that batch ends
awk '/^baseOffset:/ { last = $4 }
     /BEGIN_TRANSACTION_RECORD/ && /Bootstrap records/ { batch_last = last }
     /END_TRANSACTION_RECORD/ && end == "" { end = $3 }
     END { exit !(batch_last != "" && end == batch_last) }' "$WORK/dump.out" ||
    { show dump; fail "kafka-dump-log: the bootstrap transaction is not one batch"; }
echo "kafka-dump-log --cluster-metadata-decoder of node $F: LeaderChange, the bootstrap transaction: ok"

# ---- kill -9 of the leader: a new one at a higher epoch (within 60 s: each look is a JVM start) ----
OLD_LEADER=$LEADER OLD_EPOCH=$EPOCH REST=
for i in $(seq 1 $N); do
    [ "$i" = "$OLD_LEADER" ] || REST+="${REST:+,}127.0.0.1:${PORT[$i]}"
done
START=$(date +%s%N)
if [ -n "$KAFKA_REF" ]; then
    "$REF" kill "$WORK/node-$OLD_LEADER" || fail "kill of node $OLD_LEADER"
else
    kill -KILL "${PID[$OLD_LEADER]}" && wait "${PID[$OLD_LEADER]}" 2>/dev/null
    PID[$OLD_LEADER]=
fi
wait_status failover "$REST" 60 '[ "$LEADER" -ge 1 ] && [ "$LEADER" != "$OLD_LEADER" ] && [ "$EPOCH" -gt "$OLD_EPOCH" ]'
MS=$(( ($(date +%s%N) - START) / 1000000 ))
echo "kill -9 of leader $OLD_LEADER (epoch $OLD_EPOCH): leader $LEADER at epoch $EPOCH after ${MS} ms (seen by the tool): ok"

# ---- the two stop cleanly ----
for i in $(seq 1 $N); do
    [ "$i" = "$OLD_LEADER" ] || stop_node "$i"
done
echo "SIGTERM: both exit 0: ok"

#!/usr/bin/env bash
# compat/quorum-dynamic-java.sh: a dynamic metadata quorum (KIP-853) of
# three controller-only nodes with controller.quorum.bootstrap.servers
# naming all three and no controller.quorum.voters, as Kafka 4.4's own
# tools see it:
#   node 1 formatted --standalone (the one initial voter), nodes 2 and 3
#   --no-initial-controllers (observers);
#   kafka-metadata-quorum --bootstrap-controller describe --status: node
#   1 the leader and only voter, with its directory id (its
#   meta.properties') and endpoint; nodes 2 and 3 observers with theirs;
#   describe --replication: a Leader row and two Observer rows, lag 0;
#   kafka-features describe: kraft.version finalized at 1, supported 0-1;
#   kafka-dump-log --cluster-metadata-decoder of an observer's log (the
#   leader's when the observer began from its snapshot): the leader's
#   first batch holds LeaderChange, KRaftVersion (1) and KRaftVoters
#   (node 1, its directory id and endpoint) at offsets 0-2;
#   node 1 restarted: leader again at a higher epoch, its voter set now
#   read from the log, whose second epoch writes no KRaftVoters again;
#   kafka-metadata-quorum add-controller run with node 2's and then node
#   3's config (AddRaftVoter): both voters, with their directory ids and
#   endpoints, --replication a Leader and two Followers; adding node 2
#   again is DUPLICATE_VOTER with Kafka's words; a cluster-wide config
#   set through the controllers commits: its ConfigRecord is in node 3's
#   log; node 2 restarted on another port: it sends UpdateRaftVoter and
#   the voter set shows its new endpoint; remove-controller of node 3 (RemoveRaftVoter): voters 1 and 2,
#   node 3 an observer again; removing it again is VOTER_NOT_FOUND;
#   every node snapshots every 300 bytes of records and keeps only the
#   latest (metadata.max.retention.bytes=1), so restarts and new voters
#   take the voters from snapshots: node 1's latest snapshot holds
#   KRaftVersion and KRaftVoters after its header (kafka-dump-log);
#   every node exits 0 on SIGTERM.
# The nodes are strand (STRAND_BIN, default ./strand) or, with KAFKA_REF=1,
# Apache Kafka 4.4 controllers (scripts/kafka-ref.sh, given the same keys
# and format options). Exit 0 pass, 1 fail, 77 skip (no Java/Maven).
set -u
# java_run, expect, show; WORK (compat/lib/java-tool.sh).
# shellcheck source=lib/java-tool.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/java-tool.sh"
# at_exit, free_port, start_node, wait_started, stop_node (compat/lib/nodes.sh).
# shellcheck source=lib/nodes.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/nodes.sh"
nodes_setup quorum-dynamic-java
N=3
NODES="1 2 3"
declare -a PORT PID

node_format_args() { format_args "$1"; }

# node_props I: node I's keys, one a line.
node_props()
{
    cat <<PROPS
process.roles=controller
node.id=$1
controller.quorum.voters=
controller.quorum.bootstrap.servers=$CTRL
listeners=CONTROLLER://127.0.0.1:${PORT[$1]}
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$WORK/node-$1/data
PROPS
    # snapshots every 300 bytes of records, the log before the latest
    # deleted: restarts and new voters find the voters in snapshots
    printf '%s\n' metadata.log.max.record.bytes.between.snapshots=300 metadata.max.retention.bytes=1
}

# format_args I: node 1 is the initial voter, the others observe.
format_args() { [ "$1" = 1 ] && echo --standalone || echo --no-initial-controllers; }

quorum()
{
    local n=$1 c=$2
    shift 2
    [ -f "$WORK/tool.properties" ] ||
        printf 'request.timeout.ms=3000\ndefault.api.timeout.ms=6000\n' > "$WORK/tool.properties"
    java_run "$n" org.apache.kafka.tools.MetadataQuorumCommand --bootstrap-controller "$c" \
        --command-config "$WORK/tool.properties" "$@"
}
field() { awk -v k="$2:" '$1 == k { print $2; exit }' "$WORK/$1.out"; }
# first_log I: node I's metadata log segment of the lowest base offset.
first_log() { ls "$WORK/node-$1/data/__cluster_metadata-0/"*.log 2>/dev/null | sort | head -n 1; }
# dir_id I: node I's directory.id (meta.properties)
dir_id() { sed -n 's/^directory\.id=//p' "$WORK/node-$1/data/meta.properties"; }

# wait_status NAME SECS COND: describe --status until COND holds.
wait_status()
{
    local n=$1 end=$((SECONDS + $2)) cond=$3
    while :; do
        quorum "$n" "$CTRL" describe --status
        if [ "$RC" = 0 ]; then
            LEADER=$(field "$n" LeaderId) EPOCH=$(field "$n" LeaderEpoch) LAG=$(field "$n" MaxFollowerLag)
            eval "$cond" && return 0
        fi
        [ $SECONDS -lt $end ] || { show "$n"; fail "$n: not '$cond' after $2 s"; }
        sleep 0.5
    done
}

for i in $(seq 1 $N); do PORT[$i]=$(free_port); done
CTRL=
for i in $(seq 1 $N); do CTRL+="${CTRL:+,}127.0.0.1:${PORT[$i]}"; done
nodes_start_all
echo "node 1 --standalone, nodes 2 and 3 --no-initial-controllers: started"

# ---- describe --status: one voter, two observers, with directory ids ----
W='[[:space:]]+'
wait_status status 60 '[ "$LEADER" = 1 ] && [ "$LAG" = 0 ] && grep -q "\"id\": 3" "$WORK/status.out"'
D1=$(dir_id 1) D2=$(dir_id 2) D3=$(dir_id 3)
expect status 0 "^ClusterId:${W}$ID$" "^LeaderId:${W}1$" "^LeaderEpoch:${W}[1-9][0-9]*$" \
    "^CurrentVoters:${W}\[\{\"id\": 1, \"directoryId\": \"$D1\", \"endpoints\": \[\"CONTROLLER://127\.0\.0\.1:${PORT[1]}\"\]\}\]$" \
    "^CurrentObservers:${W}\[.*\{\"id\": 2, \"directoryId\": \"$D2\"\}" \
    "^CurrentObservers:${W}\[.*\{\"id\": 3, \"directoryId\": \"$D3\"\}"
OLD_EPOCH=$EPOCH
echo "describe --status: leader 1 the one voter, observers 2 and 3, directory ids as formatted: ok"

# ---- describe --replication: Leader and two Observers ----
for try in 1 2 3 4 5 6; do
    quorum repl "$CTRL" describe --replication
    ROWS=$(grep -Ec "^[1-3]${W}[A-Za-z0-9_-]{22}${W}[0-9]+${W}0${W}[0-9]{13}${W}[0-9]{13}${W}(Leader|Observer)" "$WORK/repl.out")
    [ "$RC" = 0 ] && [ "$ROWS" = 3 ] && break
    [ "$try" = 6 ] || sleep 0.3
done
expect repl 0 "^1${W}$D1${W}[0-9]+${W}0${W}[0-9]{13}${W}[0-9]{13}${W}Leader${W}?$" \
    "^2${W}$D2${W}[0-9]+${W}[0-9]+${W}[0-9]{13}${W}[0-9]{13}${W}Observer${W}?$" \
    "^3${W}$D3${W}[0-9]+${W}[0-9]+${W}[0-9]{13}${W}[0-9]{13}${W}Observer${W}?$"
echo "describe --replication: Leader, two Observers: ok"

# ---- kafka-features: kraft.version 1 ----
java_run features org.apache.kafka.tools.FeatureCommand --bootstrap-controller "$CTRL" describe
expect features 0 "^Feature: kraft\.version${W}SupportedMinVersion: 0${W}SupportedMaxVersion: 1${W}FinalizedVersionLevel: 1${W}Epoch: [0-9]+$"
echo "kafka-features describe: kraft.version finalized 1: ok"

# ---- kafka-dump-log of an observer's log: the voter set in the first batch ----
# An observer that fetched after the leader had cleaned its log (Kafka
# cleans on a timer, about a minute after start) began from the leader's
# snapshot, and its first segment starts there: the first batch is then
# read from the leader's own log, whose first segment, the active one,
# is never deleted.
LOG=$(first_log 2)
case $LOG in
*/00000000000000000000.log) ;;
*) echo "node 2 started from node 1's snapshot ($(basename "$LOG")): the first batch from node 1's log"
   LOG=$(first_log 1) ;;
esac
java_run dump org.apache.kafka.tools.DumpLogSegments --cluster-metadata-decoder --files "$LOG"
expect dump 0 "^baseOffset: 0 lastOffset: 2 count: 3 .*isControl: true" \
    "offset: 0 .*LeaderChange: \{\"version\":0,\"leaderId\":1,\"voters\":\[\{\"voterId\":1\}\],\"grantingVoters\":\[\{\"voterId\":1\}\]\}" \
    "offset: 1 .*KRaftVersion \{\"version\":0,\"kRaftVersion\":1\}" \
    "offset: 2 .*KRaftVoters \{\"version\":0,\"voters\":\[\{\"voterId\":1,\"voterDirectoryId\":\"$D1\",\"endpoints\":\[\{\"name\":\"CONTROLLER\",\"host\":\"127\.0\.0\.1\",\"port\":${PORT[1]}\}\],\"kRaftVersionFeature\":\{\"minSupportedVersion\":0,\"maxSupportedVersion\":1\}\}\]\}"
LOGNODE=${LOG#"$WORK"/}
echo "kafka-dump-log of ${LOGNODE%%/*}'s log: LeaderChange, KRaftVersion, KRaftVoters in the first batch: ok"

# ---- node 1 restarted: its voters from the log ----
stop_node 1
start_node 1
wait_started 1
wait_status restart 60 '[ "$LEADER" = 1 ] && [ "$EPOCH" -gt "$OLD_EPOCH" ]'
expect restart 0 "^CurrentVoters:${W}\[\{\"id\": 1, \"directoryId\": \"$D1\","
for try in 1 2 3 4 5 6 7 8 9 10; do
    java_run dump2 org.apache.kafka.tools.DumpLogSegments --cluster-metadata-decoder --files "$LOG"
    grep -q "LeaderChange: {\"version\":0,\"leaderId\":1.*" "$WORK/dump2.out" &&
        [ "$(grep -c 'LeaderChange:' "$WORK/dump2.out")" -ge 2 ] && break
    sleep 0.5
done
[ "$(grep -c 'LeaderChange:' "$WORK/dump2.out")" -ge 2 ] || { show dump2; fail "no second LeaderChange in $LOG"; }
[ "$(grep -c 'KRaftVoters' "$WORK/dump2.out")" = 1 ] || { show dump2; fail "the voter set written again"; }
echo "node 1 restarted: leader at epoch $EPOCH (was $OLD_EPOCH), one KRaftVoters record in the log: ok"

# ---- add-controller 2 and 3 (AddRaftVoter), as an operator runs it ----
# the node's own config: the tool takes its id, directory id and
# controller endpoint from there
for i in 2 3; do
    node_props "$i" > "$WORK/add-$i.properties"
    cat "$WORK/tool.properties" >> "$WORK/add-$i.properties"
done
add_controller()
{
    local i=$1 end=$((SECONDS + 30))
    while :; do
        java_run "add$i" org.apache.kafka.tools.MetadataQuorumCommand --bootstrap-controller "$CTRL" \
            --command-config "$WORK/add-$i.properties" add-controller
        [ "$RC" = 0 ] && break
        # a new leader's epoch, or the last change, not committed yet
        grep -q 'RequestTimedOut\|NotLeaderOrFollower\|TimeoutException' "$WORK/add$i.out" &&
            [ $SECONDS -lt $end ] || { show "add$i"; fail "add-controller of node $i"; }
        sleep 0.5
    done
    expect "add$i" 0 "^Added controller $i with directory id $(dir_id "$i") and endpoints: CONTROLLER://127\.0\.0\.1:${PORT[$i]}$"
}
add_controller 2
add_controller 3
wait_status voters3 60 '[ "$LEADER" = 1 ] && grep -q "\"id\": 3, \"directoryId\": \"$D3\", \"endpoints\"" "$WORK/voters3.out"'
expect voters3 0 "^CurrentVoters:${W}\[.*\{\"id\": 2, \"directoryId\": \"$D2\", \"endpoints\": \[\"CONTROLLER://127\.0\.0\.1:${PORT[2]}\"\]\}" \
    "^CurrentVoters:${W}\[.*\{\"id\": 3, \"directoryId\": \"$D3\", \"endpoints\": \[\"CONTROLLER://127\.0\.0\.1:${PORT[3]}\"\]\}" \
    "^CurrentObservers:${W}\[\]$"
for try in 1 2 3 4 5 6; do
    quorum repl3 "$CTRL" describe --replication
    [ "$RC" = 0 ] && [ "$(grep -Ec "${W}Follower${W}?$" "$WORK/repl3.out")" = 2 ] && break
    [ "$try" = 6 ] || sleep 0.3
done
expect repl3 0 "^1${W}$D1${W}[0-9]+${W}0${W}.*Leader${W}?$" "^2${W}$D2${W}.*Follower${W}?$" "^3${W}$D3${W}.*Follower${W}?$"
java_run dup org.apache.kafka.tools.MetadataQuorumCommand --bootstrap-controller "$CTRL" \
    --command-config "$WORK/add-2.properties" add-controller
expect dup 1 "DuplicateVoterException: The voter id for ReplicaKey\(id=2, directoryId=$D2\) is already part of the set of voters \[.*\]\.$"
echo "add-controller 2 and 3: three voters, two Followers; node 2 again: DUPLICATE_VOTER: ok"

# ---- a change commits on the three voters ----
java_run cfg org.apache.kafka.tools.ConfigCommand --bootstrap-controller "$CTRL" \
    --command-config "$WORK/tool.properties" --alter --entity-type brokers --entity-default \
    --add-config log.retention.ms=4242
expect cfg 0
for try in 1 2 3 4 5 6 7 8 9 10; do
    # node 3 too may have begun from a snapshot: its segments from the first
    LOG3=$(first_log 3)
    java_run dump3 org.apache.kafka.tools.DumpLogSegments --cluster-metadata-decoder --files "$LOG3"
    grep -q '"name":"log.retention.ms","value":"4242"' "$WORK/dump3.out" && break
    sleep 0.5
done
expect dump3 0 '"type":"CONFIG_RECORD","version":0,"data":\{"resourceType":4,"resourceName":"","name":"log\.retention\.ms","value":"4242"\}'
echo "a cluster-wide config through the controllers: its ConfigRecord on node 3: ok"

# ---- node 2 on another port: UpdateRaftVoter ----
stop_node 2
OLD2=${PORT[2]}
PORT[2]=$(free_port)
CTRL=127.0.0.1:${PORT[1]},127.0.0.1:${PORT[2]},127.0.0.1:${PORT[3]}
start_node 2
wait_started 2
wait_status moved 60 'grep -q "\"id\": 2, \"directoryId\": \"$D2\", \"endpoints\": \[\"CONTROLLER://127\.0\.0\.1:${PORT[2]}\"\]" "$WORK/moved.out"'
echo "node 2 restarted on port ${PORT[2]} (was $OLD2): UpdateRaftVoter, the set shows it: ok"

# ---- remove-controller 3 (RemoveRaftVoter) ----
# again only when the call was never sent (a loaded machine, node 2 just
# restarted): one that was sent may have removed it
for try in 1 2 3 4 5; do
    java_run rm3 org.apache.kafka.tools.MetadataQuorumCommand --bootstrap-controller "$CTRL" \
        --command-config "$WORK/tool.properties" remove-controller --controller-id 3 --controller-directory-id "$D3"
    [ "$RC" != 0 ] && grep -q 'Timed out waiting to send the call' "$WORK/rm3.out" || break
    sleep 0.5
done
expect rm3 0 "^Removed KRaft controller 3 with directory id $D3$"
wait_status removed 60 '[ "$LEADER" -ge 1 ] && grep -q "CurrentObservers:.*\"id\": 3" "$WORK/removed.out"'
expect removed 0 "^CurrentVoters:${W}\[.*\{\"id\": 1, \"directoryId\": \"$D1\"" "^CurrentVoters:${W}\[.*\{\"id\": 2, \"directoryId\": \"$D2\"" \
    "^CurrentObservers:${W}\[\{\"id\": 3, \"directoryId\": \"$D3\"\}\]$"
grep -q '"id": 3, "directoryId": "'"$D3"'", "endpoints"' "$WORK/removed.out" && { show removed; fail "node 3 still a voter"; }
java_run rm3b org.apache.kafka.tools.MetadataQuorumCommand --bootstrap-controller "$CTRL" \
    --command-config "$WORK/tool.properties" remove-controller --controller-id 3 --controller-directory-id "$D3"
expect rm3b 1 "VoterNotFoundException: Cannot remove voter ReplicaKey\(id=3, directoryId=$D3\) from the set of voters \[.*\]$"
echo "remove-controller 3: voters 1 and 2, node 3 an observer; again: VOTER_NOT_FOUND: ok"

# ---- the latest snapshot holds the voters after its header ----
# The node keeps taking snapshots and cleaning older ones (retention 1 byte),
# so the one listed may be gone before the tool opens it: copy it under its
# own name first, and list again when the copy loses that race.
mkdir -p "$WORK/snapcopy"
SNAP=
for try in 1 2 3 4 5; do
    S=$(ls "$WORK/node-1/data/__cluster_metadata-0/"*.checkpoint 2>/dev/null | grep -v '/00000000000000000000-0000000000\.checkpoint$' | sort | tail -n 1)
    [ -n "$S" ] || break
    cp "$S" "$WORK/snapcopy/" 2>/dev/null && { SNAP="$WORK/snapcopy/$(basename "$S")"; break; }
done
[ -n "$SNAP" ] || fail "node 1 took no snapshot"
java_run snapdump org.apache.kafka.tools.DumpLogSegments --cluster-metadata-decoder --files "$SNAP"
expect snapdump 0 "SnapshotHeader" "KRaftVersion \{\"version\":0,\"kRaftVersion\":1\}" "KRaftVoters \{\"version\":0,\"voters\":\[\{\"voterId\":1," "SnapshotFooter"
echo "kafka-dump-log of node 1's latest snapshot $(basename "$SNAP"): KRaftVersion, KRaftVoters after the header: ok"

for i in $(seq 1 $N); do stop_node "$i"; done
echo "SIGTERM: every node exits 0: ok"

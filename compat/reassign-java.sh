#!/usr/bin/env bash
# compat/reassign-java.sh: Kafka 4.4's kafka-reassign-partitions
# (ReassignPartitionsCommand, on the Java Admin client's
# alterPartitionReassignments / listPartitionReassignments) against a quorum
# of three combined nodes (1-3) and a broker (4) the script starts:
#   a topic of two partitions on 1,2 and 2,3 with messages in both;
#   --generate of a plan for brokers 3,4 (computed by the tool from the
#   cluster's description); --execute of rt-0 to 4,1 and rt-1 to 3,4
#   ("Successfully started partition reassignments for rt-0,rt-1"), then
#   --verify until both are complete; kafka-topics --describe shows the
#   new replicas, a console consumer reads every message, and the removed
#   replicas' brokers deleted their logs;
#   node 2 killed, rt-0 to 2,4 stays in progress (2 cannot catch up):
#   --verify says so, --list lists it, --cancel --preserve-throttles
#   reverts it to 4,1 (without the option the tool clears throttles on
#   every broker, and fails on the dead one, Kafka's as well);
#   every node exits 0 on SIGTERM.
# The nodes are strand (STRAND_BIN, default ./strand) or, with KAFKA_REF=1,
# Apache Kafka 4.4 nodes (scripts/kafka-ref.sh); both formatted at 4.0-IV3.
# Exit 0 pass, 1 fail, 77 skip (no Java/Maven to be had).
set -u
# java_run, expect, show, absent, wait_unfenced; WORK (compat/lib/java-tool.sh).
# shellcheck source=lib/java-tool.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/java-tool.sh"
# at_exit, free_port, start_node, wait_started, stop_node, quorum3_props,
# kill_node, topics, wait_part (compat/lib/nodes.sh).
# shellcheck source=lib/nodes.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/nodes.sh"
nodes_setup reassign-java
NODES="1 2 3 4"
declare -a PORT CPORT PID

node_kafka_props() { echo "listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT"; }
node_format_args() { echo "--release-version=4.0-IV3"; }

node_props() { quorum3_props "$1"; }

reassign() { local n=$1; shift; java_run "$n" org.apache.kafka.tools.reassign.ReassignPartitionsCommand --bootstrap-server "127.0.0.1:${PORT[1]}" "$@"; }

# produce NAME TOPIC PARTITION VALUES...: acks=all, one message each.
produce()
{
    local n=$1 t=$2 p=$3
    shift 3
    printf '%s\n' "$@" > "$WORK/$n.in"
    STDIN=$WORK/$n.in java_run "$n" org.apache.kafka.tools.ConsoleProducer --bootstrap-server "127.0.0.1:${PORT[1]}" \
        --topic "$t" --producer-property acks=all --producer-property partitioner.class=org.apache.kafka.clients.producer.RoundRobinPartitioner
    expect "$n" 0
}

# wait_verify NAME JSON: --verify until every partition of JSON is complete (60 s).
wait_verify()
{
    local n=$1 json=$2 end=$((SECONDS + 60))
    while :; do
        reassign "$n" --verify --reassignment-json-file "$json"
        [ "$RC" = 0 ] && ! grep -q "still in progress" "$WORK/$n.out" && return 0
        [ $SECONDS -lt $end ] || { show "$n"; fail "$n: the reassignment does not complete"; }
        sleep 0.5
    done
}

for i in $NODES; do PORT[$i]=$(free_port); done
for i in 1 2 3; do PORT[$((10 + i))]=$(free_port); CPORT[$i]=${PORT[$((10 + i))]}; done
nodes_start_all
wait_unfenced apis-1 "${PORT[1]}" $NODES
echo "three combined nodes and a broker started and unfenced"

topics create --create --topic rt --replica-assignment 1:2,2:3
expect create 0 "^Created topic rt\.$"
wait_part desc0 rt 1 "2${W}Replicas: 2,3${W}Isr: (2,3|3,2)"
produce prod rt 0 m1 m2 m3 m4 m5 m6

# ---- --generate, --execute, --verify ----
printf '{"version": 1, "topics": [{"topic": "rt"}]}\n' > "$WORK/move.json"
reassign gen --generate --topics-to-move-json-file "$WORK/move.json" --broker-list 3,4
expect gen 0 "^Proposed partition reassignment configuration$"
grep -q '"topic":"rt","partition":0,"replicas":\[[34],[34]\]' "$WORK/gen.out" ||
    { show gen; fail "gen: no plan for rt-0 on 3,4"; }
printf '%s\n' '{"version":1,"partitions":[{"topic":"rt","partition":0,"replicas":[4,1]},{"topic":"rt","partition":1,"replicas":[3,4]}]}' > "$WORK/plan.json"
reassign exec --execute --reassignment-json-file "$WORK/plan.json"
expect exec 0 "^Successfully started partition reassignments for rt-0,rt-1$"
grep -q '"topic":"rt","partition":0,"replicas":\[1,2\]' "$WORK/exec.out" ||
    { show exec; fail "exec: the current assignment of rt-0 is not 1,2"; }
wait_verify verify "$WORK/plan.json"
expect verify 0 "^Reassignment of partition rt-0 is completed\.$"
expect verify 0 "^Reassignment of partition rt-1 is completed\.$"
wait_part desc1 rt 0 "[41]${W}Replicas: 4,1${W}Isr: (4,1|1,4)"
wait_part desc2 rt 1 "[34]${W}Replicas: 3,4${W}Isr: (3,4|4,3)"
java_run cons org.apache.kafka.tools.consumer.ConsoleConsumer --bootstrap-server "127.0.0.1:${PORT[1]}" \
    --topic rt --from-beginning --timeout-ms 8000
[ "$(grep -c '^m[1-6]$' "$WORK/cons.out")" = 6 ] || { show cons; fail "the consumer did not read m1-m6"; }
end=$((SECONDS + 30))
while [ -d "$WORK/node-2/data/rt-0" ] || [ -d "$WORK/node-2/data/rt-1" ]; do
    [ $SECONDS -lt $end ] || fail "node 2 still has rt-0 or rt-1"
    sleep 0.5
done
echo "kafka-reassign-partitions --generate, --execute, --verify: rt on 4,1 and 3,4, every message read, node 2's replicas gone: ok"

# ---- in progress: --verify, --list, --cancel ----
kill_node 2
printf '%s\n' '{"version":1,"partitions":[{"topic":"rt","partition":0,"replicas":[2,4]}]}' > "$WORK/stuck.json"
reassign exec2 --execute --reassignment-json-file "$WORK/stuck.json"
expect exec2 0 "^Successfully started partition reassignment for rt-0$"
reassign verify2 --verify --reassignment-json-file "$WORK/stuck.json"
expect verify2 0 "^Reassignment of partition rt-0 is still in progress\.$"
reassign list --list
expect list 0 "^rt-0: replicas: 2,4,1\. adding: 2\. removing: 1\.$"
# (the throttles left alone: clearing them asks every broker, 2 too)
reassign cancel --cancel --preserve-throttles --reassignment-json-file "$WORK/stuck.json"
expect cancel 0 "^Successfully cancelled partition reassignment for: rt-0$"
wait_part desc3 rt 0 "[41]${W}Replicas: 4,1${W}"
reassign list2 --list
expect list2 0 "^No partition reassignments found\.$"
echo "node 2 killed: rt-0 to 2,4 in progress (--verify, --list), --cancel: back on 4,1: ok"

# ---- every node stops cleanly ----
start_node 2
wait_started 2
stop_node 4
stop_together 1 2 3
echo "SIGTERM: every node exits 0: ok"

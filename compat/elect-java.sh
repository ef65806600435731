#!/usr/bin/env bash
# compat/elect-java.sh: Kafka 4.4's kafka-leader-election (LeaderElectionCommand,
# on the Java Admin client's electLeaders) against a quorum of three combined
# nodes (1-3) and two brokers (4, 5) the script starts, with
# auto.leader.rebalance.enable off:
#   preferred: a topic of three partitions on 1,2,3 / 2,3,1 / 3,1,2; node 2
#   stopped and started again leaves partition 1 led by 3;
#   --all-topic-partitions elects 2 again ("Successfully completed leader
#   election (PREFERRED) for partitions ...-1"), --topic/--partition of
#   partition 0 finds nothing to do ("Valid replica already elected"),
#   --all-topic-partitions again prints no partition, --path-to-json-file
#   of two partitions finds nothing to do either; an unknown topic fails
#   with Kafka's message;
#   unclean: a topic on brokers 4,5; A produced; 5 killed, B produced to 4
#   alone; 4 killed (no leader), 5 started again; --election-type unclean
#   --topic/--partition elects 5 ("Successfully completed leader election
#   (UNCLEAN)"), kafka-topics --describe shows leader 5 and the ISR 5, a
#   console consumer reads A only; unclean again: "Valid replica already
#   elected";
#   every node exits 0 on SIGTERM.
# The nodes are strand (STRAND_BIN, default ./strand) or, with KAFKA_REF=1,
# Apache Kafka 4.4 nodes (scripts/kafka-ref.sh); both formatted at 4.0-IV3,
# where eligible leader replicas are off (compat/elr-java.sh has them on).
# Exit 0 pass, 1 fail, 77 skip (no Java/Maven to be had).
set -u
# java_run, expect, show, absent, wait_unfenced; WORK (compat/lib/java-tool.sh).
# shellcheck source=lib/java-tool.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/java-tool.sh"
# at_exit, free_port, start_node, wait_started, stop_node, quorum3_props,
# kill_node, topics, wait_part (compat/lib/nodes.sh).
# shellcheck source=lib/nodes.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/nodes.sh"
nodes_setup elect-java
NODES="1 2 3 4 5"
declare -a PORT CPORT PID

node_kafka_props() { echo "listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT"; }
# both kinds where eligible leader replicas are off (the elections without them)
node_format_args() { echo "--release-version=4.0-IV3"; }

node_props() { quorum3_props "$1"; }

# elect NAME ARGS...: kafka-leader-election through node 1.
elect() { local n=$1; shift; java_run "$n" org.apache.kafka.tools.LeaderElectionCommand --bootstrap-server "127.0.0.1:${PORT[1]}" "$@"; }

# produce NAME TOPIC VALUE: one message, acks=all, to partition 0.
produce()
{
    printf '%s\n' "$3" > "$WORK/$1.in"
    STDIN=$WORK/$1.in java_run "$1" org.apache.kafka.tools.ConsoleProducer --bootstrap-server "127.0.0.1:${PORT[1]}" \
        --topic "$2" --producer-property acks=all --property parse.key=false
    expect "$1" 0
}

for i in $NODES; do PORT[$i]=$(free_port); done
for i in 1 2 3; do PORT[$((10 + i))]=$(free_port); CPORT[$i]=${PORT[$((10 + i))]}; done
nodes_start_all
wait_unfenced apis-1 "${PORT[1]}" $NODES
echo "three combined nodes and two brokers started and unfenced"

# ---- preferred ----
topics create-p --create --topic ep --replica-assignment 1:2:3,2:3:1,3:1:2
expect create-p 0 "^Created topic ep\.$"
wait_part desc-p0 ep 1 "2${W}Replicas: 2,3,1${W}Isr: [123],[123],[123]"
stop_node 2
wait_part desc-p1 ep 1 3
start_node 2
wait_started 2
wait_part desc-p2 ep 1 "3${W}Replicas: 2,3,1${W}Isr: [123],[123],[123]"
echo "node 2 stopped and started again: ep-1 led by 3, 2 in its ISR"
elect pref-all --election-type preferred --all-topic-partitions
expect pref-all 0 "^Successfully completed leader election \(PREFERRED\) for partitions ep-1$"
wait_part desc-p3 ep 1 2
elect pref-0 --election-type preferred --topic ep --partition 0
expect pref-0 0 "^Valid replica already elected for partitions ep-0$"
elect pref-all2 --election-type preferred --all-topic-partitions
expect pref-all2 0
absent pref-all2 "Successfully|Error"
elect pref-none --election-type preferred --topic nope --partition 0
expect pref-none 1 "^Error completing leader election \(PREFERRED\) for partition: nope-0: org\.apache\.kafka\.common\.errors\.UnknownTopicOrPartitionException: No such topic as nope$"
printf '{"partitions": [{"topic": "ep", "partition": 2}, {"topic": "ep", "partition": 0}]}\n' > "$WORK/ep.json"
elect pref-json --election-type preferred --path-to-json-file "$WORK/ep.json"
expect pref-json 0 "^Valid replica already elected for partitions ep-[02], ep-[02]$"
echo "kafka-leader-election preferred: ep-1 to 2 again; nothing to do after (also from a JSON file); an unknown topic: ok"

# ---- unclean ----
topics create-u --create --topic eu --replica-assignment 4:5
expect create-u 0 "^Created topic eu\.$"
wait_part desc-u0 eu 0 "4${W}Replicas: 4,5${W}Isr: (4,5|5,4)"
produce prod-a eu A
kill_node 5
wait_part desc-u1 eu 0 "4${W}Replicas: 4,5${W}Isr: 4($|[[:space:]])"
produce prod-b eu B
kill_node 4
wait_part desc-u2 eu 0 "none${W}Replicas: 4,5${W}Isr: 4($|[[:space:]])"
start_node 5
wait_started 5
wait_unfenced apis-5 "${PORT[1]}" 5
wait_part desc-u3 eu 0 "none"
echo "5 killed, B to 4 alone, 4 killed: eu-0 has no leader; 5 back"
elect uncl --election-type unclean --topic eu --partition 0
expect uncl 0 "^Successfully completed leader election \(UNCLEAN\) for partitions eu-0$"
wait_part desc-u4 eu 0 "5${W}Replicas: 4,5${W}Isr: 5($|[[:space:]])"
java_run cons org.apache.kafka.tools.consumer.ConsoleConsumer --bootstrap-server "127.0.0.1:${PORT[1]}" \
    --topic eu --from-beginning --timeout-ms 8000
grep -qx A "$WORK/cons.out" && ! grep -qx B "$WORK/cons.out" || { show cons; fail "the consumer did not read A alone"; }
elect uncl2 --election-type unclean --topic eu --partition 0
expect uncl2 0 "^Valid replica already elected for partitions eu-0$"
echo "kafka-leader-election unclean: 5 leads eu-0 with the ISR 5; a consumer reads A only; again: nothing to do: ok"

# ---- every node stops cleanly ----
stop_node 5
stop_together 1 2 3
echo "SIGTERM: every node exits 0: ok"

#!/usr/bin/env bash
# compat/elr-java.sh: eligible leader replicas (KIP-966, the feature
# eligible.leader.replicas.version=1) through Kafka 4.4's own tools:
# kafka-features describe shows the finalized level, kafka-topics --describe
# the partition's Elr: and LastKnownElr: fields. A controller-only node 1
# (a static quorum of one) and brokers 2-5, so that brokers can go down
# while the quorum lives; topic et, one partition on 2,3,4 with
# min.insync.replicas=2 (broker 5 holds no replica: every client goes
# through it, which works with 2, 3 and 4 all down). Kafka 4.4 printed,
# after the "Replicas: 2,3,4" of each line:
#  1 created, m1..m5 produced (acks=all)  Leader: 2     Isr: 2,3,4  Elr:      LastKnownElr:
#  2 4 stopped (SIGTERM)                  Leader: 2     Isr: 2,3    Elr:      LastKnownElr:
#  3 3 stopped: below min ISR, 3 is       Leader: 2     Isr: 2      Elr: 3    LastKnownElr:
#    eligible; an acks=all produce fails with NotEnoughReplicasException
#  4 2 (the leader) stopped               Leader: none  Isr:        Elr: 2,3  LastKnownElr: 2
#  5 3 started alone: elected from the    Leader: 3     Isr: 3      Elr: 2    LastKnownElr:
#    ELR; a consumer reads m1..m5 (committed before), not m6
#  6 2 and 4 started                      Leader: 3     Isr: 2,3,4  Elr:      LastKnownElr:
#  7 unclean shutdown: 4 stopped          Leader: 3     Isr: 2,3    Elr:      LastKnownElr:
#    2 killed (kill -9), fenced           Leader: 3     Isr: 3      Elr: 2    LastKnownElr:
#    3 stopped                            Leader: none  Isr:        Elr: 2,3  LastKnownElr: 3
#    2 started: it registers without a    Leader: none  Isr:        Elr: 3    LastKnownElr: 3
#    clean shutdown, the controller drops it from the ELR: up but not elected
#    3 started                            Leader: 3     Isr: 2,3    Elr:      LastKnownElr:
#    4 started                            Leader: 3     Isr: 2,3,4  Elr:      LastKnownElr:
#  8 every node exits 0 on SIGTERM (the brokers, then the controller).
# The sets are matched in any order. The nodes are strand (STRAND_BIN,
# default ./strand) or, with KAFKA_REF=1, Apache Kafka 4.4 nodes
# (scripts/kafka-ref.sh); both are formatted with the same options
# (node_format_args). 1.5-2 min on Kafka.
# Exit 0 pass, 1 fail, 77 skip (no Java/Maven to be had).
set -u
# java_run, java_tool_logs, expect, show, wait_unfenced; WORK (compat/lib/java-tool.sh).
# shellcheck source=lib/java-tool.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/java-tool.sh"
# at_exit, free_port, start_node, wait_started, stop_node, stop_together,
# kill_node, wait_part (compat/lib/nodes.sh).
# shellcheck source=lib/nodes.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/nodes.sh"
nodes_setup elr-java
NODES="1 2 3 4 5"
declare -a PORT PID

node_kafka_props() { echo "listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT"; }
# The same for both kinds of node: 4.0-IV3 (Strand's metadata.version)
# with ELR on (it needs 4.0-IV1 or later; it is off at 4.0-IV3 by default).
node_format_args() { echo "--release-version=4.0-IV3 --feature=eligible.leader.replicas.version=1"; }

# node_props I: node 1 the controller, 2-5 brokers. Short sessions (3 s,
# heartbeats every 0.5 s): a killed broker is fenced quickly. No automatic
# preferred elections (a controller's key in KRaft): 3 keeps the
# leadership it got from the ELR when 2 comes back.
node_props()
{
    local i=$1
    echo "node.id=$i"
    echo "controller.quorum.voters=1@127.0.0.1:${PORT[1]}"
    echo "controller.listener.names=CONTROLLER"
    echo "log.dirs=$WORK/node-$i/data"
    echo "broker.session.timeout.ms=3000"
    echo "broker.heartbeat.interval.ms=500"
    echo "auto.leader.rebalance.enable=false"
    if [ "$i" = 1 ]; then
        echo "process.roles=controller"
        echo "listeners=CONTROLLER://127.0.0.1:${PORT[1]}"
        echo "advertised.listeners=CONTROLLER://127.0.0.1:${PORT[1]}"
    else
        echo "process.roles=broker"
        echo "listeners=PLAINTEXT://127.0.0.1:${PORT[$i]}"
        echo "advertised.listeners=PLAINTEXT://127.0.0.1:${PORT[$i]}"
        echo "inter.broker.listener.name=PLAINTEXT"
        echo "offsets.topic.replication.factor=1"
    fi
}

# Every client through broker 5 (nodes.sh's topics goes through node 1,
# here the controller).
BS5() { echo "127.0.0.1:${PORT[5]}"; }
topics() { local n=$1; shift; java_run "$n" org.apache.kafka.tools.TopicCommand --bootstrap-server "$(BS5)" "$@"; }

# set IDS: a regex of the comma-separated list of IDS in any order.
set_re()
{
    case $# in
        0) echo "" ;;
        1) echo "$1" ;;
        2) echo "($1,$2|$2,$1)" ;;
        3) echo "($1,$2,$3|$1,$3,$2|$2,$1,$3|$2,$3,$1|$3,$1,$2|$3,$2,$1)" ;;
    esac
}

# part NAME LEADER "ISR" "ELR" "LASTKNOWNELR": until et-0's describe line
# is that (sets of space-separated ids, any order), 60 s; prints the line.
part()
{
    local n=$1 l=$2 isr elr lke
    # shellcheck disable=SC2086 # the sets are words
    isr=$(set_re $3) elr=$(set_re $4) lke=$(set_re $5)
    wait_part "$n" et 0 "$l${W}Replicas: 2,3,4${W}Isr: $isr${W}Elr: $elr${W}LastKnownElr: $lke[[:space:]]*$"
    grep -E "Partition: 0${W}Leader:" "$WORK/$n.out" | sed 's/^[[:space:]]*Topic: et[[:space:]]*/  /'
}

# produce NAME VALUES...: acks=all through broker 5, short timeouts (a
# refused send fails within seconds, not after the default 2 min); the
# producer logs its errors (ERROR and up) to NAME.log, where expect finds them.
java_log4j_errors
produce()
{
    local n=$1 jvm=("${JVM[@]}")
    shift
    printf '%s\n' "$@" > "$WORK/$n.in"
    java_tool_logs "$WORK/log4j2.properties"
    STDIN=$WORK/$n.in java_run "$n" org.apache.kafka.tools.ConsoleProducer --bootstrap-server "$(BS5)" \
        --topic et --command-property acks=all --command-property request.timeout.ms=3000 \
        --command-property delivery.timeout.ms=6000
    JVM=("${jvm[@]}") JAVA_TOOL_LOG=
}

# restart I...: starts each node of IDS, until it is up (Kafka: registered
# and unfenced) and broker 5 lists it.
restart()
{
    local i
    for i in "$@"; do start_node "$i"; done
    wait_started "$@"
    wait_unfenced apis "${PORT[5]}" "$@"
}

for i in $NODES; do PORT[$i]=$(free_port); done
nodes_start_all
wait_unfenced apis "${PORT[5]}" 2 3 4 5
java_run feat org.apache.kafka.tools.FeatureCommand --bootstrap-server "$(BS5)" describe
expect feat 0 "^Feature: eligible\.leader\.replicas\.version${W}SupportedMinVersion: 0${W}SupportedMaxVersion: 1${W}FinalizedVersionLevel: 1${W}"
echo "a controller and four brokers started, eligible.leader.replicas.version finalized at 1: ok"

# ---- 1-3: the ISR shrinks below min.insync.replicas ----
topics create --create --topic et --replica-assignment 2:3:4 --config min.insync.replicas=2
expect create 0 "^Created topic et\.$"
part d1 2 "2 3 4" "" ""
produce p1 m1 m2 m3 m4 m5
expect p1 0
echo "1. et on 2,3,4, m1..m5 produced: ok"
stop_node 4
part d2 2 "2 3" "" ""
echo "2. 4 stopped: the ISR at min.insync.replicas, no ELR: ok"
stop_node 3
# The removed member that takes the ISR below its minimum keeps its
# eligibility: it has every committed message.
part d3 2 "2" "3" ""
produce p3 m6
expect p3 0 "NotEnoughReplicasException: Messages are rejected since there are fewer in-sync replicas than required\."
echo "3. 3 stopped: Isr 2, Elr 3; acks=all refused (NotEnoughReplicas): ok"

# ---- 4-5: no ISR left, a leader from the ELR ----
stop_node 2
# LastKnownElr: the last leader, when the partition became leaderless.
part d4 none "" "2 3" "2"
echo "4. 2 (the leader) stopped: no leader, empty ISR, Elr 2,3, LastKnownElr 2: ok"
restart 3
part d5 3 "3" "2" ""
# The high watermark does not move below min ISR, but m1..m5 were
# committed before (and m6 never appended).
java_run cons org.apache.kafka.tools.consumer.ConsoleConsumer --bootstrap-server "$(BS5)" \
    --topic et --partition 0 --offset earliest --timeout-ms 8000
[ "$(grep -E '^m[0-9]$' "$WORK/cons.out" | tr '\n' ' ')" = "m1 m2 m3 m4 m5 " ] ||
    { show cons; fail "cons: not m1..m5"; }
echo "5. 3 started alone: elected from the ELR (Isr 3, Elr 2), m1..m5 read: ok"
restart 2 4
part d6 3 "2 3 4" "" ""
echo "6. 2 and 4 started: Isr 2,3,4, no ELR: ok"

# ---- 7: an unclean shutdown takes a broker out of the ELR ----
stop_node 4
part d7a 3 "2 3" "" ""
# Fenced by its session's end: the controller cannot tell a crash from a
# pause, so 2 enters the ELR as a stopped broker does.
kill_node 2
part d7b 3 "3" "2" ""
stop_node 3
part d7c none "" "2 3" "3"
# Back without a clean shutdown (its registration's previous broker epoch
# is -1): the controller removes it from the ELR, and it is not elected
# although it is the only replica up.
restart 2
part d7d none "" "3" "3"
sleep 2
part d7e none "" "3" "3"
echo "7. 2 killed, 3 stopped, 2 started: out of the ELR, not elected: ok"
restart 3
part d7f 3 "2 3" "" ""
restart 4
part d7g 3 "2 3 4" "" ""
echo "   3 and 4 started: 3 leads, Isr 2,3,4: ok"

# ---- 8: every node stops cleanly (the controller last: the brokers'
# controlled shutdowns need it) ----
stop_together 2 3 4 5
stop_together 1
echo "8. SIGTERM: every node exits 0: ok"

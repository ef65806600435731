#!/usr/bin/env bash
# compat/cluster-java.sh: the sample cluster of the README ("A cluster on one
# machine": etc/controller-1..3.properties and etc/broker-4..6.properties,
# each formatted, with this run's ports and a data dir under a scratch dir)
# as Kafka 4.4's kafka-topics (TopicCommand, on the Java Admin client) sees
# it through its brokers:
#   --create of a topic of 6 partitions and replication factor 3 through
#   broker 4, and of one of 3 partitions and factor 2 through broker 6;
#   --describe of each through every broker: the same partitions, leaders,
#   replicas and ISRs from all three, every replica set of distinct
#   brokers, the 6 leaders spread over the three brokers;
#   --list through broker 5 has both; --delete through broker 5, and
#   broker 4's --list has only the first;
#   every node exits 0 on SIGTERM (brokers first).
# The nodes are strand (STRAND_BIN, default ./strand) or, with KAFKA_REF=1,
# Apache Kafka 4.4 nodes (scripts/kafka-ref.sh, given the same keys).
# It starts its own nodes: the shared broker of make check is not used.
# Exit 0 pass, 1 fail, 77 skip (no Java/Maven to be had).
set -u
# java_run, expect, show; WORK (compat/lib/java-tool.sh).
# shellcheck source=lib/java-tool.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/java-tool.sh"
# at_exit, free_port, start_node, wait_started, stop_node (compat/lib/nodes.sh).
# shellcheck source=lib/nodes.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/nodes.sh"
nodes_setup cluster-java
NODES="1 2 3 4 5 6"
BROKERS="4 5 6"
declare -a PORT PID

node_kafka_props() { echo "listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT"; }

# node_file I: the sample properties file of node I.
node_file()
{
    if [ "$1" -le 3 ]; then echo "$ROOT/etc/controller-$1.properties"; else echo "$ROOT/etc/broker-$1.properties"; fi
}

# node_props I: its keys with this run's ports (the samples' 9093-9095 for
# the controllers, 9092, 9192, 9292 for the brokers) and data dir.
node_props()
{
    sed -e '/^#/d; /^$/d' \
        -e "s/127\.0\.0\.1:9093\b/127.0.0.1:${PORT[1]}/g" -e "s/127\.0\.0\.1:9094\b/127.0.0.1:${PORT[2]}/g" \
        -e "s/127\.0\.0\.1:9095\b/127.0.0.1:${PORT[3]}/g" -e "s/127\.0\.0\.1:9092\b/127.0.0.1:${PORT[4]}/g" \
        -e "s/127\.0\.0\.1:9192\b/127.0.0.1:${PORT[5]}/g" -e "s/127\.0\.0\.1:9292\b/127.0.0.1:${PORT[6]}/g" \
        -e "s#^log\.dirs=.*#log.dirs=$WORK/node-$1/data#" "$(node_file "$1")"
}

# topics NAME BROKER ARGS...: kafka-topics through broker BROKER (4-6).
topics()
{
    local n=$1 b=$2
    shift 2
    java_run "$n" org.apache.kafka.tools.TopicCommand --bootstrap-server "127.0.0.1:${PORT[$b]}" "$@"
}

# create NAME BROKER TOPIC PARTITIONS RF: --create, again while the brokers
# register and are unfenced (INVALID_REPLICATION_FACTOR until then).
create()
{
    local n=$1 b=$2 t=$3 p=$4 rf=$5 end=$((SECONDS + 60))
    while :; do
        topics "$n" "$b" --create --topic "$t" --partitions "$p" --replication-factor "$rf"
        [ "$RC" = 0 ] && break
        [ $SECONDS -lt $end ] || { show "$n"; fail "$n: --create of $t through broker $b"; }
        sleep 1
    done
    expect "$n" 0 "^Created topic $t\.$"
}

# partitions NAME: the partition lines of a --describe, as
# "P leader L replicas R isr I" (the ISR sorted: its order is not fixed).
partitions()
{
    awk '/Partition: / {
        for (i = 1; i <= NF; i++) { if ($i == "Partition:") p = $(i+1); if ($i == "Leader:") l = $(i+1);
            if ($i == "Replicas:") r = $(i+1); if ($i == "Isr:") s = $(i+1) }
        n = split(s, a, ","); for (x = 1; x <= n; x++) for (y = x + 1; y <= n; y++) if (a[y] < a[x]) { t = a[x]; a[x] = a[y]; a[y] = t }
        s = a[1]; for (x = 2; x <= n; x++) s = s "," a[x]
        print p, "leader", l, "replicas", r, "isr", s }' "$WORK/$1.out" | sort -n
}

# describe_all TOPIC PARTITIONS RF: every broker describes the same.
describe_all()
{
    local t=$1 np=$2 rf=$3 b first= got line r
    for b in $BROKERS; do
        topics "desc-$t-$b" "$b" --describe --topic "$t"
        expect "desc-$t-$b" 0 "Topic: $t${W}TopicId: [A-Za-z0-9_-]{22}${W}PartitionCount: $np${W}ReplicationFactor: $rf"
        got=$(partitions "desc-$t-$b")
        [ "$(printf '%s\n' "$got" | grep -c .)" = "$np" ] || { show "desc-$t-$b"; fail "$t: not $np partitions through broker $b"; }
        if [ -z "$first" ]; then first=$got; continue; fi
        [ "$got" = "$first" ] || { printf '%s\n--\n%s\n' "$first" "$got" >&2; fail "$t: broker $b describes it otherwise"; }
    done
    while read -r line; do
        r=$(echo "$line" | awk '{ print $5 }')
        [ "$(echo "$r" | tr ',' '\n' | grep -E '^[4-6]$' | sort -u | wc -l)" = "$rf" ] ||
            fail "$t: replicas '$r' are not $rf distinct brokers"
    done <<< "$first"
    DESCRIBED=$first
}

# ---- three controllers and three brokers, formatted with one cluster id ----
W='[[:space:]]+'
for i in $NODES; do PORT[$i]=$(free_port); done
nodes_start_all
echo "three controllers and three brokers started"

# ---- kafka-topics --create through two brokers ----
# Only once the three brokers are unfenced, else the leaders may not be
# spread.
START=$SECONDS
wait_unfenced apis-4 "${PORT[4]}" $BROKERS
create create-a 4 cj-a 6 3
create create-b 6 cj-b 3 2
echo "kafka-topics --create through brokers 4 and 6: ok ($((SECONDS - START)) s, with the brokers' registration)"

# ---- kafka-topics --describe through every broker ----
describe_all cj-a 6 3
LEADERS=$(printf '%s\n' "$DESCRIBED" | awk '{ print $3 }' | sort -u | tr '\n' ' ')
[ "$(printf '%s\n' "$DESCRIBED" | awk '{ print $3 }' | sort -u | wc -l)" = 3 ] ||
    { printf '%s\n' "$DESCRIBED" >&2; fail "cj-a: the leaders ($LEADERS) are not spread over the three brokers"; }
describe_all cj-b 3 2
echo "kafka-topics --describe through brokers 4, 5, 6: the same partitions, leaders $LEADERS: ok"

# ---- --list and --delete ----
topics list-5 5 --list
expect list-5 0 "^cj-a$" "^cj-b$"
topics delete-b 5 --delete --topic cj-b
expect delete-b 0
END=$((SECONDS + 30))
while :; do
    topics list-4 4 --list
    [ "$RC" = 0 ] && grep -q '^cj-a$' "$WORK/list-4.out" && ! grep -q '^cj-b$' "$WORK/list-4.out" && break
    [ $SECONDS -lt $END ] || { show list-4; fail "cj-b still listed through broker 4"; }
    sleep 0.5
done
echo "kafka-topics --list through broker 5, --delete through broker 5, gone through broker 4: ok"

# ---- every node stops cleanly, the brokers first ----
for i in 4 5 6 1 2 3; do stop_node "$i"; done
echo "SIGTERM: every node exits 0: ok"

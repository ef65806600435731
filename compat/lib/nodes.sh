# compat/lib/nodes.sh: sourced by the compat scripts that run nodes of their
# own (quorum-java.sh, quorum-dynamic-java.sh, cluster-java.sh): each node I
# on 127.0.0.1:${PORT[I]} (its first listener) with its dir $WORK/node-I, a
# strand process (STRAND_BIN) or, with KAFKA_REF set (or I in KAFKA_NODES,
# a mixed cluster), an Apache Kafka 4.4 node through scripts/kafka-ref.sh
# (REF). The script sets NODES (the ids)
# and ID (the cluster id), and defines
#   node_props I          the node's server.properties keys, one a line;
#   node_format_args I    (optional) more options of its format;
#   node_kafka_props I    (optional) more keys for a Kafka node.
# No node is left running at exit (at_exit, run by java_tool_exit).
# For the cluster scripts on a quorum of three combined nodes and brokers
# (elect-java.sh, reassign-java.sh): quorum3_props, kill_node, topics and
# wait_part below.

# nodes_setup NAME: the start of a script that runs its own nodes: KAFKA_REF
# (0 counts as unset), STRAND_BIN (default ./strand: skipped without it),
# REF, small Kafka heaps (a node needs far less than kafka-server-start.sh's
# 1 GiB), java_tool_setup NAME, and exit 143 on SIGTERM/SIGINT.
nodes_setup()
{
    KAFKA_REF=${KAFKA_REF:-}
    [ "$KAFKA_REF" = 0 ] && KAFKA_REF=
    STRAND_BIN=${STRAND_BIN:-$PWD/strand}
    REF=$ROOT/scripts/kafka-ref.sh
    export KAFKA_HEAP_OPTS=${KAFKA_HEAP_OPTS:--Xmx256m -Xms256m}
    if [ -z "$KAFKA_REF" ]; then
        [ -x "$STRAND_BIN" ] || skip "no strand binary at $STRAND_BIN"
    fi
    java_tool_setup "$1"
    trap 'exit 143' TERM INT
}

# nodes_start_all: a new cluster id (ID: Kafka's form, or strand
# random-uuid's), then every node of NODES started and listening.
nodes_start_all()
{
    local i
    if [ -n "$KAFKA_REF" ]; then
        ID=$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')
    else
        ID=$("$STRAND_BIN" random-uuid) || fail "strand random-uuid"
    fi
    for i in $NODES; do start_node "$i"; done
    wait_started $NODES
}

# is_kafka I: whether node I is a Kafka node.
is_kafka() { [ -n "$KAFKA_REF" ] || [[ " ${KAFKA_NODES:-} " == *" $1 "* ]]; }

at_exit()
{
    local i
    for i in $NODES; do
        if is_kafka "$i"; then
            "$REF" kill "$WORK/node-$i" >/dev/null 2>&1
        elif [ -n "${PID[$i]:-}" ]; then
            kill -KILL "${PID[$i]}" 2>/dev/null
        fi
    done
}

# free_port: a loopback port nothing listens on, below the ephemeral range
# (32768+), not one already taken here.
free_port()
{
    local p i
    for i in $(seq 1 200); do
        p=$((20000 + RANDOM % 12000))
        [[ " ${PORT[*]:-} " == *" $p "* ]] && continue
        (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return 0; }
    done
    fail "no free port"
}

nodes_format_args() { if declare -F node_format_args >/dev/null; then node_format_args "$1"; fi; }

# start_node I: formats node I (first start) and starts it, not waiting.
start_node()
{
    local i=$1 dir=$WORK/node-$1 kv fmt
    mkdir -p "$dir"
    fmt=$(nodes_format_args "$i")
    if is_kafka "$i"; then
        mapfile -t kv < <(node_props "$i"; if declare -F node_kafka_props >/dev/null; then node_kafka_props "$i"; fi)
        KAFKA_REF_CLUSTER_ID=$ID KAFKA_REF_FORMAT_ARGS=$fmt \
            "$REF" start "${PORT[$i]}" "$dir" "${kv[@]}" > "$dir/kafka-ref.log" 2>&1 &
        PID[$i]=$!
        return
    fi
    node_props "$i" | grep -v '^controller.quorum.voters=$' > "$dir/server.properties"
    # shellcheck disable=SC2086 # the format options are words
    [ -f "$dir/data/meta.properties" ] ||
        "$STRAND_BIN" format --cluster-id="$ID" -c "$dir/server.properties" $fmt > "$dir/node.log" 2>&1 ||
        { cat "$dir/node.log" >&2; fail "strand format of node $i"; }
    "$STRAND_BIN" "$dir/server.properties" >> "$dir/node.log" 2>&1 &
    PID[$i]=$!
}

# wait_started I...: each node listens (Kafka: kafka-ref.sh start returned 0).
wait_started()
{
    local i t
    for i in "$@"; do
        if is_kafka "$i"; then
            wait "${PID[$i]}" || { tail -n 20 "$WORK/node-$i/kafka-ref.log" >&2; fail "node $i did not start"; }
            continue
        fi
        for t in $(seq 1 100); do
            (exec 3<>"/dev/tcp/127.0.0.1/${PORT[$i]}") 2>/dev/null && break
            kill -0 "${PID[$i]}" 2>/dev/null || { tail -n 20 "$WORK/node-$i/node.log" >&2; fail "node $i exited"; }
            sleep 0.1
        done
    done
}

# stop_node I: SIGTERM, and it must exit 0.
stop_node()
{
    local i=$1 rc
    if is_kafka "$i"; then
        "$REF" stop "$WORK/node-$i" || fail "stop of node $i"
        return
    fi
    kill -TERM "${PID[$i]}"
    wait "${PID[$i]}"
    rc=$?
    PID[$i]=
    [ "$rc" = 0 ] || { tail -n 20 "$WORK/node-$i/node.log" >&2; fail "node $i exited $rc on SIGTERM"; }
}

# stop_together I...: SIGTERM to every node at once (combined nodes: one
# stopped after the others would have no quorum left for its broker's
# controlled shutdown, and a Kafka node then waits it out), each must
# exit 0.
stop_together()
{
    local i rc bad=
    declare -A STOPPER
    for i in "$@"; do
        if is_kafka "$i"; then
            "$REF" stop "$WORK/node-$i" > "$WORK/node-$i/stop.log" 2>&1 &
            STOPPER[$i]=$!
        else
            kill -TERM "${PID[$i]}"
        fi
    done
    for i in "$@"; do
        if is_kafka "$i"; then
            wait "${STOPPER[$i]}" || bad+=" $i"
            ! grep -q 'no exit' "$WORK/node-$i/stop.log" || bad+=" $i"
            continue
        fi
        wait "${PID[$i]}"
        rc=$?
        PID[$i]=
        [ "$rc" = 0 ] || { tail -n 20 "$WORK/node-$i/node.log" >&2; bad+=" $i"; }
    done
    [ -z "$bad" ] || fail "nodes$bad did not exit 0 on SIGTERM"
}

# kill_node I: SIGKILL.
kill_node()
{
    if is_kafka "$1"; then
        "$REF" kill "$WORK/node-$1" >/dev/null 2>&1 || fail "kill of node $1"
    else
        kill -KILL "${PID[$1]}"
        wait "${PID[$1]}" 2>/dev/null
        PID[$1]=
    fi
}

# quorum3_props I: node I's keys as a combined node (1-3) or a broker (4
# and up) of the quorum 1-3 (CPORT: the controllers' ports), with 6 s
# sessions and auto.leader.rebalance.enable off.
quorum3_props()
{
    local i=$1 voters="1@127.0.0.1:${CPORT[1]},2@127.0.0.1:${CPORT[2]},3@127.0.0.1:${CPORT[3]}"
    echo "node.id=$i"
    echo "controller.quorum.voters=$voters"
    echo "controller.listener.names=CONTROLLER"
    echo "inter.broker.listener.name=PLAINTEXT"
    echo "log.dirs=$WORK/node-$i/data"
    echo "broker.session.timeout.ms=6000"
    echo "auto.leader.rebalance.enable=false"
    echo "offsets.topic.replication.factor=1"
    echo "advertised.listeners=PLAINTEXT://127.0.0.1:${PORT[$i]}"
    if [ "$i" -le 3 ]; then
        echo "process.roles=broker,controller"
        echo "listeners=PLAINTEXT://127.0.0.1:${PORT[$i]},CONTROLLER://127.0.0.1:${CPORT[$i]}"
    else
        echo "process.roles=broker"
        echo "listeners=PLAINTEXT://127.0.0.1:${PORT[$i]}"
    fi
}

# topics NAME ARGS...: kafka-topics through node 1 (java_run of java-tool.sh).
topics() { local n=$1; shift; java_run "$n" org.apache.kafka.tools.TopicCommand --bootstrap-server "127.0.0.1:${PORT[1]}" "$@"; }

W='[[:space:]]+'
# wait_part NAME TOPIC PARTITION PATTERN: until kafka-topics --describe of
# the partition matches PATTERN (60 s).
wait_part()
{
    local n=$1 t=$2 p=$3 pat=$4 end=$((SECONDS + 60))
    while :; do
        topics "$n" --describe --topic "$t"
        [ "$RC" = 0 ] && grep -Eq "Partition: $p${W}Leader: $pat" "$WORK/$n.out" && return 0
        [ $SECONDS -lt $end ] || { show "$n"; fail "$n: $t-$p is not 'Leader: $pat'"; }
        sleep 0.5
    done
}

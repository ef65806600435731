# compat/lib/broker.sh: the broker of the compatibility suite, sourced by
# compat/suite.sh. It owns one broker on a free port with its data in a
# directory of its own, so that it can restart it (the commit-restart
# scenario): strand from STRAND_BIN, or with KAFKA_REF=1 Apache Kafka through
# scripts/kafka-ref.sh. Both get the same settings: 3 partitions for
# auto-created topics and no initial rebalance delay (group scenarios start
# at once).
#
#   broker_start DIR      start (DIR kept across restarts); sets BROKER_BS
#   broker_stop           SIGTERM; for strand, exit status 0 is required
#   broker_restart        stop, then start on the same port and data
#   broker_alive          exit 0 while it runs
# The variables BROKER_KIND, BROKER_DIR, BROKER_PORT, BROKER_PID, BROKER_BS
# describe it; broker_stop's failure text is in BROKER_ERR.

BROKER_KIND= BROKER_DIR= BROKER_PORT= BROKER_PID= BROKER_BS= BROKER_ERR=
BROKER_SETTINGS=(num.partitions=3 group.initial.rebalance.delay.ms=0)

broker_free_port()
{
    local p i
    for i in $(seq 1 200); do
        p=$((20000 + RANDOM % 12000)) # below the ephemeral range (32768+)
        (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return 0; }
    done
    return 1
}

broker_wait_port()
{
    local t=0
    while ! (exec 3<>"/dev/tcp/127.0.0.1/$BROKER_PORT") 2>/dev/null; do
        kill -0 "$BROKER_PID" 2>/dev/null || { BROKER_ERR="strand exited during startup"; return 1; }
        t=$((t + 1))
        [ $t -gt 400 ] && { BROKER_ERR="strand not accepting after 20 s"; return 1; }
        sleep 0.05
    done
}

broker_start_strand()
{
    local kv
    # kept across restarts, as the data dir is
    [ -n "${BROKER_CPORT:-}" ] || BROKER_CPORT=$(broker_free_port) ||
        { BROKER_ERR="no free port for the controller"; return 1; }
    {
        echo "# written by compat/lib/broker.sh (single-node KRaft; strand does not"
        echo "# open the controller listener, it is only named)"
        echo "process.roles=broker,controller"
        echo "node.id=1"
        echo "controller.quorum.voters=1@127.0.0.1:$BROKER_CPORT"
        echo "controller.listener.names=CONTROLLER"
        echo "listeners=PLAINTEXT://127.0.0.1:$BROKER_PORT,CONTROLLER://127.0.0.1:$BROKER_CPORT"
        echo "advertised.listeners=PLAINTEXT://127.0.0.1:$BROKER_PORT"
        echo "log.dirs=$BROKER_DIR/data"
        echo "auto.create.topics.enable=true"
        for kv in "${BROKER_SETTINGS[@]}"; do echo "$kv"; done
    } > "$BROKER_DIR/server.properties"
    [ -x "${STRAND_BIN:-}" ] || { BROKER_ERR="STRAND_BIN ($STRAND_BIN) is not executable"; return 1; }
    "$STRAND_BIN" "$BROKER_DIR/server.properties" >> "$BROKER_DIR/broker.log" 2>&1 < /dev/null &
    BROKER_PID=$!
    broker_wait_port
}

broker_start_kafka()
{
    BROKER_PID=$("$ROOT/scripts/kafka-ref.sh" start "$BROKER_PORT" "$BROKER_DIR" \
        "${BROKER_SETTINGS[@]}" 2>> "$BROKER_DIR/broker.log") ||
        { BROKER_ERR="kafka-ref.sh start failed (see $BROKER_DIR/broker.log)"; return 1; }
}

broker_start()
{
    BROKER_DIR=$1
    mkdir -p "$BROKER_DIR" || return 1
    if [ -z "$BROKER_PORT" ]; then
        BROKER_PORT=$(broker_free_port) || { BROKER_ERR="no free port"; return 1; }
    fi
    if [ -n "${KAFKA_REF:-}" ]; then
        BROKER_KIND=kafka
        broker_start_kafka || return 1
    else
        BROKER_KIND=strand
        broker_start_strand || return 1
    fi
    BROKER_BS=127.0.0.1:$BROKER_PORT
}

broker_alive() { [ -n "$BROKER_PID" ] && kill -0 "$BROKER_PID" 2>/dev/null; }

# A strand that does not exit 0 on SIGTERM within 30 s is a failure: its
# shutdown was not clean (and under the sanitizers, this is where leaks show).
broker_stop()
{
    local rc t=0
    BROKER_ERR=
    [ -z "$BROKER_PID" ] && return 0
    if [ "$BROKER_KIND" = kafka ]; then
        "$ROOT/scripts/kafka-ref.sh" stop "$BROKER_DIR"
        BROKER_PID=
        return 0
    fi
    kill -TERM "$BROKER_PID" 2>/dev/null
    while kill -0 "$BROKER_PID" 2>/dev/null && [ $t -lt 300 ]; do
        sleep 0.1
        t=$((t + 1))
    done
    kill -0 "$BROKER_PID" 2>/dev/null && kill -KILL "$BROKER_PID"
    wait "$BROKER_PID"
    rc=$?
    BROKER_PID=
    [ $t -ge 300 ] && { BROKER_ERR="strand still running 30 s after SIGTERM"; return 1; }
    [ $rc = 0 ] || { BROKER_ERR="strand exited $rc on SIGTERM"; return 1; }
}

broker_restart()
{
    local err
    broker_stop
    err=$BROKER_ERR
    broker_start "$BROKER_DIR" || return 1
    [ -z "$err" ] || { BROKER_ERR=$err; return 1; }
}

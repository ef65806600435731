#!/usr/bin/env bash
# compat/clients/kafka-verifiable.sh: Kafka's own VerifiableProducer and
# VerifiableConsumer (org.apache.kafka.tools, kafka-tools 4.4.0 from Maven
# Central through scripts/kafka-ref.sh), the pair Kafka's system tests
# use. The producer reports every acknowledged message, the consumer every
# record it read (--verbose), as JSON lines; compat/lib/verifiable.py checks
# that every acknowledged message was consumed exactly once, at the offset
# and with the value acknowledged. Topics are auto-created by the producer
# (3 partitions on the suite's broker); the values are the producer's
# counters. See compat/lib/client.sh for the calls.
. "$(dirname "${BASH_SOURCE[0]}")/../lib/client.sh"

case ${1:-} in
    na)
        echo "metadata these tools only produce and consume"
        echo "by-time these tools only produce and consume"
        echo "txn VerifiableProducer has no transactional mode"
        echo "configs these tools only produce and consume"
        exit 0 ;;
    install)
        CP=$(java_cp) || exit $?
        LIBS=${CP#*:}
        echo "VERSION: kafka-tools $(ls "${LIBS%/\*}" | sed -n 's/^kafka-tools-\([0-9].*\)\.jar$/\1/p')"
        exit 0 ;;
    run) shift ;;
    *) fail "usage: $0 na | install | run SCENARIO [PHASE]" ;;
esac

CP=$(java_cp) || exit 1
W=$COMPAT_WORK
JAVA=(java -Xmx256m -XX:TieredStopAtLevel=1 -Dlog4j2.level=OFF -cp "$CP")
topic() { echo "c-verifiable-$1-$COMPAT_ID"; }
verify() { python3 "$ROOT/compat/lib/verifiable.py" "$@"; }

# vproduce OUT TOPIC N [KEY=VALUE...]: producer properties after N.
vproduce()
{
    local out=$1 t=$2 n=$3 kv
    shift 3
    : > "$W/$out.properties"
    for kv in "$@"; do echo "$kv" >> "$W/$out.properties"; done
    "${JAVA[@]}" org.apache.kafka.tools.VerifiableProducer --bootstrap-server "$COMPAT_BS" \
        --topic "$t" --max-messages "$n" --acks -1 --producer.config "$W/$out.properties" \
        > "$W/$out" 2> "$W/$out.err" || { tail -n 20 "$W/$out.err" >&2; fail "VerifiableProducer $t"; }
    grep -q "\"name\":\"tool_data\",\"sent\":$n,\"acked\":$n," "$W/$out" ||
        { grep tool_data "$W/$out" >&2; fail "VerifiableProducer $t: not all $n acknowledged"; }
}

# vconsume OUT TOPIC GROUP N: a consumer in GROUP until it read N records.
vconsume()
{
    "${JAVA[@]}" org.apache.kafka.tools.VerifiableConsumer --bootstrap-server "$COMPAT_BS" \
        --topic "$2" --group-id "$3" --max-messages "$4" --verbose --reset-policy earliest \
        > "$W/$1" 2> "$W/$1.err" || { tail -n 20 "$W/$1.err" >&2; fail "VerifiableConsumer $2"; }
}

# The five codecs at once (each pair waits on the broker most of the time).
produce()
{
    local codec t pids=() rc=0
    for codec in none gzip snappy lz4 zstd; do
        t=$(topic "p-$codec")
        ( vproduce "p-$codec" "$t" 500 "compression.type=$codec" linger.ms=5 &&
            vconsume "c-$codec" "$t" "$t" 500 &&
            echo "produce $codec: $(verify check --once "$W/p-$codec" -- "$W/c-$codec")" ||
            fail "$codec: acknowledged and consumed differ" ) &
        pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p" || rc=1; done
    return $rc
}

# The members run until stopped (SIGTERM: the consumer closes and leaves).
group()
{
    local t g i pids=() a
    t=$(topic group) g=$t
    vproduce p-group "$t" 600
    for i in 0 1 2; do
        "${JAVA[@]}" org.apache.kafka.tools.VerifiableConsumer --bootstrap-server "$COMPAT_BS" \
            --topic "$t" --group-id "$g" --verbose --reset-policy earliest --session-timeout 10000 \
            > "$W/g$i" 2> "$W/g$i.err" &
        pids+=($!)
    done
    spread() # spread N: the first N members each own partitions, together 0 1 2 once
    {
        local all= i a
        for i in $(seq 0 $(($1 - 1))); do
            a=$(verify assigned "$W/g$i")
            [ -n "$a" ] || return 1
            all="$all $a"
        done
        [ "$(echo $all | tr ' ' '\n' | sort -n | tr '\n' ' ')" = "0 1 2 " ]
    }
    for _ in $(seq 1 300); do spread 3 && break; sleep 0.2; done
    spread 3 || { kill "${pids[@]}"; fail "three members never shared the 3 partitions"; }
    echo "group: ${SECONDS}s: three members: [$(verify assigned "$W/g0")] [$(verify assigned "$W/g1")] [$(verify assigned "$W/g2")]"
    kill -TERM "${pids[2]}"; wait "${pids[2]}"
    for _ in $(seq 1 300); do spread 2 && break; sleep 0.2; done
    spread 2 || { kill "${pids[@]}"; fail "two members never took the 3 partitions"; }
    echo "group: ${SECONDS}s: after one left: [$(verify assigned "$W/g0")] [$(verify assigned "$W/g1")]"
    for _ in $(seq 1 300); do
        [ "$(cat "$W"/g[012] | grep -c '"name":"record_data"')" -ge 600 ] && break
        sleep 0.2
    done
    kill -TERM "${pids[0]}" "${pids[1]}"; wait
    echo "group: $(verify check --once "$W/p-group" -- "$W/g0" "$W/g1" "$W/g2")" ||
        fail "the members' records differ from the acknowledged ones"
}

# Phase one consumes 10 of 20 and commits (the tool commits what it read);
# phase two, after the restart, must read exactly the other 15.
restart()
{
    local t g; t=$(topic restart) g=$t
    if [ "$1" = before ]; then
        vproduce p-r1 "$t" 20
        vconsume c-r1 "$t" "$g" 10
        grep -q '"name":"offsets_committed".*"success":true' "$W/c-r1" || fail "no commit"
        echo "restart: 10 of 20 consumed and committed"
        return
    fi
    vproduce p-r2 "$t" 5
    vconsume c-r2 "$t" "$g" 15
    echo "restart: $(verify check --once "$W/p-r1" "$W/p-r2" -- "$W/c-r1" "$W/c-r2")" ||
        fail "before and after the restart, the records consumed differ from the acknowledged ones"
}

idempotent()
{
    local t; t=$(topic idem)
    vproduce p-idem "$t" 1000 enable.idempotence=true retries=10 max.in.flight.requests.per.connection=5 batch.size=2048
    vconsume c-idem "$t" "$t" 1000
    echo "idempotent: $(verify check --once "$W/p-idem" -- "$W/c-idem")" || fail "idempotent produce"
}

case ${1:-} in
    produce) produce ;;
    group) group ;;
    restart) restart "${2:-}" ;;
    idempotent) idempotent ;;
    *) fail "unknown scenario ${1:-}" ;;
esac

#!/usr/bin/env bash
# compat/clients/kafka-e2e-latency.sh: Kafka's kafka-e2e-latency
# (org.apache.kafka.tools.EndToEndLatency of kafka-tools 4.4.0): it creates
# its topic (1 partition), then sends one record at a time and waits until
# its consumer reads it back, failing on any record that differs from the
# one sent. Run for each codec (compression.type through --command-config),
# 100 records of 100 bytes with acks=all. See compat/lib/client.sh.
. "$(dirname "${BASH_SOURCE[0]}")/../lib/client.sh"

case ${1:-} in
    na)
        for s in metadata by-time group restart idempotent txn configs; do
            echo "$s the tool measures end-to-end latency only"
        done
        exit 0 ;;
    install)
        CP=$(java_cp) || exit $?
        LIBS=${CP#*:}
        echo "VERSION: kafka-tools $(ls "${LIBS%/\*}" | sed -n 's/^kafka-tools-\([0-9].*\)\.jar$/\1/p')"
        exit 0 ;;
    run) shift ;;
    *) fail "usage: $0 na | install | run SCENARIO [PHASE]" ;;
esac
[ "${1:-}" = produce ] || fail "unknown scenario ${1:-}"
CP=$(java_cp) || exit 1
e2e()
{
    local codec=$1 t=c-e2e-$1-$COMPAT_ID
    echo "compression.type=$codec" > "$COMPAT_WORK/$codec.properties"
    java -Xmx256m -XX:TieredStopAtLevel=1 -Dlog4j2.level=OFF -cp "$CP" org.apache.kafka.tools.EndToEndLatency \
        --bootstrap-server "$COMPAT_BS" --topic "$t" --num-records 100 --producer-acks all \
        --record-size 100 --command-config "$COMPAT_WORK/$codec.properties" > "$COMPAT_WORK/$codec.out" 2>&1 ||
        { tail -n 20 "$COMPAT_WORK/$codec.out" >&2; fail "EndToEndLatency with $codec"; }
    grep -q '^Percentiles: 50th = ' "$COMPAT_WORK/$codec.out" ||
        { tail -n 20 "$COMPAT_WORK/$codec.out" >&2; fail "EndToEndLatency with $codec: no percentiles"; }
    echo "produce $codec: 100 records sent and read back one by one; $(grep '^Percentiles' "$COMPAT_WORK/$codec.out")"
}
for codec in none gzip snappy lz4 zstd; do e2e "$codec"; done

#!/usr/bin/env bash
# compat/clients/java.sh: the Java client, kafka-clients 4.4.0 (Admin,
# KafkaProducer, KafkaConsumer with the classic group protocol), through
# compat/java/src/main/java/strand/compat/Suite.java. The jars come from
# Maven Central through scripts/kafka-ref.sh; the driver is compiled with
# javac into .cache/java-compat. See compat/lib/client.sh for the calls.
. "$(dirname "${BASH_SOURCE[0]}")/../lib/client.sh"

case ${1:-} in
    na) ;;
    install)
        CP=$(java_cp) || exit $?
        LIBS=${CP#*:}
        echo "VERSION: kafka-clients $(ls "${LIBS%/\*}" | sed -n 's/^kafka-clients-\(.*\)\.jar$/\1/p')"
        ;;
    run)
        shift
        CP=$(java_cp) || exit $?
        exec java -Xmx256m -XX:TieredStopAtLevel=1 -Dlog4j2.level=ERROR -cp "$CP" \
            strand.compat.Suite "$COMPAT_BS" "$COMPAT_ID" "$@"
        ;;
    *) fail "usage: $0 na | install | run SCENARIO [PHASE]" ;;
esac

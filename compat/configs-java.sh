#!/usr/bin/env bash
# compat/configs-java.sh: Kafka's kafka-configs.sh (ConfigCommand of Kafka
# 4.4's tools, the jars scripts/kafka-ref.sh fetches) on the dynamic
# configs of the broker at STRAND_BOOTSTRAP:
#   --entity-type brokers --entity-default --alter / --describe (the
#   cluster-wide default), --entity-name <id> --alter / --describe (the
#   node, with the default under it), --delete-config back to the layer
#   below, refusals (a read-only key, a bad value, a per-broker key at the
#   default) with Kafka's messages; --entity-type broker-loggers describe
#   and alter, a bad level and the root's deletion refused.
# Only keys without effect on the other tests of the shared broker are set
# (the cleaner's), and they are deleted again. The same checks pass against
# Kafka 4.4 (KAFKA_REF=1; it applies a change just after it answers, so a
# describe is retried until it shows). Exit 0 pass, 1 fail, 77 skip (no
# Java/Maven to be had).
set -u
# tool, expect; BS, WORK (compat/lib/java-tool.sh).
# shellcheck source=lib/java-tool.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/java-tool.sh"
KEY=log.cleaner.backoff.ms
configs() { local n=$1; shift; tool "$n" ConfigCommand "$@"; }
# until_shows NAME PATTERN ARGS...: describes until a line matches (5 tries)
until_shows()
{
    local name=$1 pat=$2 i
    shift 2
    for i in 1 2 3 4 5; do
        configs "$name" "$@"
        [ "$RC" = 0 ] && grep -Eq -- "$pat" "$WORK/$name.out" && return 0
        sleep 1
    done
    show "$name"
    fail "$name: no line matches '$pat'"
}
# at_exit: the keys set back, if the test stopped before it did.
at_exit()
{
    [ -n "${DONE:-}" ] || {
        configs undo1 --entity-type brokers --entity-name "$NODE" --alter --delete-config "$KEY"
        configs undo2 --entity-type brokers --entity-default --alter --delete-config "$KEY"
    }
}

# Each command is a JVM start (seconds on a loaded machine): few of them,
# the rest is tested by raw requests (integration/0209-broker-configs).
NODE=1 # run-tests.sh, testlib and kafka-ref.sh all start node 1
java_tool_init configs-java

configs dset --entity-type brokers --entity-default --alter --add-config "$KEY=20000"
expect dset 0 "^Completed updating default config for brokers in the cluster\.\$"
configs nset --entity-type brokers --entity-name "$NODE" --alter --add-config "$KEY=30000"
expect nset 0 "^Completed updating config for broker $NODE\.\$"
until_shows ndesc "^  $KEY=30000 sensitive=false synonyms=\{DYNAMIC_BROKER_CONFIG:$KEY=30000, DYNAMIC_DEFAULT_BROKER_CONFIG:$KEY=20000, DEFAULT_CONFIG:$KEY=15000\}\$" \
    --entity-type brokers --entity-name "$NODE" --describe
expect ndesc 0 "^Dynamic configs for broker $NODE are:\$"
echo "kafka-configs brokers: default and node set, described with their synonyms: ok"

configs ro --entity-type brokers --entity-name "$NODE" --alter --add-config log.retention.hours=10
expect ro 1 "InvalidRequestException: Cannot update these configs dynamically: \[log.retention.hours\]"
echo "kafka-configs brokers: a read-only key refused: ok"

configs ndel --entity-type brokers --entity-name "$NODE" --alter --delete-config "$KEY"
expect ndel 0 "^Completed updating config for broker $NODE\.\$"
configs ddel --entity-type brokers --entity-default --alter --delete-config "$KEY"
expect ddel 0 "^Completed updating default config for brokers in the cluster\.\$"
until_shows nall "^  $KEY=15000 sensitive=false synonyms=\{DEFAULT_CONFIG:$KEY=15000\}\$" \
    --entity-type brokers --entity-name "$NODE" --describe --all
DONE=1
echo "kafka-configs brokers: deleted back to the default: ok"

configs ldesc --entity-type broker-loggers --entity-name "$NODE" --describe
expect ldesc 0 "^Dynamic configs for broker-logger $NODE are:\$" \
    "^  root=(TRACE|DEBUG|INFO|WARN|ERROR|FATAL) sensitive=false synonyms=\{\}\$"
echo "kafka-configs broker-loggers: described: ok"

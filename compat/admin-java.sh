#!/usr/bin/env bash
# compat/admin-java.sh: Kafka's own admin tools against the broker at
# STRAND_BOOTSTRAP, as kafka-topics.sh and kafka-configs.sh run them
# (org.apache.kafka.tools.TopicCommand and ConfigCommand of Kafka 4.x,
# fetched from Maven Central by scripts/kafka-ref.sh, whose jars they are):
#   kafka-topics --create (with configs) / --list / --describe / --alter
#   (more partitions) / --delete, and a create of an existing topic;
#   kafka-configs --describe / --alter --add-config / --delete-config on a
#   topic, with an unknown key and an invalid value refused, a missing
#   topic, and the broker's configs.
# Every command's output is checked. Exit 0 pass, 1 fail, 77 skip (no
# Java/Maven to be had).
set -u
# tool, expect, absent; BS, WORK (compat/lib/java-tool.sh).
# shellcheck source=lib/java-tool.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/java-tool.sh"
java_tool_init admin-java
TOPIC=compat-admin-$$-$RANDOM
topics() { local n=$1; shift; tool "$n" TopicCommand "$@"; }
configs() { local n=$1; shift; tool "$n" ConfigCommand "$@"; }

TAB=$'\t'
topics create --create --topic "$TOPIC" --partitions 3 --replication-factor 1 \
    --config retention.ms=100000 --config cleanup.policy=compact
expect create 0 "^Created topic $TOPIC\.\$"

topics list --list
expect list 0 "^$TOPIC\$"
absent list "__cluster_metadata"

topics describe --describe --topic "$TOPIC"
expect describe 0 \
    "^Topic: $TOPIC${TAB}TopicId: [A-Za-z0-9_-]{22}${TAB}PartitionCount: 3${TAB}ReplicationFactor: 1${TAB}Configs: .*cleanup.policy=compact" \
    "Configs: .*retention.ms=100000" \
    "^${TAB}Topic: $TOPIC${TAB}Partition: 2${TAB}Leader: [0-9]+${TAB}Replicas: [0-9]+${TAB}Isr: [0-9]+"

topics exists --create --topic "$TOPIC" --partitions 1 --replication-factor 1
expect exists 1 "Topic '$TOPIC' already exists"

topics alter --alter --topic "$TOPIC" --partitions 5
expect alter 0
topics describe2 --describe --topic "$TOPIC"
expect describe2 0 "PartitionCount: 5" "Partition: 4${TAB}Leader: [0-9]+"
echo "kafka-topics: create, list, describe, alter: ok"

configs cdesc --describe --entity-type topics --entity-name "$TOPIC"
expect cdesc 0 "^Dynamic configs for topic $TOPIC are:\$" \
    "^  cleanup.policy=compact sensitive=false synonyms=\{DYNAMIC_TOPIC_CONFIG:cleanup.policy=compact, DEFAULT_CONFIG:log.cleanup.policy=delete\}\$" \
    "^  retention.ms=100000 sensitive=false synonyms=\{DYNAMIC_TOPIC_CONFIG:retention.ms=100000"

configs add --alter --entity-type topics --entity-name "$TOPIC" \
    --add-config retention.ms=200000,segment.bytes=2097152
expect add 0 "^Completed updating config for topic $TOPIC\.\$"
configs del --alter --entity-type topics --entity-name "$TOPIC" --delete-config cleanup.policy
expect del 0 "^Completed updating config for topic $TOPIC\.\$"
configs cdesc2 --describe --entity-type topics --entity-name "$TOPIC"
expect cdesc2 0 "^  retention.ms=200000 sensitive=false" \
    "^  segment.bytes=2097152 sensitive=false synonyms=\{DYNAMIC_TOPIC_CONFIG:segment.bytes=2097152, DEFAULT_CONFIG:log.segment.bytes=1073741824\}\$"
absent cdesc2 "cleanup.policy"

configs unknown --alter --entity-type topics --entity-name "$TOPIC" --add-config no.such.config=1
expect unknown 1 "InvalidConfigurationException: Unknown topic config name: no.such.config"
configs invalid --alter --entity-type topics --entity-name "$TOPIC" --add-config retention.ms=soon
expect invalid 1 "Invalid value soon for configuration retention.ms: Not a number of type LONG"
configs all --describe --entity-type topics --entity-name "$TOPIC" --all
expect all 0 "^All configs for topic $TOPIC are:\$" \
    "^  cleanup.policy=delete sensitive=false synonyms=\{DEFAULT_CONFIG:log.cleanup.policy=delete\}\$" \
    "^  retention.ms=200000 sensitive=false" "^  segment.ms=604800000 sensitive=false" \
    "^  max.message.bytes=1048588 sensitive=false"
configs missing --describe --entity-type topics --entity-name "no-such-$TOPIC"
expect missing 0 "The topic 'no-such-$TOPIC' doesn't exist and doesn't have dynamic config\."
configs broker --describe --entity-type brokers --entity-name 1 --all
expect broker 0 "^All configs for broker 1 are:\$" \
    "^  log.segment.bytes=1073741824 sensitive=false synonyms=\{.*DEFAULT_CONFIG:log.segment.bytes=1073741824\}\$"
echo "kafka-configs: describe, alter (add, delete, refused), broker: ok"

topics delete --delete --topic "$TOPIC"
expect delete 0
topics list2 --list
expect list2 0
absent list2 "^$TOPIC\$"
topics recreate --create --topic "$TOPIC" --partitions 1 --replication-factor 1
expect recreate 0 "^Created topic $TOPIC\.\$"
topics describe3 --describe --topic "$TOPIC"
expect describe3 0 "PartitionCount: 1"
absent describe3 "retention.ms=200000"
topics delete2 --delete --topic "$TOPIC"
expect delete2 0
echo "kafka-topics: delete and re-create: ok"

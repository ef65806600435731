#!/usr/bin/env bash
# compat/client-bugs-java.sh: the stock Java client and Kafka's own tools
# (4.4, from Maven Central) on what Strand used to answer differently from
# Kafka, against the broker at STRAND_BOOTSTRAP (Strand, or Kafka 4.4 with
# KAFKA_REF=1; every check passes on both unless said):
#   - a batch of 8 records to a compacted topic, 0, 2 and 5 without a key:
#     the producer fails exactly those with InvalidRecordException and the
#     other five with a KafkaException (a record of the same batch was
#     invalid), from the Produce answer's record_errors;
#   - committed metadata "Hello\0world!" read back whole by another
#     consumer;
#   - kafka-acls.sh --list: SecurityDisabledException, "No Authorizer is
#     configured on the broker", exit 1;
#   - kafka-transactions.sh describe-producers after an idempotent console
#     producer wrote 3 lines: the producer at epoch 0, coordinator epoch
#     -1, last sequence 2, no transaction;
#   - kafka-topics.sh --describe (DescribeTopicPartitions) of the topic;
#   - Admin.listConfigResources(): this node as BROKER and BROKER_LOGGER,
#     and the topics;
#   - a transactional producer's initTransactions() succeeds (Strand
#     refused transactional ids before it had a transaction coordinator).
# Exit 0 pass, 1 fail, 77 skip (no Java to be had).
set -u
# tool, java_run, expect; BS, WORK (compat/lib/java-tool.sh).
# shellcheck source=lib/java-tool.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/java-tool.sh"
java_tool_init client-bugs
ID=$$-$RANDOM
TC=compat-bugs-compact-$ID TD=compat-bugs-plain-$ID
bugs() { local n=$1; shift; java_run "$n" strand.compat.ClientBugs "$@"; }

tool create-c TopicCommand --create --topic "$TC" --partitions 1 --replication-factor 1 \
    --config cleanup.policy=compact
expect create-c 0 "^Created topic $TC\.\$"
tool create-d TopicCommand --create --topic "$TD" --partitions 1 --replication-factor 1
expect create-d 0 "^Created topic $TD\.\$"

bugs record-errors record-errors "$BS" "$TC"
expect record-errors 0
printf '%s\n' "0 org.apache.kafka.common.InvalidRecordException" "1 org.apache.kafka.common.KafkaException" \
    "2 org.apache.kafka.common.InvalidRecordException" "3 org.apache.kafka.common.KafkaException" \
    "4 org.apache.kafka.common.KafkaException" "5 org.apache.kafka.common.InvalidRecordException" \
    "6 org.apache.kafka.common.KafkaException" "7 org.apache.kafka.common.KafkaException" \
    > "$WORK/record-errors.want"
cmp -s "$WORK/record-errors.want" "$WORK/record-errors.out" ||
    { diff "$WORK/record-errors.want" "$WORK/record-errors.out" >&2; fail "record errors"; }
echo "Java producer: records 0, 2, 5 failed as invalid, the other 5 as part of their batch"

bugs metadata commit-metadata "$BS" "$TD" "compat-bugs-group-$ID"
expect metadata 0 "^metadata 12 chars ok\$"
echo "Java consumer: committed metadata with a NUL read back whole"

tool acls AclCommand --list
expect acls 1 "^Error while executing ACL command: org.apache.kafka.common.errors.SecurityDisabledException: No Authorizer is configured on the broker\$"
echo "kafka-acls --list: $(head -n 1 "$WORK/acls.out")"

printf 'a\nb\nc\n' > "$WORK/lines"
STDIN=$WORK/lines tool console ConsoleProducer --topic "$TD"
expect console 0
tool producers TransactionsCommand describe-producers --topic "$TD" --partition 0
TAB=$'\t'
expect producers 0 "^ProducerId${TAB}ProducerEpoch${TAB}LatestCoordinatorEpoch${TAB}LastSequence${TAB}LastTimestamp${TAB}CurrentTransactionStartOffset${TAB}\$" \
    "^[0-9]+ *${TAB}0 *${TAB}-1 *${TAB}2 *${TAB}[0-9]{13}${TAB}None *${TAB}\$"
[ "$(wc -l < "$WORK/producers.out")" = 2 ] || { cat "$WORK/producers.out" >&2; fail "describe-producers: not one producer"; }
echo "kafka-transactions describe-producers: $(tail -n 1 "$WORK/producers.out" | tr -s ' \t' ' ')"

tool describe TopicCommand --describe --topic "$TD"
expect describe 0 "^Topic: $TD${TAB}TopicId: [A-Za-z0-9_-]{22}${TAB}PartitionCount: 1${TAB}ReplicationFactor: 1" \
    "^${TAB}Topic: $TD${TAB}Partition: 0${TAB}Leader: [0-9]+${TAB}Replicas: [0-9]+${TAB}Isr: [0-9]+${TAB}Elr: ${TAB}LastKnownElr: \$"
echo "kafka-topics --describe: $(tail -n 1 "$WORK/describe.out" | tr -s '\t' ' ')"

bugs resources config-resources "$BS"
expect resources 0 "^BROKER [0-9]+\$" "^BROKER_LOGGER [0-9]+\$" "^TOPIC $TC\$" "^TOPIC $TD\$"
echo "Admin.listConfigResources: $(wc -l < "$WORK/resources.out") resources"

bugs txn txn "$BS" "compat-bugs-txn-$ID"
expect txn 0 "^ok\$"
echo "Java transactional producer: initTransactions $(cat "$WORK/txn.out")"

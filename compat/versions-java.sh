#!/usr/bin/env bash
# compat/versions-java.sh: the Java client and tools of Kafka 4.4 against the
# broker at STRAND_BOOTSTRAP, checking that they speak the newest version of
# each API Kafka 4.4 added one to, and get the same results as from Kafka:
#   kafka-broker-api-versions   every API at its top version ("usable: N")
#   kafka-console-producer      Produce v13 (topics by id), ApiVersions v5
#   kafka-console-consumer      Fetch v18; the lines come back exact (its
#     (a classic group)         classic-protocol offsets use OffsetCommit and
#                               OffsetFetch v9: they name topics, which v10
#                               cannot)
#   KafkaConsumer of the        OffsetCommit v10 and OffsetFetch v10 (topics
#     KIP-848 protocol          by id): positions committed after a read,
#     (assign(),                read back by a new consumer
#     compat/versions/Commit.java)
#   kafka-consumer-groups       DescribeGroups v6 (offsets, then GROUP_ID_
#     --describe / --delete     NOT_FOUND once deleted), DeleteGroups v3
#   kafka-log-dirs --describe   DescribeLogDirs v5 (the topic's partitions)
#   kafka-get-offsets           ListOffsets v11: no earliest-pending-upload
#                               offset without tiered storage (the consumer
#                               above finds the earliest by v11 too)
# The versions sent are read from the client's own debug log (NetworkClient
# logs each request's header), so the test shows what the client chose.
# Kafka's jars come from scripts/kafka-ref.sh, as in compat/admin-java.sh.
# Exit 0 pass, 1 fail, 77 skip (no Java/Maven to be had).
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# tool, java_run, show, expect; BS, CP, WORK (compat/lib/java-tool.sh).
# shellcheck source=lib/java-tool.sh
. "$ROOT/compat/lib/java-tool.sh"
java_tool_init versions-java
TOPIC=compat-versions-$$-$RANDOM
G=compat-versions-group-$$-$RANDOM
N=200

# Errors on stderr, and NetworkClient's DEBUG lines ("Sending PRODUCE
# request with header RequestHeader(apiKey=PRODUCE, apiVersion=13, ...").
java_log4j_errors "logger.nc.name = org.apache.kafka.clients.NetworkClient" "logger.nc.level = debug"
# Each command's stdout in $WORK/NAME.out, its log in NAME.log.
java_tool_logs "$WORK/log4j2.properties"
# sent NAME API VERSION...: the client sent API at each VERSION and no other
sent()
{
    local name=$1 api=$2
    shift 2
    versions "$name" "$api"
    [ "$GOT" = "$* " ] || { show "$name"; fail "$name: $api sent at version(s) '${GOT% }', expected '$*'"; }
}
# sent_also NAME API VERSION: the client sent API at VERSION (among others)
sent_also()
{
    versions "$1" "$2"
    [[ " $GOT" == *" $3 "* ]] || { show "$1"; fail "$1: $2 sent at version(s) '${GOT% }', not at $3"; }
}
versions()
{
    GOT=$(grep -o "Sending $2 request with header RequestHeader(apiKey=$2, apiVersion=[0-9]*" \
              "$WORK/$1.log" | sed 's/.*apiVersion=//' | sort -un | tr '\n' ' ')
}
# No response carried an error the client logged as failed.
clean() { ! grep -E '^(ERROR|WARN) ' "$WORK/$1.log" >&2 || fail "$1: errors logged"; }

# Every API the tool knows, with the version both sides can use.
tool apis BrokerApiVersionsCommand
expect apis 0 "Produce\(0\): 0 to 13 \[usable: 13\]" "Fetch\(1\): 4 to 18 \[usable: 18\]" \
    "ListOffsets\(2\): 1 to 11 \[usable: 11\]" "OffsetCommit\(8\): 2 to 10 \[usable: 10\]" \
    "OffsetFetch\(9\): 1 to 10 \[usable: 10\]" "DescribeGroups\(15\): 0 to 6 \[usable: 6\]" \
    "ApiVersions\(18\): 0 to 5 \[usable: 5\]" "InitProducerId\(22\): 0 to 5 \[usable: 5\]" \
    "DescribeLogDirs\(35\): 1 to 5 \[usable: 5\]" "DeleteGroups\(42\): 0 to 3 \[usable: 3\]"
sent apis API_VERSIONS 5
echo "kafka-broker-api-versions: the 4.4 top version of each API usable"

tool create TopicCommand --create --topic "$TOPIC" --partitions 2 --replication-factor 1
expect create 0 "^Created topic $TOPIC\.\$"

for i in $(seq 0 $((N - 1))); do printf 'k%d:line %d of versions-java\n' "$i" "$i"; done > "$WORK/in"
STDIN=$WORK/in tool produce ConsoleProducer --topic "$TOPIC" \
    --reader-property parse.key=true --reader-property key.separator=:
expect produce 0
sent produce PRODUCE 13
sent produce API_VERSIONS 5
clean produce
echo "kafka-console-producer: $N keyed lines by Produce v13"

tool consume consumer.ConsoleConsumer --topic "$TOPIC" --group "$G" --from-beginning \
    --max-messages $N --timeout-ms 30000 --formatter-property print.key=true \
    --formatter-property key.separator=:
expect consume 0
sent consume FETCH 18
sent consume OFFSET_COMMIT 9
sent consume OFFSET_FETCH 9
sent consume LIST_OFFSETS 11
clean consume
LC_ALL=C sort "$WORK/in" > "$WORK/want"
LC_ALL=C sort "$WORK/consume.out" > "$WORK/got"
cmp -s "$WORK/want" "$WORK/got" || { diff "$WORK/want" "$WORK/got" | head -n 10 >&2;
    fail "the consumer read back something else ($(wc -l < "$WORK/got") lines)"; }
echo "kafka-console-consumer: the $N lines back (Fetch v18)"

# The KIP-848 consumer commits by topic id; with assign() it needs no
# consumer group heartbeats (which we do not serve).
mkdir -p "$WORK/classes"
javac -nowarn -d "$WORK/classes" -cp "$CP" "$ROOT/compat/versions/Commit.java" \
    > "$WORK/javac.out" 2>&1 || { cat "$WORK/javac.out" >&2; fail "javac compat/versions/Commit.java"; }
CP=$WORK/classes:$CP java_run commit strand.compat.versions.Commit "$BS" "$TOPIC" "$G-848"
expect commit 0 "^0	[0-9]+	p0	[0-9]+\$" "^1	[0-9]+	p1	[0-9]+\$"
committed=$(awk '$2 == $4 { s += $2 } END { print s + 0 }' "$WORK/commit.out")
[ "$committed" = $N ] || { show commit; fail "committed positions (where the new consumer starts) add up to $committed, not $N"; }
sent commit OFFSET_COMMIT 10
sent_also commit OFFSET_FETCH 10
sent commit FETCH 18
echo "KafkaConsumer (group.protocol=consumer): positions committed and read back by topic id (OffsetCommit/OffsetFetch v10)"

tool desc consumer.group.ConsumerGroupCommand --describe --group "$G"
expect desc 0 "Consumer group '$G' has no active members\." \
    "^$G +$TOPIC +0 +[0-9]+ +[0-9]+ +0 " "^$G +$TOPIC +1 +[0-9]+ +[0-9]+ +0 "
committed=$(awk -v t="$TOPIC" '$2 == t { s += $4 } END { print s + 0 }' "$WORK/desc.out")
[ "$committed" = $N ] || { show desc; fail "committed offsets add up to $committed, not $N"; }
sent desc DESCRIBE_GROUPS 6
tool delete consumer.group.ConsumerGroupCommand --delete --group "$G"
expect delete 0 "Deletion of requested consumer groups \('$G'\) was successful\."
sent delete DELETE_GROUPS 3
tool gone consumer.group.ConsumerGroupCommand --describe --group "$G"
expect gone 0 "GroupIdNotFoundException: Group $G not found\."
sent gone DESCRIBE_GROUPS 6
echo "kafka-consumer-groups: $N offsets committed (DescribeGroups v6), deleted (DeleteGroups v3), then not found"

tool logdirs LogDirsCommand --describe --topic-list "$TOPIC"
expect logdirs 0 "\"partition\":\"$TOPIC-0\",\"size\":[1-9][0-9]*," \
    "\"partition\":\"$TOPIC-1\",\"size\":[1-9][0-9]*,"
sent logdirs DESCRIBE_LOG_DIRS 5
echo "kafka-log-dirs: both partitions, with their sizes (DescribeLogDirs v5)"

tool pending GetOffsetShell --topic "$TOPIC" --time earliest-pending-upload
expect pending 0
[ ! -s "$WORK/pending.out" ] || { show pending; fail "an earliest pending upload offset without tiered storage"; }
sent pending LIST_OFFSETS 11
echo "kafka-get-offsets: no offset pending upload (ListOffsets v11)"
exit 0

#!/usr/bin/env bash
# compat/groups-java.sh: kafka-consumer-groups.sh against the broker at
# STRAND_BOOTSTRAP, as the shell script runs it (org.apache.kafka.tools.
# consumer.group.ConsumerGroupCommand of Kafka 4.x; Kafka's jars come
# from Maven Central through scripts/kafka-ref.sh, like compat/admin-java.sh):
#   a console consumer commits offsets in one group while another group
#   stays active; then --list, --describe (offsets, lag, --state,
#   --members), --reset-offsets (refused while active; --to-earliest,
#   --to-offset, --dry-run), --delete-offsets, and --delete (refused while
#   active, then done, then "does not exist").
# Every command's output is checked. Exit 0 pass, 1 fail, 77 skip (no
# Java/Maven to be had).
set -u
# tool, expect, absent; BS, CP, JVM, WORK (compat/lib/java-tool.sh).
# shellcheck source=lib/java-tool.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/java-tool.sh"
BG=
# at_exit: the consumer that stays in its group stopped.
at_exit() { [ -z "$BG" ] || kill "$BG" 2>/dev/null; wait 2>/dev/null; }
java_tool_init groups-java
TOPIC=compat-groups-$$-$RANDOM
G=compat-group-$$-$RANDOM
ACTIVE=$G-active

groups() { local n=$1; shift; tool "$n" consumer.group.ConsumerGroupCommand "$@"; }
# col NAME PARTITION N: column N of the row of $TOPIC's partition in a table
col() { awk -v t="$TOPIC" -v p="$2" -v n="$3" '$2 == t && $3 == p { print $n }' "$WORK/$1.out"; }
# sum NAME N: column N summed over $TOPIC's rows
sum() { awk -v t="$TOPIC" -v n="$2" '$2 == t { s += $n } END { print s + 0 }' "$WORK/$1.out"; }

tool create TopicCommand --create --topic "$TOPIC" --partitions 3 --replication-factor 1
expect create 0 "^Created topic $TOPIC\.\$"
for i in $(seq 0 29); do echo "k$i:line $i"; done > "$WORK/in"
STDIN=$WORK/in tool produce ConsoleProducer --topic "$TOPIC" \
    --reader-property parse.key=true --reader-property key.separator=:
expect produce 0

# Group G: 20 records consumed and committed, then the consumer is gone.
tool consume consumer.ConsoleConsumer --topic "$TOPIC" --group "$G" --from-beginning \
    --max-messages 20 --timeout-ms 30000
expect consume 0 "Processed a total of 20 messages"

# Group ACTIVE: a consumer that stays in the group.
"${JVM[@]}" -cp "$CP" org.apache.kafka.tools.consumer.ConsoleConsumer --bootstrap-server "$BS" \
    --topic "$TOPIC" --group "$ACTIVE" --from-beginning > "$WORK/active.out" 2>&1 &
BG=$!
for _ in $(seq 1 60); do
    groups state --describe --group "$ACTIVE" --state
    grep -Eq "^$ACTIVE +.* +range +Stable +1 *\$" "$WORK/state.out" && break
    sleep 1
done
expect state 0 "^GROUP +COORDINATOR \(ID\) +ASSIGNMENT-STRATEGY +STATE +#MEMBERS" \
    "^$ACTIVE +[0-9.]+:[0-9]+ +\([0-9]+\) +range +Stable +1 *\$"
echo "--describe --state: $ACTIVE is Stable with 1 member"

groups list --list
expect list 0 "^$G\$" "^$ACTIVE\$"
groups list_state --list --state
expect list_state 0 "^$G +Empty *\$" "^$ACTIVE +Stable *\$"
echo "--list: both groups, with their states"

groups members --describe --group "$ACTIVE" --members
expect members 0 "^GROUP +CONSUMER-ID +HOST +CLIENT-ID +#PARTITIONS" \
    "^$ACTIVE +console-consumer-[0-9a-f-]{36} +/127\.0\.0\.1 +console-consumer +3 *\$"
groups desc_active --describe --group "$ACTIVE"
expect desc_active 0 "^$ACTIVE +$TOPIC +0 +[0-9-]+ +[0-9]+ +[0-9-]+ +console-consumer-[0-9a-f-]{36} +/127\.0\.0\.1 +console-consumer *\$"
echo "--describe --members: one member owning the 3 partitions"

groups desc --describe --group "$G"
expect desc 0 "Consumer group '$G' has no active members\." \
    "^GROUP +TOPIC +PARTITION +CURRENT-OFFSET +LOG-END-OFFSET +LAG +CONSUMER-ID +HOST +CLIENT-ID"
[ "$(sum desc 4)" = 20 ] || { show desc; fail "committed offsets do not add up to 20"; }
[ "$(sum desc 5)" = 30 ] || { show desc; fail "log end offsets do not add up to 30"; }
[ "$(sum desc 6)" = 10 ] || { show desc; fail "lag does not add up to 10"; }
echo "--describe: offsets 20 of 30 committed, lag 10"

# Resets and deletes are refused while the group has members.
groups reset_active --reset-offsets --group "$ACTIVE" --topic "$TOPIC" --to-earliest --execute
expect reset_active 0 "can only be reset if the group '$ACTIVE' is inactive, but the current state is Stable"
groups delete_active --delete --group "$ACTIVE"
expect delete_active 0 "Group '$ACTIVE' could not be deleted due to: .*GroupNotEmptyException"
echo "--reset-offsets and --delete of an active group: refused"

groups dry --reset-offsets --group "$G" --topic "$TOPIC" --to-earliest --dry-run
expect dry 0 "^GROUP +TOPIC +PARTITION +NEW-OFFSET"
[ "$(sum dry 4)" = 0 ] || fail "dry run: new offsets are not 0"
groups after_dry --describe --group "$G" --offsets
[ "$(sum after_dry 4)" = 20 ] || { show after_dry; fail "a dry run changed offsets"; }
groups reset --reset-offsets --group "$G" --topic "$TOPIC" --to-earliest --execute
expect reset 0 "^$G +$TOPIC +0 +0 *\$" "^$G +$TOPIC +1 +0 *\$" "^$G +$TOPIC +2 +0 *\$"
groups reset1 --reset-offsets --group "$G" --topic "$TOPIC:1" --to-offset 2 --execute
expect reset1 0 "^$G +$TOPIC +1 +2 *\$"
absent reset1 "^$G +$TOPIC +0 "
groups after --describe --group "$G" --offsets
[ "$(col after 0 4)" = 0 ] && [ "$(col after 1 4)" = 2 ] && [ "$(col after 2 4)" = 0 ] ||
    { show after; fail "offsets after the resets"; }
echo "--reset-offsets: --dry-run, --to-earliest and --to-offset on one partition"

groups delete_offsets --delete-offsets --group "$G" --topic "$TOPIC"
expect delete_offsets 0 "Request succeeded for deleting offsets from group $G\." \
    "^$TOPIC +0 +Successful" "^$TOPIC +1 +Successful" "^$TOPIC +2 +Successful"
groups after_del --describe --group "$G" --offsets
absent after_del "^$G +$TOPIC "
echo "--delete-offsets: the group's offsets are gone"

groups delete --delete --group "$G"
expect delete 0 "Deletion of requested consumer groups \('$G'\) was successful\."
groups list2 --list
absent list2 "^$G\$"
expect list2 0 "^$ACTIVE\$"
groups delete_again --delete --group "$G"
expect delete_again 0 "Group '$G' could not be deleted due to: .*GroupIdNotFoundException"
# DescribeGroups v6 answers GROUP_ID_NOT_FOUND with Kafka's message.
groups gone --describe --group "$G"
expect gone 0 "GroupIdNotFoundException: Group $G not found\."
echo "--delete: done, then the group does not exist"
exit 0

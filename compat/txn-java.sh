#!/usr/bin/env bash
# compat/txn-java.sh: transactions as the stock Java clients and tools use
# them (4.4, from Maven Central), against the broker at STRAND_BOOTSTRAP
# (Strand, or Kafka 4.4 with KAFKA_REF=1; every check passes on both):
#   1. exactly once, consume-transform-produce (java/.../Eos.java loop): 2000
#      records over 3 partitions, read at read_committed by a group without
#      auto commit, each sent upper-cased with its key by a transactional
#      producer, the batch's offsets by sendOffsetsToTransaction with the
#      consumer's group metadata, then commit. The loop's JVM is killed with
#      SIGKILL twice, once in a transaction with records sent (flushed) and
#      once after its offsets were sent too, and restarted each time with
#      the same transactional id and group; then it runs to the end. The
#      three runs committed 2000 records between them; at read_committed the output holds every input record exactly once,
#      with its key; at read_uncommitted it holds those 2000 and the two
#      aborted batches, exactly; kafka-consumer-groups --describe: the
#      group's offsets at the input's ends, lag 0.
#   2. Kafka Streams (java/.../WordCount.java), exactly_once_v2: a word
#      count through a repartition topic and a changelog (RocksDB) to an
#      output topic; 1000 lines fed, the Streams JVM killed with SIGKILL
#      part-way, restarted, 1000 more lines fed; the latest count of each
#      word at read_committed is exact, before and after a clean close; the
#      internal topics exist, the changelog compacted.
#   3. kafka-transactions.sh on a transaction left open by a producer killed
#      with SIGKILL (transaction.timeout.ms 60000): list shows it Ongoing
#      with the producer id describe-producers gives (current transaction
#      at offset 0); describe gives its state, timeout and partition;
#      find-hanging --broker-id (default --max-transaction-timeout 15, and
#      0) lists nothing, as Kafka does: the first finds no transaction open
#      that long, the second finds it but the coordinator still has the
#      partition in it. A new producer with the same transactional id then
#      aborts it: describe Empty at epoch 2, the partition's producer at
#      epoch 1 without a transaction, nothing of it read at read_committed.
#      A second one left open the same way (at offset 4): kafka-transactions
#      abort (WriteTxnMarkers from the Admin client) ends it on the
#      partition while the coordinator still has it Ongoing; the next
#      producer of the id aborts it there too (epoch 5, a third marker).
# Exit 0 pass, 1 fail, 77 skip (no Java to be had).
set -u
# tool, java_run, expect, show; BS, CP, JVM, WORK (compat/lib/java-tool.sh).
# shellcheck source=lib/java-tool.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/java-tool.sh"
BGS=()
# at_exit: every JVM started in the background killed.
at_exit()
{
    local pid
    for pid in "${BGS[@]}"; do kill -9 "$pid" 2>/dev/null; done
    wait 2>/dev/null
}
java_tool_init txn-java
ID=$$-$RANDOM
N=2000
T0=$SECONDS
TAB=$'\t'

eos() { local n=$1; shift; java_run "$n" strand.compat.Eos "$@"; }
wcount() { local n=$1; shift; java_run "$n" strand.compat.WordCount "$@"; }
elapsed() { echo "$((SECONDS - T0)) s"; }

# bg NAME CLASS ARGS...: CLASS started in the background, its output in
# $WORK/NAME.out; BG is its pid.
bg()
{
    local name=$1 class=$2
    shift 2
    : > "$WORK/$name.out"    # there for wait_for before the JVM opens it
    "${JVM[@]}" -cp "$CP" "$class" "$@" > "$WORK/$name.out" 2>&1 < /dev/null &
    BG=$!
    BGS+=("$BG")
}

# wait_for NAME SECS AWK: until the awk program AWK, run on NAME's output,
# exits 0; fail when SECS pass or the process BG ends first.
wait_for()
{
    local name=$1 end=$((SECONDS + $2)) prog=$3
    until awk "$prog" "$WORK/$name.out"; do
        kill -0 "$BG" 2>/dev/null || { show "$name"; fail "$name ended before: $prog"; }
        [ $SECONDS -lt $end ] || { show "$name"; fail "$name: not after $2 s: $prog"; }
        sleep 0.05
    done
}

# kill9 NAME: SIGKILL to BG, waited for.
kill9() { kill -9 "$BG"; wait "$BG" 2>/dev/null; }

# topic NAME PARTITIONS
topic()
{
    tool "create-$1" TopicCommand --create --topic "$1" --partitions "$2" --replication-factor 1
    expect "create-$1" 0 "^Created topic $1\.\$"
}

# --- 1. consume-transform-produce, exactly once, through two SIGKILLs ---
IN=compat-eos-in-$ID OUT=compat-eos-out-$ID G=compat-eos-group-$ID TXN=compat-eos-txn-$ID
topic "$IN" 3
topic "$OUT" 3
eos produce produce "$BS" "$IN" "$N"
expect produce 0 "^produced $N\$"

# Run 1: killed with a batch's records sent (flushed) in its transaction,
# after two commits; run 2: with its offsets sent too (pending in the group
# coordinator). The loop stops there for the kill.
LOOP=(strand.compat.Eos loop "$BS" "$IN" "$OUT" "$G" "$TXN")
bg loop1 "${LOOP[@]}" open:2
wait_for loop1 60 '/^committed / { c++ } END { exit !(c == 2 && $1 == "open") }'
kill9
A1=$(tail -n 1 "$WORK/loop1.out" | cut -d ' ' -f 2)
C1=$(awk '/^committed / { c = $2 } END { print c }' "$WORK/loop1.out")
echo "eos loop 1: $C1 records committed, killed with $A1 sent in an open transaction ($(elapsed))"

bg loop2 "${LOOP[@]}" offsets:2
wait_for loop2 60 '/^committed / { c++ } END { exit !(c == 2 && $1 == "offsets") }'
kill9
A2=$(tail -n 1 "$WORK/loop2.out" | cut -d ' ' -f 2)
C2=$(awk '/^committed / { c = $2 } END { print c }' "$WORK/loop2.out")
echo "eos loop 2: $C2 records committed, killed with $A2 sent and their offsets in an open transaction ($(elapsed))"

bg loop3 "${LOOP[@]}" none
for _ in $(seq 1 900); do kill -0 "$BG" 2>/dev/null || break; sleep 0.1; done
kill -0 "$BG" 2>/dev/null && { show loop3; fail "loop3: not done after 90 s"; }
wait "$BG"
RC=$?
expect loop3 0 "^done [0-9]+\$"
C3=$(awk '/^done / { print $2 }' "$WORK/loop3.out")
[ $((C1 + C2 + C3)) = "$N" ] || { show loop3; fail "the loops committed $C1 + $C2 + $C3 records, not $N"; }
echo "eos loop 3: $C3 records committed, done ($(elapsed))"

eos verify verify "$BS" "$OUT" "$N"
expect verify 0 "^read_committed records $N distinct $N duplicates 0 missing 0 mismatched 0\$" \
    "^read_uncommitted records $((N + A1 + A2))\$"
echo "output: $(head -n 1 "$WORK/verify.out"); $(tail -n 1 "$WORK/verify.out") ($N + $A1 + $A2 aborted)"

tool groups consumer.group.ConsumerGroupCommand --describe --group "$G"
expect groups 0 "Consumer group '$G' has no active members\."
awk -v t="$IN" '$2 == t { n++; cur += $4; end += $5; if ($4 != $5 || $6 != 0) bad++ }
    END { exit !(n == 3 && !bad && cur == end) }' "$WORK/groups.out" ||
    { show groups; fail "the group's offsets are not at the input's ends"; }
[ "$(awk -v t="$IN" '$2 == t { s += $4 } END { print s }' "$WORK/groups.out")" = "$N" ] ||
    { show groups; fail "the group's offsets do not add up to $N"; }
echo "kafka-consumer-groups --describe: offsets at the ends of the 3 partitions ($N), lag 0 ($(elapsed))"

# --- 2. Kafka Streams word count, exactly_once_v2, through a SIGKILL ---
APP=compat-wc-$ID WIN=compat-wc-in-$ID WOUT=compat-wc-out-$ID
topic "$WIN" 3
topic "$WOUT" 3
wcount lines1 lines "$BS" "$WIN" 0 1000
expect lines1 0 "^produced 1000\$"
RUN=(strand.compat.WordCount run "$BS" "$APP" "$WIN" "$WOUT" "$WORK/streams-state")
bg streams1 "${RUN[@]}" 3
wait_for streams1 90 '/^lines / { n = $2 } END { exit !(n >= 300) }'
kill9
L1=$(awk '/^lines / { n = $2 } END { print n }' "$WORK/streams1.out")
[ "$L1" -lt 1000 ] || { show streams1; fail "streams1 read every line before it was killed"; }
echo "streams 1: killed after reading $L1 of 1000 lines ($(elapsed))"

bg streams2 "${RUN[@]}" 0
wait_for streams2 90 '/^state RUNNING$/ { f = 1 } END { exit !f }'
wcount lines2 lines "$BS" "$WIN" 1000 2000
expect lines2 0 "^produced 1000\$"
wcount check1 check "$BS" "$WOUT" 2000 60
expect check1 0 "^counts exact: 18 words\$"
echo "streams 2: $(head -n 1 "$WORK/check1.out") for 2000 lines, $(tail -n 1 "$WORK/check1.out") ($(elapsed))"
kill -TERM "$BG"
wait "$BG"
RC=$?
expect streams2 143 "^closed\$"
wcount check2 check "$BS" "$WOUT" 2000 0
expect check2 0 "^counts exact: 18 words\$"
echo "after a clean close: $(head -n 1 "$WORK/check2.out")"

tool wc-topics TopicCommand --list
expect wc-topics 0 "^$APP-words-repartition\$" "^$APP-counts-changelog\$"
tool wc-changelog TopicCommand --describe --topic "$APP-counts-changelog"
expect wc-changelog 0 "^Topic: $APP-counts-changelog${TAB}.*PartitionCount: 3${TAB}.*Configs: .*cleanup\.policy=compact"
echo "internal topics: $APP-words-repartition, $APP-counts-changelog (3 partitions, compacted) ($(elapsed))"

# --- 3. kafka-transactions.sh on a transaction left open ---
TH=compat-txn-open-$ID HTXN=compat-txn-open-$ID
topic "$TH" 1
bg hang strand.compat.Eos hang "$BS" "$TH" "$HTXN"
wait_for hang 60 '/^open$/ { f = 1 } END { exit !f }'
kill9

tool producers TransactionsCommand describe-producers --topic "$TH" --partition 0
expect producers 0 "^ProducerId${TAB}ProducerEpoch${TAB}LatestCoordinatorEpoch${TAB}LastSequence${TAB}LastTimestamp${TAB}CurrentTransactionStartOffset${TAB}\$" \
    "^[0-9]+ *${TAB}0 *${TAB}-1 *${TAB}2 *${TAB}[0-9]{13}${TAB}0 *${TAB}\$"
PID=$(awk 'NR == 2 { print $1 }' "$WORK/producers.out")
echo "describe-producers: producer $PID, epoch 0, transaction open at offset 0"

tool list TransactionsCommand list
expect list 0 "^TransactionalId *${TAB}Coordinator${TAB}ProducerId *${TAB}TransactionState${TAB}\$" \
    "^$HTXN *${TAB}[0-9]+ *${TAB}$PID *${TAB}Ongoing *${TAB}\$"
echo "list: $(grep "^$HTXN " "$WORK/list.out" | tr -s ' \t' ' ')"

tool describe TransactionsCommand describe --transactional-id "$HTXN"
expect describe 0 "^CoordinatorId${TAB}TransactionalId *${TAB}ProducerId *${TAB}ProducerEpoch${TAB}TransactionState${TAB}TransactionTimeoutMs${TAB}CurrentTransactionStartTimeMs${TAB}TransactionDurationMs${TAB}TopicPartitions *${TAB}\$" \
    "^[0-9]+ *${TAB}$HTXN *${TAB}$PID *${TAB}0 *${TAB}Ongoing *${TAB}60000 *${TAB}[0-9]{13} *${TAB}[0-9]+ *${TAB}$TH-0 *${TAB}\$"
BROKER=$(awk 'NR == 2 { print $1 }' "$WORK/describe.out")
echo "describe: $(tail -n 1 "$WORK/describe.out" | tr -s ' \t' ' ')"

HANG_HEAD="^Topic${TAB}Partition${TAB}ProducerId${TAB}ProducerEpoch${TAB}CoordinatorEpoch${TAB}StartOffset${TAB}LastTimestamp${TAB}Duration\(min\)${TAB}\$"
tool hanging TransactionsCommand find-hanging --broker-id "$BROKER"
expect hanging 0 "$HANG_HEAD"
[ "$(wc -l < "$WORK/hanging.out")" = 1 ] || { show hanging; fail "find-hanging listed a transaction"; }
tool hanging0 TransactionsCommand find-hanging --broker-id "$BROKER" --max-transaction-timeout 0
expect hanging0 0 "$HANG_HEAD"
[ "$(wc -l < "$WORK/hanging0.out")" = 1 ] || { show hanging0; fail "find-hanging --max-transaction-timeout 0 listed a transaction"; }
echo "find-hanging --broker-id $BROKER (--max-transaction-timeout 15 and 0): none"

# The describe-producers row of the producer: epoch, coordinator epoch
# (the leader epoch of its __transaction_state partition, 0 on a new
# broker, more after restarts: any number), last sequence, open offset.
producer_row() { echo "^$PID *${TAB}$1 *${TAB}[0-9]+ *${TAB}$2 *${TAB}[0-9]{13}${TAB}$3 *${TAB}\$"; }
DESC_EMPTY="^[0-9]+ *${TAB}$HTXN *${TAB}$PID *${TAB}%s *${TAB}Empty *${TAB}60000 *${TAB}None *${TAB}None *${TAB} *${TAB}\$"

# A new producer with the same transactional id: InitProducerId aborts
# the open transaction (the markers at epoch 1) and bumps the epoch again.
eos fence fence "$BS" "$HTXN"
expect fence 0 "^fenced\$"
tool describe-f TransactionsCommand describe --transactional-id "$HTXN"
# shellcheck disable=SC2059
expect describe-f 0 "$(printf "$DESC_EMPTY" 2)"
tool list-f TransactionsCommand list
expect list-f 0 "^$HTXN *${TAB}[0-9]+ *${TAB}$PID *${TAB}Empty *${TAB}\$"
tool producers-f TransactionsCommand describe-producers --topic "$TH" --partition 0
expect producers-f 0 "$(producer_row 1 -1 None)"
eos count count "$BS" "$TH"
expect count 0 "^read_committed 0 read_uncommitted 3\$"
echo "a new producer of $HTXN aborted it: describe Empty at epoch 2, list Empty, the partition's producer at epoch 1 with no transaction; read_committed 0 records, read_uncommitted 3 ($(elapsed))"

# kafka-transactions.sh abort: WriteTxnMarkers from the Admin client, for a
# transaction the coordinator still has Ongoing (a second one, killed the
# same way, at offset 4: 3 records and the first abort's marker before it).
bg hang2 strand.compat.Eos hang "$BS" "$TH" "$HTXN"
wait_for hang2 60 '/^open$/ { f = 1 } END { exit !f }'
kill9
tool producers-2 TransactionsCommand describe-producers --topic "$TH" --partition 0
expect producers-2 0 "$(producer_row 3 2 4)"
tool abort TransactionsCommand abort --topic "$TH" --partition 0 --start-offset 4
expect abort 0
[ ! -s "$WORK/abort.out" ] || { show abort; fail "abort printed something"; }
tool producers-a TransactionsCommand describe-producers --topic "$TH" --partition 0
expect producers-a 0 "$(producer_row 3 2 None)"
tool describe-a TransactionsCommand describe --transactional-id "$HTXN"
expect describe-a 0 "^[0-9]+ *${TAB}$HTXN *${TAB}$PID *${TAB}3 *${TAB}Ongoing *${TAB}60000 *${TAB}[0-9]{13} *${TAB}[0-9]+ *${TAB}$TH-0 *${TAB}\$"
tool hanging-a TransactionsCommand find-hanging --topic "$TH" --max-transaction-timeout 0
expect hanging-a 0 "$HANG_HEAD"
[ "$(wc -l < "$WORK/hanging-a.out")" = 1 ] || { show hanging-a; fail "find-hanging listed a transaction after the abort"; }
eos count-a count "$BS" "$TH"
expect count-a 0 "^read_committed 0 read_uncommitted 6\$"
echo "kafka-transactions abort --start-offset 4: the partition's transaction aborted (read_committed 0 of 6), the coordinator's still Ongoing at epoch 3 ($(elapsed))"

# The coordinator's own abort of it, by the next producer of the id: a
# second marker for the partition, epoch 5.
eos fence-2 fence "$BS" "$HTXN"
expect fence-2 0 "^fenced\$"
tool describe-2 TransactionsCommand describe --transactional-id "$HTXN"
# shellcheck disable=SC2059
expect describe-2 0 "$(printf "$DESC_EMPTY" 5)"
tool producers-3 TransactionsCommand describe-producers --topic "$TH" --partition 0
expect producers-3 0 "$(producer_row 4 -1 None)"
tool offsets GetOffsetShell --topic "$TH"
expect offsets 0 "^$TH:0:9\$"
eos count-2 count "$BS" "$TH"
expect count-2 0 "^read_committed 0 read_uncommitted 6\$"
echo "then fenced: describe Empty at epoch 5, the partition's producer at epoch 4, end offset 9 (6 records, 3 markers) ($(elapsed))"

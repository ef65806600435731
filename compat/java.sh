#!/usr/bin/env bash
# compat/java.sh: the Java client of Kafka 4.x against the broker at
# STRAND_BOOTSTRAP. Kafka's own console producer (org.apache.kafka.tools.
# ConsoleProducer, idempotent as it is by default) writes keyed lines to a
# topic that the Java Admin client created; a KafkaConsumer with assign()
# (compat/java/src/.../Compat.java) reads them back; the lines must match
# byte for byte, in order within each partition, at offsets 0..n-1. Both come from Maven Central through
# compat/java/pom.xml. Exit 0 pass, 1 fail, 77 skip (no Java/Maven to be had).
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=../scripts/lib/deps.sh
. "$ROOT/scripts/lib/deps.sh"

fail() { echo "FAIL: $*" >&2; exit 1; }
BS=${STRAND_BOOTSTRAP:-}
[ -n "$BS" ] || { echo "SKIP: STRAND_BOOTSTRAP is not set"; exit 77; }
if ! command -v mvn >/dev/null 2>&1 || ! command -v java >/dev/null 2>&1; then
    deps_install maven default-jdk-headless >&2 ||
        { echo "SKIP: Java and Maven are not installed and cannot be"; exit 77; }
fi
BUILD=${STRAND_BUILDDIR:-${STRAND_TEST_DIR:-/tmp}}/compat-java
WORK=$(mktemp -d "${STRAND_TEST_DIR:-/tmp}/java.XXXXXX") || fail "mktemp"
trap 'rm -rf "$WORK"' EXIT
TOPIC=compat-java-$$-$RANDOM
N=1000

# Build (quietly; Maven's output only on failure) and get the classpath.
if ! mvn -B -q -Dstyle.color=never -f "$ROOT/compat/java/pom.xml" -Dcompat.target="$BUILD" \
        package dependency:build-classpath -Dmdep.outputFile="$BUILD/classpath.txt" \
        > "$WORK/mvn.log" 2>&1; then
    tail -n 40 "$WORK/mvn.log" >&2
    fail "maven build of compat/java failed"
fi
CP=$BUILD/classes:$(cat "$BUILD/classpath.txt")
JAVA=(java -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -cp "$CP")

"${JAVA[@]}" strand.compat.Compat create "$BS" "$TOPIC" 1 > "$WORK/create.out" 2>&1 ||
    { cat "$WORK/create.out" >&2; fail "Admin.createTopics failed"; }
echo "Java Admin: $(tail -n 1 "$WORK/create.out")"

# Keyed lines: "key:value", values with spaces, UTF-8 and colons.
for i in $(seq 0 $((N - 1))); do
    printf 'key-%d:line %d of the java compat test: ünïcödé ✓, a:colon\n' "$i" "$i"
done > "$WORK/in"
"${JAVA[@]}" org.apache.kafka.tools.ConsoleProducer --bootstrap-server "$BS" --topic "$TOPIC" \
    --reader-property parse.key=true --reader-property key.separator=: \
    < "$WORK/in" > "$WORK/prod.out" 2>&1 ||
    { tail -n 40 "$WORK/prod.out" >&2; fail "ConsoleProducer failed"; }
echo "Java ConsoleProducer: wrote $N lines"

"${JAVA[@]}" strand.compat.Compat consume "$BS" "$TOPIC" > "$WORK/out" 2> "$WORK/cons.err" ||
    { tail -n 40 "$WORK/cons.err" >&2; fail "KafkaConsumer (assign) failed"; }
# Every line once, byte for byte (keys spread the lines over the partitions
# when the topic has several)...
sed 's/:/\t/' "$WORK/in" | LC_ALL=C sort > "$WORK/want"
cut -f 2- "$WORK/out" | LC_ALL=C sort > "$WORK/got"
cmp -s "$WORK/want" "$WORK/got" || {
    diff "$WORK/want" "$WORK/got" | head -n 20 >&2
    fail "the consumer read back something else ($(wc -l < "$WORK/out") lines)"; }
# ...and in produce order within each partition.
awk -F '\t' '{ n = substr($2, 5) + 0; if (($1 in last) && n <= last[$1]) bad = bad " " $2; last[$1] = n }
    END { if (bad != "") { print "out of order:" bad; exit 1 } }' "$WORK/out" >&2 ||
    fail "the consumer read a partition out of order"
echo "Java KafkaConsumer (assign): $N records read back byte for byte, in order," \
    "from $(cut -f 1 "$WORK/out" | sort -u | wc -l) partition(s)"

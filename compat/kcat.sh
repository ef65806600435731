#!/usr/bin/env bash
# compat/kcat.sh: kcat (librdkafka's command-line client) against the broker
# at STRAND_BOOTSTRAP: -L lists it, -P produces lines with keys (-K), a
# header (-H) and a binary file as one message, -C -e reads everything back,
# compared byte for byte. Exit 0 pass, 1 fail, 77 skip (no kcat to be had).
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=../scripts/lib/deps.sh
. "$ROOT/scripts/lib/deps.sh"

fail() { echo "FAIL: $*" >&2; exit 1; }
BS=${STRAND_BOOTSTRAP:-}
[ -n "$BS" ] || { echo "SKIP: STRAND_BOOTSTRAP is not set"; exit 77; }
command -v kcat >/dev/null 2>&1 || deps_install kcat >/dev/null 2>&1 ||
    { echo "SKIP: kcat is not installed and cannot be"; exit 77; }
WORK=$(mktemp -d "${STRAND_TEST_DIR:-/tmp}/kcat.XXXXXX") || fail "mktemp"
trap 'rm -rf "$WORK"' EXIT
TOPIC=compat-kcat-$$-$RANDOM
KCAT=(kcat -b "$BS" -X topic.metadata.refresh.interval.ms=1000)

# -L: the broker as advertised (host:port of the bootstrap) and its id.
"${KCAT[@]}" -L > "$WORK/list" 2>&1 || { cat "$WORK/list" >&2; fail "kcat -L failed"; }
grep -Eq "^ +broker [0-9]+ at $BS( |\$)" "$WORK/list" ||
    { cat "$WORK/list" >&2; fail "kcat -L does not list a broker at $BS"; }
echo "kcat -L: $(grep -E '^ +broker ' "$WORK/list" | head -n 1 | sed 's/^ *//')"

# -P -K: keyed lines, with spaces, tabs, UTF-8, an empty key and an empty
# value, and a header on every message.
printf '%s\n' 'k1:first value' 'k2:second: has a colon' 'k 3:tab	and  spaces' \
    'ключ:значение ✓' ':empty key' 'k6:' 'k7:last' > "$WORK/in"
# (From stdin: a file argument would be sent whole, as one message.)
"${KCAT[@]}" -P -t "$TOPIC" -p 0 -K : -H origin=kcat -H n=1 < "$WORK/in" 2> "$WORK/perr" ||
    { cat "$WORK/perr" >&2; fail "kcat -P -K failed"; }
# The file itself, binary, as one message (kcat -P FILE sends a file whole).
head -c 4096 /dev/urandom > "$WORK/blob"
printf '\0\n\r\xff' >> "$WORK/blob"
"${KCAT[@]}" -P -t "$TOPIC" -p 0 "$WORK/blob" 2> "$WORK/perr" ||
    { cat "$WORK/perr" >&2; fail "kcat -P FILE failed"; }

# -C -e: the keyed lines back with offsets, keys, values and headers.
"${KCAT[@]}" -C -t "$TOPIC" -p 0 -o beginning -c 7 -e \
    -f '%o|%k|%s|%h\n' > "$WORK/out" 2> "$WORK/cerr" ||
    { cat "$WORK/cerr" >&2; fail "kcat -C failed"; }
i=0
while IFS= read -r line; do
    key=${line%%:*} val=${line#*:}
    printf '%s|%s|%s|%s\n' "$i" "$key" "$val" 'origin=kcat,n=1'
    i=$((i + 1))
done < "$WORK/in" > "$WORK/want"
cmp -s "$WORK/want" "$WORK/out" || {
    echo "expected:" >&2; cat -A "$WORK/want" | head -c 2000 >&2
    echo "got:" >&2; cat -A "$WORK/out" | head -c 2000 >&2
    fail "kcat -C read back something else"; }
echo "kcat -P -K / -C: 7 keyed messages with headers read back byte for byte"

# The binary message at offset 7, value only, no delimiter added.
"${KCAT[@]}" -C -t "$TOPIC" -p 0 -o 7 -c 1 -e -D '' -f '%s' > "$WORK/blob.out" 2> "$WORK/cerr" ||
    { cat "$WORK/cerr" >&2; fail "kcat -C of the binary message failed"; }
cmp "$WORK/blob" "$WORK/blob.out" || fail "binary message differs"
echo "kcat -P FILE / -C: $(wc -c < "$WORK/blob") binary bytes read back byte for byte"

# Nothing more in the partition: -e at the end, offsets 0..7.
"${KCAT[@]}" -C -t "$TOPIC" -p 0 -o beginning -e -f '%o\n' > "$WORK/offs" 2> "$WORK/cerr" ||
    { cat "$WORK/cerr" >&2; fail "kcat -C -e failed"; }
[ "$(tr '\n' ' ' < "$WORK/offs")" = "0 1 2 3 4 5 6 7 " ] ||
    fail "offsets read: $(tr '\n' ' ' < "$WORK/offs"), expected 0..7"
echo "kcat -C -e: offsets 0..7, then end of partition"

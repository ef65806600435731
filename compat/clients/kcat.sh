#!/usr/bin/env bash
# compat/clients/kcat.sh: kcat (Debian's package, on its librdkafka) in the
# compatibility suite. kcat is line-oriented: records are text lines,
# one set of headers per invocation (-H), no explicit timestamps; where
# compat/README.md's data needs more, this script says what it checks
# instead. See compat/lib/client.sh for the calls.
. "$(dirname "${BASH_SOURCE[0]}")/../lib/client.sh"

case ${1:-} in
    na) echo "configs kcat has no admin API"; exit 0 ;;
    install)
        command -v kcat >/dev/null 2>&1 || deps_install kcat >/dev/null 2>&1 ||
            skip "kcat is not installed and cannot be"
        echo "VERSION: kcat $(kcat -V 2>&1 | sed -n 's/^Version \([^ ]*\) .*librdkafka \([^ ]*\) .*/\1 (librdkafka \2)/p')"
        exit 0 ;;
    run) shift ;;
    *) fail "usage: $0 na | install | run SCENARIO [PHASE]" ;;
esac

BS=$COMPAT_BS
W=$COMPAT_WORK
KCAT=(kcat -b "$BS" -X topic.metadata.refresh.interval.ms=1000)
topic() { echo "c-kcat-$1-$COMPAT_ID"; }
# lines N PREFIX: the values of the records, "PREFIX-i" for i < N.
lines() { local i; for i in $(seq 0 $(($1 - 1))); do echo "$2-$i"; done; }
# consume TOPIC N FORMAT [ARGS]: partition 0 from the start, N records
consume() { local t=$1 n=$2 f=$3; shift 3; "${KCAT[@]}" -C -t "$t" -p 0 -o beginning -c "$n" -e -f "$f" "$@"; }
expect_file() # expect_file WANT GOT WHAT
{
    cmp -s "$1" "$2" && return 0
    echo "expected:" >&2; head -c 2000 "$1" | cat -A >&2
    echo "got:" >&2; head -c 2000 "$2" | cat -A >&2
    fail "$3"
}

metadata()
{
    local t; t=$(topic meta)
    "${KCAT[@]}" -L > "$W/list" 2>&1 || { cat "$W/list" >&2; fail "kcat -L"; }
    grep -Eq "^ +broker [0-9]+ at $BS( |\$)" "$W/list" || { cat "$W/list" >&2; fail "no broker at $BS"; }
    [ "$(grep -c '^ *broker [0-9]* at' "$W/list")" = 1 ] || { cat "$W/list" >&2; fail "not one broker"; }
    # The topic is created by the producer's Metadata request (auto-create,
    # num.partitions=3 on the suite's broker).
    echo one | "${KCAT[@]}" -P -t "$t" 2> "$W/perr" || { cat "$W/perr" >&2; fail "kcat -P"; }
    "${KCAT[@]}" -L -t "$t" > "$W/list" 2>&1 || { cat "$W/list" >&2; fail "kcat -L -t"; }
    grep -q "topic \"$t\" with 3 partitions:" "$W/list" || { cat "$W/list" >&2; fail "$t has not 3 partitions"; }
    for p in 0 1 2; do
        grep -Eq "partition $p, leader [0-9]+, replicas: [0-9]+, isrs: [0-9]+" "$W/list" ||
            { cat "$W/list" >&2; fail "partition $p not led"; }
    done
    echo "metadata: one broker at $BS; $t auto-created with 3 partitions, each led"
}

produce()
{
    local codec t i
    for codec in none gzip snappy lz4 zstd; do
        t=$(topic "p-$codec")
        # Keys with colons in values, an empty key, UTF-8; headers with a
        # repeated key and an empty value on every record.
        for i in $(seq 0 49); do
            if [ $((i % 10)) = 0 ]; then k=; else k=key-$i; fi
            printf '%s:value-%d ü✓|%s:%s\n' "$k" "$i" "$(printf '%*s' $((i % 40)) '' | tr ' ' x)" "$i"
        done > "$W/in"
        "${KCAT[@]}" -P -t "$t" -p 0 -z "$codec" -K : -H a=1 -H a=2 -H empty= -H "codec=$codec" \
            < "$W/in" 2> "$W/perr" || { cat "$W/perr" >&2; fail "kcat -P -z $codec"; }
        consume "$t" 50 '%o|%k|%s|%h\n' > "$W/out" 2> "$W/cerr" || { cat "$W/cerr" >&2; fail "kcat -C"; }
        i=0
        while IFS= read -r line; do
            printf '%d|%s|%s|a=1,a=2,empty=,codec=%s\n' "$i" "${line%%:*}" "${line#*:}" "$codec"
            i=$((i + 1))
        done < "$W/in" > "$W/want"
        expect_file "$W/want" "$W/out" "$codec: read back something else"
        echo "produce $codec: 50 keyed records with headers read back byte for byte at offsets 0..49"
    done
}

# kcat cannot set timestamps: 10 records from 10 kcat runs get increasing
# CreateTimes, read back (%T), then each found again by its timestamp.
by_time()
{
    local t i ts off
    t=$(topic time)
    for i in $(seq 0 9); do
        echo "t-$i" | "${KCAT[@]}" -P -t "$t" -p 0 2> "$W/perr" || { cat "$W/perr" >&2; fail "kcat -P"; }
        sleep 0.01
    done
    consume "$t" 10 '%o %T\n' > "$W/ts" 2> "$W/cerr" || { cat "$W/cerr" >&2; fail "kcat -C"; }
    [ "$(cut -d ' ' -f 2 "$W/ts" | sort -n -u | wc -l)" = 10 ] || { cat "$W/ts" >&2; fail "timestamps not distinct"; }
    for i in 0 4 9; do
        ts=$(awk -v i=$i '$1 == i { print $2 }' "$W/ts")
        off=$("${KCAT[@]}" -C -t "$t" -p 0 -o "s@$ts" -c 1 -e -f '%o' 2> "$W/cerr")
        [ "$off" = "$i" ] || { cat "$W/cerr" >&2; fail "offset for timestamp $ts: '$off', expected $i"; }
    done
    # (A timestamp after the last record: kcat starts at offset 0, with
    # Kafka as with Strand; not a check of the broker.)
    echo "by-time: the records at offsets 0, 4, 9 found by their timestamps"
}

# assigned FILE: the partitions of the last assignment kcat -G reported.
assigned()
{
    grep 'rebalanced' "$1" | tail -n 1 | grep -o '\[[0-9]*\]' | tr -d '[]' | sort -n | tr '\n' ' '
}

# Three kcat -G members; the third is stopped (SIGTERM: it leaves the group).
group()
{
    local t g i pids=() all n
    t=$(topic group) g=$t
    "${KCAT[@]}" -L -t "$t" >/dev/null 2>&1 # auto-create (3 partitions)
    for i in $(seq 0 59); do echo "k$i:g-$i"; done > "$W/in"
    "${KCAT[@]}" -P -t "$t" -K : < "$W/in" 2> "$W/perr" || { cat "$W/perr" >&2; fail "kcat -P"; }
    # No commits: a member stopped by SIGTERM may have had a record
    # polled (its offset stored and committed at close) but not printed
    # (kcat drops what it holds once told to stop), so the member taking
    # its partition over reads it from the start.
    for i in 0 1 2; do
        "${KCAT[@]}" -G "$g" -X auto.offset.reset=earliest -X session.timeout.ms=6000 \
            -X enable.auto.commit=false -f '%p %o %k %s\n' "$t" > "$W/m$i.out" 2> "$W/m$i.err" &
        pids+=($!)
    done
    for _ in $(seq 1 300); do
        all="$(assigned "$W/m0.err")$(assigned "$W/m1.err")$(assigned "$W/m2.err")"
        n=$(echo "$all" | wc -w)
        [ "$n" = 3 ] && [ "$(echo "$all" | tr ' ' '\n' | grep -c .)" = 3 ] &&
            [ -n "$(assigned "$W/m0.err")" ] && [ -n "$(assigned "$W/m1.err")" ] && [ -n "$(assigned "$W/m2.err")" ] &&
            [ "$(echo "$all" | tr ' ' '\n' | sort -u | grep -c .)" = 3 ] && break
        sleep 0.1
    done
    [ "$n" = 3 ] || { kill "${pids[@]}"; cat "$W"/m*.err >&2; fail "three members never shared the 3 partitions"; }
    echo "group: ${SECONDS}s: three members: [$(assigned "$W/m0.err")] [$(assigned "$W/m1.err")] [$(assigned "$W/m2.err")]"
    kill -TERM "${pids[2]}"; wait "${pids[2]}" 2>/dev/null
    for _ in $(seq 1 300); do
        all="$(assigned "$W/m0.err")$(assigned "$W/m1.err")"
        [ "$(echo "$all" | tr ' ' '\n' | sort -u | grep -c .)" = 3 ] && [ "$(echo "$all" | wc -w)" = 3 ] &&
            [ "$(sort -u "$W"/m*.out | wc -l)" -ge 60 ] && break
        sleep 0.1
    done
    kill -TERM "${pids[0]}" "${pids[1]}"; wait 2>/dev/null
    [ "$(echo "$all" | wc -w)" = 3 ] || { cat "$W"/m*.err >&2; fail "two members never took the 3 partitions"; }
    echo "group: ${SECONDS}s: after one left: [$(assigned "$W/m0.err")] [$(assigned "$W/m1.err")]"
    # Every record read, once at least, by one of the members: key and
    # value as produced.
    cat "$W"/m*.out | awk '{ print $3 ":" $4 }' | sort -u > "$W/got"
    sort -u "$W/in" > "$W/want"
    expect_file "$W/want" "$W/got" "the members did not read the 60 records"
    echo "group: the 60 records read by the members"
}

restart()
{
    local t g; t=$(topic restart) g=$t
    if [ "$1" = before ]; then
        lines 20 r | "${KCAT[@]}" -P -t "$t" -p 0 2> "$W/perr" || { cat "$W/perr" >&2; fail "kcat -P"; }
        # -c 10: kcat stops after 10 records and commits what it consumed.
        "${KCAT[@]}" -G "$g" -X auto.offset.reset=earliest -c 10 -f '%p %o %s\n' "$t" > "$W/r1" 2> "$W/r1.err" ||
            { cat "$W/r1.err" >&2; fail "kcat -G -c 10"; }
        lines 10 r | awk '{ print 0, NR - 1, $0 }' > "$W/want"
        expect_file "$W/want" "$W/r1" "the first 10 records"
        echo "restart: 10 of 20 records consumed in group $g and committed"
        return
    fi
    seq 20 24 | sed 's/^/r-/' | "${KCAT[@]}" -P -t "$t" -p 0 2> "$W/perr" || { cat "$W/perr" >&2; fail "kcat -P after the restart"; }
    "${KCAT[@]}" -G "$g" -X auto.offset.reset=earliest -c 15 -f '%p %o %s\n' "$t" > "$W/r2" 2> "$W/r2.err" ||
        { cat "$W/r2.err" >&2; fail "kcat -G -c 15 after the restart"; }
    for i in $(seq 10 24); do echo "0 $i r-$i"; done > "$W/want"
    expect_file "$W/want" "$W/r2" "after the restart"
    echo "restart: group $g resumed at offset 10, read 10..24"
}

idempotent()
{
    local t; t=$(topic idem)
    lines 1000 i > "$W/in"
    "${KCAT[@]}" -P -t "$t" -p 0 -X enable.idempotence=true -X acks=all -X batch.size=2048 \
        < "$W/in" 2> "$W/perr" || { cat "$W/perr" >&2; fail "kcat -P idempotent"; }
    consume "$t" 1000 '%o %s\n' > "$W/out" 2> "$W/cerr" || { cat "$W/cerr" >&2; fail "kcat -C"; }
    awk '{ print NR - 1, $0 }' "$W/in" > "$W/want"
    expect_file "$W/want" "$W/out" "idempotent records"
    echo "idempotent: 1000 records once each, in order"
}

# kcat -X transactional.id wraps all it produces in one transaction,
# committed at the end (it cannot abort): two transactions, then a
# read_committed consumer.
txn()
{
    local t; t=$(topic txn)
    "${KCAT[@]}" -L -t "$t" >/dev/null 2>&1
    lines 5 t | "${KCAT[@]}" -P -t "$t" -p 0 -X "transactional.id=$t" 2> "$W/perr" ||
        { cat "$W/perr" >&2; fail "transactional kcat -P"; }
    seq 5 9 | sed 's/^/t-/' | "${KCAT[@]}" -P -t "$t" -p 0 -X "transactional.id=$t" 2> "$W/perr" ||
        { cat "$W/perr" >&2; fail "transactional kcat -P"; }
    "${KCAT[@]}" -C -t "$t" -p 0 -o beginning -e -X isolation.level=read_committed -f '%s\n' > "$W/out" 2> "$W/cerr" ||
        { cat "$W/cerr" >&2; fail "kcat -C read_committed"; }
    lines 10 t > "$W/want"
    expect_file "$W/want" "$W/out" "read_committed"
    echo "txn: two committed transactions read back by a read_committed consumer (kcat cannot abort)"
}

case ${1:-} in
    metadata) metadata ;;
    produce) produce ;;
    by-time) by_time ;;
    group) group ;;
    restart) restart "${2:-}" ;;
    idempotent) idempotent ;;
    txn) txn ;;
    *) fail "unknown scenario ${1:-}" ;;
esac

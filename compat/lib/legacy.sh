# compat/lib/legacy.sh: sourced by the client scripts whose driver is one
# program checking several scenarios in one run (compat/go for franz-go,
# compat/python/compat.py for kafka-python, compat/node/compat.js for
# KafkaJS): Metadata (the broker list, a topic auto-created by a Metadata
# request), 2,000 records per codec with keys, headers and timestamps
# produced by the idempotent producer and read back byte for byte at their
# offsets, and ListOffsets by timestamp. The program runs once per suite
# run, for the first of these scenarios; the others report the same run.
# The scenarios it does not run yet are "untested".
#   legacy_na            prints the untested scenarios (for CLIENT.sh na)
#   legacy_run CMD...    runs CMD once, then gives its status and output
legacy_na()
{
    local s
    for s in group restart txn configs; do
        echo "$s untested: the driver of this client does not run it yet"
    done
}

legacy_run()
{
    local out=$COMPAT_WORK/full
    if [ ! -f "$out.rc" ]; then
        "$@" > "$out.log" 2>&1
        echo $? > "$out.rc"
    else
        echo "(the same run as the metadata scenario's)"
    fi
    cat "$out.log"
    return "$(cat "$out.rc")"
}

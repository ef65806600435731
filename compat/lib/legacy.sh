# compat/lib/legacy.sh: sourced by the client scripts whose driver is one
# program checking several scenarios in one run (compat/go for franz-go,
# compat/python/compat.py for kafka-python, compat/node/compat.js for
# KafkaJS): Metadata (the broker list, a topic auto-created by a Metadata
# request), 2,000 records per codec with keys, headers and timestamps
# produced by the idempotent producer and read back byte for byte at their
# offsets, and ListOffsets by timestamp. The program runs once per suite
# run, for the first of these scenarios; the others report the same run.
# The other scenarios (group, restart, txn, configs) the same program runs
# one per call, as the other clients' drivers do.
#   legacy_scenario SCEN  true for the scenarios of the one run
#   legacy_run CMD...     runs CMD once, then gives its status and output
legacy_scenario()
{
    case $1 in metadata|produce|by-time|idempotent) return 0 ;; esac
    return 1
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

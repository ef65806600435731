"""The data of compat/README.md, shared by the Python drivers of the
compatibility suite (kafka-python, confluent-kafka): the same records as
compat/java/src/main/java/strand/compat/Suite.java, and the checks."""
import sys
import time

N_PRODUCE = 50
CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
DEADLINE = 60.0

errors = []


def mismatch(msg):
    errors.append(msg)
    if len(errors) <= 20:
        print("MISMATCH: " + msg, file=sys.stderr)


def die(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def finish():
    if errors:
        die("%d mismatches" % len(errors))
    sys.exit(0)


def key(i):
    if i % 10 == 0:
        return None
    if i == 7:
        return bytes([0, 0xFF, 1, 0xFE, 0])
    return b"key-%d" % i


def value(i):
    if i == 5:
        return b""
    head = ("value-%d ü✓|" % i).encode()
    return head + bytes((i * 31 + j) & 0xFF for j in range(i % 40))


def headers(i):
    if i % 3 == 1:
        return [("h", b"v%d" % i)]
    if i % 3 == 2:
        return [("a", b"1"), ("a", b"2"), ("empty", b"")]
    return []


def base_ms(back_s):
    return int(time.time()) * 1000 - back_s * 1000


def check_record(what, i, offset, k, v, hs, ts, want_ts):
    """One record read back against record i of the data."""
    if offset != i:
        mismatch("%s: record %d at offset %d" % (what, i, offset))
    if k != key(i):
        mismatch("%s: offset %d key %r, expected %r" % (what, offset, k, key(i)))
    if v != value(i):
        mismatch("%s: offset %d value %r, expected %r" % (what, offset, v, value(i)))
    if list(hs) != headers(i):
        mismatch("%s: offset %d headers %r, expected %r" % (what, offset, hs, headers(i)))
    if ts != want_ts:
        mismatch("%s: offset %d timestamp %d, expected %d" % (what, offset, ts, want_ts))


def check_spread(what, assignments, nparts):
    """True when every member owns partitions and together they own
    0..nparts-1 once each."""
    allp = [p for a in assignments for p in a]
    return all(assignments) and sorted(allp) == list(range(nparts))


def check_group_records(seen):
    """seen: {(partition, offset): value} from every member; record i of
    the group scenario is at partition i % 6, offset i // 6."""
    for i in range(60):
        got = seen.get((i % 6, i // 6))
        if got != b"g-%d" % i:
            mismatch("partition %d offset %d: %r, expected g-%d" % (i % 6, i // 6, got, i))

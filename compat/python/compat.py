"""kafka-python compat check: the stock kafka-python client (pinned in
compat/python/requirements.txt) against the broker given as the only
argument. Run by compat/kafka-python.sh.

For each compression codec kafka-python has (none, gzip, snappy, lz4, zstd)
it asks Metadata for a new topic (auto-created by the broker), produces N
records with the idempotent producer to explicit partitions, with keys,
values, headers and explicit timestamps, reads them back with a group-less
consumer (KafkaConsumer.assign, no group_id) and compares every byte, offset
and timestamp, seeks into the middle of each partition, then checks
ListOffsets earliest, latest and by timestamp.
Exit status 0 when everything matches, 1 with the first differences on
stderr.
"""
import os
import socket
import sys
import time

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.version import __version__ as KAFKA_PYTHON_VERSION

N_RECORDS = 2000
CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]

errors = []


def mismatch(msg):
    errors.append(msg)
    if len(errors) <= 20:
        print("MISMATCH: " + msg, file=sys.stderr)


def die(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def det_bytes(seed, n):
    """n deterministic bytes covering all byte values, different per seed
    (the same xorshift as compat/go/main.go)."""
    x = (seed * 2654435761 + 1) & 0xFFFFFFFF
    out = bytearray(n)
    for i in range(n):
        x ^= (x << 13) & 0xFFFFFFFF
        x ^= x >> 17
        x ^= (x << 5) & 0xFFFFFFFF
        out[i] = x & 0xFF
    return bytes(out)


class Want:
    __slots__ = ("part", "key", "value", "headers", "ts", "offset")


def make_records(nparts, base_ms):
    """Null, empty and binary keys and values, UTF-8, one large value, zero
    to three headers (an empty value, a repeated key; no null value:
    KafkaProducer.send() takes bytes only), timestamps increasing by 1 ms
    from base_ms, partitions round-robin."""
    ws = []
    for i in range(N_RECORDS):
        w = Want()
        w.part = i % nparts
        w.ts = base_ms + i
        w.offset = None
        if i % 97 == 0:
            w.key = None
        elif i % 89 == 0:
            w.key = b""
        elif i % 11 == 0:
            w.key = det_bytes(i, 16)
        else:
            w.key = b"key-%d" % i
        if i == N_RECORDS // 2:
            w.value = det_bytes(i, 200000)
        elif i % 101 == 5:
            w.value = None
        elif i % 50 == 0:
            w.value = b""
        elif i % 7 == 0:
            w.value = det_bytes(i, 1 + i % 300)
        else:
            w.value = ("value %d of the kafka-python compat test: ünïcödé ✓" % i).encode()
        w.headers = [
            [],
            [("h1", b"v%d" % i)],
            [("empty", b""), ("bin", det_bytes(i + 1, 8))],
            [("dup", b"a"), ("dup", b"b"), ("ключ", "значение".encode())],
        ][i % 4]
        ws.append(w)
    return ws


def check_brokers(admin, bs):
    """The broker list through the admin client's describe_cluster()
    (Metadata v8 asking for the authorized operations)."""
    try:
        md = admin.describe_cluster()
    except Exception as e:  # the client's error, as it reports it
        mismatch("KafkaAdminClient.describe_cluster() raised %r" % e)
        return
    brokers = md["brokers"]
    if len(brokers) != 1:
        die("Metadata lists %d brokers, expected 1: %r" % (len(brokers), brokers))
    b = brokers[0]
    addr = "%s:%d" % (b["host"], b["port"])
    if addr != bs:
        die("Metadata: broker %d at %s, expected %s" % (b["node_id"], addr, bs))
    print("Metadata: broker %d at %s, controller %s, cluster %s (kafka-python %s)"
          % (b["node_id"], addr, md.get("controller_id"), md.get("cluster_id"), KAFKA_PYTHON_VERSION))


def check_describe_topics(admin, topics):
    """describe_topics() (Metadata v8 with the authorized operations, no
    auto-creation): {topic: (error code, partition count)} as expected."""
    try:
        got = {t["topic"]: (t["error_code"], len(t["partitions"])) for t in admin.describe_topics(list(topics))}
    except Exception as e:  # the client's error, as it reports it
        mismatch("KafkaAdminClient.describe_topics(%r) raised %r" % (list(topics), e))
        return
    if got != topics:
        mismatch("KafkaAdminClient.describe_topics(): %r, expected %r" % (got, topics))


def new_producer(bs, codec):
    return KafkaProducer(
        bootstrap_servers=bs, client_id="strand-compat-kafka-python",
        enable_idempotence=True, acks="all",
        compression_type=None if codec == "none" else codec,
        linger_ms=5, batch_size=16384, request_timeout_ms=20000)


def auto_create(producer, topic):
    """partitions_for() sends Metadata for the topic with auto-creation
    allowed (the producer's default) and waits until it has partitions."""
    parts = producer.partitions_for(topic)
    if not parts:
        die("topic %s not auto-created: no partitions" % topic)
    if sorted(parts) != list(range(len(parts))):
        die("topic %s: partitions %r" % (topic, sorted(parts)))
    return len(parts)


def produce(producer, topic, ws):
    futs = []
    for w in ws:
        futs.append(producer.send(topic, key=w.key, value=w.value, headers=w.headers,
                                  partition=w.part, timestamp_ms=w.ts))
    producer.flush(timeout=30)
    nxt = {}
    for i, (w, f) in enumerate(zip(ws, futs)):
        try:
            md = f.get(timeout=30)
        except Exception as e:  # the client's error, as it reports it
            die("produce record %d to %s: %r" % (i, topic, e))
        w.offset = md.offset
        if md.partition != w.part:
            mismatch("record %d produced to partition %d, asked %d" % (i, md.partition, w.part))
        if md.offset != nxt.get(w.part, 0):
            mismatch("record %d: produce result offset %d in partition %d, expected %d"
                     % (i, md.offset, w.part, nxt.get(w.part, 0)))
        nxt[w.part] = md.offset + 1


def compare(topic, w, r):
    at = "%s[%d]@%d" % (topic, r.partition, r.offset)
    if r.offset != w.offset:
        mismatch("%s: offset %d, expected %d" % (at, r.offset, w.offset))
    if r.key != w.key:
        mismatch("%s: key %r, expected %r" % (at, r.key, w.key))
    if r.value != w.value:
        mismatch("%s: value of %s bytes differs from the %s produced" % (
            at, None if r.value is None else len(r.value), None if w.value is None else len(w.value)))
    if r.timestamp != w.ts:
        mismatch("%s: timestamp %d, expected %d" % (at, r.timestamp, w.ts))
    if r.timestamp_type != 0:
        mismatch("%s: timestamp type %d, expected 0 (CreateTime)" % (at, r.timestamp_type))
    got = [(k, bytes(v) if v is not None else None) for k, v in (r.headers or [])]
    if got != w.headers:
        mismatch("%s: headers %r, expected %r" % (at, got, w.headers))
    return len(r.key or b"") + len(r.value or b"") + sum(len(k.encode()) + len(v) for k, v in w.headers)


def consume(consumer, topic, nparts, ws):
    tps = [TopicPartition(topic, p) for p in range(nparts)]
    consumer.assign(tps)
    consumer.seek_to_beginning(*tps)
    by_part = {}
    for w in ws:
        by_part.setdefault(w.part, []).append(w)
    got = {p: 0 for p in range(nparts)}
    total = nbytes = 0
    deadline = time.time() + 20
    while total < len(ws):
        if time.time() > deadline:
            die("consume %s: only %d of %d records after 20 s (per partition: %r)"
                % (topic, total, len(ws), got))
        for tp, recs in consumer.poll(timeout_ms=500, max_records=2000).items():
            for r in recs:
                i = got[tp.partition]
                got[tp.partition] += 1
                total += 1
                exp = by_part.get(tp.partition, [])
                if i >= len(exp):
                    mismatch("%s[%d]: extra record at offset %d" % (topic, tp.partition, r.offset))
                    continue
                nbytes += compare(topic, exp[i], r)
    return total, nbytes


def consume_from_middle(consumer, topic, nparts, ws):
    """seek() into the middle of each partition (inside a batch): the first
    record polled must be the one at that offset."""
    by_part = {}
    for w in ws:
        by_part.setdefault(w.part, []).append(w)
    mid = {p: by_part[p][len(by_part[p]) // 2 + 1] for p in range(nparts)}
    for p in range(nparts):
        consumer.seek(TopicPartition(topic, p), mid[p].offset)
    seen = set()
    deadline = time.time() + 10
    while len(seen) < nparts:
        if time.time() > deadline:
            die("consume %s from the middle: records of %d partitions only after 10 s" % (topic, len(seen)))
        for tp, recs in consumer.poll(timeout_ms=500, max_records=100).items():
            if recs and tp.partition not in seen:
                seen.add(tp.partition)
                compare(topic, mid[tp.partition], recs[0])


def check_list_offsets(consumer, topic, nparts, ws):
    """Earliest is 0, latest the record count, a record's own timestamp (and
    1 ms before it) finds it, a timestamp past the last record finds none."""
    tps = [TopicPartition(topic, p) for p in range(nparts)]
    by_part = {}
    for w in ws:
        by_part.setdefault(w.part, []).append(w)
    first = consumer.beginning_offsets(tps)
    last = consumer.end_offsets(tps)
    for tp in tps:
        if first.get(tp) != 0:
            mismatch("ListOffsets earliest %s[%d]: %r, expected 0" % (topic, tp.partition, first.get(tp)))
        if last.get(tp) != len(by_part[tp.partition]):
            mismatch("ListOffsets latest %s[%d]: %r, expected %d"
                     % (topic, tp.partition, last.get(tp), len(by_part[tp.partition])))
    mid = {tp: by_part[tp.partition][len(by_part[tp.partition]) // 2] for tp in tps}
    for name, delta in (("by-timestamp", 0), ("by-timestamp-between", -1)):
        res = consumer.offsets_for_times({tp: mid[tp].ts + delta for tp in tps})
        for tp in tps:
            r = res.get(tp)
            if r is None or r.offset != mid[tp].offset or r.timestamp != mid[tp].ts:
                mismatch("ListOffsets %s %s[%d] (timestamp %d): %r, expected offset %d timestamp %d"
                         % (name, topic, tp.partition, mid[tp].ts + delta, r, mid[tp].offset, mid[tp].ts))
    res = consumer.offsets_for_times({tp: by_part[tp.partition][-1].ts + 1 for tp in tps})
    for tp in tps:
        if res.get(tp) is not None:
            mismatch("ListOffsets by-timestamp-past-end %s[%d]: %r, expected none"
                     % (topic, tp.partition, res.get(tp)))


def main():
    if len(sys.argv) != 2:
        die("usage: compat.py HOST:PORT")
    bs = sys.argv[1]
    run = "%d-%d" % (os.getpid(), int(time.time() * 1000) % 1000000)
    admin = KafkaAdminClient(bootstrap_servers=bs, client_id="strand-compat-kafka-python")
    check_brokers(admin, bs)
    # A topic that does not exist: UNKNOWN_TOPIC_OR_PARTITION, no partitions.
    check_describe_topics(admin, {"compat-kafka-python-missing-" + run: (3, 0)})
    consumer = KafkaConsumer(bootstrap_servers=bs, client_id="strand-compat-kafka-python",
                             group_id=None, enable_auto_commit=False,
                             auto_offset_reset="earliest", fetch_max_wait_ms=500)
    nerr = len(errors)
    try:
        for codec in CODECS:
            start = time.time()
            topic = "compat-kafka-python-%s-%s" % (codec, run)
            producer = new_producer(bs, codec)
            try:
                nparts = auto_create(producer, topic)
                check_describe_topics(admin, {topic: (0, nparts)})
                # Ten minutes ago: inside retention and the timestamp bounds.
                ws = make_records(nparts, int(time.time() * 1000) - 600000)
                produce(producer, topic, ws)
            finally:
                producer.close(timeout=10)
            n, nbytes = consume(consumer, topic, nparts, ws)
            consume_from_middle(consumer, topic, nparts, ws)
            check_list_offsets(consumer, topic, nparts, ws)
            if n != len(ws):
                mismatch("%s: %d records compared, %d produced" % (codec, n, len(ws)))
            if len(errors) > nerr:
                print("%-6s: %d differences (first ones on stderr)" % (codec, len(errors) - nerr))
                nerr = len(errors)
                continue
            print("%-6s: %d records (%d bytes) to %s (%d partitions, auto-created) produced"
                  " idempotently, read back byte for byte, ListOffsets ok (%.2fs)"
                  % (codec, n, nbytes, topic, nparts, time.time() - start))
    finally:
        consumer.close()
        admin.close()
    if errors:
        die("%d differences" % len(errors))


if __name__ == "__main__":
    main()

"""confluent-kafka (Python, on its bundled librdkafka) in the compatibility
suite: one scenario of compat/README.md per run, called by
compat/clients/confluent-kafka.sh as

    suite.py BOOTSTRAP ID SCENARIO [PHASE]

Exit status 0 when everything read back is what the scenario expects."""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from suite_data import (CODECS, DEADLINE, N_PRODUCE, base_ms, check_group_records,  # noqa: E402
                        check_record, check_spread, die, finish, mismatch)
import suite_data as data  # noqa: E402
from confluent_kafka import (OFFSET_BEGINNING, Consumer, KafkaException, Producer,  # noqa: E402
                             TopicPartition)
from confluent_kafka.admin import (AdminClient, AlterConfigOpType, ConfigEntry,  # noqa: E402
                                   ConfigResource, ConfigSource, NewTopic)

BS, ID, SCENARIO = sys.argv[1], sys.argv[2], sys.argv[3]
PHASE = sys.argv[4] if len(sys.argv) > 4 else ""
BASE = {"bootstrap.servers": BS, "client.id": "strand-compat-confluent"}


def topic(what):
    return "c-confluent-%s-%s" % (what, ID)


ADMIN = []


def admin():
    """The one AdminClient (the futures it returns need it alive)."""
    if not ADMIN:
        ADMIN.append(AdminClient(dict(BASE)))
    return ADMIN[0]


def create(name, parts):
    for f in admin().create_topics([NewTopic(name, parts, 1)]).values():
        f.result(30)


def producer(**kv):
    conf = dict(BASE, **{"linger.ms": 5})
    conf.update({k.replace("_", "."): v for k, v in kv.items()})
    return Producer(conf)


def consumer(**kv):
    conf = dict(BASE, **{"auto.offset.reset": "earliest", "enable.auto.commit": False,
                         "group.id": "unused-" + ID})
    conf.update({k.replace("_", "."): v for k, v in kv.items()})
    return Consumer(conf)


def send_all(p, msgs):
    """msgs: (topic, partition, key, value, headers, timestamp); returns the
    offsets the broker acknowledged, in order."""
    offs = [None] * len(msgs)

    def done(i):
        def cb(err, msg):
            if err is not None:
                mismatch("delivery of record %d: %s" % (i, err))
            else:
                offs[i] = msg.offset()
        return cb
    for i, (t, part, k, v, hs, ts) in enumerate(msgs):
        kw = {"partition": part, "key": k, "value": v, "on_delivery": done(i)}
        if hs:
            kw["headers"] = hs
        if ts is not None:
            kw["timestamp"] = ts
        p.produce(t, **kw)
        p.poll(0)
    if p.flush(30) != 0:
        die("flush: records left undelivered")
    return offs


def read(t, n, **kv):
    c = consumer(**kv)
    c.assign([TopicPartition(t, 0, OFFSET_BEGINNING)])
    out = []
    end = time.time() + DEADLINE
    while len(out) < n and time.time() < end:
        m = c.poll(0.2)
        if m is None:
            continue
        if m.error():
            die("consume %s: %s" % (t, m.error()))
        out.append(m)
    c.close()
    if len(out) != n:
        mismatch("%s: read %d records, expected %d" % (t, len(out), n))
    return out


def metadata():
    t = topic("meta")
    a = admin()
    md = a.list_topics(timeout=10)
    brokers = ["%s:%d" % (b.host, b.port) for b in md.brokers.values()]
    if brokers != [BS]:
        mismatch("brokers %s, expected [%s]" % (brokers, BS))
    create(t, 3)
    try:
        create(t, 3)
        mismatch("a second create of %s succeeded" % t)
    except KafkaException as e:
        if e.args[0].name() != "TOPIC_ALREADY_EXISTS":
            mismatch("second create: %s" % e)
    md = a.list_topics(topic=t, timeout=10)
    parts = md.topics[t].partitions
    if sorted(parts) != [0, 1, 2]:
        mismatch("%s has partitions %s" % (t, sorted(parts)))
    for p in parts.values():
        if p.leader not in md.brokers or p.error is not None:
            mismatch("partition %d: leader %d, error %s" % (p.id, p.leader, p.error))
    print("metadata: broker at %s, %s created with 3 partitions led by it" % (BS, t))


def produce():
    base = base_ms(3600)
    for codec in CODECS:
        create(topic("p-" + codec), 1)
    for codec in CODECS:
        t = topic("p-" + codec)
        offs = send_all(producer(compression_type=codec),
                        [(t, 0, data.key(i), data.value(i), data.headers(i), base + i) for i in range(N_PRODUCE)])
        if offs != list(range(N_PRODUCE)):
            mismatch("%s: acknowledged offsets %s" % (codec, offs[:10]))
        got = read(t, N_PRODUCE)
        for i, m in enumerate(got):
            hs = [(k, v if v is not None else None) for k, v in (m.headers() or [])]
            check_record(codec, i, m.offset(), m.key(), m.value(), hs, m.timestamp()[1], base + i)
        print("produce %s: %d records read back exactly" % (codec, len(got)))


def by_time():
    t = topic("time")
    base = base_ms(60)
    create(t, 1)
    send_all(producer(), [(t, 0, None, b"t-%d" % i, None, base + i * 1000) for i in range(10)])
    c = consumer()
    for ts, want in ((base, 0), (base + 3500, 4), (base + 9000, 9), (base + 9001, -1)):
        r = c.offsets_for_times([TopicPartition(t, 0, ts)], timeout=10)[0]
        if r.error or r.offset != want:
            mismatch("offset for timestamp base+%d: %d (%s), expected %d" % (ts - base, r.offset, r.error, want))
    lo, hi = c.get_watermark_offsets(TopicPartition(t, 0), timeout=10)
    if (lo, hi) != (0, 10):
        mismatch("watermarks %d, %d, expected 0, 10" % (lo, hi))
    c.close()
    print("by-time: offsets 0, 4, 9, none for the 4 timestamps; earliest 0, latest 10")


def poll_all(cs, seen):
    for c in cs:
        m = c.poll(0.05)
        if m is not None and not m.error():
            seen[(m.partition(), m.offset())] = m.value()


def wait_spread(cs, seen, what):
    end = time.time() + DEADLINE
    while time.time() < end:
        poll_all(cs, seen)
        asg = [sorted(tp.partition for tp in c.assignment()) for c in cs]
        if check_spread(what, asg, 6):
            print("group: %s: %s" % (what, asg))
            return
    die("%s: assignments never covered the 6 partitions once each: %s" % (what, asg))


def group():
    t = topic("group")
    create(t, 6)
    send_all(producer(), [(t, i % 6, b"k%d" % i, b"g-%d" % i, None, None) for i in range(60)])
    cs = []
    for i in range(3):
        c = consumer(group_id=t, session_timeout_ms=10000, heartbeat_interval_ms=500,
                     client_id="strand-compat-confluent-%d" % i)
        c.subscribe([t])
        cs.append(c)
    seen = {}
    wait_spread(cs, seen, "three members")
    cs.pop().close()
    wait_spread(cs, seen, "two members after one left")
    end = time.time() + DEADLINE
    while len(seen) < 60 and time.time() < end:
        poll_all(cs, seen)
    check_group_records(seen)
    for c in cs:
        c.close()
    print("group: 3 members shared 6 partitions, 2 took them all after one left; 60 records read")


def restart():
    t = topic("restart")
    if PHASE == "before":
        create(t, 1)
        send_all(producer(), [(t, 0, None, b"r-%d" % i, None, None) for i in range(20)])
        c = consumer(group_id=t)
        c.subscribe([t])
        n = 0
        end = time.time() + DEADLINE
        while n < 10 and time.time() < end:
            m = c.poll(0.2)
            if m is not None and not m.error() and m.offset() == n and m.value() == b"r-%d" % n:
                n += 1
        if n != 10:
            mismatch("read %d of the first 10 records" % n)
        # confluent-kafka sends the metadata with its terminating NUL byte
        # and reads what comes back up to a NUL: the broker must keep every
        # byte it was given for this to come back whole.
        tp = TopicPartition(t, 0, 10, metadata="confluent-" + t)
        c.commit(offsets=[tp], asynchronous=False)
        c.close()
        print("restart: 10 of 20 records consumed, offset 10 committed")
        return
    send_all(producer(), [(t, 0, None, b"r-%d" % i, None, None) for i in range(20, 25)])
    c = consumer(group_id=t, auto_offset_reset="error")
    com = c.committed([TopicPartition(t, 0)], timeout=10)[0]
    if com.offset != 10 or com.metadata != "confluent-" + t:
        mismatch("committed after the restart: %d %r" % (com.offset, com.metadata))
    c.subscribe([t])
    got = []
    end = time.time() + DEADLINE
    while len(got) < 15 and time.time() < end:
        m = c.poll(0.2)
        if m is not None:
            if m.error():
                die("consume after the restart: %s" % m.error())
            got.append((m.offset(), m.value()))
    c.close()
    want = [(i, b"r-%d" % i) for i in range(10, 25)]
    if got != want:
        mismatch("after the restart read %s, expected %s" % (got[:5], want[:5]))
    print("restart: resumed at the committed offset 10, read 10..24")


def idempotent():
    t = topic("idem")
    create(t, 1)
    p = producer(enable_idempotence=True, acks="all", batch_size=2048)
    send_all(p, [(t, 0, None, b"i-%d" % i, None, None) for i in range(1000)])
    got = read(t, 1000)
    for i, m in enumerate(got):
        if m.offset() != i or m.value() != b"i-%d" % i:
            mismatch("offset %d: %r, expected i-%d" % (m.offset(), m.value(), i))
    print("idempotent: 1000 records once each, in order")


def txn():
    t = topic("txn")
    create(t, 1)
    p = producer(transactional_id=t)
    p.init_transactions(30)
    for prefix, first, end in (("t", 0, "commit"), ("a", 0, "abort"), ("t", 5, "commit")):
        p.begin_transaction()
        for i in range(first, first + 5):
            p.produce(t, partition=0, value=b"%s-%d" % (prefix.encode(), i))
        if end == "commit":
            p.commit_transaction(30)
        else:
            p.flush(30)
            p.abort_transaction(30)
    c = consumer(isolation_level="read_committed", enable_partition_eof=True)
    c.assign([TopicPartition(t, 0, OFFSET_BEGINNING)])
    got = []
    deadline = time.time() + DEADLINE
    while time.time() < deadline:
        m = c.poll(0.2)
        if m is None:
            continue
        if m.error():
            if m.error().code() == -191:  # _PARTITION_EOF
                break
            die("read_committed: %s" % m.error())
        got.append(m.value())
    c.close()
    want = [b"t-%d" % i for i in range(10)]
    if got != want:
        mismatch("read_committed read %s, expected %s" % (got, want))
    print("txn: read_committed read the 10 committed records, not the aborted 5")


def describe(a, res, key, source):
    entries = a.describe_configs([res])[res].result(30)
    e = entries.get(key)
    if e is None:
        mismatch("%s not described" % key)
        return None
    if e.source != source.value:
        mismatch("%s=%s has source %s, expected %s" % (key, e.value, e.source, source))
    return e.value


def configs():
    t = topic("configs")
    create(t, 1)
    a = admin()
    res = ConfigResource("topic", t)
    v = describe(a, res, "retention.ms", ConfigSource.DEFAULT_CONFIG)
    if v != "604800000":
        mismatch("retention.ms is %s, expected 604800000" % v)
    for op, val, source, want in ((AlterConfigOpType.SET, "123456789", ConfigSource.DYNAMIC_TOPIC_CONFIG, "123456789"),
                                  (AlterConfigOpType.DELETE, None, ConfigSource.DEFAULT_CONFIG, "604800000")):
        entry = ConfigEntry("retention.ms", val, incremental_operation=op)
        alter = ConfigResource("topic", t, incremental_configs=[entry])
        a.incremental_alter_configs([alter])[alter].result(30)
        v = describe(a, res, "retention.ms", source)
        if v != want:
            mismatch("retention.ms after %s is %s, expected %s" % (op, v, want))
    print("configs: retention.ms 604800000 (default), SET 123456789 (dynamic), DELETE back to default")


SCENARIOS = {"metadata": metadata, "produce": produce, "by-time": by_time, "group": group,
             "restart": restart, "idempotent": idempotent, "txn": txn, "configs": configs}
if SCENARIO not in SCENARIOS:
    die("unknown scenario " + SCENARIO)
SCENARIOS[SCENARIO]()
finish()

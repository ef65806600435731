"""The scenarios of compat/README.md that kafka-python runs one per call
(the others are compat.py's one run), called by compat/clients/kafka-python.sh:

    scenarios.py BOOTSTRAP ID group|restart|txn|configs [PHASE]

kafka-python has no IncrementalAlterConfigs: the configs scenario sets
retention.ms with AlterConfigs (which replaces the topic's whole set of
dynamic keys) and gives the default back with an AlterConfigs of no keys,
the same outcome as the incremental SET and DELETE.
Exit status 0 when everything read back matches, 1 with the first
differences on stderr.
"""
import sys
import time

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import ConfigResource, ConfigResourceType, NewTopic
from kafka.structs import OffsetAndMetadata

from suite_data import DEADLINE, check_group_records, check_spread, die, finish, mismatch

if len(sys.argv) < 4:
    die("usage: scenarios.py BOOTSTRAP ID SCENARIO [PHASE]")
BS, RUN_ID, SCENARIO = sys.argv[1:4]
PHASE = sys.argv[4] if len(sys.argv) > 4 else ""
CLIENT_ID = "strand-compat-kafka-python"
# ConfigSource of DescribeConfigs v1+.
DYNAMIC_TOPIC_CONFIG, DEFAULT_CONFIG = 1, 5


def topic(what):
    return "c-kafka-python-%s-%s" % (what, RUN_ID)


def admin():
    return KafkaAdminClient(bootstrap_servers=BS, client_id=CLIENT_ID)


def create(t, parts):
    a = admin()
    a.create_topics([NewTopic(t, parts, 1)])
    a.close()


def send_all(records, **conf):
    """records: (partition, key, value); sent in order, each acknowledged."""
    p = KafkaProducer(bootstrap_servers=BS, client_id=CLIENT_ID, acks="all", retries=40,
                      retry_backoff_ms=250, **conf)
    for part, k, v in records:
        p.send(T, key=k, value=v, partition=part).get(timeout=30)
    p.flush()
    return p


def consumer(**conf):
    return KafkaConsumer(bootstrap_servers=BS, client_id=CLIENT_ID, enable_auto_commit=False,
                         auto_offset_reset="earliest", **conf)


def poll_into(c, seen):
    for tp, msgs in c.poll(timeout_ms=100).items():
        for m in msgs:
            seen[(tp.partition, m.offset)] = m.value


def wait_spread(cs, seen, what):
    end = time.time() + DEADLINE
    while time.time() < end:
        for c in cs:
            poll_into(c, seen)
        owned = [sorted(tp.partition for tp in c.assignment()) for c in cs]
        if check_spread(what, owned, 6):
            print("group: %s: %s" % (what, owned))
            return
    die("%s: the members never owned the 6 partitions once each: %s" % (what, owned))


def group():
    send_all([(i % 6, b"k%d" % i, b"g-%d" % i) for i in range(60)]).close()
    cs = []
    for _ in range(3):
        c = consumer(group_id=T, session_timeout_ms=10000, heartbeat_interval_ms=500)
        c.subscribe([T])
        cs.append(c)
    seen = {}
    wait_spread(cs, seen, "three members")
    cs.pop().close(autocommit=False)
    wait_spread(cs, seen, "two members after one left")
    end = time.time() + DEADLINE
    while len(seen) < 60 and time.time() < end:
        for c in cs:
            poll_into(c, seen)
    check_group_records(seen)
    for c in cs:
        c.close(autocommit=False)
    print("group: 3 members shared 6 partitions, 2 took them all after one left; 60 records read")


def read_group(n):
    """A member of group T reads n records of partition 0 from where the
    group stands; returns it (open) and [(offset, value)]."""
    c = consumer(group_id=T)
    c.subscribe([T])
    got = []
    end = time.time() + DEADLINE
    while len(got) < n and time.time() < end:
        for msgs in c.poll(timeout_ms=200, max_records=n - len(got)).values():
            got.extend((m.offset, m.value) for m in msgs)
    return c, got


def restart():
    tp = TopicPartition(T, 0)
    meta = "kafka-python-" + RUN_ID
    if PHASE == "before":
        send_all([(0, None, b"r-%d" % i) for i in range(20)]).close()
        c, got = read_group(10)
        if got != [(i, b"r-%d" % i) for i in range(10)]:
            mismatch("first 10 records read: %s" % got)
        c.commit({tp: OffsetAndMetadata(10, meta, -1)})
        c.close(autocommit=False)
        print("restart: 10 of 20 records consumed, offset 10 committed with metadata %s" % meta)
        return
    send_all([(0, None, b"r-%d" % i) for i in range(20, 25)]).close()
    a = admin()
    com = a.list_consumer_group_offsets(T, partitions=[tp]).get(tp)
    a.close()
    if com is None or com.offset != 10 or com.metadata != meta:
        mismatch("committed after the restart: %r, expected offset 10 metadata %s" % (com, meta))
    c, got = read_group(15)
    c.close(autocommit=False)
    want = [(i, b"r-%d" % i) for i in range(10, 25)]
    if got != want:
        mismatch("after the restart read %s, expected %s" % (got, want))
    print("restart: resumed at the committed offset 10, read 10..24")


def txn():
    p = KafkaProducer(bootstrap_servers=BS, client_id=CLIENT_ID, transactional_id=T)
    p.init_transactions()
    for prefix, first, commit in (("t", 0, True), ("a", 0, False), ("t", 5, True)):
        p.begin_transaction()
        for i in range(first, first + 5):
            p.send(T, value=b"%s-%d" % (prefix.encode(), i), partition=0).get(timeout=30)
        if commit:
            p.commit_transaction()
        else:
            p.abort_transaction()
    p.close()
    c = consumer(isolation_level="read_committed")
    c.assign([TopicPartition(T, 0)])
    got = []
    end = time.time() + DEADLINE
    while len(got) < 10 and time.time() < end:
        for msgs in c.poll(timeout_ms=200).values():
            got.extend(m.value for m in msgs)
    # Anything after the 10th would be a record that should not be there.
    for msgs in c.poll(timeout_ms=500).values():
        got.extend(m.value for m in msgs)
    c.close()
    want = [b"t-%d" % i for i in range(10)]
    if got != want:
        mismatch("read_committed read %s, expected %s" % (got, want))
    print("txn: read_committed read the 10 committed records, not the aborted 5")


def describe(a, want_source):
    """retention.ms of topic T, its source checked."""
    resp = a.describe_configs([ConfigResource(ConfigResourceType.TOPIC, T)])[0]
    res = resp.resources[0]
    if res[0] != 0:
        die("DescribeConfigs %s: error %d %s" % (T, res[0], res[1]))
    for e in res[4]:
        if e[0] == "retention.ms":
            if e[3] != want_source:
                mismatch("retention.ms=%s has source %d, expected %d" % (e[1], e[3], want_source))
            return e[1]
    mismatch("retention.ms not described")
    return None


def alter(a, configs):
    resp = a.alter_configs([ConfigResource(ConfigResourceType.TOPIC, T, configs=configs)])
    if resp.resources[0][0] != 0:
        die("AlterConfigs %s: error %d %s" % (configs, resp.resources[0][0], resp.resources[0][1]))


def configs():
    a = admin()
    v = describe(a, DEFAULT_CONFIG)
    if v != "604800000":
        mismatch("retention.ms is %s, expected 604800000" % v)
    alter(a, {"retention.ms": "123456789"})
    v = describe(a, DYNAMIC_TOPIC_CONFIG)
    if v != "123456789":
        mismatch("retention.ms after the SET is %s, expected 123456789" % v)
    alter(a, {})
    v = describe(a, DEFAULT_CONFIG)
    if v != "604800000":
        mismatch("retention.ms after the reset is %s, expected 604800000" % v)
    a.close()
    print("configs: retention.ms 604800000 (default), set 123456789 (dynamic), reset to the default")


SCENARIOS = {"group": (group, 6), "restart": (restart, 1), "txn": (txn, 1), "configs": (configs, 1)}
if SCENARIO not in SCENARIOS:
    die("unknown scenario " + SCENARIO)
T = topic(SCENARIO)
if PHASE != "after":
    create(T, SCENARIOS[SCENARIO][1])
SCENARIOS[SCENARIO][0]()
finish()

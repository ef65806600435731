"""verifiable.py: reads the JSON event lines of Kafka's VerifiableProducer
and VerifiableConsumer (--verbose) for compat/clients/kafka-verifiable.sh.

  verifiable.py check [--once] PRODUCER.out... -- CONSUMER.out...
      every message a producer acknowledged (producer_send_success) was
      consumed (record_data) at its partition and offset with its value;
      with --once, each exactly once; no send errors, nothing consumed that
      was not acknowledged
  verifiable.py assigned CONSUMER.out
      the partitions the consumer owns after its last event, "0 1 2"
Exit status 0 when the check holds, 1 with the differences on stderr."""
import json
import sys


def events(path):
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("{"):
                try:
                    yield json.loads(line)
                except ValueError:
                    pass


def check(args):
    once = args[0] == "--once"
    if once:
        args = args[1:]
    split = args.index("--")
    acked, errors, consumed = {}, 0, {}
    for path in args[:split]:
        for e in events(path):
            if e["name"] == "producer_send_success":
                acked[(e["topic"], e["partition"], e["offset"])] = e["value"]
            elif e["name"] == "producer_send_error":
                errors += 1
                print("send error: %s" % e, file=sys.stderr)
    for path in args[split + 1:]:
        for e in events(path):
            if e["name"] == "record_data":
                consumed.setdefault((e["topic"], e["partition"], e["offset"]), []).append(e["value"])
    bad = errors
    for at, value in sorted(acked.items()):
        got = consumed.get(at, [])
        if not got or any(v != value for v in got) or (once and len(got) != 1):
            bad += 1
            if bad <= 20:
                print("%s/%d@%d: acknowledged %r, consumed %r" % (at + (value, got)), file=sys.stderr)
    for at in sorted(set(consumed) - set(acked)):
        bad += 1
        if bad <= 20:
            print("%s/%d@%d consumed, never acknowledged" % at, file=sys.stderr)
    if not acked:
        bad += 1
        print("nothing acknowledged", file=sys.stderr)
    print("%d acknowledged, %d consumed (%d deliveries)%s" % (
        len(acked), len(consumed), sum(len(v) for v in consumed.values()),
        ", every one exactly once" if once and not bad else ""))
    return 1 if bad else 0


def assigned(path):
    owned = set()
    for e in events(path):
        parts = {p["partition"] for p in e.get("partitions", [])}
        if e["name"] == "partitions_assigned":
            owned |= parts
        elif e["name"] == "partitions_revoked":
            owned -= parts
    print(" ".join(str(p) for p in sorted(owned)))
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "check":
        sys.exit(check(sys.argv[2:]))
    if len(sys.argv) == 3 and sys.argv[1] == "assigned":
        sys.exit(assigned(sys.argv[2]))
    sys.exit(__doc__)

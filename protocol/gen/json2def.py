#!/usr/bin/env python3
"""json2def: drafts a protocol/*.def record definition from one of Kafka's
JSON message definitions (a developer's tool, never run by the build).

    protocol/gen/json2def.py KIND FILE.json > protocol/records/DIR/NAME.def
    protocol/gen/json2def.py api REQUEST.json RESPONSE.json > protocol/NAME.def

KIND is the record kind of protocol/README.md (metadata, control, data,
group-key, group-value, txn-key, txn-value); for `control` give the
control record type as KIND=N (control=2). Only the facts are carried
over: names, types, versions, nullability, tags, defaults. Review the
output: it is a draft, and unsupported constructs (nullable structs) stop
the tool with an error instead of being guessed."""
import json
import re
import sys


def load(path):
    with open(path) as fp:
        text = "\n".join(l for l in fp.read().split("\n")
                         if not l.strip().startswith("//"))
    return json.loads(text)


def camel(name):
    return name[0].upper() + name[1:]


def vr(s):
    return "none" if s in (None, "none") else s


PRIMS = {"bool", "int8", "int16", "uint16", "int32", "uint32", "int64",
         "float64", "uuid", "string", "bytes", "records"}


def default_attr(f):
    if "default" not in f:
        return None
    d = f["default"]
    if d is None or d == "null":
        return "null"
    if isinstance(d, bool):
        return "true" if d else "false"
    d = str(d)
    t = f["type"]
    if t == "string" and d == "":
        return None
    if t in ("int8", "int16", "uint16", "int32", "uint32", "int64") and \
            int(d, 0) == 0:
        return None
    if t == "bool" and d == "false":
        return None
    return d


def field_line(f, indent, out, commons, seen):
    name = camel(f["name"])
    t = f["type"]
    arr = t.startswith("[]")
    elem = t[2:] if arr else t
    versions = f.get("versions") or f.get("taggedVersions")
    words = [name, t, versions]
    if "nullableVersions" in f:
        if not arr and elem not in ("string", "bytes", "records"):
            sys.exit("json2def: %s: nullable struct %s is not supported"
                     % (f["name"], elem))
        words.append("nullable=" + f["nullableVersions"])
    if "tag" in f:
        words += ["tag=%d" % f["tag"], "tagged=" + f["taggedVersions"]]
    d = default_attr(f)
    if d is not None:
        words.append("default=" + d)
    if f.get("flexibleVersions") == "none":
        words.append("noflex")
    out.append("  " * indent + " ".join(words))
    if elem not in PRIMS:
        if "fields" in f:
            for g in f["fields"]:
                field_line(g, indent + 1, out, commons, seen)
        elif elem not in commons:
            sys.exit("json2def: %s: struct %s is not defined" % (name, elem))


def body(j, out):
    commons = {c["name"]: c for c in j.get("commonStructs", [])}
    for f in j["fields"]:
        field_line(f, 1, out, commons, set())
    return commons


def api_main(req_path, resp_path):
    req, resp = load(req_path), load(resp_path)
    name = req["name"][:-len("Request")]
    out = ["# %s (API key %d)." % (name, req["apiKey"]),
           "# Facts from the Kafka protocol definitions; format: protocol/README.md.",
           "",
           "api %s key=%d versions=%s flexible=%s" % (
               name, req["apiKey"], req["validVersions"],
               vr(req.get("flexibleVersions"))),
           "", "request"]
    commons = dict(body(req, out))
    out += ["", "response"]
    commons.update(body(resp, out))
    for c in commons.values():
        out.append("")
        out.append("common %s %s" % (c["name"], c["versions"]))
        for f in c["fields"]:
            field_line(f, 1, out, commons, set())
    print("\n".join(out))


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "api":
        return api_main(sys.argv[2], sys.argv[3])
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    kind, path = sys.argv[1], sys.argv[2]
    j = load(path)
    key = None
    m = re.fullmatch(r"control=(\d+)", kind)
    if m:
        kind, key = "control", int(m.group(1))
    elif "apiKey" in j and kind != "data":
        key = j["apiKey"]
    commons = {c["name"]: c for c in j.get("commonStructs", [])}
    what = "type %d" % key if key is not None else "no type"
    out = ["# %s (%s record, %s)." % (j["name"], kind, what),
           "# Facts from the Kafka record definitions; format: protocol/README.md.",
           ""]
    head = "record %s kind=%s" % (j["name"], kind)
    if key is not None:
        head += " key=%d" % key
    head += " versions=%s flexible=%s" % (j["validVersions"],
                                         vr(j.get("flexibleVersions")))
    out.append(head)
    for f in j["fields"]:
        field_line(f, 1, out, commons, set())
    for c in j.get("commonStructs", []):
        out.append("")
        out.append("common %s %s" % (c["name"], c["versions"]))
        for f in c["fields"]:
            field_line(f, 1, out, commons, set())
    print("\n".join(out))


main()

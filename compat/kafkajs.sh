#!/usr/bin/env bash
# compat/kafkajs.sh: the Node.js client KafkaJS (pinned with its codecs in
# compat/node/package.json and package-lock.json) against the broker at
# STRAND_BOOTSTRAP. compat/node/compat.js checks the broker list
# (admin.describeCluster), auto-creates a topic through a Metadata request,
# produces 2,000 records per compression codec (none, gzip, snappy, lz4,
# zstd) with the idempotent producer, reads them back with KafkaJS's own
# Fetch (its lower-level Broker API: KafkaJS has no group-less consumer)
# comparing every byte, offset and timestamp, and checks ListOffsets
# (admin.fetchTopicOffsets, fetchTopicOffsetsByTimestamp).
#
# The packages are installed with npm ci into .cache/node of the checkout,
# one directory per lock file: the first run fetches from the npm registry,
# later runs work offline. Exit 0 pass, 1 fail, 77 skip (no Node.js/npm).
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

fail() { echo "FAIL: $*" >&2; exit 1; }
BS=${STRAND_BOOTSTRAP:-}
[ -n "$BS" ] || { echo "SKIP: STRAND_BOOTSTRAP is not set"; exit 77; }
command -v node >/dev/null 2>&1 || { echo "SKIP: no node on PATH"; exit 77; }
SRC=$ROOT/compat/node
DIR=$ROOT/.cache/node/$(cat "$SRC/package.json" "$SRC/package-lock.json" | cksum | cut -d ' ' -f 1)

if [ ! -f "$DIR/.complete" ]; then
    command -v npm >/dev/null 2>&1 || { echo "SKIP: no npm on PATH"; exit 77; }
    [ -f "$ROOT/.cache/.gitignore" ] || { mkdir -p "$ROOT/.cache" && echo '*' > "$ROOT/.cache/.gitignore"; }
    echo "installing compat/node/package-lock.json into $DIR"
    # In a fresh directory renamed at the end: a half-done install is never
    # taken for a complete one, and concurrent runs do not mix. No install
    # scripts: every package pinned here is plain JavaScript (or wasm).
    mkdir -p "$DIR.$$" || fail "cannot create $DIR.$$"
    cp "$SRC/package.json" "$SRC/package-lock.json" "$DIR.$$/" || fail "cannot copy the package files"
    (cd "$DIR.$$" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error \
        --cache "$ROOT/.cache/node/npm-cache") > "$DIR.log" 2>&1 ||
        { tail -n 30 "$DIR.log" >&2; rm -rf "$DIR.$$"; fail "npm ci in $DIR.$$ failed"; }
    touch "$DIR.$$/.complete"
    if ! mv -T "$DIR.$$" "$DIR" 2>/dev/null; then
        rm -rf "$DIR.$$"
        [ -f "$DIR/.complete" ] || fail "cannot move the packages to $DIR"
    fi
fi

NODE_PATH=$DIR/node_modules node "$SRC/compat.js" "$BS" || fail "KafkaJS against $BS"

#!/usr/bin/env bash
# compat/franz-go.sh: the Go client franz-go (github.com/twmb/franz-go,
# pinned in compat/go/go.mod) against the broker at STRAND_BOOTSTRAP. The
# program in compat/go/main.go checks Metadata (the broker list, a topic
# auto-created by a Metadata request), produces 2,000 records per compression
# codec (none, gzip, snappy, lz4, zstd) with the idempotent producer, reads
# them back with a group-less consumer (kgo.ConsumePartitions) comparing
# every byte, offset and timestamp, and checks ListOffsets (earliest, latest,
# max timestamp, by timestamp).
#
# The modules and the built program are cached under .cache/go of the
# checkout: the first run fetches from the Go module proxy, later runs work
# offline. Exit 0 pass, 1 fail, 77 skip (no Go to be had).
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

fail() { echo "FAIL: $*" >&2; exit 1; }
BS=${STRAND_BOOTSTRAP:-}
[ -n "$BS" ] || { echo "SKIP: STRAND_BOOTSTRAP is not set"; exit 77; }
command -v go >/dev/null 2>&1 || { echo "SKIP: no Go toolchain (go) on PATH"; exit 77; }

CACHE=$ROOT/.cache/go
# -modcacherw: a module cache that rm -rf can remove.
export GOMODCACHE=$CACHE/mod GOCACHE=$CACHE/build GOFLAGS=-modcacherw
BIN=$CACHE/bin/franz-compat
SRC=$ROOT/compat/go

# Rebuild only when a source is newer than the program (or it is missing);
# build to a temporary name so that concurrent runs never see half a file.
if [ ! -x "$BIN" ] || [ -n "$(find "$SRC" -newer "$BIN" -type f | head -n 1)" ]; then
    mkdir -p "$CACHE/bin" || fail "cannot create $CACHE/bin"
    [ -f "$ROOT/.cache/.gitignore" ] || echo '*' > "$ROOT/.cache/.gitignore"
    echo "building compat/go (franz-go $(awk '$1 == "github.com/twmb/franz-go" { print $2 }' "$SRC/go.mod"))"
    (cd "$SRC" && go build -mod=readonly -o "$BIN.$$" .) > "$CACHE/build.log" 2>&1 ||
        { tail -n 30 "$CACHE/build.log" >&2; rm -f "$BIN.$$"; fail "go build of compat/go failed"; }
    mv -f "$BIN.$$" "$BIN"
fi

"$BIN" "$BS" || fail "franz-go against $BS"

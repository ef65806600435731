#!/usr/bin/env bash
# compat/kafka-python.sh: the Python client kafka-python (newest 2.x, pinned
# with its codec libraries in compat/python/requirements.txt) against the
# broker at STRAND_BOOTSTRAP. compat/python/compat.py checks the broker list
# (KafkaAdminClient.describe_cluster), a topic auto-created by the
# producer's Metadata request, produces 2,000 records per compression codec
# (none, gzip, snappy, lz4, zstd) with enable_idempotence=True, reads them
# back with a group-less KafkaConsumer (assign(), no group_id) comparing
# every byte, offset and timestamp, and checks ListOffsets (beginning_offsets,
# end_offsets, offsets_for_times).
#
# The packages are installed with pip into .cache/python of the checkout,
# one directory per requirements file and Python version: the first run
# fetches from PyPI, later runs work offline. Exit 0 pass, 1 fail, 77 skip
# (no Python 3 with pip to be had).
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=../scripts/lib/deps.sh
. "$ROOT/scripts/lib/deps.sh"

fail() { echo "FAIL: $*" >&2; exit 1; }
BS=${STRAND_BOOTSTRAP:-}
[ -n "$BS" ] || { echo "SKIP: STRAND_BOOTSTRAP is not set"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "SKIP: no python3 on PATH"; exit 77; }
REQ=$ROOT/compat/python/requirements.txt
PYVER=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])') || fail "python3 does not run"
SITE=$ROOT/.cache/python/py$PYVER-$(cksum < "$REQ" | cut -d ' ' -f 1)

if [ ! -f "$SITE/.complete" ]; then
    if ! python3 -m pip --version >/dev/null 2>&1; then
        deps_install python3-pip >&2 && python3 -m pip --version >/dev/null 2>&1 ||
            { echo "SKIP: python3 has no pip and it cannot be installed"; exit 77; }
    fi
    [ -f "$ROOT/.cache/.gitignore" ] || { mkdir -p "$ROOT/.cache" && echo '*' > "$ROOT/.cache/.gitignore"; }
    echo "installing compat/python/requirements.txt into $SITE"
    # Into a fresh directory renamed at the end: a half-done install is
    # never taken for a complete one, and concurrent runs do not mix.
    mkdir -p "$ROOT/.cache/python" && rm -rf "$SITE.$$" || fail "cannot create $ROOT/.cache/python"
    python3 -m pip install -q --disable-pip-version-check --no-warn-script-location \
        --only-binary=:all: --target "$SITE.$$" -r "$REQ" > "$SITE.log" 2>&1 ||
        { tail -n 30 "$SITE.log" >&2; rm -rf "$SITE.$$"; fail "pip install -r $REQ failed"; }
    touch "$SITE.$$/.complete"
    if ! mv -T "$SITE.$$" "$SITE" 2>/dev/null; then
        rm -rf "$SITE.$$"
        [ -f "$SITE/.complete" ] || fail "cannot move the packages to $SITE"
    fi
fi

# -s: no user site-packages, so only the pinned packages are imported.
PYTHONPATH=$SITE python3 -s "$ROOT/compat/python/compat.py" "$BS" || fail "kafka-python against $BS"

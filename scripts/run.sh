#!/usr/bin/env bash
# scripts/run.sh: build strand if needed and run it in the foreground on
# localhost:9092 with etc/server.properties, its data under ./data of the
# checkout. Installs the missing Debian build packages first (as root).
# Extra arguments go to strand (e.g. --override num.partitions=4).
# Stop it with Ctrl-C (SIGINT) or SIGTERM.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=lib/deps.sh
. "$ROOT/scripts/lib/deps.sh"

deps_install build-essential autoconf automake libtool pkg-config librdkafka-dev \
    libzstd-dev liblz4-dev libsnappy-dev zlib1g-dev libssl-dev libcunit1-dev || exit 1
cd "$ROOT" || exit 1
if [ ! -x configure ]; then
    autoreconf -i || exit 1
fi
mkdir -p build data || exit 1
if [ ! -f build/Makefile ]; then
    (cd build && ../configure) || exit 1
fi
make -C build -j"${JOBS:-2}" strand > build/run-make.out 2>&1 ||
    { tail -n 40 build/run-make.out; echo "build failed (build/run-make.out)"; exit 1; }
# From the top of the checkout: the relative log.dirs of
# etc/server.properties (data/...) is relative to where strand starts.
exec build/strand etc/server.properties "$@"

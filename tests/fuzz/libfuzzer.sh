#!/usr/bin/env bash
# libfuzzer.sh: builds tests/fuzz/libfuzzer_decoders.c with Debian's clang
# and libFuzzer (installing them with apt-get when missing, as root) and
# runs it, coverage-guided, from a seed corpus of valid inputs.
#
#   tests/fuzz/libfuzzer.sh BUILD_DIR [SECONDS]     (default 60)
#
# BUILD_DIR is a configured build directory of this checkout that has
# made src/proto/proto_gen.c (any `make` does). Output, the corpus and any
# crash-* reproducer go to BUILD_DIR/tests/fuzz/libfuzzer/; rerun one with
#   BUILD_DIR/tests/fuzz/libfuzzer/fuzz-decoders crash-<sha1>
# Not part of make check: the main fuzzers build with gcc (README.md).
set -eu
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=$(cd "${1:?usage: libfuzzer.sh BUILD_DIR [SECONDS]}" && pwd)
SECS=${2:-60}
OUT=$BUILD/tests/fuzz/libfuzzer

[ -f "$BUILD/src/proto/proto_gen.c" ] || { echo "no $BUILD/src/proto/proto_gen.c: run make there" >&2; exit 2; }
if ! command -v clang-14 >/dev/null || ! ls /usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1; then
    [ "$(id -u)" = 0 ] || { echo "clang-14 and libclang-rt-14-dev are needed (apt-get as root)" >&2; exit 2; }
    apt-get install -y -q clang-14 libclang-rt-14-dev >/dev/null
fi

SOURCES="src/proto/proto.c src/proto/proto_codec.c src/proto/proto_rec.c
    src/util/mem.c src/util/arena.c src/util/buf.c src/util/props.c
    src/util/compress.c src/util/crc32c.c
    src/log/log_batch.c src/log/log_batch_validate.c src/log/log_batch_build.c
    src/cluster/meta_rec.c tests/fuzz/fuzz_gen.c tests/fuzz/libfuzzer_decoders.c"
FILES="$BUILD/src/proto/proto_gen.c"
for f in $SOURCES; do FILES="$FILES $SRC/$f"; done
CFLAGS="-std=gnu11 -D_GNU_SOURCE -g -O1 -I$SRC/src -I$BUILD/src -I$SRC -I$SRC/tests"
LIBS="-lz -lzstd -llz4 -lsnappy -lm"

mkdir -p "$OUT/corpus"
# shellcheck disable=SC2086
clang-14 $CFLAGS -DFUZZ_SEED_MAIN -o "$OUT/make-seeds" $FILES $LIBS
"$OUT/make-seeds" "$OUT/corpus"
# shellcheck disable=SC2086
clang-14 $CFLAGS -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -o "$OUT/fuzz-decoders" $FILES $LIBS
cd "$OUT"
exec ./fuzz-decoders -max_total_time="$SECS" -max_len=65536 -rss_limit_mb=2048 \
    -print_final_stats=1 corpus

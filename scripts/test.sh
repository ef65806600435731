#!/usr/bin/env bash
# scripts/test.sh: everything CI checks, from a fresh Debian machine or a
# developer's checkout.
#
#   1. installs the Debian packages that are missing (as root; otherwise it
#      names them and stops)
#   2. autoreconf, then in build/: configure, make, make check
#   3. the same with --enable-sanitizers (ASan + UBSan) in build-asan/
#   4. in build/: make diff, the differential test against Apache Kafka 4.4
#      (tests/diff/README.md; a few minutes, so not inside make check),
#      counted as one test
#   5. prints as its last line the sum of both runs: "N passed, N failed"
#
# Exit status 0 only if both builds and all their tests passed.
# Environment: JOBS (make -j, default 2), CHECK_TIMEOUT (seconds per make
# check, default 1800), TESTS_ARGS (passed to run-tests.sh: test name patterns).
set -u

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
JOBS=${JOBS:-2}
CHECK_TIMEOUT=${CHECK_TIMEOUT:-1800}
# shellcheck source=lib/deps.sh
. "$ROOT/scripts/lib/deps.sh"

PACKAGES="build-essential autoconf automake libtool pkg-config librdkafka-dev
    libzstd-dev liblz4-dev libsnappy-dev zlib1g-dev libssl-dev libcunit1-dev
    kcat maven default-jdk-headless"

say() { echo "== $*"; }

# shellcheck disable=SC2086
deps_install $PACKAGES || { echo "0 passed, 1 failed"; exit 1; }

say "autoreconf"
(cd "$ROOT" && autoreconf -i) || { echo "autoreconf failed"; echo "0 passed, 1 failed"; exit 1; }

TOTAL_P=0 TOTAL_F=0

# build_and_check DIR [CONFIGURE ARGS...]: adds the run's counts to the
# totals; a build that fails counts as one failed test.
build_and_check()
{
    local dir=$ROOT/$1 line p f rc
    shift
    say "$dir: configure $*"
    mkdir -p "$dir" || return 1
    if ! (cd "$dir" && "$ROOT/configure" "$@" > configure.out 2>&1); then
        tail -n 30 "$dir/configure.out"
        say "$dir: configure failed"
        TOTAL_F=$((TOTAL_F + 1))
        return 1
    fi
    say "$dir: make"
    if ! (cd "$dir" && make -j"$JOBS" > make.out 2>&1); then
        grep -E 'error|Error' "$dir/make.out" | head -n 40
        say "$dir: build failed (full output in $dir/make.out)"
        TOTAL_F=$((TOTAL_F + 1))
        return 1
    fi
    say "$dir: make check"
    (cd "$dir" && timeout --kill-after=30 "$CHECK_TIMEOUT" \
        make -j"$JOBS" check TESTS_ARGS="${TESTS_ARGS:-}" 2>&1) | tee "$dir/check.out"
    rc=${PIPESTATUS[0]}
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$dir/check.out" | tail -n 1)
    if [ -z "$line" ]; then
        p=0 f=1
        say "$dir: make check ended without a result (exit $rc)"
    else
        p=${line%% passed*}
        f=${line#*passed, }
        f=${f%% failed*}
        # make check can fail outside the harness (building a test program).
        [ "$rc" != 0 ] && [ "$f" = 0 ] && f=1
    fi
    say "$dir: $p passed, $f failed"
    TOTAL_P=$((TOTAL_P + p))
    TOTAL_F=$((TOTAL_F + f))
}

# make diff in a build dir that built: one test passed or failed (skipped
# without java).
diff_check()
{
    local dir=$ROOT/$1 rc
    [ -x "$dir/strand" ] || return 0
    say "$dir: make diff"
    (cd "$dir" && timeout --kill-after=30 900 make diff) > "$dir/diff.out" 2>&1
    rc=$?
    grep -E '^  NEW|^[0-9]+ differences|SKIP:|FAIL:' "$dir/diff.out" | tail -n 40
    if grep -q 'SKIP:' "$dir/diff.out"; then
        say "$dir: make diff skipped"
    elif [ "$rc" = 0 ]; then
        TOTAL_P=$((TOTAL_P + 1))
    else
        say "$dir: make diff failed (exit $rc, full output in $dir/diff.out)"
        TOTAL_F=$((TOTAL_F + 1))
    fi
}

START=$(date +%s)
build_and_check build
# The compatibility suite and the compat scripts run once, against the
# plain build.
export STRAND_NO_SUITE=1 STRAND_NO_COMPAT=1
build_and_check build-asan --enable-sanitizers
unset STRAND_NO_SUITE STRAND_NO_COMPAT
diff_check build
say "done in $(($(date +%s) - START)) s"
echo "$TOTAL_P passed, $TOTAL_F failed"
[ "$TOTAL_F" -eq 0 ] && [ "$TOTAL_P" -gt 0 ]

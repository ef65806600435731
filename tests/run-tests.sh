#!/usr/bin/env bash
# run-tests.sh: the test harness behind `make check`.
#
#   tests/run-tests.sh [-v] [PATTERN...]     (run from the build directory)
#
# Runs, in this order and each under a timeout:
#   unit/*         every tests/unit/test_* program of the build dir (CUnit);
#                  it counts as many tests as its "N passed, N failed" line says
#   integration/*  every tests/integration/NNNN-* program of the build dir
#   compat/*       every compat/*.sh script of the source dir, then the
#                  compatibility suite (compat/suite.sh) for its clients
#                  (compat/CLIENT), on a broker of its own that it restarts;
#                  it counts as many tests as its "N passed, N failed" line
# The integration and compat tests share one broker that this script starts
# on a free port with a fresh data dir under tests/scratch/ (strand from
# STRAND_BIN, default ./strand), and stops at the end: a broker that dies
# during the run or does not exit 0 on SIGTERM counts as a failed test.
#
# PATTERN: run only the tests whose name contains one of the patterns (e.g.
# `0002`, `unit/`, `kcat`). -v: show every test's output, not only failures'.
#
# Environment:
#   BUILD_DIR, SRC_DIR   default: the current directory and this script's checkout
#   STRAND_BIN           the broker binary (default $BUILD_DIR/strand)
#   STRAND_BOOTSTRAP     use this running broker instead of starting one
#   KAFKA_REF=1          start Apache Kafka (scripts/kafka-ref.sh) instead of
#                        strand, to check that the tests assert what Kafka does
#   TEST_TIMEOUT         seconds per test (default 240)
#   STRAND_NO_SUITE=1    leave the compatibility suite out
#   STRAND_NO_COMPAT=1   leave the compat/*.sh scripts out
# Given to every test: STRAND_BOOTSTRAP, STRAND_BIN, STRAND_TEST_DIR (a
# scratch dir), STRAND_SRCDIR, STRAND_BUILDDIR, KAFKA_REF.
#
# Prints one PASS/FAIL/SKIP line per test (a failure's log follows it) and,
# as its last line, "N passed, N failed". Exit status 1 if any test failed,
# 2 if no test matched.
#
# tests/integration/XFAIL lists known failures of integration and compat
# tests (names as printed, e.g. integration/0007-api-versions): they print
# XFAIL and do not count as failed; one that passes prints XPASS and counts
# as failed until it is taken off the list. With KAFKA_REF=1 the list does
# not apply (its reasons are Strand's).
set -u

VERBOSE=0
if [ "${1:-}" = "-v" ]; then VERBOSE=1; shift; fi
BUILD_DIR=$(cd "${BUILD_DIR:-.}" && pwd)
SRC_DIR=$(cd "${SRC_DIR:-$(dirname "${BASH_SOURCE[0]}")/..}" && pwd)
TEST_TIMEOUT=${TEST_TIMEOUT:-240}
STRAND_BIN=${STRAND_BIN:-$BUILD_DIR/strand}
KAFKA_REF=${KAFKA_REF:-}
[ "$KAFKA_REF" = 0 ] && KAFKA_REF=
LOG_DIR=$BUILD_DIR/tests/logs
SCRATCH=$BUILD_DIR/tests/scratch
export STRAND_BIN KAFKA_REF
export STRAND_SRCDIR=$SRC_DIR STRAND_BUILDDIR=$BUILD_DIR STRAND_TEST_DIR=$SCRATCH

PASSED=0 FAILED=0 SKIPPED=0 XFAILED=0
XFAIL_FILE=$SRC_DIR/tests/integration/XFAIL
BROKER_PID= BROKER_DIR= BROKER_KIND=

selected()
{
    local name=$1 pat
    [ ${#PATTERNS[@]} -eq 0 ] && return 0
    for pat in "${PATTERNS[@]}"; do
        [[ $name == *"$pat"* ]] && return 0
    done
    return 1
}

show_log()
{
    echo "---- $1 (last 60 lines; full log: $2)"
    tail -n 60 "$2"
    echo "----"
}

free_port()
{
    local p i
    for i in $(seq 1 200); do
        p=$((20000 + RANDOM % 12000)) # below the ephemeral range (32768+)
        (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return 0; }
    done
    return 1
}

# Runs one test program under the timeout, its output in LOG_DIR/NAME.log.
# Sets RC and SECS.
run_one()
{
    local name=$1 log=$LOG_DIR/$1.log start
    shift
    mkdir -p "$(dirname "$log")"
    start=$(date +%s.%N)
    if [ $VERBOSE = 1 ]; then
        timeout --kill-after=10 "$TEST_TIMEOUT" "$@" < /dev/null 2>&1 | tee "$log"
        RC=${PIPESTATUS[0]}
    else
        timeout --kill-after=10 "$TEST_TIMEOUT" "$@" < /dev/null > "$log" 2>&1
        RC=$?
    fi
    SECS=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
}

# The list is Strand's known failures: against Kafka (KAFKA_REF=1) every
# test must pass, listed or not.
is_xfail()
{
    [ -z "$KAFKA_REF" ] && [ -f "$XFAIL_FILE" ] &&
        grep -qxF "$1" <(sed 's/[[:space:]]*#.*//; /^$/d' "$XFAIL_FILE")
}

report()
{
    local name=$1 log=$LOG_DIR/$1.log
    if is_xfail "$name"; then
        # Listed as a known failure: failing is expected, passing is news
        # (take it off the list), and counts as a failure like automake's XPASS.
        case $RC in
            0) echo "XPASS: $name (${SECS}s): remove it from $XFAIL_FILE"; FAILED=$((FAILED + 1)) ;;
            77) echo "SKIP: $name"; SKIPPED=$((SKIPPED + 1)) ;;
            *) echo "XFAIL: $name (exit $RC, known failure, see $XFAIL_FILE)"; XFAILED=$((XFAILED + 1)) ;;
        esac
        return
    fi
    case $RC in
        0) echo "PASS: $name (${SECS}s)"; PASSED=$((PASSED + 1)) ;;
        77) echo "SKIP: $name ($(grep -m1 -o 'SKIP: .*' "$log" | cut -c7-))"; SKIPPED=$((SKIPPED + 1)) ;;
        124|137) echo "FAIL: $name (timeout after ${TEST_TIMEOUT}s)"; FAILED=$((FAILED + 1)); show_log "$name" "$log" ;;
        *) echo "FAIL: $name (exit $RC, ${SECS}s)"; FAILED=$((FAILED + 1)); show_log "$name" "$log" ;;
    esac
}

# A unit program counts as its CUnit tests; a crash or a missing summary
# line counts as one more failure.
run_unit()
{
    local prog=$1 name log line p f
    name=unit/$(basename "$prog")
    log=$LOG_DIR/$name.log
    run_one "$name" "$prog"
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -n 1)
    if [ -z "$line" ]; then
        p=0 f=1
    else
        p=${line%% passed*}
        f=${line#*passed, }
        f=${f%% failed*}
        [ "$RC" != 0 ] && [ "$f" = 0 ] && f=1
    fi
    PASSED=$((PASSED + p))
    FAILED=$((FAILED + f))
    if [ "$f" = 0 ] && [ "$RC" = 0 ]; then
        echo "PASS: $name ($p tests, ${SECS}s)"
    else
        echo "FAIL: $name ($p passed, $f failed, exit $RC)"
        show_log "$name" "$log"
    fi
}

start_strand()
{
    local port=$1 t=0 cport
    cport=$(free_port) || { echo "broker: no free port for the controller"; return 1; }
    cat > "$BROKER_DIR/server.properties" <<EOF
# written by tests/run-tests.sh (single-node KRaft; the controller
# listener serves the controller's APIs)
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$cport
controller.listener.names=CONTROLLER
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport
advertised.listeners=PLAINTEXT://127.0.0.1:$port
log.dirs=$BROKER_DIR/data
num.partitions=4
auto.create.topics.enable=true
EOF
    [ -x "$STRAND_BIN" ] || { echo "broker: $STRAND_BIN is not executable"; return 1; }
    "$STRAND_BIN" "$BROKER_DIR/server.properties" > "$LOG_DIR/broker.log" 2>&1 < /dev/null &
    BROKER_PID=$!
    while ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do
        if ! kill -0 "$BROKER_PID" 2>/dev/null; then
            wait "$BROKER_PID"
            echo "broker: strand exited during startup (status $?)"
            BROKER_PID=
            return 1
        fi
        t=$((t + 1))
        [ $t -gt 400 ] && { echo "broker: strand not accepting after 20 s"; return 1; }
        sleep 0.05
    done
}

start_broker()
{
    local port
    if [ -n "${STRAND_BOOTSTRAP:-}" ]; then
        BROKER_KIND=external
        echo "broker: using $STRAND_BOOTSTRAP"
        return 0
    fi
    port=$(free_port) || { echo "broker: no free port"; return 1; }
    BROKER_DIR=$SCRATCH/broker
    mkdir -p "$BROKER_DIR"
    if [ -n "$KAFKA_REF" ]; then
        BROKER_KIND=kafka
        BROKER_PID=$("$SRC_DIR/scripts/kafka-ref.sh" start "$port" "$BROKER_DIR" \
            num.partitions=4 2> "$LOG_DIR/broker.log") || { cat "$LOG_DIR/broker.log"; return 1; }
    else
        BROKER_KIND=strand
        start_strand "$port" || { tail -n 40 "$LOG_DIR/broker.log"; return 1; }
        export STRAND_DATA_DIR=$BROKER_DIR/data
    fi
    export STRAND_BOOTSTRAP=127.0.0.1:$port
    echo "broker: $BROKER_KIND pid $BROKER_PID on $STRAND_BOOTSTRAP, data in $BROKER_DIR"
}

broker_alive()
{
    [ -z "$BROKER_PID" ] && return 0
    kill -0 "$BROKER_PID" 2>/dev/null
}

# Stopping is a test too: strand must exit 0 on SIGTERM (with the sanitizer
# build this is also where leaks are reported).
stop_broker()
{
    local rc t=0
    [ -z "$BROKER_PID" ] && return 0
    if [ "$BROKER_KIND" = kafka ]; then
        "$SRC_DIR/scripts/kafka-ref.sh" stop "$BROKER_DIR"
        return 0
    fi
    kill -TERM "$BROKER_PID" 2>/dev/null
    while kill -0 "$BROKER_PID" 2>/dev/null && [ $t -lt 300 ]; do
        sleep 0.1
        t=$((t + 1))
    done
    kill -0 "$BROKER_PID" 2>/dev/null && kill -KILL "$BROKER_PID"
    wait "$BROKER_PID"
    rc=$?
    BROKER_PID=
    RC=$rc SECS=$(awk -v t=$t 'BEGIN { printf "%.1f", t / 10 }')
    [ $t -ge 300 ] && RC=124
    cp "$LOG_DIR/broker.log" "$LOG_DIR/broker-shutdown.log"
    report broker-shutdown
}

cleanup()
{
    local pidfile
    if [ -n "$BROKER_PID" ]; then
        if [ "$BROKER_KIND" = kafka ]; then
            "$SRC_DIR/scripts/kafka-ref.sh" stop "$BROKER_DIR"
        else
            kill -KILL "$BROKER_PID" 2>/dev/null
        fi
    fi
    # Kafka brokers of tests that timed out (kafka-ref.sh detaches them, so
    # the timeout's kill of the test's process group misses them); the
    # cluster harness's nodes are one level deeper (CLUSTER/node-N).
    for pidfile in "$SCRATCH"/*/kafka.pid "$SCRATCH"/*/*/kafka.pid; do
        [ -f "$pidfile" ] && "$SRC_DIR/scripts/kafka-ref.sh" kill "$(dirname "$pidfile")" 2>/dev/null
    done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

PATTERNS=("$@")
UNITS=() INTEGS=() COMPATS=()
for f in "$BUILD_DIR"/tests/unit/test_*; do
    [ -f "$f" ] && [ -x "$f" ] && selected "unit/$(basename "$f")" && UNITS+=("$f")
done
for f in "$BUILD_DIR"/tests/integration/[0-9][0-9][0-9][0-9]-*; do
    [ -f "$f" ] && [ -x "$f" ] && [[ $f != *.* ]] &&
        selected "integration/$(basename "$f")" && INTEGS+=("$f")
done
# STRAND_NO_COMPAT=1 leaves the compat/*.sh scripts out as well
# (scripts/test.sh does for the sanitizer build: they drive the broker
# through stock Java clients and Kafka's tools, whose answers do not depend
# on how it was built; the broker's own code is exercised under the
# sanitizers by the unit and integration tests, and the scripts are a
# third of a run).
for f in "$SRC_DIR"/compat/*.sh; do
    [ "$(basename "$f")" = suite.sh ] && continue
    [ "${STRAND_NO_COMPAT:-}" = 1 ] && continue
    [ -f "$f" ] && selected "compat/$(basename "$f" .sh)" && COMPATS+=("$f")
done
SUITE_CLIENTS=()
# STRAND_NO_SUITE=1 leaves the compatibility suite out (scripts/test.sh does
# for the sanitizer build: the clients' behaviour does not depend on how the
# broker was built, and the suite is the longest part of a run).
if [ "${STRAND_NO_SUITE:-}" != 1 ]; then
    for c in $(bash "$SRC_DIR/compat/suite.sh" --list); do
        selected "compat/$c" && SUITE_CLIENTS+=("$c")
    done
fi
if [ $((${#UNITS[@]} + ${#INTEGS[@]} + ${#COMPATS[@]} + ${#SUITE_CLIENTS[@]})) -eq 0 ]; then
    echo "no test matches: ${PATTERNS[*]:-(all)}"
    echo "0 passed, 1 failed"
    exit 2
fi

rm -rf "$SCRATCH" "$LOG_DIR"
mkdir -p "$SCRATCH" "$LOG_DIR"

for f in "${UNITS[@]}"; do
    run_unit "$f"
done

if [ $((${#INTEGS[@]} + ${#COMPATS[@]})) -gt 0 ]; then
    if start_broker; then
        for f in "${INTEGS[@]}"; do
            name=integration/$(basename "$f")
            run_one "$name" "$f"
            report "$name"
            broker_alive || { echo "FAIL: broker died during $name"; FAILED=$((FAILED + 1)); BROKER_PID=; break; }
        done
        for f in "${COMPATS[@]}"; do
            name=compat/$(basename "$f" .sh)
            broker_alive || break
            run_one "$name" bash "$f"
            report "$name"
            broker_alive || { echo "FAIL: broker died during $name"; FAILED=$((FAILED + 1)); BROKER_PID=; break; }
        done
        stop_broker
    else
        echo "FAIL: broker-start"
        FAILED=$((FAILED + 1 + ${#INTEGS[@]} + ${#COMPATS[@]}))
    fi
fi

# The suite owns its broker (it restarts it), so it runs after the shared
# one stopped; against Kafka too with KAFKA_REF=1.
if [ ${#SUITE_CLIENTS[@]} -gt 0 ] && [ "$BROKER_KIND" != external ]; then
    name=compat/suite
    log=$LOG_DIR/$name.log
    mkdir -p "$(dirname "$log")"
    start=$(date +%s.%N)
    # The suite has its own timeout per cell; the whole of it gets 15 min.
    (cd "$BUILD_DIR" && env -u STRAND_BOOTSTRAP COMPAT_DIR="$BUILD_DIR/tests/compat" \
        timeout --kill-after=10 900 bash "$SRC_DIR/compat/suite.sh" "${SUITE_CLIENTS[@]}") \
        < /dev/null > "$log" 2>&1
    RC=$?
    SECS=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    grep -E '^(PASS|FAIL|XFAIL|XPASS|SKIP|N/A|BROKER-MISSING|UNTESTED): ' "$log" | grep -v '^PASS' | sed 's/^/  /'
    awk '/^compat suite, /{p=1} /^\(logs in/{p=0} p { print "  " $0 }' "$log"
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -n 1)
    if [ -z "$line" ]; then p=0 f=1; else p=${line%% passed*}; f=${line#*passed, }; f=${f%% failed*}; fi
    [ "$RC" != 0 ] && [ "$f" = 0 ] && f=1
    PASSED=$((PASSED + p))
    FAILED=$((FAILED + f))
    if [ "$f" = 0 ]; then
        echo "PASS: $name ($p cells, ${SECS}s)"
    else
        echo "FAIL: $name ($p passed, $f failed, exit $RC, ${SECS}s)"
        show_log "$name" "$log"
    fi
fi

if [ $SKIPPED -gt 0 ] || [ $XFAILED -gt 0 ]; then
    echo "($SKIPPED skipped, $XFAILED known failures listed in $XFAIL_FILE)"
fi
echo "$PASSED passed, $FAILED failed"
[ $FAILED -eq 0 ]

#!/usr/bin/env bash
# compat/suite.sh: the compatibility suite (`make compat`). Every stock
# client of compat/clients/ runs the same scenarios (compat/README.md)
# against one broker that this script starts and owns: strand (STRAND_BIN),
# or Apache Kafka 4.4 with KAFKA_REF=1 (scripts/kafka-ref.sh). It prints one
# line per client and scenario, then the table client x scenario:
#   pass            the client read back exactly what the scenario asks
#   fail            it did not (its log follows the FAIL line)
#   n/a             the client has no API for it (the reason is in the log)
#   broker-missing  the broker does not advertise an API the scenario needs
#   skip            the client could not be installed here
#   untested        the client has the API, but its driver here does not
#                   run this scenario yet
#   xfail           failed against strand, listed with its reason in
#                   tests/integration/XFAIL as compat/CLIENT/SCENARIO (a
#                   listed cell that passes is XPASS and counts as failed)
# and as its last line "N passed, N failed".
#
#   compat/suite.sh [-v] [CLIENT...]     (default: every client)
#   compat/suite.sh --list               the clients, one a line
#
# Environment:
#   STRAND_BIN       the broker (default ./strand of the current directory)
#   KAFKA_REF=1      run against Apache Kafka instead
#   COMPAT_DIR       work directory (default ./compat-work): broker data,
#                    logs (COMPAT_DIR/logs/CLIENT/SCENARIO.log), table.txt
#   COMPAT_TIMEOUT   seconds per client and scenario (default 180)
# Installs (Go modules, PyPI wheels, npm packages, Maven jars) are cached
# under .cache/ of the checkout: only the first run fetches.
#
# The commit-restart scenario runs in two phases: every client's first phase
# (consume, commit), one restart of the broker (same port, same data), then
# every client's second phase (resume from the committed offset).
set -u

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export ROOT
CLIENTS_DIR=$ROOT/compat/clients
# The columns of the table, in order.
SCENARIOS=(metadata produce by-time group restart idempotent txn configs)
# The API keys each scenario needs the broker to advertise.
declare -A NEEDS=([metadata]="3 19" [produce]="0 1" [by-time]="2"
    [group]="10 11 12 13 14" [restart]="8 9 10" [idempotent]="22"
    [txn]="22 24 25 26 28" [configs]="32 44")
ALL_CLIENTS=(kcat java kafka-verifiable kafka-e2e-latency franz-go sarama
    kafka-python confluent-kafka kafkajs platformatic)

VERBOSE=0
if [ "${1:-}" = "--list" ]; then printf '%s\n' "${ALL_CLIENTS[@]}"; exit 0; fi
if [ "${1:-}" = "-v" ]; then VERBOSE=1; shift; fi
CLIENTS=("$@")
[ ${#CLIENTS[@]} -eq 0 ] && CLIENTS=("${ALL_CLIENTS[@]}")
for c in "${CLIENTS[@]}"; do
    [ -f "$CLIENTS_DIR/$c.sh" ] || { echo "no such client: $c (see --list)"; echo "0 passed, 1 failed"; exit 2; }
done

STRAND_BIN=${STRAND_BIN:-$PWD/strand}
KAFKA_REF=${KAFKA_REF:-}
[ "$KAFKA_REF" = 0 ] && KAFKA_REF=
export STRAND_BIN KAFKA_REF
COMPAT_DIR=$(mkdir -p "${COMPAT_DIR:-$PWD/compat-work}" && cd "${COMPAT_DIR:-$PWD/compat-work}" && pwd)
COMPAT_TIMEOUT=${COMPAT_TIMEOUT:-180}
LOGS=$COMPAT_DIR/logs
COMPAT_ID=$(date +%s)-$$
export COMPAT_ID
mkdir -p "$ROOT/.cache" && { [ -f "$ROOT/.cache/.gitignore" ] || echo '*' > "$ROOT/.cache/.gitignore"; }

# shellcheck source=lib/broker.sh
. "$ROOT/compat/lib/broker.sh"
trap 'broker_stop >/dev/null 2>&1' EXIT
trap 'exit 130' INT TERM

PASSED=0 FAILED=0
declare -A CELL VERSION NA SKIP
ADVERTISED=" "

XFAIL_FILE=$ROOT/tests/integration/XFAIL
is_xfail()
{
    [ "$BROKER_KIND" = strand ] && [ -f "$XFAIL_FILE" ] &&
        grep -qxF "$1" <(sed 's/[[:space:]]*#.*//; /^$/d' "$XFAIL_FILE")
}

# cell CLIENT SCENARIO RESULT [NOTE]: records one cell and prints its line.
cell()
{
    local client=$1 scen=$2 res=$3 note=${4:-}
    if is_xfail "compat/$client/$scen"; then
        case $res in
            pass) res=XPASS note="$note: remove it from $XFAIL_FILE" ;;
            fail) res=xfail note="$note: known failure, see $XFAIL_FILE" ;;
        esac
    fi
    CELL[$client/$scen]=$res
    case $res in
        pass) PASSED=$((PASSED + 1)); echo "PASS: compat/$client/$scen $note" ;;
        fail|XPASS) FAILED=$((FAILED + 1)); echo "${res^^}: compat/$client/$scen $note" ;;
        *) echo "${res^^}: compat/$client/$scen $note" ;;
    esac
}

show_log()
{
    echo "---- $1 (last 40 lines; full log: $2)"
    tail -n 40 "$2"
    echo "----"
}

# client_cmd CLIENT LOG ARGS...: runs compat/clients/CLIENT.sh under the
# timeout; sets RC and SECS.
client_cmd()
{
    local client=$1 log=$2 start
    shift 2
    mkdir -p "$(dirname "$log")" "$COMPAT_DIR/work/$client"
    start=$(date +%s.%N)
    if [ $VERBOSE = 1 ]; then
        COMPAT_BS=$BROKER_BS COMPAT_WORK=$COMPAT_DIR/work/$client timeout --kill-after=10 \
            "$COMPAT_TIMEOUT" bash "$CLIENTS_DIR/$client.sh" "$@" < /dev/null 2>&1 | tee -a "$log"
        RC=${PIPESTATUS[0]}
    else
        COMPAT_BS=$BROKER_BS COMPAT_WORK=$COMPAT_DIR/work/$client timeout --kill-after=10 \
            "$COMPAT_TIMEOUT" bash "$CLIENTS_DIR/$client.sh" "$@" < /dev/null >> "$log" 2>&1
        RC=$?
    fi
    SECS=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
}

# The broker can serve SCEN when it advertises every API key it needs.
broker_has()
{
    local key
    for key in ${NEEDS[$1]}; do
        [[ $ADVERTISED == *" $key "* ]] || return 1
    done
}

# install_client CLIENT: fetches and builds what the client needs; a client
# that cannot be had here is skipped in every scenario.
install_client()
{
    local client=$1 log=$LOGS/$1/install.log line
    client_cmd "$client" "$log" install
    case $RC in
        0) VERSION[$client]=$(grep -m1 '^VERSION: ' "$log" | cut -c10-)
           echo "installed: $client ${VERSION[$client]} (${SECS}s)" ;;
        77) SKIP[$client]=$(grep -m1 -o 'SKIP: .*' "$log" | cut -c7-)
            echo "SKIP: compat/$client (${SKIP[$client]})" ;;
        *) SKIP[$client]="install failed"; FAILED=$((FAILED + 1))
           echo "FAIL: compat/$client/install (exit $RC, ${SECS}s)"; show_log "$client/install" "$log" ;;
    esac
    while read -r line; do
        [ -n "$line" ] && NA[$client/${line%% *}]=${line#* }
    done < <(bash "$CLIENTS_DIR/$client.sh" na)
}

# run_cell CLIENT SCENARIO [PHASE]
run_cell()
{
    local client=$1 scen=$2 phase=${3:-} log=$LOGS/$1/$2.log
    if [ -n "${SKIP[$client]:-}" ]; then
        [ "$phase" = before ] || cell "$client" "$scen" skip "(${SKIP[$client]})"
        return
    fi
    if [ -n "${NA[$client/$scen]:-}" ]; then
        if [[ ${NA[$client/$scen]} == untested:* ]]; then
            [ "$phase" = before ] || cell "$client" "$scen" untested "(${NA[$client/$scen]#untested: })"
        else
            [ "$phase" = before ] || cell "$client" "$scen" n/a "(${NA[$client/$scen]})"
        fi
        return
    fi
    if ! broker_has "$scen"; then
        [ "$phase" = before ] || cell "$client" "$scen" broker-missing "(the broker lacks API keys among ${NEEDS[$scen]})"
        return
    fi
    # A first phase that failed decides the cell; the second is not run.
    if [ "$phase" = after ] && [ -n "${CELL[$client/$scen]:-}" ]; then return; fi
    [ "$phase" = after ] || : > "$log"
    echo "== $client $scen $phase" >> "$log"
    client_cmd "$client" "$log" run "$scen" $phase
    if [ $RC = 0 ]; then
        [ "$phase" = before ] && return
        cell "$client" "$scen" pass "(${SECS}s)"
    elif [ $RC = 124 ] || [ $RC = 137 ]; then
        cell "$client" "$scen" fail "(timeout after ${COMPAT_TIMEOUT}s)"
        [ "${CELL[$client/$scen]}" = xfail ] || show_log "$client/$scen" "$log"
    else
        cell "$client" "$scen" fail "(exit $RC, ${SECS}s)"
        [ "${CELL[$client/$scen]}" = xfail ] || show_log "$client/$scen" "$log"
    fi
    if ! broker_alive; then
        echo "FAIL: the broker died during $client $scen"; FAILED=$((FAILED + 1))
        tail -n 30 "$BROKER_DIR/broker.log"
        exit 1
    fi
}

print_table()
{
    local client scen w=18 ver
    printf '%-*s' $w "client"
    for scen in "${SCENARIOS[@]}"; do printf ' %-14s' "$scen"; done
    printf ' %s\n' "version"
    for client in "${CLIENTS[@]}"; do
        printf '%-*s' $w "$client"
        for scen in "${SCENARIOS[@]}"; do printf ' %-14s' "${CELL[$client/$scen]:--}"; done
        ver=${VERSION[$client]:-}
        printf ' %s\n' "${ver:-${SKIP[$client]:-}}"
    done
}

rm -rf "$COMPAT_DIR/broker" "$COMPAT_DIR/work" "$LOGS"
mkdir -p "$LOGS"
for c in "${CLIENTS[@]}"; do install_client "$c"; done

broker_start "$COMPAT_DIR/broker" || { echo "FAIL: broker start: $BROKER_ERR"; tail -n 30 "$COMPAT_DIR/broker/broker.log"; echo "0 passed, 1 failed"; exit 1; }
case $BROKER_KIND in
    strand) BROKER_NAME="Strand $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null)" ;;
    *) BROKER_NAME="Apache Kafka ${KAFKA_REF_VERSION:-4.4.0}" ;;
esac
echo "broker: $BROKER_NAME pid $BROKER_PID on $BROKER_BS, data in $BROKER_DIR"
ADVERTISED=" $(python3 "$ROOT/compat/lib/apiversions.py" "$BROKER_BS" | cut -d ' ' -f 1 | tr '\n' ' ')"
[ "$ADVERTISED" = " " ] && { echo "FAIL: ApiVersions of $BROKER_BS"; echo "0 passed, 1 failed"; exit 1; }

for c in "${CLIENTS[@]}"; do
    for s in "${SCENARIOS[@]}"; do
        if [ "$s" = restart ]; then run_cell "$c" restart before; else run_cell "$c" "$s"; fi
    done
done
echo "restarting the broker"
if ! broker_restart; then
    echo "FAIL: compat/broker-restart ($BROKER_ERR)"; FAILED=$((FAILED + 1))
    tail -n 30 "$BROKER_DIR/broker.log"
fi
if broker_alive; then
    for c in "${CLIENTS[@]}"; do run_cell "$c" restart after; done
fi
if ! broker_stop; then
    echo "FAIL: compat/broker-shutdown ($BROKER_ERR)"; FAILED=$((FAILED + 1))
    tail -n 30 "$BROKER_DIR/broker.log"
fi

{
    echo "compat suite, $(date -u +%Y-%m-%d), against $BROKER_NAME"
    print_table
} > "$COMPAT_DIR/table.txt"
echo
cat "$COMPAT_DIR/table.txt"
echo "(logs in $LOGS, table in $COMPAT_DIR/table.txt)"
echo "$PASSED passed, $FAILED failed"
[ $FAILED -eq 0 ]

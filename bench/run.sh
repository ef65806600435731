#!/usr/bin/env bash
# bench/run.sh: Strand side by side with Apache Kafka and the machine's
# physical limits (what `make bench` and `make bench-kafka` run).
#
#   run.sh [--build DIR] [--kafka] [--no-strand] [--quick] [--runs N] [--cluster]
#
#   --build DIR   the build directory holding ./strand and bench/strand-bench
#                 (default: the current directory)
#   --kafka       also run Apache Kafka (scripts/kafka-ref.sh), interleaved
#   --no-strand   Kafka only (needs --kafka), e.g. while strand does not build
#   --quick       the quick mode (< 2 minutes): one run, shorter workloads,
#                 fewer produce variants
#   --runs N      runs per figure (default 3, quick 1); the table shows medians
#   --cluster     three-node clusters instead of single nodes (bench/cluster.sh)
#
# Environment (all optional): BENCH_QUICK=1 (as --quick), BENCH_RUNS,
# BENCH_DIR (work directory, default BUILD/bench-work; it must be on the file
# system you want measured: both brokers and the fs limit use it),
# BENCH_SECONDS (produce window), BENCH_CODEC (default lz4),
# BENCH_TXN_MSGS (messages per transaction of the txn workload, 100),
# BENCH_CONSUME_MB (cold consume volume), BENCH_LAT_RATE (msgs/s, default
# 500), BENCH_LAT_SECONDS, BENCH_FLUSH_MESSAGES (log.flush.interval.messages
# for both brokers; default unset: no fsync, both brokers' default),
# BENCH_CLUSTER=1 (as --cluster), BENCH_RDKAFKA_DEBUG (librdkafka's debug
# contexts for strand-bench, logged to BENCH_DIR/<broker>.err).
#
# Each run starts both brokers on fresh data directories (timing start-up),
# warms them up, runs every workload on one then the other (alternating who
# goes first), records peak memory, stops them, and measures the limits.
# Output: BENCH_DIR/results.tsv (every figure of every run) and
# BENCH_DIR/table.txt (medians and ratios, also printed).
set -u

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$PWD
WITH_KAFKA=0
WITH_STRAND=1
QUICK=${BENCH_QUICK:-0}
[ "$QUICK" = 0 ] || [ "$QUICK" = 1 ] || QUICK=1
TXN_MSGS=${BENCH_TXN_MSGS:-100}
RUNS=${BENCH_RUNS:-}
CLUSTER=${BENCH_CLUSTER:-0}
[ "$CLUSTER" = 0 ] || [ "$CLUSTER" = 1 ] || CLUSTER=1

die() { echo "bench: $*" >&2; exit 1; }
note() { echo "bench: $*" >&2; }
usage() { sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

while [ $# -gt 0 ]; do
    case $1 in
        --build) BUILD=$(cd "$2" && pwd) || exit 1; shift ;;
        --kafka) WITH_KAFKA=1 ;;
        --no-strand) WITH_STRAND=0 ;;
        --quick) QUICK=1 ;;
        --runs) RUNS=$2; shift ;;
        --cluster) CLUSTER=1 ;;
        *) usage ;;
    esac
    shift
done
[ $WITH_STRAND = 1 ] || [ $WITH_KAFKA = 1 ] || die "--no-strand needs --kafka"

if [ "$QUICK" = 1 ]; then
    RUNS=${RUNS:-1}; SECS=${BENCH_SECONDS:-1}; CONSUME_MB=${BENCH_CONSUME_MB:-256}
    LAT_SECS=${BENCH_LAT_SECONDS:-3}; WARM_SECS=2
else
    RUNS=${RUNS:-3}; SECS=${BENCH_SECONDS:-2}; CONSUME_MB=${BENCH_CONSUME_MB:-1024}
    LAT_SECS=${BENCH_LAT_SECONDS:-10}; WARM_SECS=4
fi
CODEC=${BENCH_CODEC:-lz4}
# The memory a run's page cache takes, written once before the first run
# (see page_reporting_off): two produce windows of the fastest broker
# (1.6 GB/s), the consume topic, and room for the brokers' own.
PREFAULT=$(awk -v s="$SECS" -v c="$CONSUME_MB" 'BEGIN { printf "%.0f", 2 * s * 1.6e9 + c * 1048576 + 2e9 }')
LAT_RATE=${BENCH_LAT_RATE:-500}
WORK=${BENCH_DIR:-$BUILD/bench-work}
BENCH=$BUILD/bench/strand-bench
STRAND=$BUILD/strand
KREF=$SRC/scripts/kafka-ref.sh
KVERSION=${KAFKA_REF_VERSION:-4.4.0}

[ -x "$BENCH" ] || die "$BENCH missing: run 'make bench' in the build directory"
[ $WITH_STRAND = 0 ] || [ -x "$STRAND" ] || die "$STRAND missing: run 'make' first"
mkdir -p "$WORK" || die "cannot create $WORK"
WORK=$(cd "$WORK" && pwd)
RESULTS=$WORK/results.tsv
: > "$RESULTS"
: > "$WORK/bench.log"
rm -f "$WORK/strand.err" "$WORK/kafka.err" "$WORK/strand-bench-keeper.tmp"

# ---- helpers ----

# A free port below the ephemeral range: a port above it may be the local
# end of some connection, and then a listener cannot bind it.
free_port()
{
    local p i lo
    read -r lo _ < /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || lo=32768
    # /dev/urandom, not $RANDOM, whose subshell seeds (time ^ pid) once
    # gave two nodes of a cluster one port; FREE_PORT_TAKEN: ports picked
    # for processes not listening yet
    for i in $(seq 1 200); do
        p=$((10000 + $(od -An -N2 -tu2 /dev/urandom) % (lo - 10000)))
        case " ${FREE_PORT_TAKEN:-} " in *" $p "*) continue ;; esac
        (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return 0; }
    done
    die "no free port"
}

# record RUN BROKER WORKLOAD < "RESULT metric value" lines
record()
{
    local run=$1 broker=$2 wl=$3 tag metric value
    while read -r tag metric value; do
        [ "$tag" = RESULT ] && printf '%s\t%s\t%s\t%s\t%s\n' "$run" "$broker" "$wl" "$metric" "$value" >> "$RESULTS"
    done
    return 0
}

alive() { [ -n "${PID[$1]:-}" ] && kill -0 "${PID[$1]}" 2>/dev/null; }

# CPU clock ticks (user+sys) of process $1.
ticks() { sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | awk '{ print $12 + $13 }'; }

# Waits (5 s at most) until the other broker is idle, below 10% of a core
# over 300 ms: garbage collection or JIT compiling after its last workload
# must not run during this broker's measurement.
quiesce()
{
    local b i t0 t1 hz
    hz=$(getconf CLK_TCK)
    for b in "${ORDER[@]}"; do
        [ "$b" = "$1" ] && continue
        alive "$b" || continue
        for ((i = 0; i < 16; i++)); do
            t0=$(ticks "${PID[$b]}")
            sleep 0.3
            t1=$(ticks "${PID[$b]}")
            [ -n "$t0" ] && [ -n "$t1" ] && [ $(((t1 - t0) * 1000)) -lt $((hz * 30)) ] && break
        done
    done
    return 0
}

# The other broker is stopped (SIGSTOP) while one is measured: a JVM's
# collector or a background job waking up in the middle of the other's
# window would take its CPU (the 2 cores are shared) and show up in its
# latency. Nothing talks to the paused one meanwhile.
PAUSED=()
pause_others()
{
    local b
    for b in "${ORDER[@]}"; do
        [ "$b" = "$1" ] && continue
        alive "$b" && kill -STOP "${PID[$b]}" 2>/dev/null && PAUSED+=("${PID[$b]}")
    done
    return 0
}
resume_all()
{
    local p
    for p in "${PAUSED[@]}"; do kill -CONT "$p" 2>/dev/null; done
    PAUSED=()
    return 0
}

# Settings both brokers get (what kafka-ref.sh does not set already).
common_settings()
{
    COMMON=(auto.create.topics.enable=true "num.partitions=$DEFAULT_PARTS"
        log.segment.bytes=1073741824 group.initial.rebalance.delay.ms=0
        offsets.topic.replication.factor=1 log.segment.delete.delay.ms=0)
    [ -z "${BENCH_FLUSH_MESSAGES:-}" ] || COMMON+=("log.flush.interval.messages=$BENCH_FLUSH_MESSAGES")
}

# The same single-node KRaft layout kafka-ref.sh writes for Kafka.
strand_config()
{
    local port=$1 cport=$2 dir=$3 kv
    cat <<EOF
# generated by bench/run.sh
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$cport
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport
advertised.listeners=PLAINTEXT://127.0.0.1:$port
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$dir/data
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
EOF
    for kv in "${COMMON[@]}"; do echo "$kv"; done
}

# Kafka formats its data directory with a JVM tool (seconds): start-up is
# timed on a copy of a directory formatted once, as Strand's is timed on an
# empty one.
kafka_template()
{
    KTEMPLATE=$WORK/kafka-template-$KVERSION
    [ -f "$KTEMPLATE/data/meta.properties" ] && return 0
    note "formatting a Kafka $KVERSION data directory (once)"
    "$KREF" fetch || die "cannot fetch Kafka"
    rm -rf "$KTEMPLATE"
    "$KREF" start "$(free_port)" "$KTEMPLATE" >> "$WORK/bench.log" 2>&1 ||
        die "Kafka does not start (see $KTEMPLATE)"
    "$KREF" stop "$KTEMPLATE"
    rm -f "$KTEMPLATE"/*.log "$KTEMPLATE"/*.log.1
}

# wait_ready DIR SPAWN_PID SECONDS: until spawn.out says READY.
wait_ready()
{
    local i
    for ((i = 0; i < $3 * 10; i++)); do
        grep -q '^READY' "$1/spawn.out" 2>/dev/null && return 0
        kill -0 "$2" 2>/dev/null || break
        sleep 0.1
    done
    tail -n 20 "$1/broker.log" >&2
    return 1
}

# Starts broker $1 on a fresh data directory and records its start-up.
start_broker()
{
    local b=$1 dir=$WORK/$1 try
    for try in 1 2 3; do
        spawn_broker "$b" && break
        [ $try = 3 ] && die "$b did not start (log: $dir/broker.log)"
        note "$b did not start, trying another port"
    done
    PID[$b]=$(awk '$1 == "PID" { print $2 }' "$dir/spawn.out")
    record "$RUN" "$b" process < "$dir/spawn.out"
}

spawn_broker()
{
    local b=$1 dir=$WORK/$1 port
    local -a cmd
    rm -rf "$dir"
    mkdir -p "$dir"
    port=$(free_port)
    if [ "$b" = strand ]; then
        strand_config "$port" "$(free_port)" "$dir" > "$dir/server.properties"
        cmd=("$STRAND" "$dir/server.properties")
    else
        cp -a "$KTEMPLATE/." "$dir/"
        cmd=("$KREF" run "$port" "$dir" "${COMMON[@]}")
    fi
    "$BENCH" spawn --port "$port" --log "$dir/broker.log" -- "${cmd[@]}" \
        > "$dir/spawn.out" 2>> "$WORK/bench.log" &
    SPAWN[$b]=$!
    PORT[$b]=$port
    wait_ready "$dir" "${SPAWN[$b]}" 300 && return 0
    kill -KILL "${SPAWN[$b]}" 2>/dev/null
    wait "${SPAWN[$b]}" 2>/dev/null
    SPAWN[$b]=
    return 1
}

stop_broker()
{
    local b=$1 i
    [ -n "${SPAWN[$b]:-}" ] || return 0
    if alive "$b"; then
        if [ "$b" = kafka ]; then "$KREF" stop "$WORK/kafka"; else kill -TERM "${PID[$b]}"; fi
    fi
    for ((i = 0; i < 600; i++)); do
        kill -0 "${SPAWN[$b]}" 2>/dev/null || break
        [ $i = 300 ] && kill -KILL "${PID[$b]}" 2>/dev/null
        sleep 0.1
    done
    wait "${SPAWN[$b]}" 2>/dev/null
    SPAWN[$b]=
    PID[$b]=
}

cleanup()
{
    resume_all
    stop_broker strand
    stop_broker kafka
    cluster_stop strand
    cluster_stop kafka
    rm -f "$WORK/strand-bench-keeper.tmp"
}

# ---- workloads ----

# Topic options: with CreateTopics, the topic gets the workload's partition
# count; without it (auto-creation), every topic has DEFAULT_PARTS and a
# one-partition workload writes to partition 0 only.
topic_args()
{
    if [ "$AUTO" = 1 ]; then
        TOPIC_ARGS=(--auto-create --partitions "$DEFAULT_PARTS")
        [ "$1" = 1 ] && TOPIC_ARGS+=(--pin 0)
    else
        TOPIC_ARGS=(--partitions "$1")
    fi
    return 0
}

# bench_cmd BROKER WORKLOAD SUBCOMMAND ARGS...: runs one strand-bench
# subcommand against BROKER and records its figures under WORKLOAD.
bench_cmd()
{
    local b=$1 wl=$2 out rc
    shift 2
    out=$("$BENCH" "$@" -b "127.0.0.1:${PORT[$b]}" --pid "${PID[$b]}" 2>> "$WORK/$b.err")
    rc=$?
    record "$RUN" "$b" "$wl" <<< "$out"
    if [ $rc != 0 ]; then
        note "run $RUN: $wl on $b failed (exit $rc; see $WORK/$b.err)"
        printf '%s\t%s\t%s\tfailed\t1\n' "$RUN" "$b" "$wl" >> "$RESULTS"
    fi
    return $rc
}

run_workload()
{
    local b=$1 wl=$2 kind size acks comp parts
    IFS=- read -r kind size acks comp parts <<< "$wl"
    case $kind in
        produce | raw)
            # each window's topic is deleted after it: the disk could not
            # hold them all, and the next window reuses its memory
            topic_args "$parts"
            bench_cmd "$b" "$wl" "${kind/#raw/rawproduce}" --topic "$wl" --size "$size" \
                --acks "$acks" --compression "$comp" --seconds "$SECS" "${TOPIC_ARGS[@]}"
            "$BENCH" delete-topic --topic "$wl" -b "127.0.0.1:${PORT[$b]}" \
                --data "$WORK/$b/data" 2>> "$WORK/$b.err" || note "run $RUN: cannot delete $wl on $b" ;;
        consume)
            # The first read of a fresh file is also the first read on the
            # VM host's side, and varies 3x with the host; a first cold
            # pass (not recorded) makes every measured pass alike, and like
            # the fs limit's read of a file it has just written.
            topic_args 1
            bench_cmd "$b" fill fill --topic consume --size 1024 --acks 1 \
                --bytes "$CONSUME_BYTES" "${TOPIC_ARGS[@]}" &&
            bench_cmd "$b" prime fetch --topic consume --drop-caches \
                --fetch-bytes 16777216 "${TOPIC_ARGS[@]}" &&
            bench_cmd "$b" fetch fetch --topic consume --drop-caches \
                --fetch-bytes 16777216 "${TOPIC_ARGS[@]}" &&
            bench_cmd "$b" "$wl" consume --topic consume --drop-caches \
                --fetch-bytes 16777216 "${TOPIC_ARGS[@]}" ;;
        latency)
            topic_args 1
            bench_cmd "$b" "$wl" latency --topic latency --size 1024 --acks all \
                --rate "$LAT_RATE" --seconds "$LAT_SECS" "${TOPIC_ARGS[@]}" ;;
        group)
            topic_args 16
            bench_cmd "$b" "$wl" group --topic group --group "bench-$RUN" "${TOPIC_ARGS[@]}" ;;
        txn)
            topic_args 1
            bench_cmd "$b" "$wl" txn --topic "txn-$RUN" --size 1024 --txn-msgs "$TXN_MSGS" \
                --seconds "$SECS" "${TOPIC_ARGS[@]}" ;;
        warmup)
            # JIT, connections, and the group coordinator's first use (Kafka
            # creates __consumer_offsets then) stay out of the figures
            topic_args 1
            bench_cmd "$b" "$wl" produce --topic warmup --size 1024 --acks 1 \
                --seconds "$WARM_SECS" "${TOPIC_ARGS[@]}"
            topic_args 16
            bench_cmd "$b" "$wl" group --topic warmup-group --group warmup "${TOPIC_ARGS[@]}" ;;
    esac
}

workloads()
{
    local size acks comp parts
    WORKLOADS=()
    # raw-*: broker capacity (rawproduce); produce-*: one librdkafka
    # producer, fewer variants (it measures the client as much)
    if [ "$QUICK" = 1 ]; then
        WORKLOADS=(raw-100-1-none-1 raw-1024-1-none-1 raw-1024-all-none-1
            "raw-1024-1-$CODEC-1" raw-1024-1-none-16 produce-100-1-none-1 produce-1024-1-none-1)
    else
        for size in 100 1024; do for acks in 1 all; do for comp in none "$CODEC"; do
            for parts in 1 16; do
                WORKLOADS+=("raw-$size-$acks-$comp-$parts")
            done
        done; done; done
        # (acks=all with librdkafka: see the latency workload)
        WORKLOADS+=(produce-100-1-none-1 produce-1024-1-none-1)
    fi
    WORKLOADS+=(consume latency group txn)
    # BENCH_ONLY="latency raw-1024-1-none-1": just these (and the warm-up)
    if [ -n "${BENCH_ONLY:-}" ]; then
        local wl keep=()
        for wl in "${WORKLOADS[@]}"; do
            case " $BENCH_ONLY " in *" $wl "*) keep+=("$wl") ;; esac
        done
        WORKLOADS=("${keep[@]}")
    fi
}

# ---- the run ----

# ORDER: the brokers of this comparison, Kafka first when $1 is odd.
brokers_in_order()
{
    ORDER=()
    [ $WITH_STRAND = 1 ] && ORDER+=(strand)
    [ $WITH_KAFKA = 1 ] && ORDER+=(kafka)
    if [ $(($1 % 2)) = 1 ] && [ ${#ORDER[@]} = 2 ]; then ORDER=(kafka strand); fi
    return 0
}

one_run()
{
    local i=0 b wl
    brokers_in_order "$RUN"
    for b in "${ORDER[@]}"; do start_broker "$b"; done
    for b in "${ORDER[@]}"; do run_workload "$b" warmup; done
    for wl in "${WORKLOADS[@]}"; do
        brokers_in_order $((RUN + i))
        i=$((i + 1))
        note "run $RUN/$RUNS: $wl"
        for b in "${ORDER[@]}"; do
            alive "$b" || continue
            quiesce "$b"
            pause_others "$b"
            run_workload "$b" "$wl"
            resume_all
            alive "$b" || note "run $RUN: $b died during $wl (log: $WORK/$b/broker.log)"
        done
    done
    for b in "${ORDER[@]}"; do
        alive "$b" && record "$RUN" "$b" process <<< "$("$BENCH" procstat --pid "${PID[$b]}")"
        stop_broker "$b"
        rm -rf "$WORK/$b/data"
    done
    rm -f "$WORK/strand-bench-keeper.tmp"
    note "run $RUN/$RUNS: physical limits"
    record "$RUN" limit limit <<< "$("$BENCH" limit-tcp --bytes "$CONSUME_BYTES")"
    record "$RUN" limit limit <<< "$("$BENCH" limit-fs --dir "$WORK" --bytes "$CONSUME_BYTES" --drop-caches)"
}

# Decides how topics are made (CreateTopics or auto-creation) from what
# Strand advertises, so that both brokers are driven the same way.
choose_topic_mode()
{
    local out port dir=$WORK/probe spawn
    AUTO=0
    DEFAULT_PARTS=1
    [ $WITH_STRAND = 1 ] || return 0
    rm -rf "$dir"
    mkdir -p "$dir"
    port=$(free_port)
    COMMON=()
    strand_config "$port" "$(free_port)" "$dir" > "$dir/server.properties"
    "$BENCH" spawn --port "$port" --log "$dir/broker.log" --timeout 30 -- "$STRAND" \
        "$dir/server.properties" > "$dir/spawn.out" 2>> "$WORK/bench.log" &
    spawn=$!
    wait_ready "$dir" $spawn 30 || die "strand does not start (log: $dir/broker.log)"
    out=$("$BENCH" probe -b "127.0.0.1:$port")
    kill -TERM "$(awk '$1 == "PID" { print $2 }' "$dir/spawn.out")"
    wait $spawn
    rm -rf "$dir"
    if grep -q '^RESULT api_create_topics -1' <<< "$out"; then
        AUTO=1
        DEFAULT_PARTS=16
        note "strand has no CreateTopics: both brokers auto-create topics with 16 partitions; one-partition workloads use partition 0"
    fi
    return 0
}

machine_header()
{
    local cpu mem fs dev sanit= flush
    cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
    mem=$(awk '/^MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)
    fs=$(findmnt -n -o FSTYPE -T "$WORK" 2>/dev/null || stat -f -c %T "$WORK")
    dev=$(df -P "$WORK" | awk 'NR == 2 { print $1 }')
    flush=${BENCH_FLUSH_MESSAGES:+log.flush.interval.messages=$BENCH_FLUSH_MESSAGES}
    if [ $WITH_STRAND = 1 ] && nm "$STRAND" 2>/dev/null | grep -q __asan_init; then
        sanit=" -- SANITIZER BUILD: its figures mean nothing; configure without --enable-sanitizers"
        note "WARNING: $STRAND is built with sanitizers"
    fi
    echo "Strand $(git -C "$SRC" describe --always --dirty 2>/dev/null || echo '?')$sanit"
    [ $WITH_KAFKA = 1 ] && echo "Apache Kafka $KVERSION, $(java -version 2>&1 | head -n 1), ${KAFKA_HEAP_OPTS:--Xmx1G -Xms1G}"
    echo "$(date -u +%Y-%m-%d), $cpu, $(nproc) cores, $mem RAM, Linux $(uname -r), data on $fs ($dev)"
    echo "client: strand-bench on librdkafka $(pkg-config --modversion rdkafka 2>/dev/null || echo '?'), same machine"
    echo "$([ "$QUICK" = 1 ] && echo quick || echo full) mode, median of $RUNS run(s); produce ${SECS} s per figure; topics $([ "$AUTO" = 1 ] && echo "auto-created, 16 partitions" || echo "by CreateTopics"); fsync policy: ${flush:-none, the default of both}"
    echo "memory: $PR_STATE (see bench/run.sh)"
    [ "$CLUSTER" = 0 ] || echo "cluster mode: 3 combined nodes per broker, one static quorum, RF 3, acks=all, Kafka's defaults otherwise; one cluster at a time (see bench/cluster.sh)"
}

# On a VM with free page reporting (virtio-balloon), memory left free for
# a few seconds goes back to the host, and the next first write to it costs
# a host fault (2.5 s of CPU per GB here), charged to whichever broker
# touches it: noise several times larger than the brokers' own produce
# CPU. Where the kernel lets us, reporting is off for the run (restored
# on exit), and the memory the run will use is written once (prefault in
# bench/bench_limit.c). BENCH_PAGE_REPORTING=keep leaves it alone.
PR_KNOB=/sys/module/page_reporting/parameters/page_reporting_order
PR_SAVED=
page_reporting_off()
{
    PR_STATE="no free page reporting"
    [ -e "$PR_KNOB" ] || return 0
    PR_STATE="free page reporting left on: produce CPU includes VM host faults"
    [ "${BENCH_PAGE_REPORTING:-}" = keep ] && return 0
    PR_SAVED=$(cat "$PR_KNOB" 2>/dev/null) || return 0
    # no free block is ever of an order above the largest
    if echo 11 > "$PR_KNOB" 2>/dev/null; then
        PR_STATE="free page reporting off for the run"
    else
        PR_SAVED=
    fi
    return 0
}
page_reporting_restore()
{
    [ -n "$PR_SAVED" ] && echo "$PR_SAVED" > "$PR_KNOB" 2>/dev/null
    PR_SAVED=
    return 0
}

# shellcheck source=cluster.sh
. "$SRC/bench/cluster.sh"

declare -A PID SPAWN PORT CPORT
trap 'exit 130' INT TERM
trap 'cleanup; page_reporting_restore' EXIT
CONSUME_BYTES=$((CONSUME_MB * 1048576))
T0=$(date +%s)
RUN=0
choose_topic_mode
common_settings
if [ "$CLUSTER" = 1 ]; then
    [ "$AUTO" = 0 ] || die "the cluster mode needs CreateTopics"
    cluster_settings
    cluster_workloads
else
    [ $WITH_KAFKA = 1 ] && kafka_template
    workloads
fi
[ $WITH_KAFKA = 0 ] || "$KREF" fetch || die "cannot fetch Kafka"
page_reporting_off
note "writing $((PREFAULT / 1000000)) MB once, so the runs write into memory the host has backed ($PR_STATE)"
record 0 limit limit <<< "$("$BENCH" prefault --dir "$WORK" --bytes "$PREFAULT")"
machine_header > "$WORK/header.txt"
for ((RUN = 1; RUN <= RUNS; RUN++)); do
    if [ "$CLUSTER" = 1 ]; then cluster_run; else one_run; fi
done
{
    cat "$WORK/header.txt"
    awk -v kafka=$WITH_KAFKA -v strand=$WITH_STRAND -v codec="$CODEC" -v cluster="$CLUSTER" \
        -f "$SRC/bench/report.awk" "$RESULTS"
    echo "(wall time $(($(date +%s) - T0)) s; every figure of every run: $RESULTS)"
} > "$WORK/table.txt"
cat "$WORK/table.txt"

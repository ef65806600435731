# compat/lib/java-tool.sh: sourced by the compat/*-java.sh scripts, which run
# Kafka's own tools (the classes behind kafka-topics.sh, kafka-configs.sh
# and the rest, from the kafka-tools 4.4.0 jar scripts/kafka-ref.sh fetches
# from Maven Central) and the compat/java drivers against the broker at
# STRAND_BOOTSTRAP, and check what each command prints.
#
# java_tool_init NAME sets
#   BS    the broker (exit 77, skip, when STRAND_BOOTSTRAP is not set)
#   CP    Kafka's jars and the compiled compat/java classes (java_cp of
#         compat/lib/client.sh; Java and Maven installed when missing)
#   WORK  a scratch directory NAME.XXXXXX under STRAND_TEST_DIR (or /tmp),
#         removed at exit unless KEEP_WORK is set, after the script's own
#         at_exit function (when it defines one) has run
#   JVM   java as the tools' shell scripts start it, with its logging off
# Every command's output goes to $WORK/NAME.out and its status to RC.
# shellcheck source=client.sh
. "$(dirname "${BASH_SOURCE[0]}")/client.sh"

java_tool_init()
{
    BS=${STRAND_BOOTSTRAP:-}
    [ -n "$BS" ] || skip "STRAND_BOOTSTRAP is not set"
    java_tool_setup "$1"
}

# java_tool_setup NAME: java_tool_init without the broker, for a script
# that starts nodes of its own (BS is left unset).
java_tool_setup()
{
    # java_cp skips in its subshell: its SKIP line is what CP caught.
    CP=$(java_cp) || { local rc=$?; [ "$rc" != 77 ] || echo "$CP"; exit "$rc"; }
    WORK=$(mktemp -d "${STRAND_TEST_DIR:-/tmp}/$1.XXXXXX") || fail "mktemp"
    JVM=(java -Xmx256m -XX:TieredStopAtLevel=1 -Dlog4j2.level=OFF
         -Dorg.slf4j.simpleLogger.defaultLogLevel=off)
    JAVA_TOOL_LOG=
    trap java_tool_exit EXIT
}

java_tool_exit()
{
    if declare -F at_exit >/dev/null; then at_exit; fi
    [ -n "${KEEP_WORK:-}" ] || rm -rf "$WORK"
}

# java_log4j_errors [LINE...]: $WORK/log4j2.properties, a log4j2
# configuration for java_tool_logs that logs ERROR and up on stderr, with
# the LINEs (more loggers) added.
java_log4j_errors()
{
    printf '%s\n' "status = error" "appender.err.type = Console" "appender.err.name = STDERR" \
        "appender.err.target = SYSTEM_ERR" "appender.err.layout.type = PatternLayout" \
        "appender.err.layout.pattern = %p %c{1}: %m%n" "rootLogger.level = error" \
        "rootLogger.appenderRef.err.ref = STDERR" "$@" > "$WORK/log4j2.properties"
}

# java_tool_logs FILE: the commands log as the log4j2 configuration FILE
# says instead of not at all, each to $WORK/NAME.log apart from its output.
java_tool_logs()
{
    JVM=(java -Xmx256m -XX:TieredStopAtLevel=1 -Dlog4j2.configurationFile="$1")
    JAVA_TOOL_LOG=1
}

# java_run NAME CLASS ARGS...: the main class CLASS on $CP, its input from
# the file $STDIN (none when unset).
java_run()
{
    local name=$1 class=$2
    shift 2
    if [ -n "$JAVA_TOOL_LOG" ]; then
        "${JVM[@]}" -cp "$CP" "$class" "$@" > "$WORK/$name.out" 2> "$WORK/$name.log" < "${STDIN:-/dev/null}"
    else
        "${JVM[@]}" -cp "$CP" "$class" "$@" > "$WORK/$name.out" 2>&1 < "${STDIN:-/dev/null}"
    fi
    RC=$?
}

# tool NAME CLASS ARGS...: org.apache.kafka.tools.CLASS on the broker, as
# the tool's shell script starts it.
tool()
{
    local name=$1 class=$2
    shift 2
    java_run "$name" "org.apache.kafka.tools.$class" --bootstrap-server "$BS" "$@"
}

# show NAME: what NAME printed, on stderr (with logs: the last lines of
# both, the log without its DEBUG lines).
show()
{
    if [ -f "$WORK/$1.log" ]; then
        echo "-- $1.out" >&2
        tail -n 20 "$WORK/$1.out" >&2
        echo "-- $1.log" >&2
        grep -v ' DEBUG\|^DEBUG' "$WORK/$1.log" | tail -n 20 >&2
    else
        cat "$WORK/$1.out" >&2
    fi
}

# expect NAME RC PATTERN...: the status and every pattern (a grep -E regex)
# in the output (or in the log, where the tools print their messages).
expect()
{
    local name=$1 rc=$2 pat files=("$WORK/$1.out")
    shift 2
    [ -f "$WORK/$name.log" ] && files+=("$WORK/$name.log")
    [ "$RC" = "$rc" ] || { show "$name"; fail "$name: exit $RC, expected $rc"; }
    for pat in "$@"; do
        grep -Eqh -- "$pat" "${files[@]}" || { show "$name"; fail "$name: no line matches '$pat'"; }
    done
}

# absent NAME PATTERN: no line of NAME's output matches PATTERN.
absent()
{
    ! grep -Eq -- "$2" "$WORK/$1.out" || { show "$1"; fail "$1: '$2' found"; }
}

# wait_unfenced NAME PORT IDS...: until Metadata through 127.0.0.1:PORT
# (BrokerApiVersionsCommand) lists every broker of IDS, or fail after 60 s.
# Metadata lists unfenced brokers only; one registered but still fenced
# gets replicas of a new topic, as in Kafka, but no leadership.
wait_unfenced()
{
    local name=$1 port=$2 end=$((SECONDS + 60)) id missing
    shift 2
    while :; do
        java_run "$name" org.apache.kafka.tools.BrokerApiVersionsCommand --bootstrap-server "127.0.0.1:$port"
        missing=
        for id in "$@"; do grep -q "(id: $id rack" "$WORK/$name.out" || missing="$missing $id"; done
        [ -z "$missing" ] && return 0
        [ $SECONDS -lt $end ] || { show "$name"; fail "brokers$missing are not unfenced after 60 s"; }
        sleep 1
    done
}

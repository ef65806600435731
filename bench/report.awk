# report.awk: the table of bench/run.sh from its results.tsv.
#
# Input lines: run <TAB> broker <TAB> workload <TAB> metric <TAB> value, with
# broker strand, kafka or limit. Every figure printed is the median over
# the runs; ratios are taken between medians. Variables: strand, kafka
# (1 if that broker was run), codec (the compressed produce variants),
# cluster (1: the cluster mode's table, bench/cluster.sh).
# Portable awk (mawk): no asort, no gensub.

BEGIN { FS = "\t" }

{
    key = $2 SUBSEP $3 SUBSEP $4
    n[key]++
    v[key, n[key]] = $5 + 0
    if ($4 == "failed")
        failed[$2 " " $3]++
    if (!($3 in seen)) {
        seen[$3] = 1
        order[++nwl] = $3
    }
}

# Median of a[1..c] (sorts a); "" if c is 0.
function median_of(a, c,    i, j, t) {
    if (!c)
        return ""
    for (i = 2; i <= c; i++)
        for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
            t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
        }
    return c % 2 ? a[(c + 1) / 2] : (a[c / 2] + a[c / 2 + 1]) / 2
}

function med(b, wl, m,    k, c, i, a) {
    k = b SUBSEP wl SUBSEP m
    c = n[k]
    for (i = 1; i <= c; i++)
        a[i] = v[k, i]
    return median_of(a, c)
}

# Thousands separated above 10000, three significant digits below.
function fmt(x,    s, r) {
    if (x == "")
        return "-"
    if (x >= 10000 || x <= -10000) {
        s = sprintf("%.0f", x)
        r = ""
        while (length(s) > 3) {
            r = "," substr(s, length(s) - 2) r
            s = substr(s, 1, length(s) - 3)
        }
        return s r
    }
    if (x >= 100 || x <= -100)
        return sprintf("%.0f", x)
    if (x >= 10 || x <= -10)
        return sprintf("%.1f", x)
    if (x >= 1 || x <= -1)
        return sprintf("%.2f", x)
    return sprintf("%.3g", x)
}

function ratio(a, b) {
    if (a == "" || b == "" || b == 0)
        return "-"
    return sprintf("%.2f", a / b)
}

function minv(a, b) {
    if (a == "")
        return b
    if (b == "")
        return a
    return a < b ? a : b
}

function label(wl,    p, s) {
    split(wl, p, "-")
    if (p[1] != "produce" && p[1] != "raw")
        return wl
    s = p[2] == 100 ? "100 B" : "1 KB"
    return sprintf("%-6s acks=%-3s %-5s %2s part.", s, p[3], p[4], p[5])
}

function mark(wl,    s) {
    s = ""
    if (("strand " wl) in failed) s = s " [Strand failed " failed["strand " wl] "x]"
    if (("kafka " wl) in failed) s = s " [Kafka failed " failed["kafka " wl] "x]"
    return s
}

# One line: what, Strand, Kafka, S/K, and optionally a limit and S/limit.
function line(what, s, k, lim) {
    printf "  %-34s %12s %12s %7s", what, fmt(s), fmt(k), ratio(s, k)
    if (lim != "")
        printf " %10s %7s", fmt(lim), ratio(s, lim)
    printf "\n"
}

function head(title, unit, withlim) {
    printf "\n%s\n", title
    printf "  %-34s %12s %12s %7s", unit, "Strand", "Kafka", "S/K"
    if (withlim)
        printf " %10s %7s", "limit", "S/limit"
    printf "\n"
}

# The tables of the produce workloads whose names start with pre.
function produce_section(pre, title, lim,    i, wl) {
    head(title ", msgs/s", "workload", 0)
    for (i = 1; i <= nwl; i++)
        if (index(wl = order[i], pre) == 1)
            line(label(wl), med("strand", wl, "msgs_per_s"), med("kafka", wl, "msgs_per_s"), "")
    head("  MB/s of values (limit: min of loopback TCP and page-cache write)", "workload", 1)
    for (i = 1; i <= nwl; i++)
        if (index(wl = order[i], pre) == 1)
            line(label(wl) mark(wl), med("strand", wl, "mb_per_s"), med("kafka", wl, "mb_per_s"), lim)
    head("  broker CPU (user+sys) per million messages, s", "workload", 0)
    for (i = 1; i <= nwl; i++)
        if (index(wl = order[i], pre) == 1)
            line(label(wl), med("strand", wl, "cpu_s_per_mmsg"), med("kafka", wl, "cpu_s_per_mmsg"), "")
    head("  of which user space (the rest is the kernel: socket and page-cache copies)", "workload", 0)
    for (i = 1; i <= nwl; i++)
        if (index(wl = order[i], pre) == 1)
            line(label(wl), med("strand", wl, "user_s_per_mmsg"), med("kafka", wl, "user_s_per_mmsg"), "")
    head("  broker CPU per GB of values, s", "workload", 0)
    for (i = 1; i <= nwl; i++)
        if (index(wl = order[i], pre) == 1)
            line(label(wl), med("strand", wl, "cpu_s_per_gb"), med("kafka", wl, "cpu_s_per_gb"), "")
    head("  cores the broker kept busy (of 2, shared with the client)", "workload", 0)
    for (i = 1; i <= nwl; i++)
        if (index(wl = order[i], pre) == 1)
            line(label(wl), cores("strand", wl), cores("kafka", wl), "")
}

# Broker CPU seconds per second of a produce window, from the medians.
function cores(b, wl,    c, r) {
    c = med(b, wl, "cpu_s_per_mmsg")
    r = med(b, wl, "msgs_per_s")
    return c == "" || r == "" ? "" : c * r / 1e6
}

function produce_tables(    lim) {
    lim = minv(med("limit", "limit", "tcp_mb_per_s"), med("limit", "limit", "fs_write_mb_per_s"))
    produce_section("raw-", "Produce, broker capacity (prebuilt raw Produce v7 requests of ~1 MB, " \
                    "4 connections x 5 in flight, compressed: " codec ")", lim)
    produce_section("produce-", "Produce, one librdkafka producer (linger.ms=5, compression " codec \
                    "; the client takes about a core of the two)", lim)
}

function row(what, wl, m, lim) {
    line(what, med("strand", wl, m), med("kafka", wl, m), lim)
}

# The median share of the machine other processes took during the produce
# windows of broker b: the noise level under which its figures were taken.
function noise(b,    i, wl, c, a, x) {
    c = 0
    for (i = 1; i <= nwl; i++)
        if ((wl = order[i]) ~ /^(produce|raw)-/ && (x = med(b, wl, "others_cpu_pct")) != "")
            a[++c] = x
    return median_of(a, c)
}

function other_tables(    tcp, rd, lim) {
    tcp = med("limit", "limit", "tcp_mb_per_s")
    rd = med("limit", "limit", "fs_read_mb_per_s")
    lim = med("limit", "limit", "fs_read_cold") > 0 ? minv(tcp, rd) : tcp
    head("Cold consume of one partition from its start (1 KB messages, page cache dropped" \
         (med("limit", "limit", "fs_read_cold") > 0 ? ")" : ": NOT dropped, not allowed here)") \
         mark("fetch") mark("consume"), "", 1)
    row("raw Fetch, MB/s of batches", "fetch", "mb_per_s", lim)
    row("raw Fetch, MB/s (limit: loopback)", "fetch", "mb_per_s", tcp)
    row("raw Fetch, broker CPU s per GB", "fetch", "cpu_s_per_gb", "")
    row("librdkafka, MB/s of values", "consume", "mb_per_s", lim)
    row("librdkafka, msgs/s", "consume", "msgs_per_s", "")
    row("librdkafka, broker CPU s per M msgs", "consume", "cpu_s_per_mmsg", "")
    row("librdkafka, client CPU s", "consume", "client_cpu_s", "")
    printf "  (limit: the lower of loopback TCP and a cold sequential read)\n"

    head("Latency at a fixed rate (1 KB, acks=all, linger.ms=0), ms" mark("latency"), "", 0)
    row("end-to-end p50", "latency", "e2e_p50_ms", "")
    row("end-to-end p99", "latency", "e2e_p99_ms", "")
    row("end-to-end p99.9", "latency", "e2e_p999_ms", "")
    row("end-to-end max", "latency", "e2e_max_ms", "")
    row("produce (ack) p50", "latency", "produce_p50_ms", "")
    row("produce (ack) p99", "latency", "produce_p99_ms", "")
    row("produce (ack) p99.9", "latency", "produce_p999_ms", "")
    row("broker CPU, % of one core", "latency", "broker_cpu_pct", "")
    row("other processes, % of one core", "latency", "others_cpu_pct", "")

    head("Transactions: one producer, 1 KB messages, " \
         (ENVIRON["BENCH_TXN_MSGS"] != "" ? ENVIRON["BENCH_TXN_MSGS"] : 100) \
         " a transaction, one partition" mark("txn"), "", 0)
    row("transactions/s", "txn", "txns_per_s", "")
    row("msgs/s in transactions", "txn", "txn_msgs_per_s", "")
    row("msgs/s idempotent (no transactions)", "txn", "idem_msgs_per_s", "")
    row("commit (EndTxn) p50, ms", "txn", "commit_p50_ms", "")
    row("commit (EndTxn) p99, ms", "txn", "commit_p99_ms", "")
    line("transactional / idempotent msgs/s", \
         ratio(med("strand", "txn", "txn_msgs_per_s"), med("strand", "txn", "idem_msgs_per_s")), \
         ratio(med("kafka", "txn", "txn_msgs_per_s"), med("kafka", "txn", "idem_msgs_per_s")), "")

    head("The broker process", "", 0)
    row("start to first Metadata answer, ms", "process", "startup_ms", "")
    row("CPU s used by then", "process", "startup_cpu_s", "")
    row("RSS when ready, MB", "process", "rss_start_mb", "")
    row("peak RSS over the run (VmHWM), MB", "process", "rss_peak_mb", "")
    row("CPU s over the whole run", "process", "cpu_total_s", "")
    line("others' CPU in produce runs, % core", noise("strand"), noise("kafka"), "")

    head("Consumer group (classic protocol, range, heartbeat 100 ms), ms" mark("group"), "", 0)
    if (med("strand", "group", "group_skipped") > 0)
        printf "  (Strand does not advertise JoinGroup yet: its figures are missing)\n"
    row("first member joins", "group", "group_join_ms", "")
    row("second member joins: rebalance", "group", "group_rebalance_ms", "")
    row("second member leaves: rebalance", "group", "group_leave_ms", "")

    printf "\nPhysical limits, same machine, same run, same byte volume as the consume topic\n"
    printf "  %-34s %12s\n", "loopback TCP, MB/s", fmt(tcp)
    printf "  %-34s %12s\n", "fs write (page cache), MB/s", fmt(med("limit", "limit", "fs_write_mb_per_s"))
    printf "  %-34s %12s\n", "fs write + fdatasync, MB/s", fmt(med("limit", "limit", "fs_write_fsync_mb_per_s"))
    printf "  %-34s %12s\n", "fs read, cold, MB/s", fmt(rd)
    printf "  %-34s %12s\n", "loopback receive, CPU s per GB", fmt(med("limit", "limit", "tcp_recv_cpu_s_per_gb"))
    printf "  %-34s %12s\n", "page-cache write, CPU s per GB", fmt(med("limit", "limit", "fs_write_cpu_s_per_gb"))
    printf "  %-34s %12s\n", "  the two: a produce's floor", fmt(floor_gb())
    printf "  %-34s %12s\n", "first write to memory, CPU s per GB", fmt(med("limit", "limit", "prefault_cpu_s_per_gb"))
}

# The CPU per GB no broker can go below: receiving the bytes from loopback
# and writing them to the page cache; "" if not measured.
function floor_gb(    a, b) {
    a = med("limit", "limit", "tcp_recv_cpu_s_per_gb")
    b = med("limit", "limit", "fs_write_cpu_s_per_gb")
    return a == "" || b == "" ? "" : a + b
}


# target(what, value, goal, ok): one line of the verdict.
function target(what, val, goal, ok) {
    printf "  %-44s %-14s %-10s %s\n", what, val, goal, val == "-" ? "n/a" : (ok ? "met" : "NOT met")
}

# Over the workloads starting with pre: the worst throughput ratio (low)
# into W[pre], the worst CPU per message ratio (high) into C[pre].
function worst_of(pre,    i, wl, r) {
    W[pre] = ""; C[pre] = ""
    for (i = 1; i <= nwl; i++)
        if (index(wl = order[i], pre) == 1) {
            r = ratio(med("strand", wl, "msgs_per_s"), med("kafka", wl, "msgs_per_s"))
            if (r != "-" && (W[pre] == "" || r + 0 < W[pre] + 0)) W[pre] = r
            r = ratio(med("strand", wl, "cpu_s_per_mmsg"), med("kafka", wl, "cpu_s_per_mmsg"))
            if (r != "-" && (C[pre] == "" || r + 0 > C[pre] + 0)) C[pre] = r
        }
    if (W[pre] == "") W[pre] = "-"
    if (C[pre] == "") C[pre] = "-"
}

function targets(    r, x) {
    printf "\nTargets (the performance targets)\n"
    worst_of("raw-")
    worst_of("produce-")
    target("produce throughput, worst S/K (capacity)", W["raw-"], ">= 2", W["raw-"] + 0 >= 2)
    target("broker CPU per message, worst S/K (capacity)", C["raw-"], "<= 0.25", C["raw-"] + 0 <= 0.25)
    r = ratio(med("strand", "latency", "e2e_p99_ms"), med("kafka", "latency", "e2e_p99_ms"))
    target("end-to-end p99 latency, S/K", r, "<= 0.33", r + 0 <= 1 / 3)
    r = ratio(med("strand", "process", "rss_peak_mb"), med("kafka", "process", "rss_peak_mb"))
    target("peak resident memory, S/K", r, "<= 0.05", r + 0 <= 0.05)
    x = med("strand", "process", "startup_ms")
    target("start-up, ms", x == "" ? "-" : fmt(x), "< 50", x < 50)
    r = ratio(med("strand", "fetch", "mb_per_s"), med("limit", "limit", "tcp_mb_per_s"))
    target("cold consume (raw Fetch), S/loopback", r, ">= 0.80", r + 0 >= 0.8)
    x = minv(med("limit", "limit", "tcp_mb_per_s"), med("limit", "limit", "fs_read_mb_per_s"))
    printf "  %-44s %-14s\n", "(cold consume, S/min(loopback, cold disk read)", \
        ratio(med("strand", "fetch", "mb_per_s"), x) ")"
    printf "  %-44s %-14s\n", "(the floor alone, of Kafka's CPU per GB at 1 KB", \
        ratio(floor_gb(), med("kafka", "raw-1024-1-none-1", "cpu_s_per_gb")) ")"
    printf "  %-44s %-14s\n", "(one librdkafka producer: worst S/K msgs/s", W["produce-"] ")"
    printf "  %-44s %-14s\n", "(one librdkafka producer: worst S/K CPU/msg", C["produce-"] ")"
}

# min-max of metric m of workload wl over the runs of broker b: the spread.
function spread(b, wl, m,    k, c, i, lo, hi) {
    k = b SUBSEP wl SUBSEP m
    c = n[k]
    if (!c)
        return "-"
    lo = hi = v[k, 1]
    for (i = 2; i <= c; i++) {
        if (v[k, i] < lo) lo = v[k, i]
        if (v[k, i] > hi) hi = v[k, i]
    }
    return c == 1 ? fmt(lo) : fmt(lo) "-" fmt(hi)
}

# A row with the spread of both brokers after it.
function srow(what, wl, m) {
    printf "  %-34s %12s %12s %7s   %s / %s\n", what, fmt(med("strand", wl, m)), \
        fmt(med("kafka", wl, m)), ratio(med("strand", wl, m), med("kafka", wl, m)), \
        spread("strand", wl, m), spread("kafka", wl, m)
}

function chead(title) {
    printf "\n%s\n", title
    printf "  %-34s %12s %12s %7s   %s\n", "", "Strand", "Kafka", "S/K", "spread S / K (min-max)"
}

function cluster_tables(    wl, i, c, r) {
    for (i = 1; i <= 2; i++) {
        c = i == 1 ? "none" : codec
        if (i == 2 && c == "none")
            break
        wl = "cluster-raw-1024-all-" c "-1"
        chead("Cluster produce, RF 3, acks=all, 1 KB, " c ", one partition (raw Produce v7 to its leader, " \
              "4 connections x 5 in flight)" mark(wl))
        srow("msgs/s", wl, "msgs_per_s")
        srow("MB/s of values", wl, "mb_per_s")
        srow("3 brokers' CPU s per GB", wl, "cpu_s_per_gb")
        srow("3 brokers' CPU s per M msgs", wl, "cpu_s_per_mmsg")
        srow("other processes, % of one core", wl, "others_cpu_pct")
    }
    wl = "cluster-latency"
    chead("Cluster latency, RF 3, acks=all, 1 KB, linger.ms=0, one partition, ms" mark(wl))
    srow("end-to-end p50", wl, "e2e_p50_ms")
    srow("end-to-end p99", wl, "e2e_p99_ms")
    srow("end-to-end p99.9", wl, "e2e_p999_ms")
    srow("produce (ack) p50", wl, "produce_p50_ms")
    srow("produce (ack) p99", wl, "produce_p99_ms")
    srow("3 brokers' CPU, % of one core", wl, "broker_cpu_pct")
    srow("other processes, % of one core", wl, "others_cpu_pct")
    chead("Failover: kill -9 of a partition's leader to the first ack from another broker, ms " \
          "(idempotent acks=all producer)")
    srow("leader not the active controller", "cluster-failover", "failover_ms")
    srow("  kill to a new leader in Metadata", "cluster-failover", "failover_leader_ms")
    srow("  failed deliveries", "cluster-failover", "errors")
    srow("leader is the active controller", "cluster-failover-ctl", "failover_ms")
    srow("  kill to a new leader in Metadata", "cluster-failover-ctl", "failover_leader_ms")
    srow("  failed deliveries", "cluster-failover-ctl", "errors")
    if (mark("cluster-failover") mark("cluster-failover-ctl") != "")
        printf "  %s\n", mark("cluster-failover") mark("cluster-failover-ctl")

    if (!strand || !kafka)
        return
    printf "\nTargets (issue 13)\n"
    for (i = 1; i <= 2; i++) {
        c = i == 1 ? "none" : codec
        if (i == 2 && c == "none")
            break
        wl = "cluster-raw-1024-all-" c "-1"
        r = ratio(med("strand", wl, "msgs_per_s"), med("kafka", wl, "msgs_per_s"))
        target("RF 3 produce throughput, S/K (" c ")", r, "> 1", r + 0 > 1)
        r = ratio(med("strand", wl, "cpu_s_per_gb"), med("kafka", wl, "cpu_s_per_gb"))
        target("RF 3 CPU per GB, S/K (" c ")", r, "< 1", r + 0 < 1)
    }
    r = ratio(med("strand", "cluster-latency", "e2e_p99_ms"), med("kafka", "cluster-latency", "e2e_p99_ms"))
    target("RF 3 end-to-end p99, S/K", r, "< 1", r + 0 < 1)
    r = ratio(med("strand", "cluster-failover", "failover_ms"), med("kafka", "cluster-failover", "failover_ms"))
    target("failover, S/K", r, "< 0.5", r + 0 < 0.5)
    r = ratio(med("strand", "cluster-failover-ctl", "failover_ms"), med("kafka", "cluster-failover-ctl", "failover_ms"))
    target("failover of the active controller, S/K", r, "< 0.5", r + 0 < 0.5)
}

END {
    if (!strand && !kafka)
        exit
    if (cluster) {
        cluster_tables()
        exit
    }
    produce_tables()
    other_tables()
    if (strand && kafka)
        targets()
}

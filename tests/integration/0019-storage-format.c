/* 0019-storage-format: `strand format` and `strand random-uuid` behave as
 * Kafka 4.4's kafka-storage (same options, exit codes and messages, the
 * same meta.properties), and a node refuses the storage Kafka's refuses at
 * start-up. With KAFKA_REF=1 every case runs Kafka's StorageTool and
 * kafka.Kafka instead, so the expectations are Kafka's own.
 *
 * Against Strand, when the Kafka jars are in the cache (KAFKA_REF_CACHE or
 * the checkout's .cache/kafka; nothing is fetched), it also checks both
 * ways between the two tools: Kafka's `kafka-storage info` reads dirs
 * Strand formatted, and Strand starts on a dir Kafka's format wrote.
 *
 * One case is Strand's alone: a single node that is its own quorum
 * starts unformatted (Kafka needs the format step; README,
 * Configuration). */
#include "testlib/testlib.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define CID "MkU3OEVBNTcwNTJENDM2Qk"
#define DIRID "8LhNP45TQxODxvz98XOTdg"
#define DIRID2 "uEf6xzwQJtp0e4fBM9bl3Q"

static char scratch[512], classpath[1024];
static int kafka, cport;

/* tl_fmt with buffers that stay valid for the test's run (a ring of 256,
 * more than a case table holds at once). */
static const char *S(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static const char *S(const char *fmt, ...)
{
    static char ring[256][1024];
    static int next;
    char *buf = ring[next++ % 256];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, sizeof(ring[0]), fmt, ap);
    va_end(ap);
    return buf;
}

/* ---- processes ---- */

static int file_has(const char *path, const char *text)
{
    FILE *f = fopen(path, "r");
    char buf[8192];
    int found = 0;

    if (!f)
        return 0;
    while (!found && fgets(buf, sizeof(buf), f))
        found = strstr(buf, text) != NULL;
    fclose(f);
    return found;
}

static pid_t spawn(char *const argv[], const char *logpath)
{
    pid_t pid = fork();

    TL_ASSERT(pid >= 0, "fork: %s", strerror(errno));
    if (pid == 0) {
        int fd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        setpgid(0, 0);
        execvp(argv[0], argv);
        _exit(127);
    }
    return pid;
}

/* Runs the storage tool (Strand's or Kafka's) with args; returns its exit
 * code, its output in logpath. */
static int tool(const char *logpath, const char *const *args, int use_kafka)
{
    char *argv[40];
    int n = 0, st;

    if (use_kafka) {
        argv[n++] = "java";
        argv[n++] = "-XX:TieredStopAtLevel=1";
        argv[n++] = "-XX:+UseSerialGC";
        argv[n++] = "-cp";
        argv[n++] = classpath;
        argv[n++] = "kafka.tools.StorageTool";
    } else {
        argv[n++] = getenv("STRAND_BIN");
    }
    for (int i = 0; args[i] && n < 39; i++)
        argv[n++] = (char *)args[i];
    argv[n] = NULL;
    pid_t pid = spawn(argv, logpath);
    TL_ASSERT(waitpid(pid, &st, 0) == pid, "waitpid: %s", strerror(errno));
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* ---- the files ---- */

static const char *path_of(const char *name)
{
    return S("%s/%s", scratch, name);
}

/* Writes NAME.properties: roles, node id, quorum line, listeners, dirs. */
static const char *write_config(const char *name, const char *roles, int node,
                                const char *quorum, const char *listeners, const char *dirs)
{
    char path[600];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s.properties", scratch, name);
    f = fopen(path, "w");
    TL_ASSERT(f, "%s: %s", path, strerror(errno));
    fprintf(f, "process.roles=%s\nnode.id=%d\n%s\nlisteners=%s\ncontroller.listener.names="
            "CONTROLLER\nlog.dirs=%s\n", roles, node, quorum, listeners, dirs);
    fclose(f);
    return S("%s", path);
}

/* The value of key in dir/meta.properties, or "" (static buffer). */
static const char *meta_get(const char *dir, const char *key)
{
    static char val[256];
    char line[512];
    FILE *f = fopen(S("%s/meta.properties", dir), "r");
    size_t n = strlen(key);

    val[0] = '\0';
    while (f && fgets(line, sizeof(line), f))
        if (!strncmp(line, key, n) && line[n] == '=') {
            snprintf(val, sizeof(val), "%s", line + n + 1);
            val[strcspn(val, "\r\n")] = '\0';
        }
    if (f)
        fclose(f);
    return val;
}

/* How often the bytes pat[0..n) occur in the file at path (-1: no file). */
static int file_count(const char *path, const void *pat, size_t n, struct stat *st)
{
    static uint8_t buf[65536];
    FILE *f = fopen(path, "rb");
    size_t len;
    int count = 0;

    if (!f)
        return -1;
    len = fread(buf, 1, sizeof(buf), f);
    fclose(f);
    TL_ASSERT(stat(path, st) == 0, "%s: %s", path, strerror(errno));
    for (size_t i = 0; i + n <= len; i++)
        count += !memcmp(buf + i, pat, n);
    return count;
}

/* The bootstrap checkpoint format leaves in a controller's metadata dir
 * (-1 voters: none expected there at all, a broker's dir): read-only, a
 * KRaftVersionRecord (its record key, after the key's length) on a
 * dynamic quorum, one endpoint named CONTROLLER per initial voter in its
 * VotersRecord. */
static void check_boot(const char *dir, int kraft, int voters)
{
    const char *path = S("%s/__cluster_metadata-0/00000000000000000000-0000000000.checkpoint",
                         dir);
    static const uint8_t kv_key[] = {0x08, 0x00, 0x00, 0x00, 0x05};
    static const uint8_t voters_key[] = {0x08, 0x00, 0x00, 0x00, 0x06};
    struct stat st;
    int n = file_count(path, kv_key, sizeof(kv_key), &st);

    if (voters < 0) {
        TL_ASSERT(n < 0, "%s: a broker's dir has a bootstrap checkpoint", dir);
        return;
    }
    TL_ASSERT(n >= 0, "%s: no bootstrap checkpoint", path);
    TL_ASSERT((st.st_mode & 0777) == 0400, "%s: mode %o, not 400", path,
              (unsigned)(st.st_mode & 0777));
    TL_ASSERT(n == kraft, "%s: %d KRaftVersionRecords, expected %d", path, n, kraft);
    n = file_count(path, voters_key, sizeof(voters_key), &st);
    TL_ASSERT(n == (voters > 0), "%s: %d VotersRecords", path, n);
    n = file_count(path, "\x0b" "CONTROLLER", 11, &st);
    TL_ASSERT(n == voters, "%s: %d voters' endpoints, expected %d", path, n, voters);
}

/* ---- the cases ---- */

typedef struct fcase {
    const char *what;
    const char *args[12];
    int rc;
    const char *says; /* in the output */
} fcase;

static int n_checked;

static void run_case(const fcase *c)
{
    const char *logpath = S("%s/tool-%d.log", scratch, n_checked++);
    char log[600];
    int rc;

    snprintf(log, sizeof(log), "%s", logpath);
    rc = tool(log, c->args, kafka);
    TL_ASSERT(rc == c->rc, "%s: exit code %d, expected %d (output in %s)", c->what, rc, c->rc,
              log);
    TL_ASSERT(!c->says || file_has(log, c->says), "%s: output does not say \"%s\" (see %s)",
              c->what, c->says, log);
    tl_log("%-52s exit %d%s%s", c->what, rc, c->says ? ": " : "", c->says ? c->says : "");
}

static void check_meta(const char *dir, int node, const char *dirid)
{
    TL_ASSERT(!strcmp(meta_get(dir, "version"), "1"), "%s: version", dir);
    TL_ASSERT(!strcmp(meta_get(dir, "cluster.id"), CID), "%s: cluster.id", dir);
    TL_ASSERT(atoi(meta_get(dir, "node.id")) == node, "%s: node.id", dir);
    TL_ASSERT(strlen(meta_get(dir, "directory.id")) == 22, "%s: directory.id", dir);
    if (dirid)
        TL_ASSERT(!strcmp(meta_get(dir, "directory.id"), dirid), "%s: directory.id %s, not %s",
                  dir, meta_get(dir, "directory.id"), dirid);
}

/* A combined node of a dynamic quorum of itself, two log dirs. */
static void cases_standalone(void)
{
    const char *c = write_config(
        "combined", "broker,controller", 1,
        S("controller.quorum.bootstrap.servers=127.0.0.1:%d", cport),
        S("PLAINTEXT://127.0.0.1:%d,CONTROLLER://127.0.0.1:%d", cport + 1, cport),
        S("%s,%s", path_of("c1"), path_of("c2")));
    const char *d1 = S("%s", path_of("c1"));
    fcase v[] = {
        {"format --standalone", {"format", "-t", CID, "-c", c, "--standalone"}, 0,
         S("Formatting dynamic metadata voter directory %s", d1)},
        /* which dir is named first is Kafka's hash order */
        {"format again", {"format", "-t", CID, "-c", c, "--standalone"}, 1,
         "is already formatted. Use --ignore-formatted to ignore this directory and format the "
         "others."},
        {"format again --ignore-formatted",
         {"format", "-t", CID, "-c", c, "--standalone", "--ignore-formatted"}, 0,
         "All of the log directories are already formatted."},
        {"format -g with another cluster id",
         {"format", "-t", "OtherClusterIdxxxxxxxx", "-c", c, "-g", "--standalone"}, 1,
         "/meta.properties. Expected OtherClusterIdxxxxxxxx, but read " CID},
        {"--standalone with --initial-controllers",
         {"format", "-t", CID, "-c", c, "--standalone", "--initial-controllers",
          "1@127.0.0.1:9093:" DIRID}, 1, "--initial-controllers/-I:"},
        {"no cluster id", {"format", "-c", c, "--standalone"}, 1,
         "argument --cluster-id/-t is required"},
    };
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
        run_case(&v[i]);
    check_meta(d1, 1, NULL);
    check_meta(path_of("c2"), 1, NULL);
    check_boot(d1, 1, 1);
    const char *id1 = S("%s", meta_get(d1, "directory.id"));
    TL_ASSERT(strcmp(id1, meta_get(path_of("c2"), "directory.id")),
              "two dirs with one directory.id");
}

/* A static quorum (controller.quorum.voters). */
static void cases_static(void)
{
    const char *c = write_config(
        "static", "broker,controller", 1, S("controller.quorum.voters=1@127.0.0.1:%d", cport),
        S("PLAINTEXT://127.0.0.1:%d,CONTROLLER://127.0.0.1:%d", cport + 1, cport),
        path_of("s1"));
    fcase v[] = {
        {"static quorum --standalone", {"format", "-t", CID, "-c", c, "--standalone"}, 1,
         "You cannot specify controller.quorum.voters and format the node with "
         "--initial-controllers or --standalone."},
        {"static quorum --initial-controllers",
         {"format", "-t", CID, "-c", c, "--initial-controllers", "1@127.0.0.1:9093:" DIRID}, 1,
         "You cannot specify controller.quorum.voters"},
        {"static quorum --release-version 3.0",
         {"format", "-t", CID, "-c", c, "--release-version", "3.0"}, 1,
         "Unknown metadata.version '3.0'. Supported metadata.version are:"},
        {"static quorum --release-version 4.1",
         {"format", "-t", CID, "-c", c, "--release-version", "4.1"}, 0,
         S("Formatting metadata directory %s with metadata.version 4.1-IV1.",
                path_of("s1"))},
    };
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
        run_case(&v[i]);
    check_meta(path_of("s1"), 1, NULL);
    check_boot(path_of("s1"), 0, 0);
}

/* A controller-only node and a broker-only node of a dynamic quorum. */
static void cases_roles(void)
{
    const char *boot = S("controller.quorum.bootstrap.servers=127.0.0.1:%d", cport);
    const char *ctl = write_config("controller", "controller", 2, boot,
                                   S("CONTROLLER://127.0.0.1:%d", cport + 2), path_of("k1"));
    const char *brk = write_config("broker", "broker", 4, boot,
                                   S("PLAINTEXT://127.0.0.1:%d", cport + 3), path_of("b1"));
    const char *ctl3 = write_config("observer", "controller", 3, boot,
                                    S("CONTROLLER://127.0.0.1:%d", cport + 4), path_of("k3"));
    const char *two = "2@127.0.0.1:9094:" DIRID ",1@127.0.0.1:9093:" DIRID2;
    fcase v[] = {
        {"controller without a quorum option", {"format", "-t", CID, "-c", ctl}, 1,
         "Because controller.quorum.voters is not set on this controller, you must specify one "
         "of the following: --standalone, --initial-controllers, or --no-initial-controllers."},
        {"--initial-controllers without a directory id",
         {"format", "-t", CID, "-c", ctl, "--initial-controllers", "2@127.0.0.1:9094"}, 1,
         "No colon following port could be found."},
        {"--initial-controllers naming a node twice",
         {"format", "-t", CID, "-c", ctl, "--initial-controllers",
          "2@127.0.0.1:9094:" DIRID ",2@127.0.0.1:9095:" DIRID2}, 1,
         "Node id 2 was specified more than once."},
        {"--initial-controllers without @",
         {"format", "-t", CID, "-c", ctl, "--initial-controllers", "2127.0.0.1:9094:" DIRID}, 1,
         "No @ found in dynamic voter string."},
        {"controller --initial-controllers", {"format", "-t", CID, "-c", ctl,
         "--initial-controllers", two}, 0,
         S("Formatting dynamic metadata voter directory %s", path_of("k1"))},
        {"broker --standalone", {"format", "-t", CID, "-c", brk, "--standalone"}, 1,
         "You can only use --standalone on a controller."},
        {"broker --no-initial-controllers",
         {"format", "-t", CID, "-c", brk, "--no-initial-controllers"}, 0,
         S("Formatting metadata directory %s", path_of("b1"))},
        {"controller --no-initial-controllers",
         {"format", "-t", CID, "-c", ctl3, "--no-initial-controllers"}, 0,
         S("Formatting metadata directory %s", path_of("k3"))},
        {"random-uuid with an argument", {"random-uuid", "x"}, 1, "unrecognized arguments"},
    };
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
        run_case(&v[i]);
    /* the voter's directory id is its metadata dir's */
    check_meta(path_of("k1"), 2, DIRID);
    check_meta(path_of("b1"), 4, NULL);
    check_boot(path_of("k1"), 1, 2);
    check_boot(path_of("k3"), 1, 0);
    check_boot(path_of("b1"), 0, -1);
}

static void case_random_uuid(void)
{
    const char *args[] = {"random-uuid", NULL};
    const char *log = S("%s/uuid.log", scratch);
    char path[600], line[128] = "";
    FILE *f;

    snprintf(path, sizeof(path), "%s", log);
    TL_ASSERT(tool(path, args, kafka) == 0, "random-uuid failed (%s)", path);
    f = fopen(path, "r");
    TL_ASSERT(f, "%s", path);
    while (fgets(line, sizeof(line), f) && strstr(line, "SLF4J"))
        ;
    fclose(f);
    line[strcspn(line, "\n")] = '\0';
    TL_ASSERT(strlen(line) == 22 && line[0] != '-', "random-uuid printed '%s'", line);
    tl_log("%-52s %s", "random-uuid", line);
}

/* ---- start-up ---- */

/* Starts the node (Strand, or Kafka with KAFKA_REF=1, or Strand when
 * force_strand) on props; returns 1 if it started (then stopped), 0 if it
 * exited first, its output in logpath. */
static int start_node(const char *props, const char *logpath, int use_kafka)
{
    char *sargv[] = {getenv("STRAND_BIN"), (char *)props, NULL};
    char *kargv[] = {"java", "-Xmx512m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp",
                     classpath, "kafka.Kafka", (char *)props, NULL};
    const char *ready = use_kafka ? "Kafka Server started" : "started in";
    pid_t pid = spawn(use_kafka ? kargv : sargv, logpath);
    double end = tl_now() + 120;
    int st;

    while (tl_now() < end) {
        if (file_has(logpath, ready)) {
            kill(pid, SIGTERM);
            waitpid(pid, &st, 0);
            TL_ASSERT(use_kafka || (WIFEXITED(st) && WEXITSTATUS(st) == 0),
                      "%s: exit status %d after SIGTERM", props, st);
            return 1;
        }
        if (waitpid(pid, &st, WNOHANG) == pid)
            return 0;
        usleep(50 * 1000);
    }
    kill(-pid, SIGKILL);
    waitpid(pid, &st, 0);
    tl_fail("%s: neither started nor exited in 120 s (%s)", props, logpath);
}

static void expect_refused(const char *what, const char *props, const char *says)
{
    const char *log = S("%s/start-%d.log", scratch, n_checked++);
    char path[600];

    snprintf(path, sizeof(path), "%s", log);
    TL_ASSERT(!start_node(props, path, kafka), "%s: started (%s)", what, path);
    TL_ASSERT(file_has(path, says), "%s: refused without saying \"%s\" (%s)", what, says, path);
    tl_log("%-52s refused: %s", what, says);
}

/* Writes a meta.properties of another cluster into dir. */
static void write_foreign_meta(const char *dir)
{
    FILE *f;

    TL_ASSERT(mkdir(dir, 0755) == 0, "mkdir %s: %s", dir, strerror(errno));
    f = fopen(S("%s/meta.properties", dir), "w");
    TL_ASSERT(f, "%s", dir);
    fputs("#\nnode.id=1\ndirectory.id=" DIRID2 "\nversion=1\ncluster.id=OtherClusterIdxxxxxxxx\n",
          f);
    fclose(f);
}

static void cases_start(void)
{
    int p1 = tl_free_port(), p2 = tl_free_port();
    const char *lst = S("PLAINTEXT://127.0.0.1:%d,CONTROLLER://127.0.0.1:%d", p1, p2);
    const char *three = S("controller.quorum.voters=1@127.0.0.1:%d,2@127.0.0.1:%d,"
                               "3@127.0.0.1:%d", p2, p2 + 2, p2 + 4);
    const char *boot = S("controller.quorum.bootstrap.servers=127.0.0.1:%d", p2);

    expect_refused("3 voters, unformatted",
                   write_config("three", "broker,controller", 1, three, lst, path_of("t1")),
                   "No readable meta.properties files found.");
    expect_refused("broker-only, unformatted",
                   write_config("broker2", "broker", 4, boot,
                                S("PLAINTEXT://127.0.0.1:%d", p1), path_of("b2")),
                   "No readable meta.properties files found.");
    /* s1 was formatted as node 1 (cases_static) */
    expect_refused("a dir of node 1 started as node 2",
                   write_config("node2", "broker,controller", 2,
                                S("controller.quorum.voters=2@127.0.0.1:%d", p2), lst,
                                path_of("s1")),
                   "Stored node id 1 doesn't match previous node id 2 in");
    write_foreign_meta(path_of("x1"));
    expect_refused("two dirs of two clusters",
                   write_config("mixed", "broker,controller", 1,
                                S("controller.quorum.voters=1@127.0.0.1:%d", p2), lst,
                                S("%s,%s", path_of("s1"), path_of("x1"))),
                   "Invalid cluster.id in: ");
}

/* ---- Strand and Kafka on each other's dirs ---- */

static int jars_cached(void)
{
    const char *cache = getenv("KAFKA_REF_CACHE");
    const char *src = getenv("STRAND_SRCDIR");
    char path[900];

    if (cache && *cache)
        snprintf(path, sizeof(path), "%s/4.4.0/libs/.complete", cache);
    else
        snprintf(path, sizeof(path), "%s/.cache/kafka/4.4.0/libs/.complete", src ? src : ".");
    if (access(path, F_OK) != 0)
        return 0;
    path[strlen(path) - strlen("/.complete")] = '\0';
    snprintf(classpath, sizeof(classpath), "%s/*", path);
    return 1;
}

static void cases_cross(void)
{
    const char *info[] = {"info", "-c", S("%s/combined.properties", scratch), NULL};
    int p1 = tl_free_port(), p2 = tl_free_port();
    const char *kc = write_config(
        "kformatted", "broker,controller", 1, S("controller.quorum.voters=1@127.0.0.1:%d", p2),
        S("PLAINTEXT://127.0.0.1:%d,CONTROLLER://127.0.0.1:%d", p1, p2), path_of("kf"));
    /* Kafka 4.4's default release finalizes metadata.version 4.4-IV2,
     * group.version 1, transaction.version 2 and
     * eligible.leader.replicas.version 1 in its bootstrap snapshot, levels
     * Strand does not support and refuses at start, as Kafka refuses
     * unsupported levels: the format asks for the levels Strand runs. */
    const char *kfmt[] = {"format", "-t", CID, "-c", kc, "--release-version", "4.0-IV3",
                          "--feature", "group.version=0",
                          "--feature", "transaction.version=0", "--feature",
                          "eligible.leader.replicas.version=0", "--feature", "share.version=0",
                          "--feature", "streams.version=0", NULL};
    char log[600];

    snprintf(log, sizeof(log), "%s/kafka-info.log", scratch);
    TL_ASSERT(tool(log, info, 1) == 0, "kafka-storage info failed on Strand's dirs (%s)", log);
    TL_ASSERT(file_has(log, "Found metadata: {cluster.id=" CID), "kafka-storage info: %s", log);
    tl_log("%-52s reads Strand's dirs", "kafka-storage info");
    snprintf(log, sizeof(log), "%s/kafka-format.log", scratch);
    TL_ASSERT(tool(log, kfmt, 1) == 0, "kafka-storage format failed (%s)", log);
    snprintf(log, sizeof(log), "%s/strand-on-kafka.log", scratch);
    TL_ASSERT(start_node(kc, log, 0), "Strand refused a dir Kafka formatted (%s)", log);
    TL_ASSERT(file_has(log, "of cluster " CID " started"), "cluster id not Kafka's (%s)", log);
    tl_log("%-52s started on it", "strand on a dir kafka-storage formatted");
}

int main(void)
{
    char *s;

    tl_init("0019-storage-format");
    kafka = tl_is_kafka();
    if (!kafka && !getenv("STRAND_BIN"))
        tl_skip("STRAND_BIN is not set");
    if (jars_cached() == 0 && kafka)
        tl_skip("the Kafka 4.4 jars are not in the cache");
    s = tl_scratch_dir("0019");
    snprintf(scratch, sizeof(scratch), "%s", s);
    free(s);
    cport = tl_free_port();
    case_random_uuid();
    cases_standalone();
    cases_static();
    cases_roles();
    cases_start();
    if (!kafka && *classpath)
        cases_cross();
    else if (!kafka)
        tl_log("the Kafka 4.4 jars are not cached: cross-checks with kafka-storage skipped");
    return tl_done();
}

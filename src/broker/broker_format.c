/* `strand format`: Kafka 4.4's kafka-storage format. It reads the node's
 * server.properties (checked as at start-up), decides its quorum options
 * as Kafka does, and writes meta.properties (version 1, cluster.id,
 * node.id, a new directory.id) into every log dir and metadata.log.dir
 * that is not formatted yet, then, on a controller, the bootstrap
 * checkpoint into the metadata log dir (broker_boot.c). Its refusals are
 * Kafka's, in Kafka's order, with Kafka's messages on stderr and exit
 * code 1:
 *   - the quorum options --standalone, --initial-controllers and
 *     --no-initial-controllers exclude each other;
 *   - --standalone only on a controller; neither it nor
 *     --initial-controllers with controller.quorum.voters (a static
 *     quorum); a controller without voters needs one of the three;
 *   - an unknown --release-version;
 *   - a dir of another cluster or node; a formatted dir without
 *     --ignore-formatted (with it, the others are formatted, and all
 *     formatted already is success).
 * --feature NAME=LEVEL sets a feature's level in the bootstrap checkpoint
 * (a level Strand supports; metadata.version comes from
 * --release-version); eligible.leader.replicas.version is otherwise 1
 * from 4.1-IV0 on, as in Kafka, and 1 without --release-version too (a
 * Kafka 4.4 node's default release has it on).
 * Where Strand differs: a cluster id must be what Strand can keep (1 to 22
 * characters; Kafka takes any string), and --add-scram is refused (no
 * SASL). */
#include "broker/broker_format.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "broker/broker_boot.h"
#include "broker/broker_config.h"
#include "cluster/cfg_val.h"
#include "cluster/ctl.h"
#include "log/log_meta.h"
#include "util/logging.h"
#include "util/mem.h"

typedef struct fmt_s {
    const char *config, *cluster_id, *release, *initial;
    const char *quorum_flag; /* the quorum option given first, as Kafka names it */
    bool standalone, no_initial, ignore;
    broker_config_t cfg;
    broker_boot_t boot;
    char **dirs; /* the log dirs and metadata.log.dir, sorted, each once */
    int ndirs;
    const char *meta_dir; /* the dir of the metadata log (one of dirs) */
    const char *features[16]; /* the --feature values */
    int nfeatures;
} fmt_t;

/* metadata.version levels Strand supports (ctl_features.c), by Kafka's
 * names; a release version alone names its last level. */
static const struct {
    int16_t level;
    const char *name;
} fmt_mv[] = {
    {23, "4.0-IV1"}, {24, "4.0-IV2"}, {25, "4.0-IV3"}, {26, "4.1-IV0"},
    {27, "4.1-IV1"}, {28, "4.2-IV0"}, {29, "4.2-IV1"},
};
#define FMT_NMV ((int)(sizeof(fmt_mv) / sizeof(fmt_mv[0])))
/* 4.1-IV0: Kafka's eligible.leader.replicas.version 1 from there */
#define FMT_ELR_DEFAULT_MV 26

static const char fmt_usage_text[] =
    "usage: strand format [-h] --config CONFIG --cluster-id CLUSTER_ID\n"
    "                     [--ignore-formatted] [--release-version RELEASE_VERSION]\n"
    "                     [--feature FEATURE]\n"
    "                     [--standalone | --no-initial-controllers |\n"
    "                     --initial-controllers INITIAL_CONTROLLERS]\n";

static int fmt_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fmt_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A refusal: the message on stderr, exit code 1. */
static int fmt_fail(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return 1;
}

/* A usage error, as Kafka's argument parser reports one. */
static int fmt_usage_error(const char *fmt, ...)
{
    va_list ap;

    fputs(fmt_usage_text, stderr);
    fputs("strand format: error: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return 1;
}

/* ---- the command line ---- */

/* Whether arg is the option long/short; *val gets its value (the next
 * argument, or after '=') when it takes one. */
static bool fmt_opt(int argc, char **argv, int *i, const char *lng, const char *shrt,
                    const char **val)
{
    const char *a = argv[*i];
    size_t n = strlen(lng);

    if (!val)
        return !strcmp(a, lng) || !strcmp(a, shrt);
    if (!strncmp(a, lng, n) && a[n] == '=') {
        *val = a + n + 1;
        return true;
    }
    if ((strcmp(a, lng) && strcmp(a, shrt)) || *i + 1 >= argc)
        return false;
    *val = argv[++*i];
    return true;
}

/* A quorum option: they exclude each other. */
static int fmt_quorum_opt(fmt_t *f, const char *name)
{
    if (f->quorum_flag && strcmp(f->quorum_flag, name))
        return fmt_usage_error("argument %s: not allowed with argument %s", name, f->quorum_flag);
    f->quorum_flag = name;
    return 0;
}

static int fmt_parse_one(fmt_t *f, int argc, char **argv, int *i)
{
    const char *unused;

    if (fmt_opt(argc, argv, i, "--config", "-c", &f->config) ||
        fmt_opt(argc, argv, i, "--cluster-id", "-t", &f->cluster_id) ||
        fmt_opt(argc, argv, i, "--release-version", "-r", &f->release))
        return 0;
    if (fmt_opt(argc, argv, i, "--ignore-formatted", "-g", NULL))
        return f->ignore = true, 0;
    if (fmt_opt(argc, argv, i, "--standalone", "-s", NULL))
        return f->standalone = true, fmt_quorum_opt(f, "--standalone/-s");
    if (fmt_opt(argc, argv, i, "--no-initial-controllers", "-N", NULL))
        return f->no_initial = true, fmt_quorum_opt(f, "--no-initial-controllers/-N");
    if (fmt_opt(argc, argv, i, "--initial-controllers", "-I", &f->initial))
        return fmt_quorum_opt(f, "--initial-controllers/-I");
    if (fmt_opt(argc, argv, i, "--feature", "-f", &unused)) {
        if (f->nfeatures == (int)(sizeof(f->features) / sizeof(f->features[0])))
            return fmt_fail("too many --feature options");
        f->features[f->nfeatures++] = unused;
        return 0;
    }
    if (fmt_opt(argc, argv, i, "--add-scram", "-S", &unused))
        return fmt_fail("--add-scram is not supported by Strand yet (no SASL)");
    return fmt_usage_error("unrecognized arguments: '%s'", argv[*i]);
}

static int fmt_parse_args(fmt_t *f, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(fmt_usage_text, stdout);
            return -1;
        }
        if (fmt_parse_one(f, argc, argv, &i))
            return 1;
    }
    if (!f->config)
        return fmt_usage_error("argument --config/-c is required");
    if (!f->cluster_id)
        return fmt_usage_error("argument --cluster-id/-t is required");
    if (!*f->cluster_id || strlen(f->cluster_id) > LOG_META_CLUSTER_MAX)
        return fmt_fail("Cluster id '%s' is not supported by Strand: it must have 1 to %d "
                        "characters (strand random-uuid makes one)", f->cluster_id,
                        LOG_META_CLUSTER_MAX);
    return 0;
}

/* ---- the quorum ---- */

/* One ID@HOST:PORT:DIRID of --initial-controllers. */
static int fmt_voter_item(const char *item, size_t len, void *arg)
{
    fmt_t *f = arg;
    char s[512], *host, *p, *end;
    broker_boot_voter_t v;
    long id, port;

    memset(&v, 0, sizeof(v));
    snprintf(s, sizeof(s), "%.*s", (int)len, item);
    if (!strchr(s, '@'))
        return fmt_fail("No @ found in dynamic voter string.");
    errno = 0;
    id = strtol(s, &end, 10);
    if (end == s || *end != '@' || errno || id < 0 || id > INT32_MAX)
        return fmt_fail("Failed to parse node id in dynamic voter string.");
    host = end + 1;
    p = *host == '[' ? strchr(host, ']') : host;
    if (!p || !(p = strchr(p, ':')))
        return fmt_fail("No colon following hostname could be found.");
    *p++ = '\0';
    port = strtol(p, &end, 10);
    if (end == p || port < 0 || port > 65535)
        return fmt_fail("Failed to parse port in dynamic voter string.");
    if (*end != ':')
        return fmt_fail("No colon following port could be found.");
    if (uuid_from_base64(end + 1, v.dir_id) < 0)
        return fmt_fail("Failed to parse directory ID in dynamic voter string.");
    for (int i = 0; i < f->boot.nvoters; i++)
        if (f->boot.voters[i].id == (int32_t)id)
            return fmt_fail("Node id %ld was specified more than once.", id);
    v.id = (int32_t)id;
    snprintf(v.host, sizeof(v.host), "%.*s", (int)strcspn(host + (*host == '['), "]"),
             host + (*host == '['));
    v.port = (int)port;
    f->boot.voters = xrealloc(f->boot.voters, (size_t)(f->boot.nvoters + 1) * sizeof(v));
    f->boot.voters[f->boot.nvoters++] = v;
    return 0;
}

/* --standalone: this node the one initial voter, a new directory id. */
static int fmt_standalone(fmt_t *f)
{
    const bcfg_listener_t *l = broker_config_controller_listener(&f->cfg);
    broker_boot_voter_t *v = xcalloc(1, sizeof(*v));

    f->boot.voters = v;
    f->boot.nvoters = 1;
    v->id = f->cfg.node_id;
    snprintf(v->host, sizeof(v->host), "%s", l && *l->host ? l->host : "localhost");
    v->port = l ? l->port : 0;
    if (uuid_generate(v->dir_id) < 0)
        return fmt_fail("cannot generate a directory id: %s", strerror(errno));
    return 0;
}

/* The listener name of the voters' endpoints: this node's first
 * controller listener name. */
static void fmt_voter_listeners(fmt_t *f)
{
    char name[64] = "CONTROLLER";
    const char *names = f->cfg.controller_listener_names;

    if (names)
        snprintf(name, sizeof(name), "%.*s", (int)strcspn(names, ", "), names);
    for (int i = 0; i < f->boot.nvoters; i++)
        snprintf(f->boot.voters[i].listener, sizeof(f->boot.voters[i].listener), "%s", name);
}

static int fmt_quorum(fmt_t *f)
{
    const broker_config_t *cfg = &f->cfg;

    if (f->standalone && !cfg->role_controller)
        return fmt_fail("You can only use --standalone on a controller.");
    if ((f->standalone || f->initial) && cfg->quorum.nvoters)
        return fmt_fail("You cannot specify controller.quorum.voters and format the node with "
                        "--initial-controllers or --standalone. If you want to use dynamic "
                        "quorum, please remove controller.quorum.voters and specify "
                        "controller.quorum.bootstrap.servers instead.");
    if (cfg->role_controller && !cfg->quorum.nvoters && !f->quorum_flag)
        return fmt_fail("Because controller.quorum.voters is not set on this controller, you "
                        "must specify one of the following: --standalone, "
                        "--initial-controllers, or --no-initial-controllers.");
    if (f->initial && cfg_val_items(f->initial, fmt_voter_item, f))
        return 1;
    if (f->initial && !f->boot.nvoters)
        return fmt_fail("No voters given.");
    if (f->standalone && fmt_standalone(f))
        return 1;
    fmt_voter_listeners(f);
    /* a dynamic quorum runs kraft.version 1 from the start, its voters
     * given here or added later (--no-initial-controllers) */
    f->boot.kraft_version = cfg->quorum.nvoters ? 0 : 1;
    return 0;
}

/* --release-version: a level's name (4.0-IV3) or a release (4.0: its last
 * level); without it, the level a new Strand node starts at. */
static int fmt_release(fmt_t *f)
{
    char list[512] = "";
    size_t n;

    f->boot.metadata_version = META_LOG_METADATA_VERSION;
    if (!f->release)
        return 0;
    for (int i = FMT_NMV - 1; i >= 0; i--) {
        n = strlen(f->release);
        if (!strcmp(fmt_mv[i].name, f->release) ||
            (!strncmp(fmt_mv[i].name, f->release, n) && fmt_mv[i].name[n] == '-')) {
            f->boot.metadata_version = fmt_mv[i].level;
            return 0;
        }
    }
    for (int i = 0; i < FMT_NMV; i++)
        snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? ", " : "",
                 fmt_mv[i].name);
    return fmt_fail("Unknown metadata.version '%s'. Supported metadata.version are: %s",
                    f->release, list);
}

/* One --feature NAME=LEVEL against the levels Strand supports. */
static int fmt_feature(fmt_t *f, const char *spec, bool *elr_given)
{
    const char *eq = strchr(spec, '=');
    char *end;
    long level = eq ? strtol(eq + 1, &end, 10) : -1;
    if (!eq || eq == spec || !eq[1] || *end || level < 0 || level > INT16_MAX)
        return fmt_fail("Can't parse feature=level string %s", spec);
    const ctl_feature_t *cf = ctl_feature_find(spec, (size_t)(eq - spec));
    if (!cf)
        return fmt_fail("Unsupported feature: %.*s.", (int)(eq - spec), spec);
    if (!strcmp(cf->name, CTL_FEATURE_METADATA_VERSION))
        return fmt_fail("Use --release-version to set metadata.version.");
    if (!strcmp(cf->name, CTL_FEATURE_KRAFT_VERSION)) {
        if (level != f->boot.kraft_version)
            return fmt_fail("kraft.version is %d for this quorum's configuration",
                            (int)f->boot.kraft_version);
        return 0;
    }
    if (level < cf->min_level || level > cf->max_level)
        return fmt_fail("Strand supports %s at levels %d-%d only, not %ld", cf->name,
                        (int)cf->min_level, (int)cf->max_level, level);
    if (!strcmp(cf->name, CTL_FEATURE_ELR)) {
        f->boot.elr_version = (int16_t)level;
        *elr_given = true;
    }
    return 0;
}

/* The features' levels, after metadata.version's. */
static int fmt_features(fmt_t *f)
{
    bool elr_given = false;
    f->boot.elr_version = !f->release || f->boot.metadata_version >= FMT_ELR_DEFAULT_MV;
    for (int i = 0; i < f->nfeatures; i++)
        if (fmt_feature(f, f->features[i], &elr_given))
            return 1;
    return 0;
}

static const char *fmt_mv_name(int16_t level)
{
    for (int i = 0; i < FMT_NMV; i++)
        if (fmt_mv[i].level == level)
            return fmt_mv[i].name;
    return "?";
}

/* ---- the dirs ---- */

static int fmt_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void fmt_add_dir(fmt_t *f, const char *d)
{
    for (int i = 0; i < f->ndirs; i++)
        if (!strcmp(f->dirs[i], d))
            return; /* named twice */
    f->dirs = xrealloc(f->dirs, (size_t)(f->ndirs + 1) * sizeof(char *));
    f->dirs[f->ndirs++] = xstrdup(d);
}

/* The metadata log dir is Kafka's: metadata.log.dir, or the first log dir.
 * (A Strand node keeps its metadata log in the first log dir today, so a
 * controller's metadata.log.dir should be that dir or not set.) */
static void fmt_collect_dirs(fmt_t *f)
{
    const char *mdir = props_get(&f->cfg.props, "metadata.log.dir");

    for (int i = 0; i < f->cfg.nlog_dirs; i++)
        fmt_add_dir(f, f->cfg.log_dirs[i]);
    if (mdir && *mdir)
        fmt_add_dir(f, mdir);
    qsort(f->dirs, (size_t)f->ndirs, sizeof(char *), fmt_cmp);
    f->meta_dir = mdir && *mdir ? mdir : f->cfg.log_dirs[0];
}

/* The formatted dirs must be this cluster's and this node's; returns how
 * many are formatted in *nformatted. */
static int fmt_verify(fmt_t *f, log_meta_t *m, int *nformatted)
{
    char err[512];

    *nformatted = 0;
    for (int i = 0; i < f->ndirs; i++) {
        if (log_meta_read(f->dirs[i], &m[i], err, sizeof(err)) < 0)
            return fmt_fail("%s", err);
        if (!m[i].present)
            continue;
        if (strcmp(m[i].cluster_id, f->cluster_id))
            return fmt_fail("Invalid cluster.id in: %s/meta.properties. Expected %s, but read %s",
                            f->dirs[i], f->cluster_id, m[i].cluster_id);
        if (m[i].node_id != f->cfg.node_id)
            return fmt_fail("Stored node id %d doesn't match previous node id %d in "
                            "%s/meta.properties. If you moved your data, make sure your "
                            "configured node id matches. If you intend to create a new node, "
                            "you should remove all data in your data directories.",
                            m[i].node_id, f->cfg.node_id, f->dirs[i]);
        if (!f->ignore)
            return fmt_fail("Log directory %s is already formatted. Use --ignore-formatted to "
                            "ignore this directory and format the others.", f->dirs[i]);
        (*nformatted)++;
    }
    return 0;
}

/* mkdir -p. 0 or -1 with errno. */
static int fmt_mkdirs(const char *path)
{
    char *p = xstrdup(path);
    int rc = 0;

    for (char *s = p + 1; *s && rc == 0; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        if (mkdir(p, 0755) < 0 && errno != EEXIST)
            rc = -1;
        *s = '/';
    }
    if (rc == 0 && mkdir(p, 0755) < 0 && errno != EEXIST)
        rc = -1;
    free(p);
    return rc;
}

/* This node among the initial voters, or NULL. */
static const broker_boot_voter_t *fmt_self_voter(const fmt_t *f)
{
    for (int i = 0; i < f->boot.nvoters; i++)
        if (f->boot.voters[i].id == f->cfg.node_id)
            return &f->boot.voters[i];
    return NULL;
}

/* The words Kafka's format uses for each kind of dir. */
static const char *fmt_kind(const fmt_t *f, const char *dir)
{
    if (strcmp(dir, f->meta_dir))
        return "data directory";
    if (!f->boot.nvoters)
        return "metadata directory";
    return fmt_self_voter(f) ? "dynamic metadata voter directory" : "dynamic metadata directory";
}

static int fmt_write_dir(fmt_t *f, const char *dir)
{
    const broker_boot_voter_t *self = fmt_self_voter(f);
    bool meta = !strcmp(dir, f->meta_dir);
    char err[512];
    log_meta_t m;

    memset(&m, 0, sizeof(m));
    snprintf(m.cluster_id, sizeof(m.cluster_id), "%s", f->cluster_id);
    m.node_id = f->cfg.node_id;
    if (meta && self)
        memcpy(m.dir_id, self->dir_id, 16); /* the voter's directory id is this dir's */
    else if (uuid_generate(m.dir_id) < 0)
        return fmt_fail("cannot generate a directory id: %s", strerror(errno));
    printf("Formatting %s %s with metadata.version %s.\n", fmt_kind(f, dir), dir,
           fmt_mv_name(f->boot.metadata_version));
    if (fmt_mkdirs(dir) < 0 || log_meta_write(dir, &m) < 0)
        return fmt_fail("%s/meta.properties: cannot write: %s", dir, strerror(errno));
    if (meta && f->cfg.role_controller &&
        broker_boot_write(dir, &f->boot, err, sizeof(err)) < 0)
        return fmt_fail("%s", err);
    return 0;
}

static int fmt_write(fmt_t *f)
{
    log_meta_t *m = xcalloc((size_t)f->ndirs, sizeof(*m));
    int nformatted, rc = fmt_verify(f, m, &nformatted);

    if (rc == 0 && nformatted == f->ndirs) {
        printf("All of the log directories are already formatted.\n");
    } else {
        for (int i = 0; i < f->ndirs && rc == 0; i++)
            if (!m[i].present)
                rc = fmt_write_dir(f, f->dirs[i]);
    }
    fflush(stdout);
    free(m);
    return rc;
}

static void fmt_free(fmt_t *f)
{
    for (int i = 0; i < f->ndirs; i++)
        free(f->dirs[i]);
    free(f->dirs);
    free(f->boot.voters);
    broker_config_free(&f->cfg);
}

int broker_format_main(int argc, char **argv)
{
    fmt_t f;
    int rc;

    memset(&f, 0, sizeof(f));
    rc = fmt_parse_args(&f, argc, argv);
    if (rc)
        return rc < 0 ? 0 : rc;
    lg_set_level(LG_WARN); /* the config's refusals, not its notes */
    if (broker_config_load(&f.cfg, f.config, NULL, 0) < 0) {
        broker_config_free(&f.cfg);
        return 1;
    }
    rc = fmt_quorum(&f);
    if (rc == 0)
        rc = fmt_release(&f);
    if (rc == 0)
        rc = fmt_features(&f);
    if (rc == 0) {
        fmt_collect_dirs(&f);
        rc = fmt_write(&f);
    }
    fmt_free(&f);
    return rc;
}

int broker_random_uuid_main(int argc, char **argv)
{
    uint8_t id[16];
    char s[UUID_STR_LEN + 1];

    if (argc > 1) {
        fprintf(stderr, "usage: strand random-uuid [-h]\nstrand random-uuid: error: "
                "unrecognized arguments: '%s'\n", argv[1]);
        return 1;
    }
    if (uuid_generate(id) < 0)
        return fmt_fail("cannot generate a uuid: %s", strerror(errno));
    uuid_to_base64(id, s);
    printf("%s\n", s);
    return 0;
}

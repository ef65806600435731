/* strand-diff: see tests/diff/README.md.
 *
 *   strand-diff [--seed N] [--allow FILE] [--tsv FILE] [--only KEYS]
 *               [--cases TEXT] [--kafka-vs-kafka] [-v]
 *               [--subject HOST:PORT --reference HOST:PORT]
 *
 * Without --subject/--reference it starts both brokers itself, each on a
 * fresh data dir under STRAND_TEST_DIR (or /tmp): Strand from STRAND_BIN,
 * Apache Kafka through scripts/kafka-ref.sh of STRAND_SRCDIR (skipped,
 * exit 77, when java is missing). --kafka-vs-kafka starts Kafka twice:
 * a run that must find nothing, which checks the normalization.
 *
 * Exit status: 0 no difference outside the allow list, 1 some, 2 a broker
 * failed (set-up, died, or Strand did not exit 0 on SIGTERM), 77 skipped. */
#include "diff/diff.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib/testlib.h"

typedef struct {
    uint64_t seed;
    const char *allow, *tsv, *only, *cases, *subject, *reference;
    int kafka_vs_kafka, verbose;
} diff_opts_t;

static void diff_usage(void)
{
    fprintf(stderr, "usage: strand-diff [--seed N] [--allow FILE] [--tsv FILE] [--only KEYS]\n"
                    "                   [--cases TEXT] [--kafka-vs-kafka] [-v]\n"
                    "                   [--subject HOST:PORT --reference HOST:PORT]\n");
    exit(2);
}

static void diff_parse(int argc, char **argv, diff_opts_t *o)
{
    memset(o, 0, sizeof(*o));
    o->seed = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-v"))
            o->verbose = 1;
        else if (!strcmp(a, "--kafka-vs-kafka"))
            o->kafka_vs_kafka = 1;
        else if (!v)
            diff_usage();
        else if (!strcmp(a, "--seed"))
            o->seed = strtoull(v, NULL, 0), i++;
        else if (!strcmp(a, "--allow"))
            o->allow = v, i++;
        else if (!strcmp(a, "--tsv"))
            o->tsv = v, i++;
        else if (!strcmp(a, "--only"))
            o->only = v, i++;
        else if (!strcmp(a, "--cases"))
            o->cases = v, i++;
        else if (!strcmp(a, "--subject"))
            o->subject = v, i++;
        else if (!strcmp(a, "--reference"))
            o->reference = v, i++;
        else
            diff_usage();
    }
    if (!o->subject != !o->reference)
        diff_usage();
}

/* --only "0,1,18": 1 when key is listed (or no list). */
static int diff_selected(const char *only, int16_t key)
{
    if (!only)
        return 1;
    for (const char *p = only; *p;) {
        char *end;
        long k = strtol(p, &end, 10);
        if (end == p)
            return 0;
        if (k == key)
            return 1;
        p = *end ? end + 1 : end;
    }
    return 0;
}

/* ---- the brokers ---- */

/* The same settings for both: Kafka's defaults but for what would make
 * a run slow (a rebalance delay, 50 partitions of internal topics). */
static const char *const diff_extra[] = {
    "group.initial.rebalance.delay.ms=0",
    "offsets.topic.num.partitions=4",
    "transaction.state.log.num.partitions=4",
    NULL,
};

static void diff_start(tl_broker *tb, const char *what, int kafka)
{
    char *dir = tl_scratch_dir(what);
    memset(tb, 0, sizeof(*tb));
    if (kafka && system("java -version >/dev/null 2>&1") != 0)
        tl_skip("no java: Apache Kafka cannot run here");
    tl_broker_start_kind(tb, dir, diff_extra, kafka);
    free(dir);
}

/* ---- one case ---- */

static void diff_send_case(diff_broker_t *br, const diff_case_t *c, diff_answer_t *ans)
{
    buf_t body, frame;
    buf_init(&body);
    buf_init(&frame);
    if (c->msg) {
        void *m = diff_copy(c->msg, c->req, c->ver, &br->arena);
        if (m) {
            diff_fix_apply(&br->fix, c->msg, m);
            proto_msg_encode(c->msg, m, c->ver, &body);
        }
        if (c->mal && c->mal <= DIFF_MAL_TAGS_LIE)
            diff_mal_apply(c->mal, c->msg, c->ver, &body);
    }
    int32_t corr = c->corr ? c->corr : br->corr++;
    int marker = diff_mal_frame(c, corr, &body, &frame);
    diff_broker_send(br, &frame, corr, marker, 10000, ans);
    buf_free(&body);
    buf_free(&frame);
}

static const char *diff_outcome(int o)
{
    static const char *const names[] = {"answered", "no-answer", "closed", "timeout", "wrong-id"};
    return names[o];
}

/* Runs case c on both; 0, or -1 when a broker is gone. */
static int diff_run_case(diff_broker_t *br[2], const diff_case_t *c, diff_sink_t *sink,
                         int verbose)
{
    diff_answer_t ans[2];
    int setup[2];
    for (int i = 0; i < 2; i++) {
        arena_reset(&br[i]->arena);
        setup[i] = diff_fix_case(br[i], c);
    }
    if (setup[0] || setup[1]) {
        char what[64];
        snprintf(what, sizeof(what), "%s/%s", setup[0] ? "failed" : "ok", setup[1] ? "failed" : "ok");
        diff_sink_add(sink, c->key, c->ver, c->name, "(fixture)", what);
        return 0;
    }
    for (int i = 0; i < 2; i++) {
        double t = tl_now();
        diff_send_case(br[i], c, &ans[i]);
        br[i]->busy += tl_now() - t;
        if (ans[i].outcome == DIFF_CLOSED && diff_broker_connect(br[i]) < 0) {
            tl_log("%s on %s is gone (case %d %s v%d %s)", br[i]->label, br[i]->bootstrap, c->id,
                   diff_api_name(c->key), c->ver, c->name);
            return -1;
        }
    }
    if (verbose)
        tl_log("case %d %s v%d %s: %s/%s", c->id, diff_api_name(c->key), c->ver, c->name,
               diff_outcome(ans[0].outcome), diff_outcome(ans[1].outcome));
    diff_cmp_answers(sink, c, br[0], &ans[0], br[1], &ans[1]);
    return 0;
}

/* ---- the run ---- */

static void diff_build(diff_corpus_t *cp, const diff_opts_t *o, diff_broker_t *a,
                       diff_broker_t *b, diff_sink_t *sink)
{
    for (int16_t k = 0; k < DIFF_MAX_KEY; k++)
        if (a->vmin[k] >= 0 && diff_selected(o->only, k))
            diff_corpus_api(cp, k, a, b, sink);
    if (!o->only)
        diff_corpus_global(cp);
}

/* Where the time went, by API: the figures to look at when a run gets slow. */
static void diff_log_times(const double *secs, const int *count)
{
    char line[1024];
    size_t k = 0;
    for (int n = 0; n < 8; n++) {
        int best = -1;
        for (int i = 0; i <= DIFF_MAX_KEY; i++)
            if (count[i] && (best < 0 || secs[i] > secs[best]))
                best = i;
        if (best < 0)
            break;
        k += (size_t)snprintf(line + k, sizeof(line) - k, " %s %.1f s/%d,",
                              diff_api_name(best == DIFF_MAX_KEY ? -1 : (int16_t)best), secs[best],
                              count[best]);
        if (k >= sizeof(line))
            break;
        ((int *)count)[best] = 0;
    }
    tl_log("slowest APIs (time/cases):%s", line);
}

static int diff_run(const diff_opts_t *o, diff_broker_t *a, diff_broker_t *b, diff_sink_t *sink)
{
    diff_broker_t *br[2] = {a, b};
    diff_corpus_t cp;
    double t0 = tl_now(), secs[DIFF_MAX_KEY + 1] = {0};
    int rc = 0, ran = 0, count[DIFF_MAX_KEY + 1] = {0};
    for (int i = 0; i < 2; i++)
        if (diff_fix_setup(br[i]) < 0) {
            tl_log("%s: set-up failed", br[i]->label);
            return -1;
        }
    diff_corpus_init(&cp, o->seed);
    diff_build(&cp, o, a, b, sink);
    tl_log("%d cases (seed %llu); set-up took %.1f s", cp.n, (unsigned long long)o->seed,
           tl_now() - t0);
    for (int i = 0; i < cp.n && rc == 0; i++) {
        const diff_case_t *c = &cp.v[i];
        if (o->cases && !strstr(c->name, o->cases))
            continue;
        double t = tl_now();
        int k = c->key >= 0 && c->key < DIFF_MAX_KEY ? c->key : DIFF_MAX_KEY;
        rc = diff_run_case(br, c, sink, o->verbose);
        secs[k] += tl_now() - t;
        count[k]++;
        if (++ran % 1000 == 0)
            tl_log("%d cases sent, %.1f s", ran, tl_now() - t0);
    }
    tl_log("%d cases in %.1f s (waiting for answers: %s %.1f s, %s %.1f s)", ran, tl_now() - t0,
           a->label, a->busy, b->label, b->busy);
    diff_log_times(secs, count);
    diff_corpus_free(&cp);
    return rc;
}

static const char *diff_default_allow(void)
{
    static char path[1024];
    const char *src = getenv("STRAND_SRCDIR");
    if (!src)
        return NULL;
    snprintf(path, sizeof(path), "%s/tests/diff/ALLOW", src);
    return path;
}

int main(int argc, char **argv)
{
    diff_opts_t o;
    tl_broker tb[2];
    diff_broker_t a, b;
    diff_sink_t sink;
    int nal, started = 0;
    tl_init("strand-diff");
    diff_parse(argc, argv, &o);
    const char *allow = o.allow ? o.allow : diff_default_allow();
    diff_allow_t *al = diff_allow_load(allow, &nal);
    if (!al)
        return 2;
    if (!o.subject) {
        diff_start(&tb[1], "diff-kafka", 1);
        diff_start(&tb[0], o.kafka_vs_kafka ? "diff-kafka2" : "diff-strand", o.kafka_vs_kafka);
        started = 1;
    }
    const char *la = o.kafka_vs_kafka ? "kafka2" : "strand";
    diff_broker_init(&a, la, o.subject ? o.subject : tb[0].bootstrap);
    diff_broker_init(&b, "kafka", o.reference ? o.reference : tb[1].bootstrap);
    diff_sink_init(&sink, la, "kafka");
    int rc = diff_run(&o, &a, &b, &sink) < 0 ? 2 : 0;
    diff_broker_free(&a);
    diff_broker_free(&b);
    if (started) {
        int st = tl_broker_stop(&tb[0]);
        tl_broker_stop(&tb[1]);
        if (st != 0) {
            tl_log("%s exited %d on SIGTERM", la, st);
            rc = 2;
        }
    }
    int nnew = diff_report(&sink, al, nal, o.tsv);
    diff_sink_free(&sink);
    diff_allow_free(al, nal);
    return rc ? rc : nnew ? 1 : 0;
}

/* The corpus: every case of a run, generated before the first is sent
 * (from the seed and the two ApiVersions answers only), so a run can be
 * repeated exactly and a case found by its number. */
#include "diff/diff.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/mem.h"

void diff_corpus_init(diff_corpus_t *cp, uint64_t seed)
{
    memset(cp, 0, sizeof(*cp));
    arena_init(&cp->arena, 1 << 20);
    cp->seed = seed;
}

void diff_corpus_free(diff_corpus_t *cp)
{
    free(cp->v);
    arena_destroy(&cp->arena);
}

diff_case_t *diff_corpus_add(diff_corpus_t *cp, int16_t key, int16_t ver, const char *name)
{
    if (cp->n == cp->cap) {
        cp->cap = cp->cap ? cp->cap * 2 : 1024;
        cp->v = xrealloc(cp->v, (size_t)cp->cap * sizeof(*cp->v));
    }
    diff_case_t *c = &cp->v[cp->n];
    memset(c, 0, sizeof(*c));
    c->id = cp->n++;
    c->key = c->hdr_key = key;
    c->ver = c->hdr_ver = ver;
    snprintf(c->name, sizeof(c->name), "%s", name);
    return c;
}

const char *diff_api_name(int16_t key)
{
    static char buf[32];
    const proto_api_info_t *api = proto_api_info(key);
    if (api)
        return api->name;
    if (key < 0)
        return "(no-api)";
    snprintf(buf, sizeof(buf), "key-%d", key);
    return buf;
}

static int diff_adv(const diff_broker_t *b, int16_t key, int16_t v)
{
    return key >= 0 && key < DIFF_MAX_KEY && b->vmin[key] >= 0 && v >= b->vmin[key] &&
           v <= b->vmax[key];
}

static diff_case_t *diff_add_req(diff_corpus_t *cp, const proto_msg_t *rq, int16_t ver,
                                 const char *name, void *tmpl)
{
    diff_case_t *c = diff_corpus_add(cp, rq->key, ver, name);
    c->msg = rq;
    c->req = tmpl;
    c->uses = diff_fix_uses(rq, tmpl);
    return c;
}

/* A request of the defined range whose header says something else: a
 * version past the top or below the bottom, a negative correlation id,
 * a null or lying client id. */
static void diff_add_header_cases(diff_corpus_t *cp, const proto_msg_t *rq, int16_t lo,
                                  int16_t hi, const diff_broker_t *ref)
{
    int16_t top = hi < rq->vmax ? hi : rq->vmax, bot = lo > rq->vmin ? lo : rq->vmin;
    if (top < bot)
        return;
    void *t = diff_gen_valid(cp, rq, top), *bt = diff_gen_valid(cp, rq, bot);
    diff_add_req(cp, rq, top, "hdr:version-past-top", t)->hdr_ver = (int16_t)(hi + 1);
    diff_add_req(cp, rq, bot, "hdr:version-negative", bt)->hdr_ver = -1;
    if (ref->vmin[rq->key] > 0)
        diff_add_req(cp, rq, bot, "hdr:version-below-min", bt)->hdr_ver =
            (int16_t)(ref->vmin[rq->key] - 1);
    diff_add_req(cp, rq, top, "hdr:correlation-id-negative", t)->corr = -7;
    diff_add_req(cp, rq, top, "hdr:client-id-null", t)->mal = DIFF_MAL_CLIENT_NULL;
    diff_add_req(cp, rq, top, "hdr:client-id-over", t)->mal = DIFF_MAL_CLIENT_LONG;
}

void diff_corpus_api(diff_corpus_t *cp, int16_t key, const diff_broker_t *a,
                     const diff_broker_t *b, diff_sink_t *sink)
{
    const proto_msg_t *rq = proto_msg_lookup(key, 0);
    int16_t lo = INT16_MAX, hi = -1;
    if (!rq) /* nothing to build a request from (only a Kafka subject advertises it) */
        return;
    for (int i = 0; i < 2; i++) {
        const diff_broker_t *x = i ? b : a;
        if (x->vmin[key] < 0)
            continue;
        lo = x->vmin[key] < lo ? x->vmin[key] : lo;
        hi = x->vmax[key] > hi ? x->vmax[key] : hi;
    }
    for (int16_t v = lo; v <= hi; v++) {
        int ina = diff_adv(a, key, v), inb = diff_adv(b, key, v);
        if (!ina && !inb)
            continue;
        if (v < rq->vmin || v > rq->vmax) {
            diff_sink_add(sink, key, v, "coverage", "-", "no-definition-in-protocol/");
            continue;
        }
        void *tmpl = diff_gen_valid(cp, rq, v);
        diff_add_req(cp, rq, v, "valid", tmpl);
        if (ina && inb) {
            diff_edge_add(cp, rq, v, tmpl);
            diff_mal_add(cp, rq, v, tmpl);
        }
    }
    if (hi >= 0)
        diff_add_header_cases(cp, rq, lo, hi, b);
}

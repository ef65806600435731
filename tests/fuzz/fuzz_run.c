/* The socket fuzzer's loop.
 *
 * Each request is built valid (fuzz_gen.c over the descriptor tables,
 * encoded by the generated encoder), then most are mutated (fuzz_mut.c,
 * or a lying version, header or frame size). What the broker must do with
 * the final bytes is predicted with the same codec the broker uses:
 * a request that decodes gets an answer, one that does not gets its
 * connection closed (Kafka's behaviour for an unparsable request), a
 * decodable Produce with acks=0 gets nothing. Every answer must decode at
 * the request's version and carry its correlation id (hard findings); a
 * prediction the broker does not follow is a soft finding, listed for a
 * human to judge. After each batch a fresh connection must get
 * ApiVersions and Metadata answers, or the broker counts as dead and the
 * batch is written to a crash file that --replay sends again. */
#include "fuzz/fuzz_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/kerr.h"
#include "util/mem.h"
#include "util/rd.h"

#define FUZZ_NCONN 3
#define FUZZ_NPOOL 3
#define FUZZ_WAIT_MS 5000  /* an answer from an API that never waits */
#define FUZZ_PARK_MS 1000  /* then we give up on a parked one */
#define FUZZ_PROBE_MS 10000
#define FUZZ_KEEP 4000    /* requests kept for the crash file */
#define FUZZ_SHOW 3        /* soft findings printed per kind and API */

static const char *const fuzz_finding_names[FUZZ_F_N] = {
    "bad-answer", "wrong-correlation", "dead", "closed-decodable", "answered-undecodable", "hang",
    "unknown-server-error",
};

typedef struct fuzz_api_s {
    int16_t key, min, max;
    const proto_msg_t *req, *resp;
} fuzz_api_t;

typedef struct fuzz_req_s {
    fuzz_bytes_t frame; /* with its size prefix */
    int16_t key, ver;   /* as the header says, once mutated (-1: no header) */
    int32_t corr;
    int slot;
    int expect;         /* enum fuzz_expect */
    int mutated;
    char desc[160];
} fuzz_req_t;

typedef struct fuzz_s {
    const fuzz_opts_t *o;
    fuzz_stats_t *st;
    fuzz_gen_t gen;
    arena_t arena, darena;
    fuzz_api_t apis[64]; /* everything advertised (for predictions) */
    int napis;
    int fuzzed[64];      /* indexes of those to send (--only, --skip) */
    int nfuzzed;
    int fds[FUZZ_NCONN];
    int32_t corr;
    char pool[FUZZ_NPOOL][48];
    const char *pool_names[FUZZ_NPOOL];
    proto_uuid_t ids[FUZZ_NPOOL];
    const char *groups[2];
    fuzz_req_t *log; /* the requests since the last probe */
    int nlog, caplog;
    fuzz_bytes_t prev, ans;
    char **seen;
    int nseen, capseen;
    uint8_t shown[FUZZ_F_N][128];
} fuzz_t;

static int32_t be32(const uint8_t *p)
{
    return (int32_t)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]);
}

static const fuzz_api_t *fuzz_api_find(const fuzz_t *f, int16_t key)
{
    for (int i = 0; i < f->napis; i++)
        if (f->apis[i].key == key)
            return &f->apis[i];
    return NULL;
}

/* Produce v0-2 are advertised (librdkafka looks for v0) but refused. */
static int16_t fuzz_accept_min(const fuzz_api_t *a)
{
    return a->key == PROTO_API_PRODUCE && a->min < 3 ? 3 : a->min;
}

/* APIs whose answer may wait for something (a long poll, a rebalance,
 * a flush round): no answer within FUZZ_PARK_MS is not a hang. */
static int fuzz_parks(int16_t key)
{
    return key == PROTO_API_FETCH || key == PROTO_API_JOIN_GROUP ||
           key == PROTO_API_SYNC_GROUP || key == PROTO_API_PRODUCE;
}

/* ---- topics the broker said exist ---- */

static void fuzz_seen(fuzz_t *f, proto_str_t name)
{
    if (name.len < 0)
        return;
    for (int i = 0; i < f->nseen; i++)
        if (strlen(f->seen[i]) == (size_t)name.len && !memcmp(f->seen[i], name.p, (size_t)name.len))
            return;
    if (f->nseen == f->capseen) {
        f->capseen = f->capseen ? f->capseen * 2 : 64;
        f->seen = xrealloc(f->seen, (size_t)f->capseen * sizeof(*f->seen));
    }
    char *s = xmalloc((size_t)name.len + 1);
    memcpy(s, name.p, (size_t)name.len);
    s[name.len] = 0;
    f->seen[f->nseen++] = s;
}

/* CreateTopics and Metadata answers name the topics that exist, or that
 * a Metadata request is making: auto-creation answers the request that
 * asks for it UNKNOWN_TOPIC_OR_PARTITION (Kafka 4.4's answer) or
 * LEADER_NOT_AVAILABLE (a partition whose log is being made). */
static void fuzz_note_topics(fuzz_t *f, int16_t key, const void *resp)
{
    if (key == PROTO_API_CREATE_TOPICS) {
        const proto_create_topics_resp_t *r = resp;
        for (int32_t i = 0; i < r->topics.n; i++)
            if (r->topics.v[i].error_code == 0)
                fuzz_seen(f, r->topics.v[i].name);
    } else if (key == PROTO_API_METADATA) {
        const proto_metadata_resp_t *r = resp;
        for (int32_t i = 0; i < r->topics.n; i++)
            if (r->topics.v[i].error_code == KERR_NONE ||
                r->topics.v[i].error_code == KERR_LEADER_NOT_AVAILABLE ||
                r->topics.v[i].error_code == KERR_UNKNOWN_TOPIC_OR_PARTITION)
                fuzz_seen(f, r->topics.v[i].name);
    }
}

static void fuzz_write_topics(fuzz_t *f)
{
    FILE *out = fopen(f->o->topics_out, "w");
    if (!out) {
        fprintf(stderr, "strand-fuzz: %s: %s\n", f->o->topics_out, strerror(errno));
        return;
    }
    for (int i = 0; i < f->nseen; i++) {
        for (const unsigned char *c = (const unsigned char *)f->seen[i]; *c; c++)
            fprintf(out, *c > 32 && *c < 127 && *c != '\\' ? "%c" : "\\x%02x", *c);
        fputc('\n', out);
    }
    fclose(out);
}

/* ---- findings ---- */

static void fuzz_hex(FILE *out, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%02x", p[i]);
    fputc('\n', out);
}

static void fuzz_find(fuzz_t *f, int kind, const fuzz_req_t *rq, const char *what)
{
    uint8_t *shown = &f->shown[kind][(uint16_t)rq->key & 127];
    f->st->findings[kind]++;
    if (*shown >= FUZZ_SHOW && f->o->verbose < 2)
        return;
    (*shown)++;
    fprintf(stderr, "strand-fuzz: %s%s: api %d v%d corr %d %s%s: %s\n",
            kind < FUZZ_F_CLOSED_VALID ? "FINDING " : "note ", fuzz_finding_names[kind], rq->key,
            rq->ver, rq->corr, rq->mutated ? "mutated " : "valid", rq->desc, what);
    fuzz_hex(stderr, rq->frame.p, rq->frame.len < 512 ? rq->frame.len : 512);
}

/* ---- connections ---- */

static void fuzz_drop(fuzz_t *f, int slot)
{
    if (f->fds[slot] >= 0)
        close(f->fds[slot]);
    f->fds[slot] = -1;
}

static int fuzz_conn(fuzz_t *f, int slot)
{
    for (int i = 0; f->fds[slot] < 0 && i < 3; i++) {
        f->fds[slot] = fuzz_net_connect(f->o->bootstrap, FUZZ_WAIT_MS);
        if (f->fds[slot] < 0)
            usleep(100 * 1000);
    }
    return f->fds[slot];
}

/* Frames a request: size, header, body. */
static void fuzz_frame(fuzz_bytes_t *out, int16_t key, int16_t ver, int32_t corr,
                       const uint8_t *body, size_t len)
{
    buf_t b;
    proto_req_header_t h = { key, ver, corr, PROTO_STR("strand-fuzz") };
    buf_init(&b);
    buf_put_i32(&b, 0);
    proto_req_header_encode(&b, &h);
    buf_put(&b, body, len);
    buf_set_i32(&b, 0, (int32_t)(b.len - 4));
    fuzz_bytes_set(out, b.p, b.len);
    buf_free(&b);
}

/* Decodes an answer frame for (key, ver) into f->darena; NULL if bad.
 * ApiVersions answers a version it does not know at v0, and always
 * with response header v0. */
static void *fuzz_decode_answer(fuzz_t *f, int16_t key, int16_t ver, const uint8_t *p, size_t len)
{
    const fuzz_api_t *a = fuzz_api_find(f, key);
    const proto_msg_t *msg = proto_msg_lookup(key, 1);
    size_t used = 0;
    rd_t rd;
    if (!msg || len < 4)
        return NULL;
    if (key == PROTO_API_API_VERSIONS && a && (ver > a->max || ver < 0))
        ver = 0;
    rd_init(&rd, p + 4, len - 4);
    if (key != PROTO_API_API_VERSIONS && proto_is_flexible(key, ver)) {
        uint32_t n = rd_uvarint(&rd);
        for (uint32_t i = 0; i < n && !rd.err; i++) {
            rd_uvarint(&rd);
            rd_take(&rd, rd_uvarint(&rd));
        }
    }
    void *m = arena_alloc(&f->darena, msg->st->size);
    if (rd.err || proto_msg_decode(msg, m, ver, rd.p, rd_remain(&rd), &f->darena, &used) < 0 ||
        used != rd_remain(&rd))
        return NULL;
    return m;
}

/* One valid request on fd and its decoded answer (NULL on any failure). */
static void *fuzz_call(fuzz_t *f, int fd, int16_t key, int16_t ver, const void *m)
{
    buf_t body;
    fuzz_bytes_t frame = { 0 };
    int32_t corr = ++f->corr;
    void *resp = NULL;
    buf_init(&body);
    proto_msg_encode(proto_msg_lookup(key, 0), m, ver, &body);
    fuzz_frame(&frame, key, ver, corr, body.p, body.len);
    buf_free(&body);
    if (fuzz_net_send(fd, frame.p, frame.len) == 0 &&
        fuzz_net_recv(fd, &f->ans, FUZZ_PROBE_MS) == FUZZ_RECV_FRAME &&
        be32(f->ans.p) == corr)
        resp = fuzz_decode_answer(f, key, ver, f->ans.p, f->ans.len);
    fuzz_bytes_free(&frame);
    return resp;
}

/* ---- setup and health probes ---- */

static int fuzz_learn_apis(fuzz_t *f, int fd)
{
    proto_api_versions_req_t r;
    proto_api_versions_req_init(&r);
    r.client_software_name = PROTO_STR("strand-fuzz");
    r.client_software_version = PROTO_STR("1");
    f->apis[0] = (fuzz_api_t){ PROTO_API_API_VERSIONS, 0, 3, NULL, NULL };
    f->napis = 1;
    const proto_api_versions_resp_t *resp = fuzz_call(f, fd, PROTO_API_API_VERSIONS, 3, &r);
    if (!resp || resp->error_code)
        return -1;
    f->napis = 0;
    for (int32_t i = 0; i < resp->api_keys.n && f->napis < 64; i++) {
        const proto_api_versions_resp_api_version_t *v = &resp->api_keys.v[i];
        const proto_msg_t *req = proto_msg_lookup(v->api_key, 0);
        if (!req || v->min_version > v->max_version)
            continue;
        /* we can only build versions our definitions have */
        int16_t lo = v->min_version > req->vmin ? v->min_version : req->vmin;
        int16_t hi = v->max_version < req->vmax ? v->max_version : req->vmax;
        if (lo <= hi)
            f->apis[f->napis++] = (fuzz_api_t){ v->api_key, lo, hi, req,
                                                 proto_msg_lookup(v->api_key, 1) };
    }
    return f->napis ? 0 : -1;
}

/* Metadata for the pool topics (learning their ids), at the newest
 * version up to 12. */
static const proto_metadata_resp_t *fuzz_pool_metadata(fuzz_t *f, int fd)
{
    const fuzz_api_t *a = fuzz_api_find(f, PROTO_API_METADATA);
    proto_metadata_req_t r;
    proto_metadata_req_metadata_request_topic_t t[FUZZ_NPOOL];
    if (!a)
        return NULL;
    int16_t ver = a->max < 12 ? a->max : 12;
    proto_metadata_req_init(&r);
    r.topics.n = FUZZ_NPOOL;
    r.topics.v = t;
    for (int i = 0; i < FUZZ_NPOOL; i++) {
        proto_metadata_req_metadata_request_topic_init(&t[i]);
        t[i].name = (proto_str_t){ f->pool[i], (int32_t)strlen(f->pool[i]) };
    }
    const proto_metadata_resp_t *resp = fuzz_call(f, fd, PROTO_API_METADATA, ver, &r);
    if (resp)
        fuzz_note_topics(f, PROTO_API_METADATA, resp);
    return resp;
}

/* The fuzzer's own topics (3 partitions each) and groups. */
static void fuzz_make_pool(fuzz_t *f, int fd)
{
    const fuzz_api_t *a = fuzz_api_find(f, PROTO_API_CREATE_TOPICS);
    proto_create_topics_req_creatable_topic_t t[FUZZ_NPOOL];
    proto_create_topics_req_t r;
    for (int i = 0; i < FUZZ_NPOOL; i++) {
        snprintf(f->pool[i], sizeof(f->pool[i]), "fuzz-%06" PRIx64 "-%d", f->o->seed & 0xffffff, i);
        f->pool_names[i] = f->pool[i];
    }
    f->groups[0] = "fuzz-group-0";
    f->groups[1] = "fuzz-group-1";
    if (a) {
        proto_create_topics_req_init(&r);
        r.topics.n = FUZZ_NPOOL;
        r.topics.v = t;
        for (int i = 0; i < FUZZ_NPOOL; i++) {
            proto_create_topics_req_creatable_topic_init(&t[i]);
            t[i].name = (proto_str_t){ f->pool[i], (int32_t)strlen(f->pool[i]) };
            t[i].num_partitions = 3;
            t[i].replication_factor = -1;
        }
        const void *resp = fuzz_call(f, fd, PROTO_API_CREATE_TOPICS, a->max, &r);
        if (resp)
            fuzz_note_topics(f, PROTO_API_CREATE_TOPICS, resp);
    }
    const proto_metadata_resp_t *md = fuzz_pool_metadata(f, fd);
    for (int32_t i = 0; md && i < md->topics.n && f->gen.nids < FUZZ_NPOOL; i++)
        if (md->topics.v[i].error_code == 0)
            f->ids[f->gen.nids++] = md->topics.v[i].topic_id;
    f->gen.topics = f->pool_names;
    f->gen.ntopics = FUZZ_NPOOL;
    f->gen.topic_ids = f->ids;
    f->gen.groups = f->groups;
    f->gen.ngroups = 2;
    f->gen.avoid = f->o->protect;
}

/* A fresh connection gets ApiVersions and Metadata answers. */
static int fuzz_probe(fuzz_t *f)
{
    int fd = -1;
    proto_api_versions_req_t r;
    for (int i = 0; i < 5 && fd < 0; i++)
        if ((fd = fuzz_net_connect(f->o->bootstrap, FUZZ_PROBE_MS)) < 0)
            usleep(200 * 1000);
    if (fd < 0)
        return -1;
    arena_reset(&f->darena);
    proto_api_versions_req_init(&r);
    r.client_software_name = PROTO_STR("strand-fuzz");
    r.client_software_version = PROTO_STR("1");
    const proto_api_versions_resp_t *av = fuzz_call(f, fd, PROTO_API_API_VERSIONS, 3, &r);
    int ok = av && av->error_code == 0 && av->api_keys.n > 0 && fuzz_pool_metadata(f, fd);
    close(fd);
    f->st->probes++;
    return ok ? 0 : -1;
}

/* ---- building requests ---- */

/* CreateTopics/CreatePartitions asking for many partitions are valid and
 * make the broker create thousands of files: not what we are after. */
static int fuzz_heavy(int16_t key, const void *m)
{
    if (key == PROTO_API_CREATE_TOPICS) {
        const proto_create_topics_req_t *r = m;
        for (int32_t i = 0; i < r->topics.n; i++)
            if (r->topics.v[i].num_partitions > 64 || r->topics.v[i].assignments.n > 64)
                return 1;
    } else if (key == PROTO_API_CREATE_PARTITIONS) {
        const proto_create_partitions_req_t *r = m;
        for (int32_t i = 0; i < r->topics.n; i++)
            if (r->topics.v[i].count > 64)
                return 1;
    }
    return 0;
}

/* What the broker must do with frame (see enum fuzz_expect); fills the
 * key and version the header names. */
static int fuzz_predict(fuzz_t *f, fuzz_req_t *rq, int *heavy)
{
    proto_req_header_t h;
    size_t hl;
    const uint8_t *p = rq->frame.p + 4;
    size_t len = rq->frame.len - 4;
    *heavy = 0;
    rq->key = rq->ver = -1;
    if ((size_t)be32(rq->frame.p) != len)
        return FUZZ_E_ANY;
    if (proto_req_header_decode(&h, p, len, &hl) < 0)
        return FUZZ_E_CLOSE;
    rq->key = h.api_key;
    rq->ver = h.api_version;
    rq->corr = h.correlation_id;
    const fuzz_api_t *a = fuzz_api_find(f, h.api_key);
    if (!a)
        return FUZZ_E_CLOSE;
    /* ApiVersions answers any version it does not know, at v0 (KIP-511) */
    if (h.api_key == PROTO_API_API_VERSIONS && (h.api_version > a->max || h.api_version < 0))
        return FUZZ_E_ANSWER;
    if (h.api_version < fuzz_accept_min(a) || h.api_version > a->max)
        return FUZZ_E_CLOSE;
    void *m = arena_alloc(&f->darena, a->req->st->size);
    if (proto_msg_decode(a->req, m, h.api_version, p + hl, len - hl, &f->darena, NULL) < 0)
        return FUZZ_E_CLOSE;
    *heavy = fuzz_heavy(h.api_key, m);
    if (h.api_key == PROTO_API_PRODUCE && ((proto_produce_req_t *)m)->acks == 0)
        return FUZZ_E_NONE;
    return FUZZ_E_ANSWER;
}

/* A version the body was not encoded at, or none we accept. */
static int16_t fuzz_other_version(fuzz_t *f, const fuzz_api_t *a, int16_t ver)
{
    static const int16_t odd[] = { -1, -32768, 0x7fff, 99 };
    uint32_t x = fuzz_below(&f->gen.rng, 4);
    int16_t v = x == 0   ? (int16_t)(a->min - 1)
                : x == 1 ? (int16_t)(a->max + 1)
                : x == 2 ? (int16_t)(a->min + (int16_t)fuzz_below(&f->gen.rng, (uint32_t)(a->max - a->min + 1)))
                         : odd[fuzz_below(&f->gen.rng, 4)];
    return v == ver ? (int16_t)(ver + 1) : v;
}

/* The header: its client id length lies, or its first bytes change. */
static void fuzz_mutate_header(fuzz_t *f, fuzz_req_t *rq)
{
    size_t len = rq->frame.len - 4, keep = len < 24 ? len : 24;
    fuzz_bytes_t h = { 0 };
    buf_t b;
    if (fuzz_chance(&f->gen.rng, 50) && len >= 10) {
        int16_t l = (int16_t)fuzz_gen_interesting(&f->gen, 2);
        rq->frame.p[4 + 8] = (uint8_t)((uint16_t)l >> 8);
        rq->frame.p[4 + 9] = (uint8_t)l;
        snprintf(rq->desc, sizeof(rq->desc), "client id len %d", l);
        return;
    }
    fuzz_bytes_set(&h, rq->frame.p + 4, keep);
    fuzz_mutate(&f->gen, &h, NULL, NULL, 0, rq->desc, sizeof(rq->desc));
    buf_init(&b);
    buf_put_i32(&b, (int32_t)(h.len + len - keep));
    buf_put(&b, h.p, h.len);
    buf_put(&b, rq->frame.p + 4 + keep, len - keep);
    fuzz_bytes_set(&rq->frame, b.p, b.len);
    buf_free(&b);
    fuzz_bytes_free(&h);
}

/* Mutates a framed request: its version, header, size or body. */
static void fuzz_mutate_frame(fuzz_t *f, fuzz_req_t *rq, const fuzz_api_t *a, int16_t ver,
                              const buf_t *body)
{
    fuzz_rng_t *r = &f->gen.rng;
    uint32_t x = fuzz_below(r, 100);
    if (x < 10) {
        int16_t v = fuzz_other_version(f, a, ver);
        fuzz_frame(&rq->frame, a->key, v, rq->corr, body->p, body->len);
        snprintf(rq->desc, sizeof(rq->desc), "version %d->%d", ver, v);
    } else if (x < 16) {
        fuzz_mutate_header(f, rq);
    } else if (x < 20) {
        int32_t s = (int32_t)fuzz_gen_interesting(&f->gen, 4);
        if (fuzz_chance(r, 50))
            s = (int32_t)(rq->frame.len - 4) + (int32_t)fuzz_below(r, 9) - 4;
        rq->frame.p[0] = (uint8_t)(s >> 24);
        rq->frame.p[1] = (uint8_t)(s >> 16);
        rq->frame.p[2] = (uint8_t)(s >> 8);
        rq->frame.p[3] = (uint8_t)s;
        snprintf(rq->desc, sizeof(rq->desc), "size %d", s);
    } else {
        fuzz_sites_t *sites = xmalloc(sizeof(*sites));
        fuzz_bytes_t b = { 0 };
        fuzz_sites_find(a->req, ver, body->p, body->len, sites);
        fuzz_bytes_set(&b, body->p, body->len);
        fuzz_mutate(&f->gen, &b, sites, f->prev.p, f->prev.len, rq->desc, sizeof(rq->desc));
        fuzz_frame(&rq->frame, a->key, ver, rq->corr, b.p, b.len);
        fuzz_bytes_free(&b);
        free(sites);
    }
}

/* Builds the next request into rq: a random API and version, random
 * values, and (most of the time) a mutation. */
static void fuzz_build(fuzz_t *f, fuzz_req_t *rq, int slot)
{
    fuzz_rng_t *r = &f->gen.rng;
    buf_t body;
    int heavy = 0;
    for (int tries = 0; tries < 8; tries++) {
        const fuzz_api_t *a = &f->apis[f->fuzzed[fuzz_below(r, (uint32_t)f->nfuzzed)]];
        int16_t ver = (int16_t)(a->min + (int16_t)fuzz_below(r, (uint32_t)(a->max - a->min + 1)));
        arena_reset(&f->arena);
        arena_reset(&f->darena);
        void *m = fuzz_gen_msg(&f->gen, a->req, ver);
        buf_init(&body);
        proto_msg_encode(a->req, m, ver, &body);
        rq->corr = ++f->corr;
        rq->slot = slot;
        rq->mutated = !fuzz_chance(r, (uint32_t)f->o->valid_pct);
        rq->desc[0] = 0;
        fuzz_frame(&rq->frame, a->key, ver, rq->corr, body.p, body.len);
        if (rq->mutated)
            fuzz_mutate_frame(f, rq, a, ver, &body);
        fuzz_bytes_set(&f->prev, body.p, body.len);
        buf_free(&body);
        rq->expect = fuzz_predict(f, rq, &heavy);
        if (!heavy)
            break;
    }
    if (heavy) /* give up: an ApiVersions v0 instead */
        fuzz_frame(&rq->frame, PROTO_API_API_VERSIONS, 0, rq->corr, NULL, 0);
    if (heavy)
        rq->expect = fuzz_predict(f, rq, &heavy);
}

/* ---- answers ---- */

/* 1 if an ErrorCode field anywhere in m (of struct st) is -1: Kafka's
 * answer for an exception it did not expect, so a bug when the request
 * was valid. */
static int fuzz_server_error(const proto_struct_t *st, const void *m)
{
    for (uint16_t i = 0; i < st->nfields; i++) {
        const proto_field_t *fd = &st->fields[i];
        const char *p = (const char *)m + fd->off;
        if (fd->type == PROTO_T_STRUCT && fd->array) {
            const proto_array_t *a = (const proto_array_t *)p;
            for (int32_t k = 0; k < a->n; k++)
                if (fuzz_server_error(fd->sub, (const char *)a->v + (size_t)k * fd->elem_size))
                    return 1;
        } else if (fd->type == PROTO_T_STRUCT) {
            if (fuzz_server_error(fd->sub, p))
                return 1;
        } else if (fd->type == PROTO_T_INT16 && !fd->array && !strcmp(fd->name, "ErrorCode") &&
                   *(const int16_t *)p == -1) {
            return 1;
        }
    }
    return 0;
}

static void fuzz_check_answer(fuzz_t *f, const fuzz_req_t *rq)
{
    const uint8_t *p = f->ans.p;
    char what[96];
    f->st->answered++;
    if (rq->expect == FUZZ_E_ANY)
        return;
    if (rq->expect == FUZZ_E_CLOSE || rq->key < 0) {
        fuzz_find(f, FUZZ_F_ANSWERED_BAD, rq, "the broker answered it");
        return;
    }
    if (f->ans.len < 4 || be32(p) != rq->corr) {
        snprintf(what, sizeof(what), "answer of %zu bytes with correlation id %d", f->ans.len,
                 f->ans.len < 4 ? -1 : be32(p));
        fuzz_find(f, FUZZ_F_WRONG_CORR, rq, what);
        return;
    }
    void *resp = fuzz_decode_answer(f, rq->key, rq->ver, p, f->ans.len);
    if (!resp) {
        snprintf(what, sizeof(what), "answer of %zu bytes does not decode", f->ans.len);
        fuzz_find(f, FUZZ_F_BAD_ANSWER, rq, what);
        if (f->o->verbose)
            fuzz_hex(stderr, p, f->ans.len < 512 ? f->ans.len : 512);
        return;
    }
    fuzz_note_topics(f, rq->key, resp);
    if (!rq->mutated && fuzz_server_error(proto_msg_lookup(rq->key, 1)->st, resp))
        fuzz_find(f, FUZZ_F_SERVER_ERROR, rq, "UNKNOWN_SERVER_ERROR in the answer");
}

/* Reads what the broker did with rq. Returns 0 when the connection is
 * still usable, -1 when it was closed or dropped. */
static int fuzz_outcome(fuzz_t *f, fuzz_req_t *rq)
{
    int fd = f->fds[rq->slot];
    if (rq->expect == FUZZ_E_NONE) {
        /* a failure closes the connection, and the close would be blamed
         * on the next request: start that one afresh */
        fuzz_drop(f, rq->slot);
        return -1;
    }
    int park = rq->key >= 0 && fuzz_parks(rq->key);
    int wait = rq->expect == FUZZ_E_ANY ? 100 : park ? FUZZ_PARK_MS : FUZZ_WAIT_MS;
    int rc = fuzz_net_recv(fd, &f->ans, wait);
    if (rc == FUZZ_RECV_FRAME) {
        fuzz_check_answer(f, rq);
        if (rq->expect != FUZZ_E_ANY)
            return 0;
    } else if (rc == FUZZ_RECV_TIMEOUT) {
        f->st->timeouts++;
        if (rq->expect != FUZZ_E_ANY && !park)
            fuzz_find(f, FUZZ_F_HANG, rq, "no answer and no close in 5 s");
    } else {
        f->st->closed++;
        if (rq->expect == FUZZ_E_ANSWER)
            fuzz_find(f, FUZZ_F_CLOSED_VALID, rq, "the broker closed the connection");
    }
    fuzz_drop(f, rq->slot);
    return -1;
}

/* ---- the crash file ---- */

static void fuzz_dump(fuzz_t *f)
{
    FILE *out = f->o->crash_out ? fopen(f->o->crash_out, "w") : NULL;
    if (!out) {
        fprintf(stderr, "strand-fuzz: no crash file written (%s)\n",
                f->o->crash_out ? strerror(errno) : "no --crash-out");
        out = stderr;
    }
    fprintf(out, "# strand-fuzz: seed %" PRIu64 ", %ld requests sent; the broker stopped "
                 "answering after these.\n# (the fuzzer's topics are made first, as for this seed)\n# replay: strand-fuzz --replay FILE --bootstrap HOST:PORT\n",
            f->o->seed, f->st->sent);
    for (int i = 0; i < f->nlog; i++) {
        const fuzz_req_t *rq = &f->log[i];
        fprintf(out, "req conn=%d api=%d ver=%d corr=%d expect=%d mut=%s\n", rq->slot, rq->key,
                rq->ver, rq->corr, rq->expect, rq->mutated ? rq->desc : "none");
        fuzz_hex(out, rq->frame.p, rq->frame.len);
    }
    if (out != stderr) {
        fclose(out);
        fprintf(stderr, "strand-fuzz: the last %d requests are in %s\n", f->nlog, f->o->crash_out);
    }
}

/* ---- the loop ---- */

static fuzz_req_t *fuzz_log_next(fuzz_t *f)
{
    if (f->nlog == f->caplog) {
        int cap = f->caplog ? f->caplog * 2 : 128;
        f->log = xrealloc(f->log, (size_t)cap * sizeof(*f->log));
        memset(f->log + f->caplog, 0, (size_t)(cap - f->caplog) * sizeof(*f->log));
        f->caplog = cap;
    }
    return &f->log[f->nlog++];
}

/* Keeps the last FUZZ_KEEP/2 requests once there are FUZZ_KEEP: the
 * crash file then shows the state the batch ran on, not the batch alone.
 * Entries are swapped, not freed, so their frames are reused. */
static void fuzz_log_trim(fuzz_t *f)
{
    int keep = FUZZ_KEEP / 2, drop = f->nlog - keep;
    if (f->nlog <= FUZZ_KEEP)
        return;
    for (int i = 0; i < keep; i++) {
        fuzz_req_t tmp = f->log[i];
        f->log[i] = f->log[drop + i];
        f->log[drop + i] = tmp;
    }
    f->nlog = keep;
}

/* Sends a frame whole, or (3%) in pieces of 1-7 bytes so that the
 * broker's reads end inside size prefixes and headers. */
static int fuzz_send(fuzz_t *f, int fd, const fuzz_req_t *rq)
{
    if (!fuzz_chance(&f->gen.rng, 3))
        return fuzz_net_send(fd, rq->frame.p, rq->frame.len);
    for (size_t off = 0; off < rq->frame.len;) {
        size_t n = 1 + fuzz_below(&f->gen.rng, 7);
        n = n < rq->frame.len - off ? n : rq->frame.len - off;
        if (fuzz_net_send(fd, rq->frame.p + off, n) < 0)
            return -1;
        off += n;
        if (fuzz_chance(&f->gen.rng, 10))
            usleep(1000);
    }
    return 0;
}

/* Sends 1 request (sometimes 2-4 pipelined) on one connection and reads
 * what comes back. Returns -1 when the broker cannot be reached. */
static int fuzz_round(fuzz_t *f)
{
    fuzz_rng_t *r = &f->gen.rng;
    int k = fuzz_chance(r, 90) ? 1 : 2 + (int)fuzz_below(r, 3);
    int slot = fuzz_chance(r, 70) ? 0 : (int)fuzz_below(r, FUZZ_NCONN);
    int first = f->nlog, alive = 1;
    if (fuzz_conn(f, slot) < 0)
        return -1;
    for (int i = 0; i < k; i++) {
        fuzz_req_t *rq = fuzz_log_next(f);
        fuzz_build(f, rq, slot);
        f->st->sent++;
        f->st->mutated += rq->mutated;
        if (f->o->verbose >= 2)
            fprintf(stderr, "strand-fuzz: #%ld api %d v%d expect %d %s\n", f->st->sent, rq->key,
                    rq->ver, rq->expect, rq->desc);
        if (fuzz_send(f, f->fds[slot], rq) < 0) {
            k = i + 1; /* a close for an earlier one: the rest is not sent */
            break;
        }
    }
    for (int i = first; i < first + k && alive; i++)
        alive = fuzz_outcome(f, &f->log[i]) == 0;
    return 0;
}

static int fuzz_done(const fuzz_t *f, double t0)
{
    const fuzz_opts_t *o = f->o;
    return (o->requests > 0 && f->st->sent >= o->requests) ||
           (o->seconds > 0 && fuzz_now() - t0 >= o->seconds);
}

/* 1 if key is in list ("0,3,19"). */
static int fuzz_listed(const char *list, int16_t key)
{
    char want[16];
    size_t l = strlen(list);
    char *padded = xmalloc(l + 3);
    snprintf(want, sizeof(want), ",%d,", key);
    snprintf(padded, l + 3, ",%s,", list);
    int in = strstr(padded, want) != NULL;
    free(padded);
    return in;
}

/* Applies --only and --skip to the advertised APIs. */
static void fuzz_filter_apis(fuzz_t *f)
{
    int n = 0;
    for (int i = 0; i < f->napis; i++)
        if ((!f->o->only || fuzz_listed(f->o->only, f->apis[i].key)) &&
            (!f->o->skip || !fuzz_listed(f->o->skip, f->apis[i].key)))
            f->fuzzed[n++] = i;
    f->nfuzzed = n;
}

static void fuzz_summary(const fuzz_t *f, double secs)
{
    const fuzz_stats_t *st = f->st;
    printf("strand-fuzz: seed %" PRIu64 ": %ld requests (%ld mutated) in %.1f s, %ld answered, "
           "%ld closed, %ld timed out, %ld probes\nstrand-fuzz: findings:",
           f->o->seed, st->sent, st->mutated, secs, st->answered, st->closed, st->timeouts,
           st->probes);
    for (int k = 0; k < FUZZ_F_N; k++)
        printf(" %s %ld%s", fuzz_finding_names[k], st->findings[k], k + 1 < FUZZ_F_N ? "," : "\n");
    fflush(stdout);
}

static int fuzz_setup(fuzz_t *f)
{
    int fd = fuzz_net_connect(f->o->bootstrap, FUZZ_PROBE_MS);
    if (fd < 0) {
        fprintf(stderr, "strand-fuzz: cannot connect to %s\n", f->o->bootstrap);
        return -1;
    }
    if (fuzz_learn_apis(f, fd) < 0) {
        fprintf(stderr, "strand-fuzz: no usable ApiVersions answer from %s\n", f->o->bootstrap);
        close(fd);
        return -1;
    }
    fuzz_make_pool(f, fd);
    close(fd);
    fuzz_filter_apis(f);
    return f->nfuzzed ? 0 : -1;
}

static int fuzz_loop(fuzz_t *f)
{
    double t0 = fuzz_now();
    long last_probe = 0;
    int dead = 0;
    while (!dead && !fuzz_done(f, t0)) {
        if (fuzz_round(f) < 0 || f->st->sent - last_probe >= f->o->batch) {
            dead = fuzz_probe(f) < 0;
            last_probe = f->st->sent;
            if (!dead)
                fuzz_log_trim(f);
        }
    }
    if (!dead)
        dead = fuzz_probe(f) < 0;
    if (dead) {
        f->st->findings[FUZZ_F_DEAD]++;
        fprintf(stderr, "strand-fuzz: FINDING dead: the broker at %s stopped answering\n",
                f->o->bootstrap);
        fuzz_dump(f);
    }
    fuzz_summary(f, fuzz_now() - t0);
    return dead;
}

int fuzz_prepare(const char *bootstrap, uint64_t seed)
{
    fuzz_opts_t o = { .bootstrap = bootstrap, .seed = seed };
    fuzz_stats_t st;
    fuzz_t *f = xcalloc(1, sizeof(*f));
    arena_init(&f->arena, 64 << 10);
    arena_init(&f->darena, 64 << 10);
    f->o = &o;
    f->st = &st;
    int rc = fuzz_setup(f);
    arena_destroy(&f->arena);
    arena_destroy(&f->darena);
    for (int i = 0; i < f->nseen; i++)
        free(f->seen[i]);
    free(f->seen);
    fuzz_bytes_free(&f->ans);
    free(f);
    return rc;
}

int fuzz_run(const fuzz_opts_t *opts, fuzz_stats_t *st)
{
    fuzz_opts_t o = *opts;
    fuzz_t *f = xcalloc(1, sizeof(*f));
    int rc = 3;
    if (o.batch <= 0)
        o.batch = 100;
    if (o.valid_pct < 0 || o.valid_pct > 100)
        o.valid_pct = 20;
    memset(st, 0, sizeof(*st));
    f->o = &o;
    f->st = st;
    for (int i = 0; i < FUZZ_NCONN; i++)
        f->fds[i] = -1;
    arena_init(&f->arena, 64 << 10);
    arena_init(&f->darena, 64 << 10);
    fuzz_gen_init(&f->gen, o.seed, &f->arena);
    f->gen.now_ms = (int64_t)time(NULL) * 1000;
    if (fuzz_setup(f) == 0) {
        int dead = fuzz_loop(f);
        long hard = st->findings[FUZZ_F_BAD_ANSWER] + st->findings[FUZZ_F_WRONG_CORR];
        long soft = st->findings[FUZZ_F_CLOSED_VALID] + st->findings[FUZZ_F_ANSWERED_BAD] +
                    st->findings[FUZZ_F_HANG] + st->findings[FUZZ_F_SERVER_ERROR];
        rc = dead ? 2 : hard || (o.strict && soft) ? 1 : 0;
    }
    if (o.topics_out)
        fuzz_write_topics(f);
    st->topics_seen = f->nseen;
    for (int i = 0; i < FUZZ_NCONN; i++)
        fuzz_drop(f, i);
    for (int i = 0; i < f->caplog; i++)
        fuzz_bytes_free(&f->log[i].frame);
    for (int i = 0; i < f->nseen; i++)
        free(f->seen[i]);
    free(f->seen);
    free(f->log);
    fuzz_bytes_free(&f->prev);
    fuzz_bytes_free(&f->ans);
    arena_destroy(&f->arena);
    arena_destroy(&f->darena);
    free(f);
    return rc;
}

/* The voter set of a dynamic quorum and its control records (layout in
 * raft_voters.h), through the codecs generated from
 * protocol/records/control/voters_record.def and
 * k_raft_version_record.def. */
#include "cluster/raft_voters.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log/log.h"
#include "log/log_batch.h"
#include "proto/proto_gen.h"
#include "util/arena.h"
#include "util/mem.h"

void raft_voters_init(raft_voters_t *vs)
{
    vs->v = NULL;
    vs->n = 0;
}

void raft_voters_free(raft_voters_t *vs)
{
    free(vs->v);
    raft_voters_init(vs);
}

void raft_voters_add(raft_voters_t *vs, const raft_voter_t *v)
{
    vs->v = xrealloc(vs->v, (size_t)(vs->n + 1) * sizeof(*vs->v));
    vs->v[vs->n++] = *v;
}

void raft_voters_copy(raft_voters_t *dst, const raft_voters_t *src)
{
    raft_voters_free(dst);
    for (int i = 0; i < src->n; i++)
        raft_voters_add(dst, &src->v[i]);
}

const raft_voter_t *raft_voters_find(const raft_voters_t *vs, int32_t id)
{
    for (int i = 0; i < vs->n; i++)
        if (vs->v[i].id == id)
            return &vs->v[i];
    return NULL;
}

static int rv_endpoint_equal(const raft_endpoint_t *a, const raft_endpoint_t *b)
{
    return a->port == b->port && !strcmp(a->name, b->name) && !strcmp(a->host, b->host);
}

static int rv_voter_equal(const raft_voter_t *a, const raft_voter_t *b)
{
    if (a->id != b->id || memcmp(a->dir_id, b->dir_id, 16) || a->neps != b->neps ||
        a->kv_min != b->kv_min || a->kv_max != b->kv_max)
        return 0;
    for (int i = 0; i < a->neps; i++)
        if (!rv_endpoint_equal(&a->eps[i], &b->eps[i]))
            return 0;
    return 1;
}

int raft_voters_equal(const raft_voters_t *a, const raft_voters_t *b)
{
    if (a->n != b->n)
        return 0;
    for (int i = 0; i < a->n; i++)
        if (!rv_voter_equal(&a->v[i], &b->v[i]))
            return 0;
    return 1;
}

/* ---- the records ---- */

void raft_voters_encode(const raft_voters_t *vs, buf_t *out)
{
    proto_rec_voters_record_t rec;
    proto_rec_voters_record_voter_t *pv = xcalloc((size_t)vs->n + 1, sizeof(*pv));
    proto_rec_voters_record_endpoint_t *pe =
        xcalloc((size_t)vs->n * RAFT_VOTER_MAX_ENDPOINTS + 1, sizeof(*pe));

    proto_rec_voters_record_init(&rec);
    for (int i = 0; i < vs->n; i++) {
        const raft_voter_t *v = &vs->v[i];
        proto_rec_voters_record_endpoint_t *e = pe + i * RAFT_VOTER_MAX_ENDPOINTS;
        proto_rec_voters_record_voter_init(&pv[i]);
        pv[i].voter_id = v->id;
        memcpy(pv[i].voter_directory_id.b, v->dir_id, 16);
        for (int j = 0; j < v->neps; j++) {
            e[j].name = (proto_str_t){v->eps[j].name, (int32_t)strlen(v->eps[j].name)};
            e[j].host = (proto_str_t){v->eps[j].host, (int32_t)strlen(v->eps[j].host)};
            e[j].port = v->eps[j].port;
        }
        pv[i].endpoints.n = v->neps;
        pv[i].endpoints.v = e;
        pv[i].k_raft_version_feature.min_supported_version = v->kv_min;
        pv[i].k_raft_version_feature.max_supported_version = v->kv_max;
    }
    rec.voters.n = vs->n;
    rec.voters.v = pv;
    proto_rec_voters_record_write(&rec, 0, out);
    free(pe);
    free(pv);
}

static int rv_str(char *dst, size_t cap, proto_str_t s)
{
    if (s.len < 0 || (size_t)s.len >= cap)
        return -1;
    memcpy(dst, s.p, (size_t)s.len);
    dst[s.len] = '\0';
    return 0;
}

/* One decoded voter into v. */
static int rv_voter_from(raft_voter_t *v, const proto_rec_voters_record_voter_t *pv)
{
    memset(v, 0, sizeof(*v));
    v->id = pv->voter_id;
    memcpy(v->dir_id, pv->voter_directory_id.b, 16);
    v->kv_min = pv->k_raft_version_feature.min_supported_version;
    v->kv_max = pv->k_raft_version_feature.max_supported_version;
    if (pv->endpoints.n > RAFT_VOTER_MAX_ENDPOINTS)
        return -1;
    v->neps = pv->endpoints.n;
    for (int j = 0; j < v->neps; j++) {
        const proto_rec_voters_record_endpoint_t *e = &pv->endpoints.v[j];
        if (rv_str(v->eps[j].name, sizeof(v->eps[j].name), e->name) < 0 ||
            rv_str(v->eps[j].host, sizeof(v->eps[j].host), e->host) < 0)
            return -1;
        v->eps[j].port = e->port;
    }
    return 0;
}

int raft_voters_decode(raft_voters_t *vs, const uint8_t *p, size_t len)
{
    proto_rec_voters_record_t rec;
    int16_t version;
    arena_t arena;
    raft_voter_t v;
    int rc = 0;

    arena_init(&arena, 1024);
    if (proto_rec_voters_record_read(&rec, &version, p, len, &arena) != 0)
        rc = -1;
    for (int i = 0; rc == 0 && i < rec.voters.n; i++) {
        rc = rv_voter_from(&v, &rec.voters.v[i]);
        if (rc == 0)
            raft_voters_add(vs, &v);
    }
    arena_destroy(&arena);
    if (rc < 0)
        raft_voters_free(vs);
    return rc;
}

void raft_kraft_version_encode(int16_t level, buf_t *out)
{
    proto_rec_k_raft_version_record_t rec;

    proto_rec_k_raft_version_record_init(&rec);
    rec.k_raft_version = level;
    proto_rec_k_raft_version_record_write(&rec, 0, out);
}

int raft_kraft_version_decode(const uint8_t *p, size_t len)
{
    proto_rec_k_raft_version_record_t rec;
    int16_t version;
    arena_t arena;
    int rc;

    arena_init(&arena, 256);
    rc = proto_rec_k_raft_version_record_read(&rec, &version, p, len, &arena);
    arena_destroy(&arena);
    return rc != 0 || rec.k_raft_version < 0 ? -1 : rec.k_raft_version;
}

/* ---- the sets by offset ---- */

void raft_voters_hist_init(raft_voters_hist_t *h)
{
    memset(h, 0, sizeof(*h));
}

void raft_voters_hist_free(raft_voters_hist_t *h)
{
    raft_voters_hist_truncate(h, INT64_MIN);
    free(h->e);
    raft_voters_hist_init(h);
}

void raft_voters_hist_put(raft_voters_hist_t *h, int64_t offset, int16_t kv,
                          const raft_voters_t *vs)
{
    const raft_voters_entry_t *prev;
    raft_voters_entry_t e;

    raft_voters_hist_truncate(h, offset);
    prev = raft_voters_hist_last(h);
    memset(&e, 0, sizeof(e));
    e.offset = offset;
    e.kraft_version = kv;
    raft_voters_init(&e.set);
    if (vs || (prev && prev->has_set)) {
        raft_voters_copy(&e.set, vs ? vs : &prev->set);
        e.has_set = 1;
    }
    if (h->n == h->cap) {
        h->cap = h->cap ? 2 * h->cap : 4;
        h->e = xrealloc(h->e, (size_t)h->cap * sizeof(*h->e));
    }
    h->e[h->n++] = e;
}

const raft_voters_entry_t *raft_voters_hist_at(const raft_voters_hist_t *h, int64_t offset)
{
    for (int i = h->n - 1; i >= 0; i--)
        if (h->e[i].offset <= offset)
            return &h->e[i];
    return NULL;
}

const raft_voters_entry_t *raft_voters_hist_last(const raft_voters_hist_t *h)
{
    return h->n ? &h->e[h->n - 1] : NULL;
}

void raft_voters_hist_truncate(raft_voters_hist_t *h, int64_t end_offset)
{
    while (h->n > 0 && h->e[h->n - 1].offset >= end_offset)
        raft_voters_free(&h->e[--h->n].set);
}

void raft_voters_hist_trim(raft_voters_hist_t *h, int64_t start_offset)
{
    int keep = 0;

    while (keep + 1 < h->n && h->e[keep + 1].offset <= start_offset)
        keep++;
    for (int i = 0; i < keep; i++)
        raft_voters_free(&h->e[i].set);
    memmove(h->e, h->e + keep, (size_t)(h->n - keep) * sizeof(*h->e));
    h->n -= keep;
}

int raft_voters_hist_ctl(const raft_voters_hist_t *h, int64_t end_offset, meta_snap_ctl_t ctl[2],
                         buf_t *scratch)
{
    const raft_voters_entry_t *e = raft_voters_hist_at(h, end_offset - 1);
    size_t start = scratch->len, kv_end;

    if (!e || e->kraft_version < 1)
        return 0;
    raft_kraft_version_encode(e->kraft_version, scratch);
    kv_end = scratch->len;
    if (e->has_set)
        raft_voters_encode(&e->set, scratch);
    /* the pointers after both appends: the buffer may have moved */
    ctl[0] = (meta_snap_ctl_t){PROTO_REC_K_RAFT_VERSION_RECORD, scratch->p + start,
                               kv_end - start};
    if (!e->has_set)
        return 1;
    ctl[1] = (meta_snap_ctl_t){PROTO_REC_VOTERS_RECORD, scratch->p + kv_end,
                               scratch->len - kv_end};
    return 2;
}

/* ---- from the log ---- */

/* The control records of one batch at p[0..size) into h. */
static void rv_load_batch(raft_voters_hist_t *h, const uint8_t *p, size_t size)
{
    log_batch_iter_t *it = log_batch_iter_new(p, size);
    const raft_voters_entry_t *last;
    log_record_t rec;
    raft_voters_t vs;
    int kv;

    while (it && log_batch_iter_next(it, &rec) == 1) {
        if (rec.key_len != 4 || rec.value_len < 0)
            continue;
        last = raft_voters_hist_last(h);
        if (rec.key[3] == PROTO_REC_K_RAFT_VERSION_RECORD &&
            (kv = raft_kraft_version_decode(rec.value, (size_t)rec.value_len)) >= 0) {
            raft_voters_hist_put(h, rec.offset, (int16_t)kv, NULL);
        } else if (rec.key[3] == PROTO_REC_VOTERS_RECORD) {
            raft_voters_init(&vs);
            if (raft_voters_decode(&vs, rec.value, (size_t)rec.value_len) == 0)
                raft_voters_hist_put(h, rec.offset, last ? last->kraft_version : 1, &vs);
            raft_voters_free(&vs);
        }
    }
    log_batch_iter_free(it);
}

int64_t raft_voters_hist_scan(raft_voters_hist_t *h, const uint8_t *p, size_t len, int64_t next)
{
    log_batch_hdr_t hdr;
    int64_t size;

    while (len >= LOG_BATCH_HDR_SIZE && (size = log_batch_total_size(p, len)) > 0 &&
           (size_t)size <= len && log_batch_hdr_parse(p, len, &hdr) == 0) {
        if (LOG_BATCH_ATTR_IS_CONTROL(hdr.attributes))
            rv_load_batch(h, p, (size_t)size);
        next = hdr.base_offset + hdr.last_offset_delta + 1;
        p += size;
        len -= (size_t)size;
    }
    return next;
}

int raft_voters_hist_load(raft_voters_hist_t *h, log_t *log, int64_t from)
{
    int64_t off = from, leo = log_end_offset(log);

    while (off < leo) {
        log_read_result_t rr;
        if (log_read(log, off, 1 << 20, 1, leo, &rr) != 0 || rr.len <= 0) {
            if (rr.fd >= 0)
                close(rr.fd);
            errno = EIO;
            return -1;
        }
        uint8_t *p = xmalloc((size_t)rr.len);
        ssize_t got = pread(rr.fd, p, (size_t)rr.len, (off_t)rr.file_pos);
        close(rr.fd);
        int64_t next = got == rr.len ? raft_voters_hist_scan(h, p, (size_t)rr.len, off) : off;
        free(p);
        if (next <= off) {
            errno = EIO;
            return -1;
        }
        off = next;
    }
    return 0;
}

/* txn: see txn.h. */
#include "testlib/txn.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log/log_batch.h"
#include "testlib/wire.h"

/* ---- producing ---- */

static void tl_txn_dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *msg, void *opaque)
{
    tl_txn_slot *slot = msg->_private;
    (void)rk;
    (void)opaque;
    if (!slot)
        return;
    slot->err = msg->err;
    slot->offset = msg->err ? -1 : msg->offset;
    slot->done = 1;
}

rd_kafka_conf_t *tl_txn_conf(const char *bootstrap)
{
    rd_kafka_conf_t *conf = tl_conf(bootstrap);
    rd_kafka_conf_set_dr_msg_cb(conf, tl_txn_dr_cb);
    return conf;
}

rd_kafka_resp_err_t tl_txn_try_send(rd_kafka_t *rk, const char *topic, int32_t p,
                                    const char *value, tl_txn_slot *slot)
{
    slot->done = 0;
    slot->err = RD_KAFKA_RESP_ERR_NO_ERROR;
    slot->offset = -1;
    return rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(p),
                             RD_KAFKA_V_VALUE((void *)value, strlen(value)),
                             RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_OPAQUE(slot),
                             RD_KAFKA_V_END);
}

void tl_txn_send(rd_kafka_t *rk, const char *topic, int32_t p, const char *value,
                 tl_txn_slot *slot)
{
    rd_kafka_resp_err_t err = tl_txn_try_send(rk, topic, p, value, slot);
    TL_ASSERT(err == RD_KAFKA_RESP_ERR_NO_ERROR, "produce '%s' to %s-%d: %s", value, topic,
              (int)p, rd_kafka_err2name(err));
}

/* ---- consuming ---- */

tl_txn_reader *tl_txn_reader_new(const char *bootstrap, const char *topic, int nparts, int iso)
{
    tl_txn_reader *r = calloc(1, sizeof(*r));
    rd_kafka_conf_t *conf = tl_conf(bootstrap);
    rd_kafka_topic_partition_list_t *parts = rd_kafka_topic_partition_list_new(nparts);
    char group[300];

    TL_ASSERT(r, "out of memory");
    r->topic = strdup(topic);
    r->nparts = nparts;
    r->iso = iso;
    r->parts = calloc((size_t)nparts, sizeof(*r->parts));
    for (int p = 0; p < nparts; p++)
        r->parts[p].eof = -1;
    snprintf(group, sizeof(group), "%s-reader-%d", topic, iso);
    tl_conf_set(conf, "group.id", group);
    tl_conf_set(conf, "enable.auto.commit", "false");
    tl_conf_set(conf, "enable.auto.offset.store", "false");
    tl_conf_set(conf, "enable.partition.eof", "true");
    tl_conf_set(conf, "fetch.wait.max.ms", "100");
    tl_conf_set(conf, "isolation.level",
                iso == TL_READ_COMMITTED ? "read_committed" : "read_uncommitted");
    r->rk = tl_new(RD_KAFKA_CONSUMER, conf);
    for (int p = 0; p < nparts; p++)
        rd_kafka_topic_partition_list_add(parts, topic, p)->offset = RD_KAFKA_OFFSET_BEGINNING;
    TL_ASSERT_EQ(rd_kafka_assign(r->rk, parts), 0);
    rd_kafka_topic_partition_list_destroy(parts);
    return r;
}

/* Every partition at its end: at until[p] or beyond, or (until NULL) an
 * end reported since the poll began (eofs0). */
static int tl_txn_reader_at_end(const tl_txn_reader *r, const int64_t *until, const int *eofs0)
{
    for (int p = 0; p < r->nparts; p++)
        if (until ? r->parts[p].eofs == 0 || r->parts[p].eof < until[p]
                  : r->parts[p].eofs == eofs0[p])
            return 0;
    return 1;
}

static void tl_txn_reader_add(tl_txn_reader *r, const rd_kafka_message_t *msg)
{
    const char *lvl = r->iso == TL_READ_COMMITTED ? "read_committed" : "read_uncommitted";
    int p = msg->partition;
    TL_ASSERT(p >= 0 && p < r->nparts, "%s: message from partition %d", lvl, p);
    tl_txn_part *part = &r->parts[p];
    TL_ASSERT(part->n == 0 || msg->offset > part->v[part->n - 1].offset,
              "%s: %s-%d: offset %" PRId64 " after %" PRId64, lvl, r->topic, p, msg->offset,
              part->v[part->n - 1].offset);
    if (part->n == part->cap) {
        part->cap = part->cap ? 2 * part->cap : 64;
        part->v = realloc(part->v, (size_t)part->cap * sizeof(*part->v));
        TL_ASSERT(part->v, "out of memory");
    }
    tl_txn_msg *m = &part->v[part->n++];
    m->offset = msg->offset;
    m->len = msg->len;
    m->value = NULL;
    if (msg->payload) {
        m->value = malloc(msg->len + 1);
        memcpy(m->value, msg->payload, msg->len);
        m->value[msg->len] = '\0';
    }
}

int tl_txn_reader_poll(tl_txn_reader *r, const int64_t *until, double secs)
{
    double deadline = tl_now() + secs;
    const char *lvl = r->iso == TL_READ_COMMITTED ? "read_committed" : "read_uncommitted";
    int *eofs0 = calloc((size_t)r->nparts, sizeof(*eofs0));

    for (int p = 0; p < r->nparts; p++)
        eofs0[p] = r->parts[p].eofs;
    while (!tl_txn_reader_at_end(r, until, eofs0)) {
        double left = deadline - tl_now();
        if (left <= 0) {
            free(eofs0);
            return 0;
        }
        int ms = left < 0.1 ? 1 + (int)(left * 1000) : 100;
        rd_kafka_message_t *msg = rd_kafka_consumer_poll(r->rk, ms);
        if (!msg)
            continue;
        if (msg->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
            TL_ASSERT(msg->partition >= 0 && msg->partition < r->nparts, "%s: EOF of partition %d",
                      lvl, (int)msg->partition);
            r->parts[msg->partition].eof = msg->offset;
            r->parts[msg->partition].eofs++;
        } else {
            TL_ASSERT(!msg->err, "%s consumer of %s: %s", lvl, r->topic,
                      rd_kafka_message_errstr(msg));
            tl_txn_reader_add(r, msg);
        }
        rd_kafka_message_destroy(msg);
    }
    free(eofs0);
    return 1;
}

int tl_txn_reader_count(const tl_txn_reader *r)
{
    int n = 0;
    for (int p = 0; p < r->nparts; p++)
        n += r->parts[p].n;
    return n;
}

void tl_txn_reader_expect(const tl_txn_reader *r, int p, int n, const int64_t *offsets,
                          char *const *values, const char *what)
{
    const tl_txn_part *part = &r->parts[p];
    for (int i = 0; i < n && i < part->n; i++) {
        TL_ASSERT(part->v[i].offset == offsets[i],
                  "%s: %s-%d: message %d at offset %" PRId64 " ('%s'), expected %" PRId64
                  " ('%s')", what, r->topic, p, i, part->v[i].offset,
                  part->v[i].value ? part->v[i].value : "(null)", offsets[i], values[i]);
        TL_ASSERT(part->v[i].value && part->v[i].len == strlen(values[i]) &&
                      memcmp(part->v[i].value, values[i], part->v[i].len) == 0,
                  "%s: %s-%d: offset %" PRId64 " holds '%s', expected '%s'", what, r->topic, p,
                  offsets[i], part->v[i].value ? part->v[i].value : "(null)", values[i]);
    }
    TL_ASSERT(part->n == n, "%s: %s-%d: %d messages, expected %d (the next: offset %" PRId64
              " '%s')", what, r->topic, p, part->n, n,
              part->n > n ? part->v[n].offset : -1,
              part->n > n && part->v[n].value ? part->v[n].value : "-");
}

void tl_txn_reader_free(tl_txn_reader *r)
{
    rd_kafka_consumer_close(r->rk);
    rd_kafka_destroy(r->rk);
    for (int p = 0; p < r->nparts; p++) {
        for (int i = 0; i < r->parts[p].n; i++)
            free(r->parts[p].v[i].value);
        free(r->parts[p].v);
    }
    free(r->parts);
    free(r->topic);
    free(r);
}

/* ---- raw requests ---- */

#define S tl_wire_str

static int tl_txn_connect(const char *bootstrap)
{
    int fd = tl_connect(bootstrap, 20000);
    TL_ASSERT(fd >= 0, "connect %s", bootstrap);
    return fd;
}

int64_t tl_txn_list_offset(const char *bootstrap, const char *topic, int32_t p, int iso,
                           int64_t ts, int16_t ver)
{
    proto_list_offsets_req_t r;
    proto_list_offsets_req_list_offsets_topic_t t;
    proto_list_offsets_req_list_offsets_partition_t part;
    proto_list_offsets_resp_t resp;
    arena_t arena;
    int fd = tl_txn_connect(bootstrap);
    int64_t off;

    arena_init(&arena, 1 << 14);
    proto_list_offsets_req_init(&r);
    proto_list_offsets_req_list_offsets_topic_init(&t);
    proto_list_offsets_req_list_offsets_partition_init(&part);
    part.partition_index = p;
    part.timestamp = ts;
    t.name = S(topic);
    t.partitions.n = 1;
    t.partitions.v = &part;
    r.replica_id = -1;
    r.isolation_level = (int8_t)iso;
    r.topics.n = 1;
    r.topics.v = &t;
    r.timeout_ms = 10000;
    TL_WIRE_CALL(fd, &arena, list_offsets, 2, ver, &r, &resp);
    TL_ASSERT(resp.topics.n == 1 && resp.topics.v[0].partitions.n == 1,
              "ListOffsets v%d: %d topics in the answer", ver, resp.topics.n);
    const proto_list_offsets_resp_list_offsets_partition_response_t *pr =
        &resp.topics.v[0].partitions.v[0];
    TL_ASSERT(pr->error_code == 0, "ListOffsets v%d %s-%d isolation %d: error %d", ver, topic,
              (int)p, iso, pr->error_code);
    off = pr->offset;
    arena_destroy(&arena);
    close(fd);
    return off;
}

void tl_txn_latest(const char *bootstrap, const char *topic, int32_t p, int64_t *committed,
                   int64_t *uncommitted)
{
    *committed = tl_txn_list_offset(bootstrap, topic, p, TL_READ_COMMITTED, -1, 7);
    *uncommitted = tl_txn_list_offset(bootstrap, topic, p, TL_READ_UNCOMMITTED, -1, 7);
}

static char *tl_txn_copy(const uint8_t *p, int32_t len, size_t *lenp)
{
    char *s;
    *lenp = len < 0 ? 0 : (size_t)len;
    if (len < 0)
        return NULL;
    s = malloc((size_t)len + 1);
    TL_ASSERT(s, "out of memory");
    memcpy(s, p, (size_t)len);
    s[len] = '\0';
    return s;
}

/* Decodes one whole batch at p into *b: its header, its records, and for
 * a control batch the control record's key (version, type) and value
 * (version, coordinator epoch). */
static void tl_txn_batch_decode(const uint8_t *p, size_t len, tl_txn_batch *b)
{
    log_batch_hdr_t h;
    log_record_t rec;
    log_batch_iter_t *it;
    int rc, cap;

    TL_ASSERT(log_batch_hdr_parse(p, len, &h) == 0, "fetch: bad batch header");
    TL_ASSERT(log_batch_crc_ok(p, len), "fetch: batch at %" PRId64 ": bad CRC", h.base_offset);
    memset(b, 0, sizeof(*b));
    b->base_offset = h.base_offset;
    b->last_offset_delta = h.last_offset_delta;
    b->attributes = h.attributes;
    b->producer_id = h.producer_id;
    b->producer_epoch = h.producer_epoch;
    b->base_sequence = h.base_sequence;
    b->transactional = LOG_BATCH_ATTR_IS_TRANSACTIONAL(h.attributes);
    b->control = LOG_BATCH_ATTR_IS_CONTROL(h.attributes);
    b->ctrl_type = -1;
    b->ctrl_coordinator_epoch = -1;
    cap = h.records_count > 0 ? h.records_count : 1;
    b->offsets = calloc((size_t)cap, sizeof(*b->offsets));
    b->values = calloc((size_t)cap, sizeof(*b->values));
    b->value_len = calloc((size_t)cap, sizeof(*b->value_len));
    b->keys = calloc((size_t)cap, sizeof(*b->keys));
    b->key_len = calloc((size_t)cap, sizeof(*b->key_len));
    it = log_batch_iter_new(p, len);
    TL_ASSERT(it, "fetch: batch at %" PRId64 ": cannot iterate", h.base_offset);
    while ((rc = log_batch_iter_next(it, &rec)) == 1) {
        TL_ASSERT(b->nrec < cap, "fetch: batch at %" PRId64 ": more records than its count %d",
                  h.base_offset, h.records_count);
        b->offsets[b->nrec] = rec.offset;
        b->values[b->nrec] = tl_txn_copy(rec.value, rec.value_len, &b->value_len[b->nrec]);
        b->keys[b->nrec] = tl_txn_copy(rec.key, rec.key_len, &b->key_len[b->nrec]);
        if (b->control && b->nrec == 0) {
            TL_ASSERT(rec.key_len == 4, "control record key of %d bytes", rec.key_len);
            b->ctrl_type = (int)tl_get_i16(rec.key + 2);
            TL_ASSERT(tl_get_i16(rec.key) == 0, "control record key version %d",
                      tl_get_i16(rec.key));
            TL_ASSERT(rec.value_len == 6, "control record value of %d bytes", rec.value_len);
            b->ctrl_coordinator_epoch = tl_get_i32(rec.value + 2);
        }
        b->nrec++;
    }
    TL_ASSERT(rc == 0, "fetch: batch at %" PRId64 ": corrupt records", h.base_offset);
    TL_ASSERT(b->nrec == h.records_count, "fetch: batch at %" PRId64 ": %d records, count %d",
              h.base_offset, b->nrec, h.records_count);
    log_batch_iter_free(it);
}

void tl_txn_fetch_raw(const char *bootstrap, const char *topic, int32_t p, int64_t offset,
                      int iso, int16_t ver, tl_txn_fetch *out)
{
    proto_fetch_req_t r;
    proto_fetch_req_fetch_topic_t t;
    proto_fetch_req_fetch_partition_t part;
    proto_fetch_resp_t resp;
    arena_t arena;
    int fd = tl_txn_connect(bootstrap);

    memset(out, 0, sizeof(*out));
    arena_init(&arena, 1 << 16);
    proto_fetch_req_init(&r);
    proto_fetch_req_fetch_topic_init(&t);
    proto_fetch_req_fetch_partition_init(&part);
    part.partition = p;
    part.fetch_offset = offset;
    part.partition_max_bytes = 1 << 20;
    t.topic = S(topic);
    t.partitions.n = 1;
    t.partitions.v = &part;
    r.replica_id = -1;
    r.max_wait_ms = 100;
    r.min_bytes = 1;
    r.max_bytes = 1 << 20;
    r.isolation_level = (int8_t)iso;
    r.session_id = 0;
    r.session_epoch = -1;
    r.topics.n = 1;
    r.topics.v = &t;
    r.rack_id = S("");
    TL_WIRE_CALL(fd, &arena, fetch, 1, ver, &r, &resp);
    TL_ASSERT(resp.error_code == 0, "Fetch v%d: error %d", ver, resp.error_code);
    TL_ASSERT(resp.responses.n == 1 && resp.responses.v[0].partitions.n == 1,
              "Fetch v%d: %d topics in the answer", ver, resp.responses.n);
    const proto_fetch_resp_partition_data_t *pd = &resp.responses.v[0].partitions.v[0];
    out->error = pd->error_code;
    out->high_watermark = pd->high_watermark;
    out->last_stable_offset = pd->last_stable_offset;
    out->log_start_offset = pd->log_start_offset;
    out->n_aborted = pd->aborted_transactions.n;
    TL_ASSERT(out->n_aborted <= TL_TXN_MAX_ABORTED, "Fetch: %d aborted transactions", out->n_aborted);
    for (int i = 0; i < out->n_aborted; i++) {
        out->aborted_pid[i] = pd->aborted_transactions.v[i].producer_id;
        out->aborted_first[i] = pd->aborted_transactions.v[i].first_offset;
    }
    /* Whole batches only: with 1 MB allowed, the small logs of these
     * tests come whole, so a cut batch is an error too. */
    const uint8_t *rp = pd->records.p;
    size_t left = pd->records.len > 0 ? (size_t)pd->records.len : 0;
    int cap = 0;
    while (left > 0) {
        int64_t total = log_batch_total_size(rp, left);
        TL_ASSERT(total > 0 && (size_t)total <= left, "Fetch v%d: a cut batch (%zu bytes left)",
                  ver, left);
        if (out->nbatch == cap) {
            cap = cap ? 2 * cap : 16;
            out->batches = realloc(out->batches, (size_t)cap * sizeof(*out->batches));
            TL_ASSERT(out->batches, "out of memory");
        }
        tl_txn_batch_decode(rp, (size_t)total, &out->batches[out->nbatch++]);
        rp += total;
        left -= (size_t)total;
    }
    arena_destroy(&arena);
    close(fd);
}

void tl_txn_fetch_free(tl_txn_fetch *f)
{
    for (int i = 0; i < f->nbatch; i++) {
        tl_txn_batch *b = &f->batches[i];
        for (int j = 0; j < b->nrec; j++) {
            free(b->values[j]);
            free(b->keys[j]);
        }
        free(b->offsets);
        free(b->values);
        free(b->value_len);
        free(b->keys);
        free(b->key_len);
    }
    free(f->batches);
    memset(f, 0, sizeof(*f));
}

/* FindCoordinator v3 of group (its error is not checked: the caller
 * retries the request it wanted). */
static void tl_txn_find_group(int fd, arena_t *arena, const char *group)
{
    proto_find_coordinator_req_t r;
    proto_find_coordinator_resp_t resp;
    proto_find_coordinator_req_init(&r);
    r.key = S(group);
    r.key_type = 0;
    TL_WIRE_CALL(fd, arena, find_coordinator, 10, 3, &r, &resp);
}

void tl_txn_offset_fetch(const char *bootstrap, const char *group, const char *topic,
                         int nparts, int require_stable, int64_t *offsets, int16_t *errors,
                         char **metadata)
{
    proto_offset_fetch_req_t r;
    proto_offset_fetch_req_offset_fetch_request_topic_t t;
    proto_offset_fetch_resp_t resp;
    arena_t arena;
    int32_t idx[256];
    int fd = tl_txn_connect(bootstrap);

    TL_ASSERT(nparts <= 256, "%d partitions", nparts);
    arena_init(&arena, 1 << 14);
    proto_offset_fetch_req_init(&r);
    proto_offset_fetch_req_offset_fetch_request_topic_init(&t);
    for (int p = 0; p < nparts; p++)
        idx[p] = p;
    t.name = S(topic);
    t.partition_indexes.n = nparts;
    t.partition_indexes.v = idx;
    r.group_id = S(group);
    r.topics.n = 1;
    r.topics.v = &t;
    r.require_stable = require_stable != 0;
    /* A group's first question: Kafka creates __consumer_offsets on the
     * first FindCoordinator and answers NOT_COORDINATOR or
     * COORDINATOR_LOAD_IN_PROGRESS until the group's partition is loaded. */
    for (double deadline = tl_now() + 30;;) {
        TL_WIRE_CALL(fd, &arena, offset_fetch, 9, 7, &r, &resp);
        if (resp.error_code != 14 && resp.error_code != 15 && resp.error_code != 16)
            break;
        TL_ASSERT(tl_now() < deadline, "OffsetFetch v7 of %s: error %d for 30 s", group,
                  resp.error_code);
        tl_txn_find_group(fd, &arena, group);
        usleep(100 * 1000);
    }
    TL_ASSERT(resp.error_code == 0, "OffsetFetch v7 of %s: error %d", group, resp.error_code);
    TL_ASSERT(resp.topics.n == 1 && resp.topics.v[0].partitions.n == nparts,
              "OffsetFetch v7 of %s: %d topics", group, resp.topics.n);
    for (int i = 0; i < nparts; i++) {
        const proto_offset_fetch_resp_offset_fetch_response_partition_t *pr =
            &resp.topics.v[0].partitions.v[i];
        TL_ASSERT(pr->partition_index == i, "OffsetFetch: partition %d at %d",
                  pr->partition_index, i);
        offsets[i] = pr->committed_offset;
        errors[i] = pr->error_code;
        if (metadata) {
            size_t l;
            metadata[i] = tl_txn_copy((const uint8_t *)pr->metadata.p, pr->metadata.len, &l);
        }
    }
    arena_destroy(&arena);
    close(fd);
}

int16_t tl_txn_end_txn_raw(const char *bootstrap, const char *txn_id, int64_t pid,
                           int16_t epoch, int commit, int16_t ver)
{
    static int32_t corr = 7000;
    size_t idlen = strlen(txn_id);
    int flexible = ver >= 3;
    tl_req r;
    uint8_t *frame;
    int fd = tl_txn_connect(bootstrap), n;
    int16_t err;

    TL_ASSERT(ver >= 0 && ver <= 3 && idlen < 127, "EndTxn v%d of '%s'", ver, txn_id);
    tl_req_header(&r, 26, ver, ++corr, "strand-test");
    if (flexible) {
        tl_req_i8(&r, 0); /* header tags */
        tl_req_i8(&r, (int8_t)(idlen + 1)); /* compact string, one-byte varint */
    } else {
        tl_req_i16(&r, (int16_t)idlen);
    }
    tl_req_bytes(&r, txn_id, idlen);
    tl_req_i32(&r, (int32_t)(pid >> 32));
    tl_req_i32(&r, (int32_t)(pid & 0xffffffff));
    tl_req_i16(&r, epoch);
    tl_req_i8(&r, commit ? 1 : 0);
    if (flexible)
        tl_req_i8(&r, 0); /* body tags */
    tl_req_finish(&r);
    TL_ASSERT(tl_send_all(fd, r.data, r.len) == 0, "EndTxn v%d: send", ver);
    n = tl_recv_frame(fd, &frame, 20000);
    /* correlation id, [header tags], throttle_time_ms, error_code */
    TL_ASSERT(n >= 4 + flexible + 6, "EndTxn v%d: no answer (%d)", ver, n);
    TL_ASSERT(tl_get_i32(frame) == corr, "EndTxn v%d: answer to %d", ver, tl_get_i32(frame));
    err = tl_get_i16(frame + 4 + flexible + 4);
    free(frame);
    close(fd);
    return err;
}

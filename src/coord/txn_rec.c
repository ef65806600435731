/* __transaction_state record codecs over the generated ones (the framing,
 * int16 version | body, is at the top of src/proto/proto_rec.c). */
#include "coord/txn_rec.h"

#include <stdlib.h>
#include <string.h>

#include "proto/proto_rec.h"
#include "util/arena.h"
#include "util/mem.h"

#define TXN_REC_VALUE_VERSION 0

typedef proto_rec_transaction_log_value_partitions_schema_t txn_rec_pschema_t;

void txn_rec_key(buf_t *out, const char *id, size_t id_len)
{
    proto_rec_transaction_log_key_t k;

    proto_rec_transaction_log_key_init(&k);
    k.transactional_id = (proto_str_t){id, (int32_t)id_len};
    proto_rec_transaction_log_key_write(&k, 0, out);
}

/* Partitions grouped by topic, topics in the order they first appear. */
static int txn_rec_group(arena_t *a, const txn_transit_t *to, txn_rec_pschema_t **out)
{
    txn_rec_pschema_t *v = arena_calloc(a, (size_t)to->ntps + 1, sizeof(*v));
    int n = 0;

    for (int i = 0; i < to->ntps; i++) {
        const txn_tp_t *tp = &to->tps[i];
        int k = 0;
        while (k < n && strcmp(v[k].topic.p, tp->topic) != 0)
            k++;
        if (k == n) {
            proto_rec_transaction_log_value_partitions_schema_init(&v[n]);
            v[n].topic = (proto_str_t){tp->topic, (int32_t)strlen(tp->topic)};
            v[n].partition_ids.v = arena_calloc(a, (size_t)to->ntps, sizeof(int32_t));
            n++;
        }
        v[k].partition_ids.v[v[k].partition_ids.n++] = tp->partition;
    }
    *out = v;
    return n;
}

void txn_rec_value(buf_t *out, const txn_transit_t *to)
{
    proto_rec_transaction_log_value_t r;
    arena_t arena;

    arena_init(&arena, 1024);
    proto_rec_transaction_log_value_init(&r);
    r.producer_id = to->producer_id;
    r.previous_producer_id = to->prev_producer_id;
    r.next_producer_id = to->next_producer_id;
    r.producer_epoch = to->epoch;
    r.transaction_timeout_ms = to->timeout_ms;
    r.transaction_status = (int8_t)to->state;
    if (to->state == TXN_EMPTY) {
        r.transaction_partitions.n = -1;
    } else {
        r.transaction_partitions.n = txn_rec_group(&arena, to, &r.transaction_partitions.v);
    }
    r.transaction_last_update_timestamp_ms = to->update_ms;
    r.transaction_start_timestamp_ms = to->start_ms;
    r.client_transaction_version = to->client_version;
    proto_rec_transaction_log_value_write(&r, TXN_REC_VALUE_VERSION, out);
    arena_destroy(&arena);
}

int txn_rec_key_decode(const uint8_t *p, size_t len, char **id, size_t *id_len)
{
    proto_rec_transaction_log_key_t k;
    int16_t version;
    arena_t arena;
    int rc;

    arena_init(&arena, 256);
    proto_rec_transaction_log_key_init(&k);
    rc = proto_rec_transaction_log_key_read(&k, &version, p, len, &arena);
    if (rc == 0 && k.transactional_id.len >= 0) {
        *id = txn_strdup(k.transactional_id.p, (size_t)k.transactional_id.len);
        *id_len = (size_t)k.transactional_id.len;
    } else {
        rc = -1;
    }
    arena_destroy(&arena);
    return rc;
}

static int txn_rec_tps(const proto_rec_transaction_log_value_t *r, txn_transit_t *to)
{
    int n = 0;

    for (int32_t i = 0; i < r->transaction_partitions.n; i++)
        n += r->transaction_partitions.v[i].partition_ids.n > 0
                 ? r->transaction_partitions.v[i].partition_ids.n
                 : 0;
    to->tps = n ? xcalloc((size_t)n, sizeof(*to->tps)) : NULL;
    to->ntps = 0;
    for (int32_t i = 0; i < r->transaction_partitions.n; i++) {
        const txn_rec_pschema_t *ps = &r->transaction_partitions.v[i];
        if (ps->topic.len < 0)
            return -1;
        for (int32_t j = 0; j < ps->partition_ids.n; j++) {
            to->tps[to->ntps].topic = xstrndup(ps->topic.p, (size_t)ps->topic.len);
            to->tps[to->ntps++].partition = ps->partition_ids.v[j];
        }
    }
    return 0;
}

int txn_rec_value_decode(const uint8_t *p, size_t len, txn_transit_t *to)
{
    proto_rec_transaction_log_value_t r;
    int16_t version;
    arena_t arena;
    int rc;

    memset(to, 0, sizeof(*to));
    arena_init(&arena, 1024);
    proto_rec_transaction_log_value_init(&r);
    rc = proto_rec_transaction_log_value_read(&r, &version, p, len, &arena);
    if (rc == 0 && (r.transaction_status < TXN_EMPTY || r.transaction_status > TXN_PREPARE_EPOCH_FENCE))
        rc = -1;
    if (rc == 0) {
        to->state = (txn_state_t)r.transaction_status;
        to->producer_id = r.producer_id;
        to->prev_producer_id = r.previous_producer_id;
        to->next_producer_id = r.next_producer_id;
        to->epoch = r.producer_epoch;
        to->last_epoch = -1; /* not in the record: Kafka loads none either */
        to->timeout_ms = r.transaction_timeout_ms;
        to->update_ms = r.transaction_last_update_timestamp_ms;
        to->start_ms = r.transaction_start_timestamp_ms;
        to->client_version = r.client_transaction_version;
        rc = txn_rec_tps(&r, to);
    }
    if (rc != 0) {
        txn_tps_free(to->tps, to->ntps);
        to->tps = NULL;
        to->ntps = 0;
        rc = -1;
    }
    arena_destroy(&arena);
    return rc;
}

/* Offsets committed in transactions (TxnOffsetCommit), as Kafka's
 * OffsetMetadataManager keeps them: written to the group's partition as
 * the producer's transactional records, held apart from the committed
 * offsets until the transaction's marker reaches that partition, then
 * committed (unless a commit made after them won) or dropped. Replay does
 * the same from the log: records of a transactional batch are pending,
 * its producer's marker decides them. */
#include <stdlib.h>
#include <string.h>

#include "coord/grp_int.h"
#include "coord/grp_rec.h"
#include "util/cstr.h"
#include "util/mem.h"

static void grp_txn_off_free(grp_txn_off_t *o)
{
    free(o->topic);
    free(o->metadata);
}

void grp_txn_offs_free(grp_coord_t *c, grp_t *g)
{
    for (int i = 0; i < g->ntxn_offs; i++)
        grp_txn_off_free(&g->txn_offs[i]);
    c->txn_pending[g->part] -= g->ntxn_offs;
    free(g->txn_offs);
    g->txn_offs = NULL;
    g->ntxn_offs = g->captxn_offs = 0;
}

void grp_txn_put(grp_coord_t *c, grp_t *g, int64_t pid, const char *topic,
                        size_t topic_len, int32_t partition, int64_t offset, int32_t epoch,
                        const char *md, size_t md_len, int64_t commit_ts)
{
    grp_txn_off_t *o = NULL;

    for (int i = 0; i < g->ntxn_offs && !o; i++)
        if (g->txn_offs[i].producer_id == pid && g->txn_offs[i].partition == partition &&
            strlen(g->txn_offs[i].topic) == topic_len &&
            !memcmp(g->txn_offs[i].topic, topic, topic_len))
            o = &g->txn_offs[i];
    if (o) {
        grp_txn_off_free(o);
    } else {
        if (g->ntxn_offs == g->captxn_offs) {
            g->captxn_offs = g->captxn_offs ? g->captxn_offs * 2 : 4;
            g->txn_offs = xrealloc(g->txn_offs, sizeof(*g->txn_offs) * (size_t)g->captxn_offs);
        }
        o = &g->txn_offs[g->ntxn_offs++];
        c->txn_pending[g->part]++;
    }
    o->producer_id = pid;
    o->topic = xstrndup(topic, topic_len);
    o->partition = partition;
    o->offset = offset;
    o->leader_epoch = epoch;
    o->metadata = xstrndup(md ? md : "", md_len);
    o->metadata_len = (int32_t)md_len;
    o->commit_ts = commit_ts;
    o->seq = ++c->offset_seq;
}

bool grp_txn_pending(const grp_t *g, const char *topic, size_t topic_len, int32_t partition)
{
    for (int i = 0; i < g->ntxn_offs; i++)
        if (g->txn_offs[i].partition == partition && strlen(g->txn_offs[i].topic) == topic_len &&
            !memcmp(g->txn_offs[i].topic, topic, topic_len))
            return true;
    return false;
}

/* ---- TxnOffsetCommit ---- */

void grp_txn_commit(grp_coord_t *c, grp_commit_req_t *req, int64_t pid, int16_t epoch)
{
    req->retention_ms = -1; /* a transaction's offsets carry no retention */
    grp_commit_as(c, req, pid, epoch);
}

/* ---- the transaction's end ---- */

/* Decides g's pending offsets of pid. */
static void grp_txn_decide(grp_coord_t *c, grp_t *g, int64_t pid, bool commit)
{
    int kept = 0;

    for (int i = 0; i < g->ntxn_offs; i++) {
        grp_txn_off_t *o = &g->txn_offs[i];
        if (o->producer_id != pid) {
            g->txn_offs[kept++] = *o;
            continue;
        }
        const grp_offset_t *cur = grp_offset_get(g, o->topic, strlen(o->topic), o->partition);
        if (commit && (!cur || cur->seq < o->seq))
            grp_offset_put(g, o->topic, strlen(o->topic), o->partition, o->offset,
                           o->leader_epoch, o->metadata, (size_t)o->metadata_len, o->commit_ts,
                           -1);
        grp_txn_off_free(o);
        c->txn_pending[g->part]--;
    }
    g->ntxn_offs = kept;
}

void grp_txn_complete(grp_coord_t *c, int32_t part, int64_t pid, bool commit)
{
    size_t pos = 0;
    void *v;

    if (part < 0 || part >= c->cfg.num_partitions || !c->txn_pending[part])
        return;
    while (smap_next(&c->groups, &pos, NULL, NULL, &v)) {
        grp_t *g = v;
        if (g->part == part && g->ntxn_offs)
            grp_txn_decide(c, g, pid, commit);
    }
}

int grp_load_txn_record(grp_coord_t *c, int32_t part, int64_t pid, const uint8_t *key,
                        int32_t key_len, const uint8_t *value, int32_t value_len)
{
    grp_rec_key_t k;
    grp_rec_offset_t v;

    if (!key || key_len < 0 || grp_rec_key_decode(key, (size_t)key_len, &k) < 0)
        return -1;
    if (k.version != GRP_REC_KEY_OFFSET && k.version != GRP_REC_KEY_OFFSET_V0)
        return 0; /* a transaction writes offsets only */
    if (!value || value_len < 0 || grp_rec_offset_decode(value, (size_t)value_len, &v) < 0)
        return -1;
    char *id = cstr_dup(k.group.p, (size_t)k.group.len);
    grp_t *g = grp_get(c, id);
    if (!g)
        g = grp_create(c, id);
    free(id);
    (void)part;
    grp_txn_put(c, g, pid, k.topic.p, (size_t)k.topic.len, k.partition, v.offset, v.leader_epoch,
                v.metadata.p, v.metadata.len < 0 ? 0 : (size_t)v.metadata.len, v.commit_ts);
    return 0;
}

/* Metadata record codecs. Byte layout of one record value (a record of a
 * __cluster_metadata batch has a null key and this as its value; every
 * record type we write is "flexible" from version 0, so strings and
 * arrays use the compact forms and every struct ends in a tagged-field
 * section):
 *
 *   uvarint frameVersion (= 1) | uvarint apiKey | uvarint version | body
 *
 *   compact string  uvarint (len + 1), bytes            (0 = null)
 *   compact array   uvarint (n + 1), elements           (0 = null)
 *   uuid            16 bytes, big-endian
 *   tagged section  uvarint count, count x (uvarint tag, uvarint size,
 *                   size bytes), tags ascending; a field equal to its
 *                   default is not written
 *
 * Bodies (field order = wire order; [tag N] fields are in the section):
 *   TopicRecord (2) v0          Name string, TopicId uuid
 *   PartitionRecord (3) v0-2    PartitionId i32, TopicId uuid,
 *                               Replicas [i32], Isr [i32],
 *                               RemovingReplicas [i32], AddingReplicas [i32],
 *                               Leader i32, LeaderEpoch i32,
 *                               PartitionEpoch i32, Directories [uuid] (v1+),
 *                               [tag 0] LeaderRecoveryState i8 (default 0),
 *                               [tag 1] EligibleLeaderReplicas [i32] (v2+),
 *                               [tag 2] LastKnownElr [i32] (v2+)
 *   ConfigRecord (4) v0         ResourceType i8, ResourceName string,
 *                               Name string, Value nullable string
 *   PartitionChangeRecord (5) v0-2  PartitionId i32, TopicId uuid,
 *                               [tag 0] Isr, [1] Leader i32 (default -2),
 *                               [2] Replicas, [3] RemovingReplicas,
 *                               [4] AddingReplicas, [5] LeaderRecoveryState
 *                               i8 (default -1), [6] Elr (v2+),
 *                               [7] LastKnownElr (v2+), [8] Directories (v1+)
 *   RemoveTopicRecord (9) v0    TopicId uuid
 *   FeatureLevelRecord (12) v0  Name string, FeatureLevel i16
 *   NoOpRecord (20) v0          (empty)
 */
#include "cluster/meta_rec.h"

#include <string.h>

#include "util/rd.h"

#define META_FRAME_VERSION 1

static const meta_i32s_t meta_null_i32s = {-1, NULL};

void meta_rec_init(meta_rec_t *rec, int16_t type)
{
    memset(rec, 0, sizeof(*rec));
    rec->type = type;
    switch (type) {
    case META_REC_PARTITION:
        rec->version = META_PART_REC_VERSION;
        rec->u.part.partition_id = -1;
        rec->u.part.leader = -1;
        rec->u.part.leader_epoch = -1;
        rec->u.part.partition_epoch = -1;
        rec->u.part.elr = rec->u.part.last_known_elr = meta_null_i32s;
        break;
    case META_REC_PARTITION_CHANGE:
        rec->version = META_PART_CHANGE_REC_VERSION;
        rec->u.change.partition_id = -1;
        rec->u.change.leader = -2;
        rec->u.change.leader_recovery_state = -1;
        rec->u.change.isr = rec->u.change.replicas = meta_null_i32s;
        rec->u.change.removing = rec->u.change.adding = meta_null_i32s;
        rec->u.change.elr = rec->u.change.last_known_elr = meta_null_i32s;
        rec->u.change.directories.n = -1;
        break;
    case META_REC_CONFIG:
        rec->u.config.value.len = -1;
        break;
    default:
        break;
    }
}

const char *meta_rec_type_name(int16_t type)
{
    switch (type) {
    case META_REC_TOPIC: return "TopicRecord";
    case META_REC_PARTITION: return "PartitionRecord";
    case META_REC_CONFIG: return "ConfigRecord";
    case META_REC_PARTITION_CHANGE: return "PartitionChangeRecord";
    case META_REC_REMOVE_TOPIC: return "RemoveTopicRecord";
    case META_REC_FEATURE_LEVEL: return "FeatureLevelRecord";
    case META_REC_NOOP: return "NoOpRecord";
    default: return "?";
    }
}

/* ---- encoding ---- */

static void meta_put_str(buf_t *out, meta_str_t s)
{
    if (s.len < 0) {
        buf_put_uvarint(out, 0);
        return;
    }
    buf_put_uvarint(out, (uint32_t)s.len + 1);
    buf_put(out, s.p, (size_t)s.len);
}

static void meta_put_i32s(buf_t *out, meta_i32s_t a)
{
    if (a.n < 0) {
        buf_put_uvarint(out, 0);
        return;
    }
    buf_put_uvarint(out, (uint32_t)a.n + 1);
    for (int32_t i = 0; i < a.n; i++)
        buf_put_i32(out, a.v[i]);
}

static void meta_put_uuids(buf_t *out, meta_uuids_t a)
{
    if (a.n < 0) {
        buf_put_uvarint(out, 0);
        return;
    }
    buf_put_uvarint(out, (uint32_t)a.n + 1);
    for (int32_t i = 0; i < a.n; i++)
        buf_put(out, a.v[i], 16);
}

/* A tagged-field section under construction: fields are encoded into
 * their own buffers first because each needs its size in front. */
typedef struct meta_tags_s {
    int n;
    int tag[10];
    buf_t data[10];
} meta_tags_t;

static buf_t *meta_tag_begin(meta_tags_t *t, int tag)
{
    t->tag[t->n] = tag;
    buf_init(&t->data[t->n]);
    return &t->data[t->n++];
}

/* Writes the section (tags were added in ascending order) and frees it. */
static void meta_tags_end(meta_tags_t *t, buf_t *out)
{
    buf_put_uvarint(out, (uint32_t)t->n);
    for (int i = 0; i < t->n; i++) {
        buf_put_uvarint(out, (uint32_t)t->tag[i]);
        buf_put_uvarint(out, (uint32_t)t->data[i].len);
        buf_put(out, t->data[i].p, t->data[i].len);
        buf_free(&t->data[i]);
    }
    t->n = 0;
}

static void meta_encode_part(const meta_part_rec_t *r, int16_t ver, buf_t *out)
{
    meta_tags_t tags = {0};

    buf_put_i32(out, r->partition_id);
    buf_put(out, r->topic_id, 16);
    meta_put_i32s(out, r->replicas);
    meta_put_i32s(out, r->isr);
    meta_put_i32s(out, r->removing);
    meta_put_i32s(out, r->adding);
    buf_put_i32(out, r->leader);
    buf_put_i32(out, r->leader_epoch);
    buf_put_i32(out, r->partition_epoch);
    if (ver >= 1)
        meta_put_uuids(out, r->directories);
    if (r->leader_recovery_state != 0)
        buf_put_i8(meta_tag_begin(&tags, 0), r->leader_recovery_state);
    if (ver >= 2 && r->elr.n >= 0)
        meta_put_i32s(meta_tag_begin(&tags, 1), r->elr);
    if (ver >= 2 && r->last_known_elr.n >= 0)
        meta_put_i32s(meta_tag_begin(&tags, 2), r->last_known_elr);
    meta_tags_end(&tags, out);
}

static void meta_encode_change(const meta_part_change_rec_t *r, int16_t ver, buf_t *out)
{
    meta_tags_t tags = {0};

    buf_put_i32(out, r->partition_id);
    buf_put(out, r->topic_id, 16);
    if (r->isr.n >= 0)
        meta_put_i32s(meta_tag_begin(&tags, 0), r->isr);
    if (r->leader != -2)
        buf_put_i32(meta_tag_begin(&tags, 1), r->leader);
    if (r->replicas.n >= 0)
        meta_put_i32s(meta_tag_begin(&tags, 2), r->replicas);
    if (r->removing.n >= 0)
        meta_put_i32s(meta_tag_begin(&tags, 3), r->removing);
    if (r->adding.n >= 0)
        meta_put_i32s(meta_tag_begin(&tags, 4), r->adding);
    if (r->leader_recovery_state != -1)
        buf_put_i8(meta_tag_begin(&tags, 5), r->leader_recovery_state);
    if (ver >= 2 && r->elr.n >= 0)
        meta_put_i32s(meta_tag_begin(&tags, 6), r->elr);
    if (ver >= 2 && r->last_known_elr.n >= 0)
        meta_put_i32s(meta_tag_begin(&tags, 7), r->last_known_elr);
    if (ver >= 1 && r->directories.n >= 0)
        meta_put_uuids(meta_tag_begin(&tags, 8), r->directories);
    meta_tags_end(&tags, out);
}

void meta_rec_encode(const meta_rec_t *rec, buf_t *out)
{
    buf_put_uvarint(out, META_FRAME_VERSION);
    buf_put_uvarint(out, (uint32_t)rec->type);
    buf_put_uvarint(out, (uint32_t)rec->version);
    switch (rec->type) {
    case META_REC_TOPIC:
        meta_put_str(out, rec->u.topic.name);
        buf_put(out, rec->u.topic.id, 16);
        break;
    case META_REC_PARTITION:
        meta_encode_part(&rec->u.part, rec->version, out);
        return; /* wrote its own tagged section */
    case META_REC_PARTITION_CHANGE:
        meta_encode_change(&rec->u.change, rec->version, out);
        return;
    case META_REC_CONFIG:
        buf_put_i8(out, rec->u.config.resource_type);
        meta_put_str(out, rec->u.config.resource_name);
        meta_put_str(out, rec->u.config.name);
        meta_put_str(out, rec->u.config.value);
        break;
    case META_REC_REMOVE_TOPIC:
        buf_put(out, rec->u.remove_topic_id, 16);
        break;
    case META_REC_FEATURE_LEVEL:
        meta_put_str(out, rec->u.feature.name);
        buf_put_i16(out, rec->u.feature.level);
        break;
    default: /* NoOpRecord: empty body */
        break;
    }
    buf_put_uvarint(out, 0); /* no tagged fields */
}

/* ---- decoding ---- */

static meta_str_t meta_rd_str(rd_t *rd)
{
    meta_str_t s = {NULL, -1};
    uint32_t n = rd_uvarint(rd);
    if (n == 0)
        return s;
    const uint8_t *p = rd_take(rd, n - 1);
    if (p) {
        s.p = (const char *)p;
        s.len = (int32_t)(n - 1);
    }
    return s;
}

/* Array lengths are checked against the bytes left before allocating, so
 * a lying count cannot make us allocate more than the record holds. */
static int32_t meta_rd_count(rd_t *rd, size_t elem_size)
{
    uint32_t n = rd_uvarint(rd);
    if (n == 0)
        return -1;
    if ((size_t)(n - 1) > rd_remain(rd) / elem_size) {
        rd->err = 1;
        return -1;
    }
    return (int32_t)(n - 1);
}

static meta_i32s_t meta_rd_i32s(rd_t *rd, arena_t *arena)
{
    meta_i32s_t a = {meta_rd_count(rd, 4), NULL};
    if (a.n > 0) {
        a.v = arena_alloc(arena, (size_t)a.n * sizeof(int32_t));
        for (int32_t i = 0; i < a.n; i++)
            a.v[i] = rd_i32(rd);
    }
    return a;
}

static meta_uuids_t meta_rd_uuids(rd_t *rd, arena_t *arena)
{
    meta_uuids_t a = {meta_rd_count(rd, 16), NULL};
    if (a.n > 0) {
        a.v = arena_alloc(arena, (size_t)a.n * 16);
        for (int32_t i = 0; i < a.n; i++) {
            const uint8_t *q = rd_take(rd, 16);
            if (q)
                memcpy(a.v[i], q, 16);
        }
    }
    return a;
}

static void meta_rd_uuid(rd_t *rd, uint8_t out[16])
{
    const uint8_t *q = rd_take(rd, 16);
    if (q)
        memcpy(out, q, 16);
}

/* Reads a tagged section, handing each field to fn with a reader over
 * exactly its bytes; unknown tags are skipped. */
typedef void meta_tag_fn(void *ctx, uint32_t tag, rd_t *sub, arena_t *arena);

static void meta_rd_tags(rd_t *rd, meta_tag_fn *fn, void *ctx, arena_t *arena)
{
    uint32_t n = rd_uvarint(rd);
    for (uint32_t i = 0; i < n && !rd->err; i++) {
        uint32_t tag = rd_uvarint(rd);
        uint32_t size = rd_uvarint(rd);
        const uint8_t *q = rd_take(rd, size);
        if (!q)
            return;
        if (fn) {
            rd_t sub;
            rd_init(&sub, q, size);
            fn(ctx, tag, &sub, arena);
            if (sub.err)
                rd->err = 1;
        }
    }
}

static void meta_part_tag(void *ctx, uint32_t tag, rd_t *sub, arena_t *arena)
{
    meta_part_rec_t *r = ctx;
    if (tag == 0)
        r->leader_recovery_state = rd_i8(sub);
    else if (tag == 1)
        r->elr = meta_rd_i32s(sub, arena);
    else if (tag == 2)
        r->last_known_elr = meta_rd_i32s(sub, arena);
}

static void meta_change_tag(void *ctx, uint32_t tag, rd_t *sub, arena_t *arena)
{
    meta_part_change_rec_t *r = ctx;
    switch (tag) {
    case 0: r->isr = meta_rd_i32s(sub, arena); break;
    case 1: r->leader = rd_i32(sub); break;
    case 2: r->replicas = meta_rd_i32s(sub, arena); break;
    case 3: r->removing = meta_rd_i32s(sub, arena); break;
    case 4: r->adding = meta_rd_i32s(sub, arena); break;
    case 5: r->leader_recovery_state = rd_i8(sub); break;
    case 6: r->elr = meta_rd_i32s(sub, arena); break;
    case 7: r->last_known_elr = meta_rd_i32s(sub, arena); break;
    case 8: r->directories = meta_rd_uuids(sub, arena); break;
    default: break;
    }
}

static void meta_decode_part(meta_part_rec_t *r, int16_t ver, rd_t *rd, arena_t *arena)
{
    r->partition_id = rd_i32(rd);
    meta_rd_uuid(rd, r->topic_id);
    r->replicas = meta_rd_i32s(rd, arena);
    r->isr = meta_rd_i32s(rd, arena);
    r->removing = meta_rd_i32s(rd, arena);
    r->adding = meta_rd_i32s(rd, arena);
    r->leader = rd_i32(rd);
    r->leader_epoch = rd_i32(rd);
    r->partition_epoch = rd_i32(rd);
    if (ver >= 1)
        r->directories = meta_rd_uuids(rd, arena);
    meta_rd_tags(rd, meta_part_tag, r, arena);
}

/* Highest version we understand per type; -1 for unknown types. */
static int16_t meta_max_version(int16_t type)
{
    switch (type) {
    case META_REC_PARTITION: return META_PART_REC_VERSION;
    case META_REC_PARTITION_CHANGE: return META_PART_CHANGE_REC_VERSION;
    case META_REC_TOPIC:
    case META_REC_CONFIG:
    case META_REC_REMOVE_TOPIC:
    case META_REC_FEATURE_LEVEL:
    case META_REC_NOOP: return 0;
    default: return -1;
    }
}

static void meta_decode_body(meta_rec_t *rec, rd_t *rd, arena_t *arena)
{
    switch (rec->type) {
    case META_REC_TOPIC:
        rec->u.topic.name = meta_rd_str(rd);
        meta_rd_uuid(rd, rec->u.topic.id);
        break;
    case META_REC_PARTITION:
        meta_decode_part(&rec->u.part, rec->version, rd, arena);
        return;
    case META_REC_PARTITION_CHANGE:
        rec->u.change.partition_id = rd_i32(rd);
        meta_rd_uuid(rd, rec->u.change.topic_id);
        meta_rd_tags(rd, meta_change_tag, &rec->u.change, arena);
        return;
    case META_REC_CONFIG:
        rec->u.config.resource_type = rd_i8(rd);
        rec->u.config.resource_name = meta_rd_str(rd);
        rec->u.config.name = meta_rd_str(rd);
        rec->u.config.value = meta_rd_str(rd);
        break;
    case META_REC_REMOVE_TOPIC:
        meta_rd_uuid(rd, rec->u.remove_topic_id);
        break;
    case META_REC_FEATURE_LEVEL:
        rec->u.feature.name = meta_rd_str(rd);
        rec->u.feature.level = rd_i16(rd);
        break;
    default:
        break;
    }
    meta_rd_tags(rd, NULL, NULL, arena);
}

int meta_rec_decode(meta_rec_t *rec, const uint8_t *p, size_t len, arena_t *arena)
{
    rd_t rd;

    rd_init(&rd, p, len);
    uint32_t frame = rd_uvarint(&rd);
    uint32_t type = rd_uvarint(&rd);
    uint32_t ver = rd_uvarint(&rd);
    if (rd.err || frame != META_FRAME_VERSION || type > INT16_MAX || ver > INT16_MAX)
        return -1;
    meta_rec_init(rec, (int16_t)type);
    rec->version = (int16_t)ver;
    int16_t max = meta_max_version(rec->type);
    if (max < 0 || rec->version > max)
        return 1;
    meta_decode_body(rec, &rd, arena);
    if (rd.err)
        return -1;
    /* Strings a replayer keeps must not be null where the schema says
     * they cannot be. */
    if (rec->type == META_REC_TOPIC && rec->u.topic.name.len < 0)
        return -1;
    if (rec->type == META_REC_CONFIG &&
        (rec->u.config.resource_name.len < 0 || rec->u.config.name.len < 0))
        return -1;
    if (rec->type == META_REC_FEATURE_LEVEL && rec->u.feature.name.len < 0)
        return -1;
    return 0;
}

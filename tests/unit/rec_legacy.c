/* rec_legacy: see rec_legacy.h. The code below is the earlier
 * src/cluster/meta_rec.c and src/coord/grp_rec.c with only the names
 * changed; their byte layouts are now those of protocol/records/. */
#include "tests/unit/rec_legacy.h"

#include <string.h>

#include "util/rd.h"

#define LEGACY_META_FRAME_VERSION 1

static const legacy_meta_i32s_t legacy_meta_null_i32s = {-1, NULL};

void legacy_meta_rec_init(legacy_meta_rec_t *rec, int16_t type)
{
    memset(rec, 0, sizeof(*rec));
    rec->type = type;
    switch (type) {
    case LEGACY_META_REC_PARTITION:
        rec->version = LEGACY_META_PART_REC_VERSION;
        rec->u.part.partition_id = -1;
        rec->u.part.leader = -1;
        rec->u.part.leader_epoch = -1;
        rec->u.part.partition_epoch = -1;
        rec->u.part.elr = rec->u.part.last_known_elr = legacy_meta_null_i32s;
        break;
    case LEGACY_META_REC_PARTITION_CHANGE:
        rec->version = LEGACY_META_PART_CHANGE_REC_VERSION;
        rec->u.change.partition_id = -1;
        rec->u.change.leader = -2;
        rec->u.change.leader_recovery_state = -1;
        rec->u.change.isr = rec->u.change.replicas = legacy_meta_null_i32s;
        rec->u.change.removing = rec->u.change.adding = legacy_meta_null_i32s;
        rec->u.change.elr = rec->u.change.last_known_elr = legacy_meta_null_i32s;
        rec->u.change.directories.n = -1;
        break;
    case LEGACY_META_REC_CONFIG:
        rec->u.config.value.len = -1;
        break;
    default:
        break;
    }
}

const char *legacy_meta_rec_type_name(int16_t type)
{
    switch (type) {
    case LEGACY_META_REC_TOPIC: return "TopicRecord";
    case LEGACY_META_REC_PARTITION: return "PartitionRecord";
    case LEGACY_META_REC_CONFIG: return "ConfigRecord";
    case LEGACY_META_REC_PARTITION_CHANGE: return "PartitionChangeRecord";
    case LEGACY_META_REC_REMOVE_TOPIC: return "RemoveTopicRecord";
    case LEGACY_META_REC_FEATURE_LEVEL: return "FeatureLevelRecord";
    case LEGACY_META_REC_NOOP: return "NoOpRecord";
    default: return "?";
    }
}

/* ---- encoding ---- */

static void legacy_meta_put_str(buf_t *out, legacy_meta_str_t s)
{
    if (s.len < 0) {
        buf_put_uvarint(out, 0);
        return;
    }
    buf_put_uvarint(out, (uint32_t)s.len + 1);
    buf_put(out, s.p, (size_t)s.len);
}

static void legacy_meta_put_i32s(buf_t *out, legacy_meta_i32s_t a)
{
    if (a.n < 0) {
        buf_put_uvarint(out, 0);
        return;
    }
    buf_put_uvarint(out, (uint32_t)a.n + 1);
    for (int32_t i = 0; i < a.n; i++)
        buf_put_i32(out, a.v[i]);
}

static void legacy_meta_put_uuids(buf_t *out, legacy_meta_uuids_t a)
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
typedef struct legacy_meta_tags_s {
    int n;
    int tag[10];
    buf_t data[10];
} legacy_meta_tags_t;

static buf_t *legacy_meta_tag_begin(legacy_meta_tags_t *t, int tag)
{
    t->tag[t->n] = tag;
    buf_init(&t->data[t->n]);
    return &t->data[t->n++];
}

/* Writes the section (tags were added in ascending order) and frees it. */
static void legacy_meta_tags_end(legacy_meta_tags_t *t, buf_t *out)
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

static void legacy_meta_encode_part(const legacy_meta_part_rec_t *r, int16_t ver, buf_t *out)
{
    legacy_meta_tags_t tags = {0};

    buf_put_i32(out, r->partition_id);
    buf_put(out, r->topic_id, 16);
    legacy_meta_put_i32s(out, r->replicas);
    legacy_meta_put_i32s(out, r->isr);
    legacy_meta_put_i32s(out, r->removing);
    legacy_meta_put_i32s(out, r->adding);
    buf_put_i32(out, r->leader);
    buf_put_i32(out, r->leader_epoch);
    buf_put_i32(out, r->partition_epoch);
    if (ver >= 1)
        legacy_meta_put_uuids(out, r->directories);
    if (r->leader_recovery_state != 0)
        buf_put_i8(legacy_meta_tag_begin(&tags, 0), r->leader_recovery_state);
    if (ver >= 2 && r->elr.n >= 0)
        legacy_meta_put_i32s(legacy_meta_tag_begin(&tags, 1), r->elr);
    if (ver >= 2 && r->last_known_elr.n >= 0)
        legacy_meta_put_i32s(legacy_meta_tag_begin(&tags, 2), r->last_known_elr);
    legacy_meta_tags_end(&tags, out);
}

static void legacy_meta_encode_change(const legacy_meta_part_change_rec_t *r, int16_t ver, buf_t *out)
{
    legacy_meta_tags_t tags = {0};

    buf_put_i32(out, r->partition_id);
    buf_put(out, r->topic_id, 16);
    if (r->isr.n >= 0)
        legacy_meta_put_i32s(legacy_meta_tag_begin(&tags, 0), r->isr);
    if (r->leader != -2)
        buf_put_i32(legacy_meta_tag_begin(&tags, 1), r->leader);
    if (r->replicas.n >= 0)
        legacy_meta_put_i32s(legacy_meta_tag_begin(&tags, 2), r->replicas);
    if (r->removing.n >= 0)
        legacy_meta_put_i32s(legacy_meta_tag_begin(&tags, 3), r->removing);
    if (r->adding.n >= 0)
        legacy_meta_put_i32s(legacy_meta_tag_begin(&tags, 4), r->adding);
    if (r->leader_recovery_state != -1)
        buf_put_i8(legacy_meta_tag_begin(&tags, 5), r->leader_recovery_state);
    if (ver >= 2 && r->elr.n >= 0)
        legacy_meta_put_i32s(legacy_meta_tag_begin(&tags, 6), r->elr);
    if (ver >= 2 && r->last_known_elr.n >= 0)
        legacy_meta_put_i32s(legacy_meta_tag_begin(&tags, 7), r->last_known_elr);
    if (ver >= 1 && r->directories.n >= 0)
        legacy_meta_put_uuids(legacy_meta_tag_begin(&tags, 8), r->directories);
    legacy_meta_tags_end(&tags, out);
}

void legacy_meta_rec_encode(const legacy_meta_rec_t *rec, buf_t *out)
{
    buf_put_uvarint(out, LEGACY_META_FRAME_VERSION);
    buf_put_uvarint(out, (uint32_t)rec->type);
    buf_put_uvarint(out, (uint32_t)rec->version);
    switch (rec->type) {
    case LEGACY_META_REC_TOPIC:
        legacy_meta_put_str(out, rec->u.topic.name);
        buf_put(out, rec->u.topic.id, 16);
        break;
    case LEGACY_META_REC_PARTITION:
        legacy_meta_encode_part(&rec->u.part, rec->version, out);
        return; /* wrote its own tagged section */
    case LEGACY_META_REC_PARTITION_CHANGE:
        legacy_meta_encode_change(&rec->u.change, rec->version, out);
        return;
    case LEGACY_META_REC_CONFIG:
        buf_put_i8(out, rec->u.config.resource_type);
        legacy_meta_put_str(out, rec->u.config.resource_name);
        legacy_meta_put_str(out, rec->u.config.name);
        legacy_meta_put_str(out, rec->u.config.value);
        break;
    case LEGACY_META_REC_REMOVE_TOPIC:
        buf_put(out, rec->u.remove_topic_id, 16);
        break;
    case LEGACY_META_REC_FEATURE_LEVEL:
        legacy_meta_put_str(out, rec->u.feature.name);
        buf_put_i16(out, rec->u.feature.level);
        break;
    default: /* NoOpRecord: empty body */
        break;
    }
    buf_put_uvarint(out, 0); /* no tagged fields */
}

/* ---- decoding ---- */

static legacy_meta_str_t legacy_meta_rd_str(rd_t *rd)
{
    legacy_meta_str_t s = {NULL, -1};
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
static int32_t legacy_meta_rd_count(rd_t *rd, size_t elem_size)
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

static legacy_meta_i32s_t legacy_meta_rd_i32s(rd_t *rd, arena_t *arena)
{
    legacy_meta_i32s_t a = {legacy_meta_rd_count(rd, 4), NULL};
    if (a.n > 0) {
        a.v = arena_alloc(arena, (size_t)a.n * sizeof(int32_t));
        for (int32_t i = 0; i < a.n; i++)
            a.v[i] = rd_i32(rd);
    }
    return a;
}

static legacy_meta_uuids_t legacy_meta_rd_uuids(rd_t *rd, arena_t *arena)
{
    legacy_meta_uuids_t a = {legacy_meta_rd_count(rd, 16), NULL};
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

static void legacy_meta_rd_uuid(rd_t *rd, uint8_t out[16])
{
    const uint8_t *q = rd_take(rd, 16);
    if (q)
        memcpy(out, q, 16);
}

/* Reads a tagged section, handing each field to fn with a reader over
 * exactly its bytes; unknown tags are skipped. */
typedef void legacy_meta_tag_fn(void *ctx, uint32_t tag, rd_t *sub, arena_t *arena);

static void legacy_meta_rd_tags(rd_t *rd, legacy_meta_tag_fn *fn, void *ctx, arena_t *arena)
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

static void legacy_meta_part_tag(void *ctx, uint32_t tag, rd_t *sub, arena_t *arena)
{
    legacy_meta_part_rec_t *r = ctx;
    if (tag == 0)
        r->leader_recovery_state = rd_i8(sub);
    else if (tag == 1)
        r->elr = legacy_meta_rd_i32s(sub, arena);
    else if (tag == 2)
        r->last_known_elr = legacy_meta_rd_i32s(sub, arena);
}

static void legacy_meta_change_tag(void *ctx, uint32_t tag, rd_t *sub, arena_t *arena)
{
    legacy_meta_part_change_rec_t *r = ctx;
    switch (tag) {
    case 0: r->isr = legacy_meta_rd_i32s(sub, arena); break;
    case 1: r->leader = rd_i32(sub); break;
    case 2: r->replicas = legacy_meta_rd_i32s(sub, arena); break;
    case 3: r->removing = legacy_meta_rd_i32s(sub, arena); break;
    case 4: r->adding = legacy_meta_rd_i32s(sub, arena); break;
    case 5: r->leader_recovery_state = rd_i8(sub); break;
    case 6: r->elr = legacy_meta_rd_i32s(sub, arena); break;
    case 7: r->last_known_elr = legacy_meta_rd_i32s(sub, arena); break;
    case 8: r->directories = legacy_meta_rd_uuids(sub, arena); break;
    default: break;
    }
}

static void legacy_meta_decode_part(legacy_meta_part_rec_t *r, int16_t ver, rd_t *rd, arena_t *arena)
{
    r->partition_id = rd_i32(rd);
    legacy_meta_rd_uuid(rd, r->topic_id);
    r->replicas = legacy_meta_rd_i32s(rd, arena);
    r->isr = legacy_meta_rd_i32s(rd, arena);
    r->removing = legacy_meta_rd_i32s(rd, arena);
    r->adding = legacy_meta_rd_i32s(rd, arena);
    r->leader = rd_i32(rd);
    r->leader_epoch = rd_i32(rd);
    r->partition_epoch = rd_i32(rd);
    if (ver >= 1)
        r->directories = legacy_meta_rd_uuids(rd, arena);
    legacy_meta_rd_tags(rd, legacy_meta_part_tag, r, arena);
}

/* Highest version we understand per type; -1 for unknown types. */
static int16_t legacy_meta_max_version(int16_t type)
{
    switch (type) {
    case LEGACY_META_REC_PARTITION: return LEGACY_META_PART_REC_VERSION;
    case LEGACY_META_REC_PARTITION_CHANGE: return LEGACY_META_PART_CHANGE_REC_VERSION;
    case LEGACY_META_REC_TOPIC:
    case LEGACY_META_REC_CONFIG:
    case LEGACY_META_REC_REMOVE_TOPIC:
    case LEGACY_META_REC_FEATURE_LEVEL:
    case LEGACY_META_REC_NOOP: return 0;
    default: return -1;
    }
}

static void legacy_meta_decode_body(legacy_meta_rec_t *rec, rd_t *rd, arena_t *arena)
{
    switch (rec->type) {
    case LEGACY_META_REC_TOPIC:
        rec->u.topic.name = legacy_meta_rd_str(rd);
        legacy_meta_rd_uuid(rd, rec->u.topic.id);
        break;
    case LEGACY_META_REC_PARTITION:
        legacy_meta_decode_part(&rec->u.part, rec->version, rd, arena);
        return;
    case LEGACY_META_REC_PARTITION_CHANGE:
        rec->u.change.partition_id = rd_i32(rd);
        legacy_meta_rd_uuid(rd, rec->u.change.topic_id);
        legacy_meta_rd_tags(rd, legacy_meta_change_tag, &rec->u.change, arena);
        return;
    case LEGACY_META_REC_CONFIG:
        rec->u.config.resource_type = rd_i8(rd);
        rec->u.config.resource_name = legacy_meta_rd_str(rd);
        rec->u.config.name = legacy_meta_rd_str(rd);
        rec->u.config.value = legacy_meta_rd_str(rd);
        break;
    case LEGACY_META_REC_REMOVE_TOPIC:
        legacy_meta_rd_uuid(rd, rec->u.remove_topic_id);
        break;
    case LEGACY_META_REC_FEATURE_LEVEL:
        rec->u.feature.name = legacy_meta_rd_str(rd);
        rec->u.feature.level = rd_i16(rd);
        break;
    default:
        break;
    }
    legacy_meta_rd_tags(rd, NULL, NULL, arena);
}

int legacy_meta_rec_decode(legacy_meta_rec_t *rec, const uint8_t *p, size_t len, arena_t *arena)
{
    rd_t rd;

    rd_init(&rd, p, len);
    uint32_t frame = rd_uvarint(&rd);
    uint32_t type = rd_uvarint(&rd);
    uint32_t ver = rd_uvarint(&rd);
    if (rd.err || frame != LEGACY_META_FRAME_VERSION || type > INT16_MAX || ver > INT16_MAX)
        return -1;
    legacy_meta_rec_init(rec, (int16_t)type);
    rec->version = (int16_t)ver;
    int16_t max = legacy_meta_max_version(rec->type);
    if (max < 0 || rec->version > max)
        return 1;
    legacy_meta_decode_body(rec, &rd, arena);
    if (rd.err)
        return -1;
    /* Strings a replayer keeps must not be null where the schema says
     * they cannot be. */
    if (rec->type == LEGACY_META_REC_TOPIC && rec->u.topic.name.len < 0)
        return -1;
    if (rec->type == LEGACY_META_REC_CONFIG &&
        (rec->u.config.resource_name.len < 0 || rec->u.config.name.len < 0))
        return -1;
    if (rec->type == LEGACY_META_REC_FEATURE_LEVEL && rec->u.feature.name.len < 0)
        return -1;
    return 0;
}

/* ---- __consumer_offsets ---- */

static void legacy_grp_rec_put_str(buf_t *out, proto_str_t s)
{
    if (s.len < 0 || !s.p) {
        buf_put_i16(out, -1);
        return;
    }
    buf_put_i16(out, (int16_t)s.len);
    buf_put(out, s.p, (size_t)s.len);
}

static void legacy_grp_rec_put_bytes(buf_t *out, proto_bytes_t b)
{
    int32_t len = b.len < 0 ? 0 : b.len;
    buf_put_i32(out, len);
    buf_put(out, b.p, (size_t)len);
}

void legacy_grp_rec_offset_key(buf_t *out, proto_str_t group, proto_str_t topic, int32_t partition)
{
    buf_put_i16(out, GRP_REC_KEY_OFFSET);
    legacy_grp_rec_put_str(out, group);
    legacy_grp_rec_put_str(out, topic);
    buf_put_i32(out, partition);
}

void legacy_grp_rec_offset_value(buf_t *out, const grp_rec_offset_t *v)
{
    proto_str_t md = v->metadata.len < 0 ? PROTO_STR("") : v->metadata;
    if (v->expire_ts >= 0) {
        buf_put_i16(out, 1);
        buf_put_i64(out, v->offset);
        legacy_grp_rec_put_str(out, md);
        buf_put_i64(out, v->commit_ts);
        buf_put_i64(out, v->expire_ts);
        return;
    }
    buf_put_i16(out, 3);
    buf_put_i64(out, v->offset);
    buf_put_i32(out, v->leader_epoch);
    legacy_grp_rec_put_str(out, md);
    buf_put_i64(out, v->commit_ts);
}

void legacy_grp_rec_group_key(buf_t *out, proto_str_t group)
{
    buf_put_i16(out, GRP_REC_KEY_GROUP);
    legacy_grp_rec_put_str(out, group);
}

void legacy_grp_rec_group_value(buf_t *out, const grp_rec_group_t *g)
{
    buf_put_i16(out, 3);
    legacy_grp_rec_put_str(out, g->protocol_type.len < 0 ? PROTO_STR("") : g->protocol_type);
    buf_put_i32(out, g->generation);
    legacy_grp_rec_put_str(out, g->protocol);
    legacy_grp_rec_put_str(out, g->leader);
    buf_put_i64(out, g->state_ts);
    buf_put_i32(out, g->nmembers);
    for (int32_t i = 0; i < g->nmembers; i++) {
        const grp_rec_member_t *m = &g->members[i];
        legacy_grp_rec_put_str(out, m->member_id);
        legacy_grp_rec_put_str(out, m->instance_id);
        legacy_grp_rec_put_str(out, m->client_id);
        legacy_grp_rec_put_str(out, m->client_host);
        buf_put_i32(out, m->rebalance_timeout);
        buf_put_i32(out, m->session_timeout);
        legacy_grp_rec_put_bytes(out, m->subscription);
        legacy_grp_rec_put_bytes(out, m->assignment);
    }
}

/* ---- decoding ---- */

/* A string in the classic (int16) or compact (uvarint len+1) form. */
static proto_str_t legacy_grp_rec_str(rd_t *rd, int flex)
{
    proto_str_t s = {NULL, -1};
    int32_t len = flex ? (int32_t)rd_uvarint(rd) - 1 : rd_i16(rd);
    if (len < 0)
        return s;
    s.p = (const char *)rd_take(rd, (size_t)len);
    s.len = s.p ? len : -1;
    return s;
}

static proto_bytes_t legacy_grp_rec_bytes(rd_t *rd, int flex)
{
    proto_bytes_t b = {NULL, -1};
    int32_t len = flex ? (int32_t)rd_uvarint(rd) - 1 : rd_i32(rd);
    if (len < 0)
        return b;
    b.p = rd_take(rd, (size_t)len);
    b.len = b.p ? len : -1;
    return b;
}

/* Skips a tagged-field section (flexible versions only). */
static void legacy_grp_rec_skip_tags(rd_t *rd, int flex)
{
    if (!flex)
        return;
    uint32_t n = rd_uvarint(rd);
    for (uint32_t i = 0; i < n && !rd->err; i++) {
        rd_uvarint(rd);
        rd_take(rd, rd_uvarint(rd));
    }
}

int legacy_grp_rec_key_decode(const uint8_t *p, size_t len, grp_rec_key_t *k)
{
    rd_t rd;
    rd_init(&rd, p, len);
    memset(k, 0, sizeof(*k));
    k->version = rd_i16(&rd);
    if (rd.err)
        return -1;
    if (k->version > GRP_REC_KEY_GROUP || k->version < 0)
        return 0;
    k->group = legacy_grp_rec_str(&rd, 0);
    if (k->version != GRP_REC_KEY_GROUP) {
        k->topic = legacy_grp_rec_str(&rd, 0);
        k->partition = rd_i32(&rd);
        if (k->topic.len < 0)
            rd.err = 1;
    }
    return rd.err || k->group.len < 0 ? -1 : 0;
}

int legacy_grp_rec_offset_decode(const uint8_t *p, size_t len, grp_rec_offset_t *v)
{
    rd_t rd;
    rd_init(&rd, p, len);
    int16_t ver = rd_i16(&rd);
    int flex = ver >= 4;

    if (ver < 0)
        return -1;
    v->offset = rd_i64(&rd);
    v->leader_epoch = ver >= 3 ? rd_i32(&rd) : -1;
    v->metadata = legacy_grp_rec_str(&rd, flex);
    v->commit_ts = rd_i64(&rd);
    v->expire_ts = ver == 1 ? rd_i64(&rd) : -1;
    legacy_grp_rec_skip_tags(&rd, flex);
    return rd.err ? -1 : 0;
}

static void legacy_grp_rec_member_decode(rd_t *rd, int16_t ver, grp_rec_member_t *m)
{
    int flex = ver >= 4;
    m->member_id = legacy_grp_rec_str(rd, flex);
    m->instance_id = ver >= 3 ? legacy_grp_rec_str(rd, flex) : (proto_str_t){NULL, -1};
    m->client_id = legacy_grp_rec_str(rd, flex);
    m->client_host = legacy_grp_rec_str(rd, flex);
    m->rebalance_timeout = ver >= 1 ? rd_i32(rd) : -1;
    m->session_timeout = rd_i32(rd);
    m->subscription = legacy_grp_rec_bytes(rd, flex);
    m->assignment = legacy_grp_rec_bytes(rd, flex);
    legacy_grp_rec_skip_tags(rd, flex);
    if (m->member_id.len < 0 || m->client_id.len < 0 || m->client_host.len < 0)
        rd->err = 1;
}

int legacy_grp_rec_group_decode(const uint8_t *p, size_t len, grp_rec_group_t *g, arena_t *arena)
{
    rd_t rd;
    rd_init(&rd, p, len);
    int16_t ver = rd_i16(&rd);
    int flex = ver >= 4;

    memset(g, 0, sizeof(*g));
    if (ver < 0)
        return -1;
    g->protocol_type = legacy_grp_rec_str(&rd, flex);
    g->generation = rd_i32(&rd);
    g->protocol = legacy_grp_rec_str(&rd, flex);
    g->leader = legacy_grp_rec_str(&rd, flex);
    g->state_ts = ver >= 2 ? rd_i64(&rd) : -1;
    int32_t n = flex ? (int32_t)rd_uvarint(&rd) - 1 : rd_i32(&rd);
    /* Each member takes at least 20 bytes: a count beyond that is a lie. */
    if (rd.err || n < 0 || (size_t)n > rd_remain(&rd) / 20 + 1)
        return -1;
    g->nmembers = n;
    g->members = arena_calloc(arena, (size_t)n + 1, sizeof(*g->members));
    for (int32_t i = 0; i < n && !rd.err; i++)
        legacy_grp_rec_member_decode(&rd, ver, &g->members[i]);
    legacy_grp_rec_skip_tags(&rd, flex);
    if (g->protocol_type.len < 0)
        rd.err = 1;
    return rd.err ? -1 : 0;
}


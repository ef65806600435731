/* Byte compatibility of the generated record codecs with the hand-written
 * ones they replaced (frozen in rec_legacy.c), so that data dirs written
 * before the change replay unchanged and the other way round:
 *   - write path: for every record type and version we write, random
 *     records as the callers build them encode to the same bytes with
 *     both codecs, and each codec decodes the other's bytes to the same
 *     record (compared field by field and by encoding it again);
 *   - read path: random records of every version we read, encoded from
 *     the schema, decode the same with both.
 * Strings, ids and arrays are random; tagged fields are at their default
 * about half of the time, so both "written" and "left out" are covered. */
#include <stdlib.h>
#include <string.h>

#include "cluster/meta_rec.h"
#include "coord/grp_rec.h"
#include "tests/unit/rec_legacy.h"
#include "tests/unit/unit_proto.h"
#include "unit.h"

#define ROUNDS 400

static arena_t arena;
static unit_fill_t fl;

static const char text[] = "abcdefghijklmnopqrstuvwxyz-._0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";

static uint32_t rnd(void)
{
    return unit_fill_rnd(&fl);
}

static int chance(int pct)
{
    return (int)(rnd() % 100) < pct;
}

static proto_str_t rstr(int nullable)
{
    if (nullable && chance(25))
        return PROTO_STR_NULL;
    uint32_t x = rnd();
    return (proto_str_t){ text + x % 20, (int32_t)((x >> 8) % 30) };
}

static proto_bytes_t rbytes(void)
{
    uint32_t x = rnd();
    if (x % 5 == 0)
        return (proto_bytes_t){ NULL, 0 };
    return (proto_bytes_t){ (const uint8_t *)text + x % 20, (int32_t)((x >> 8) % 40) };
}

static void ruuid(uint8_t id[16])
{
    for (int i = 0; i < 16; i++)
        id[i] = (uint8_t)rnd();
}

static int64_t r64(void)
{
    return (int64_t)(((uint64_t)rnd() << 32) | rnd());
}

/* A random int32 array (null when nullable, a quarter of the time) for
 * both codecs: they share the elements. */
static void ri32s(legacy_meta_i32s_t *l, meta_i32s_t *n, int nullable)
{
    if (nullable && chance(25)) {
        *l = (legacy_meta_i32s_t){ -1, NULL };
        *n = (meta_i32s_t){ -1, NULL };
        return;
    }
    int32_t k = (int32_t)(rnd() % 4);
    int32_t *v = arena_calloc(&arena, (size_t)k + 1, sizeof(int32_t));
    for (int32_t i = 0; i < k; i++)
        v[i] = (int32_t)(rnd() % 8) - 1;
    *l = (legacy_meta_i32s_t){ k, v };
    *n = (meta_i32s_t){ k, v };
}

static void ruuids(legacy_meta_uuids_t *l, meta_uuids_t *n, int nullable)
{
    if (nullable && chance(25)) {
        *l = (legacy_meta_uuids_t){ -1, NULL };
        *n = (meta_uuids_t){ -1, NULL };
        return;
    }
    int32_t k = (int32_t)(rnd() % 3);
    proto_uuid_t *v = arena_calloc(&arena, (size_t)k + 1, sizeof(proto_uuid_t));
    for (int32_t i = 0; i < k; i++)
        ruuid(v[i].b);
    *l = (legacy_meta_uuids_t){ k, (uint8_t(*)[16])v };
    *n = (meta_uuids_t){ k, v };
}

static legacy_meta_str_t lstr(proto_str_t s)
{
    return (legacy_meta_str_t){ s.p, s.len };
}

static int same_bytes(const buf_t *a, const buf_t *b)
{
    return unit_bytes_eq(a->p, a->len, b->p, b->len);
}

/* ---- metadata records: the write path ---- */

static void gen_part(legacy_meta_part_rec_t *l, meta_part_rec_t *n)
{
    n->partition_id = l->partition_id = (int32_t)rnd();
    ruuid(l->topic_id);
    memcpy(n->topic_id.b, l->topic_id, 16);
    ri32s(&l->replicas, &n->replicas, 0);
    ri32s(&l->isr, &n->isr, 0);
    ri32s(&l->removing, &n->removing_replicas, 0);
    ri32s(&l->adding, &n->adding_replicas, 0);
    n->leader = l->leader = (int32_t)rnd();
    n->leader_recovery_state = l->leader_recovery_state = chance(50) ? 0 : (int8_t)rnd();
    n->leader_epoch = l->leader_epoch = (int32_t)rnd();
    n->partition_epoch = l->partition_epoch = (int32_t)rnd();
    ruuids(&l->directories, &n->directories, 0);
    ri32s(&l->elr, &n->eligible_leader_replicas, 1);
    ri32s(&l->last_known_elr, &n->last_known_elr, 1);
}

static void gen_change(legacy_meta_part_change_rec_t *l, meta_part_change_rec_t *n)
{
    n->partition_id = l->partition_id = (int32_t)rnd();
    ruuid(l->topic_id);
    memcpy(n->topic_id.b, l->topic_id, 16);
    ri32s(&l->isr, &n->isr, 1);
    n->leader = l->leader = chance(50) ? -2 : (int32_t)rnd();
    ri32s(&l->replicas, &n->replicas, 1);
    ri32s(&l->removing, &n->removing_replicas, 1);
    ri32s(&l->adding, &n->adding_replicas, 1);
    n->leader_recovery_state = l->leader_recovery_state = chance(50) ? -1 : (int8_t)rnd();
    ri32s(&l->elr, &n->eligible_leader_replicas, 1);
    ri32s(&l->last_known_elr, &n->last_known_elr, 1);
    ruuids(&l->directories, &n->directories, 1);
}

/* The same random record for both codecs. Fields beyond the version are
 * filled too: both encoders must leave them out. */
static void gen_meta(int16_t type, int16_t ver, legacy_meta_rec_t *l, meta_rec_t *n)
{
    legacy_meta_rec_init(l, type);
    meta_rec_init(n, type);
    l->version = n->version = ver;
    switch (type) {
    case META_REC_TOPIC:
        l->u.topic.name = lstr(n->u.topic.name = rstr(0));
        ruuid(l->u.topic.id);
        memcpy(n->u.topic.topic_id.b, l->u.topic.id, 16);
        break;
    case META_REC_PARTITION:
        gen_part(&l->u.part, &n->u.part);
        break;
    case META_REC_PARTITION_CHANGE:
        gen_change(&l->u.change, &n->u.change);
        break;
    case META_REC_CONFIG:
        n->u.config.resource_type = l->u.config.resource_type = (int8_t)rnd();
        l->u.config.resource_name = lstr(n->u.config.resource_name = rstr(0));
        l->u.config.name = lstr(n->u.config.name = rstr(0));
        l->u.config.value = lstr(n->u.config.value = rstr(1));
        break;
    case META_REC_REMOVE_TOPIC:
        ruuid(l->u.remove_topic_id);
        memcpy(n->u.remove_topic.topic_id.b, l->u.remove_topic_id, 16);
        break;
    case META_REC_FEATURE_LEVEL:
        l->u.feature.name = lstr(n->u.feature.name = rstr(0));
        n->u.feature.feature_level = l->u.feature.level = (int16_t)rnd();
        break;
    default: /* NoOpRecord */
        break;
    }
}

static int meta_write_one(int16_t type, int16_t ver)
{
    const proto_msg_t *msg = proto_rec_find(PROTO_REC_KIND_METADATA, type);
    legacy_meta_rec_t l, ld;
    meta_rec_t n, nd;
    buf_t lb, nb, again;
    int ok;

    gen_meta(type, ver, &l, &n);
    buf_init(&lb);
    buf_init(&nb);
    buf_init(&again);
    legacy_meta_rec_encode(&l, &lb);
    meta_rec_encode(&n, &nb);
    ok = same_bytes(&nb, &lb);
    /* new reads old: the same fields, and the same bytes again */
    ok = ok && meta_rec_decode(&nd, lb.p, lb.len, &arena) == 0 && nd.type == type &&
         nd.version == ver && unit_same_struct(msg->st, &n.u, &nd.u, ver);
    if (ok) {
        meta_rec_encode(&nd, &again);
        ok = same_bytes(&again, &lb);
    }
    /* old reads new */
    again.len = 0;
    ok = ok && legacy_meta_rec_decode(&ld, nb.p, nb.len, &arena) == 0 && ld.type == type &&
         ld.version == ver;
    if (ok) {
        legacy_meta_rec_encode(&ld, &again);
        ok = same_bytes(&again, &nb);
    }
    if (!ok)
        fprintf(stderr, "\n  %s v%d differs\n", msg->name, ver);
    buf_free(&lb);
    buf_free(&nb);
    buf_free(&again);
    return ok;
}

/* Every type the cluster layer writes or has written, every version of
 * the partition records (the change record is decoded, not written, but
 * test helpers and tools build it). */
static void test_meta_write(void)
{
    static const struct { int16_t type, vmin, vmax; } types[] = {
        { META_REC_TOPIC, 0, 0 },           { META_REC_PARTITION, 0, 2 },
        { META_REC_CONFIG, 0, 0 },          { META_REC_PARTITION_CHANGE, 0, 2 },
        { META_REC_REMOVE_TOPIC, 0, 0 },    { META_REC_FEATURE_LEVEL, 0, 0 },
        { META_REC_NOOP, 0, 0 },
    };
    int runs = 0;
    for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++)
        for (int16_t v = types[t].vmin; v <= types[t].vmax; v++)
            for (int i = 0; i < ROUNDS; i++, runs++) {
                CU_ASSERT(meta_write_one(types[t].type, v));
                arena_reset(&arena);
            }
    CU_ASSERT_EQUAL(runs, 11 * ROUNDS);
}

/* ---- metadata records: the read path ---- */

/* A record of the schema (any field values the version allows), framed;
 * both decoders must accept it, and each must give back these bytes when
 * it encodes what it decoded. */
static int meta_read_one(const proto_msg_t *msg, int16_t ver)
{
    void *m = arena_calloc(&arena, 1, msg->st->size);
    legacy_meta_rec_t ld;
    meta_rec_t nd;
    buf_t b, again;
    int ok;

    unit_fill_struct(&fl, msg->st, m, ver);
    buf_init(&b);
    buf_init(&again);
    proto_rec_encode(msg, m, ver, &b);
    ok = meta_rec_decode(&nd, b.p, b.len, &arena) == 0 && unit_same_struct(msg->st, m, &nd.u, ver);
    ok = ok && legacy_meta_rec_decode(&ld, b.p, b.len, &arena) == 0;
    if (ok) {
        legacy_meta_rec_encode(&ld, &again);
        ok = same_bytes(&again, &b);
    }
    if (!ok)
        fprintf(stderr, "\n  %s v%d read differently\n", msg->name, ver);
    buf_free(&b);
    buf_free(&again);
    return ok;
}

static void test_meta_read(void)
{
    static const int16_t types[] = { META_REC_TOPIC, META_REC_PARTITION, META_REC_CONFIG,
                                     META_REC_PARTITION_CHANGE, META_REC_REMOVE_TOPIC,
                                     META_REC_FEATURE_LEVEL, META_REC_NOOP };
    for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
        const proto_msg_t *msg = proto_rec_find(PROTO_REC_KIND_METADATA, types[t]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(msg);
        for (int16_t v = msg->vmin; v <= msg->vmax; v++)
            for (int i = 0; i < ROUNDS; i++) {
                CU_ASSERT(meta_read_one(msg, v));
                arena_reset(&arena);
            }
    }
}

/* ---- __consumer_offsets records ---- */

static int same_str(proto_str_t a, proto_str_t b)
{
    return a.len == b.len && (a.len <= 0 || !memcmp(a.p, b.p, (size_t)a.len));
}

static int same_bytes_v(proto_bytes_t a, proto_bytes_t b)
{
    return a.len == b.len && (a.len <= 0 || !memcmp(a.p, b.p, (size_t)a.len));
}

static int same_key(const grp_rec_key_t *a, const grp_rec_key_t *b)
{
    return a->version == b->version && same_str(a->group, b->group) &&
           same_str(a->topic, b->topic) && a->partition == b->partition;
}

static int same_offset(const grp_rec_offset_t *a, const grp_rec_offset_t *b)
{
    return a->offset == b->offset && a->leader_epoch == b->leader_epoch &&
           same_str(a->metadata, b->metadata) && a->commit_ts == b->commit_ts &&
           a->expire_ts == b->expire_ts;
}

static int same_member(const grp_rec_member_t *a, const grp_rec_member_t *b)
{
    return same_str(a->member_id, b->member_id) && same_str(a->instance_id, b->instance_id) &&
           same_str(a->client_id, b->client_id) && same_str(a->client_host, b->client_host) &&
           a->rebalance_timeout == b->rebalance_timeout &&
           a->session_timeout == b->session_timeout &&
           same_bytes_v(a->subscription, b->subscription) &&
           same_bytes_v(a->assignment, b->assignment);
}

static int same_group(const grp_rec_group_t *a, const grp_rec_group_t *b)
{
    int ok = same_str(a->protocol_type, b->protocol_type) && a->generation == b->generation &&
             same_str(a->protocol, b->protocol) && same_str(a->leader, b->leader) &&
             a->state_ts == b->state_ts && a->nmembers == b->nmembers;
    for (int32_t i = 0; ok && i < a->nmembers; i++)
        ok = same_member(&a->members[i], &b->members[i]);
    return ok;
}

/* Both codecs decode bytes to equal keys and values (a key or value is
 * told apart by its first bytes; values by the key's type). */
static int grp_decode_both(const buf_t *key, const buf_t *val, int16_t type)
{
    grp_rec_key_t k1, k2;
    int ok = grp_rec_key_decode(key->p, key->len, &k1) == 0 &&
             legacy_grp_rec_key_decode(key->p, key->len, &k2) == 0 && same_key(&k1, &k2) &&
             k1.version == type;
    if (ok && type == GRP_REC_KEY_GROUP) {
        grp_rec_group_t g1, g2;
        ok = grp_rec_group_decode(val->p, val->len, &g1, &arena) == 0 &&
             legacy_grp_rec_group_decode(val->p, val->len, &g2, &arena) == 0 &&
             same_group(&g1, &g2);
    } else if (ok) {
        grp_rec_offset_t o1, o2;
        ok = grp_rec_offset_decode(val->p, val->len, &o1) == 0 &&
             legacy_grp_rec_offset_decode(val->p, val->len, &o2) == 0 && same_offset(&o1, &o2);
    }
    return ok;
}

static int grp_offset_write_one(void)
{
    proto_str_t group = rstr(0), topic = rstr(0);
    int32_t part = (int32_t)rnd();
    grp_rec_offset_t v = { r64(), (int32_t)rnd(), rstr(1), r64(),
                           chance(50) ? -1 : (int64_t)(rnd() & 0x7fffffff) };
    buf_t k1, k2, v1, v2;
    buf_init(&k1);
    buf_init(&k2);
    buf_init(&v1);
    buf_init(&v2);
    grp_rec_offset_key(&k1, group, topic, part);
    legacy_grp_rec_offset_key(&k2, group, topic, part);
    grp_rec_offset_value(&v1, &v);
    legacy_grp_rec_offset_value(&v2, &v);
    int ok = same_bytes(&k1, &k2) && same_bytes(&v1, &v2) &&
             grp_decode_both(&k1, &v1, GRP_REC_KEY_OFFSET);
    buf_free(&k1);
    buf_free(&k2);
    buf_free(&v1);
    buf_free(&v2);
    return ok;
}

static void gen_group(grp_rec_group_t *g)
{
    g->protocol_type = rstr(0);
    g->generation = (int32_t)rnd();
    g->protocol = rstr(1);
    g->leader = rstr(1);
    g->state_ts = r64();
    g->nmembers = (int32_t)(rnd() % 4);
    g->members = arena_calloc(&arena, (size_t)g->nmembers + 1, sizeof(*g->members));
    for (int32_t i = 0; i < g->nmembers; i++) {
        grp_rec_member_t *m = &g->members[i];
        m->member_id = rstr(0);
        m->instance_id = rstr(1);
        m->client_id = rstr(0);
        m->client_host = rstr(0);
        m->rebalance_timeout = (int32_t)rnd();
        m->session_timeout = (int32_t)rnd();
        m->subscription = rbytes();
        m->assignment = rbytes();
    }
}

static int grp_group_write_one(void)
{
    proto_str_t id = rstr(0);
    grp_rec_group_t g;
    buf_t k1, k2, v1, v2;
    gen_group(&g);
    buf_init(&k1);
    buf_init(&k2);
    buf_init(&v1);
    buf_init(&v2);
    grp_rec_group_key(&k1, id);
    legacy_grp_rec_group_key(&k2, id);
    grp_rec_group_value(&v1, &g);
    legacy_grp_rec_group_value(&v2, &g);
    int ok = same_bytes(&k1, &k2) && same_bytes(&v1, &v2) &&
             grp_decode_both(&k1, &v1, GRP_REC_KEY_GROUP);
    buf_free(&k1);
    buf_free(&k2);
    buf_free(&v1);
    buf_free(&v2);
    return ok;
}

static void test_grp_write(void)
{
    for (int i = 0; i < ROUNDS; i++) {
        CU_ASSERT(grp_offset_write_one());
        CU_ASSERT(grp_group_write_one());
        arena_reset(&arena);
    }
}

/* Keys of both offset key types and the group key, and values of every
 * version, from the schemas: both decoders agree. */
static int grp_read_one(const proto_msg_t *kmsg, const proto_msg_t *vmsg, int16_t ver)
{
    void *k = arena_calloc(&arena, 1, kmsg->st->size);
    void *v = arena_calloc(&arena, 1, vmsg->st->size);
    buf_t kb, vb;
    unit_fill_struct(&fl, kmsg->st, k, 0);
    unit_fill_struct(&fl, vmsg->st, v, ver);
    buf_init(&kb);
    buf_init(&vb);
    proto_rec_encode(kmsg, k, 0, &kb);
    proto_rec_encode(vmsg, v, ver, &vb);
    int ok = grp_decode_both(&kb, &vb, kmsg->key);
    if (!ok)
        fprintf(stderr, "\n  %s / %s v%d read differently\n", kmsg->name, vmsg->name, ver);
    buf_free(&kb);
    buf_free(&vb);
    return ok;
}

static void test_grp_read(void)
{
    static const proto_msg_t *const pairs[][2] = {
        { &proto_msg_rec_legacy_offset_commit_key, &proto_msg_rec_legacy_offset_commit_value },
        { &proto_msg_rec_offset_commit_key, &proto_msg_rec_offset_commit_value },
        { &proto_msg_rec_group_metadata_key, &proto_msg_rec_group_metadata_value },
    };
    int runs = 0;
    for (size_t p = 0; p < sizeof(pairs) / sizeof(pairs[0]); p++)
        for (int16_t v = pairs[p][1]->vmin; v <= pairs[p][1]->vmax; v++)
            for (int i = 0; i < ROUNDS; i++, runs++) {
                CU_ASSERT(grp_read_one(pairs[p][0], pairs[p][1], v));
                arena_reset(&arena);
            }
    CU_ASSERT_EQUAL(runs, 11 * ROUNDS);
}

int main(void)
{
    arena_init(&arena, 1 << 16);
    unit_fill_init(&fl, 20261201, &arena);
    CU_initialize_registry();
    CU_pSuite s = CU_add_suite("rec_compat", NULL, NULL);
    CU_add_test(s, "metadata records written as before", test_meta_write);
    CU_add_test(s, "metadata records read as before", test_meta_read);
    CU_add_test(s, "group records written as before", test_grp_write);
    CU_add_test(s, "group records read as before", test_grp_read);
    int rc = unit_run();
    arena_destroy(&arena);
    return rc;
}

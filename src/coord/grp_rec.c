/* __consumer_offsets record codecs: a thin layer over the generated ones,
 * keeping the coordinator's own structs. The byte layouts are
 * protocol/records/group/NAME.def (OffsetCommitKey and LegacyOffsetCommitKey,
 * OffsetCommitValue v0-4, GroupMetadataKey, GroupMetadataValue v0-4);
 * the framing, int16 key type | key body (version 0) and int16 value
 * version | value body, is at the top of src/proto/proto_rec.c. A null
 * value (record value length -1) is a tombstone.
 *
 * What we write: OffsetCommitKey (type 1); OffsetCommitValue v3, or v1
 * for a commit that carries a retention time (OffsetCommit v2-4), as
 * Kafka does; GroupMetadataKey (type 2); GroupMetadataValue v3
 * (tests/unit/test_rec_compat holds these to the bytes the earlier
 * hand-written codec wrote). Every value version is read. */
#include "coord/grp_rec.h"

#include <stdlib.h>
#include <string.h>

#include "proto/proto_rec.h"
#include "util/arena.h"
#include "util/cstr.h"
#include "util/mem.h"

#define GRP_REC_OFFSET_VALUE_VERSION 3
#define GRP_REC_OFFSET_VALUE_EXPIRE_VERSION 1
#define GRP_REC_GROUP_VALUE_VERSION 3

typedef proto_rec_group_metadata_value_member_metadata_t grp_rec_pmember_t;

/* A coordinator string (a C string in util/cstr.h's form) as the bytes it
 * stands for, in arena when they differ: records hold what the client
 * sent. */
static proto_str_t grp_rec_id(arena_t *arena, proto_str_t s)
{
    if (s.len <= 0 || !s.p || !memchr(s.p, 0xc0, (size_t)s.len))
        return s;
    char *tmp = arena_strndup(arena, s.p, (size_t)s.len);
    size_t n = cstr_unescape(tmp, tmp);
    return (proto_str_t){tmp, (int32_t)n};
}

void grp_rec_offset_key(buf_t *out, proto_str_t group, proto_str_t topic, int32_t partition)
{
    proto_rec_offset_commit_key_t k;
    arena_t arena;

    arena_init(&arena, 256);
    proto_rec_offset_commit_key_init(&k);
    k.group = grp_rec_id(&arena, group);
    k.topic = topic;
    k.partition = partition;
    proto_rec_offset_commit_key_write(&k, 0, out);
    arena_destroy(&arena);
}

void grp_rec_offset_value(buf_t *out, const grp_rec_offset_t *v)
{
    proto_rec_offset_commit_value_t r;

    proto_rec_offset_commit_value_init(&r);
    r.offset = v->offset;
    r.leader_epoch = v->leader_epoch;
    r.metadata = v->metadata; /* a null one goes out as "" */
    r.commit_timestamp = v->commit_ts;
    r.expire_timestamp = v->expire_ts;
    proto_rec_offset_commit_value_write(&r, v->expire_ts >= 0 ? GRP_REC_OFFSET_VALUE_EXPIRE_VERSION
                                                              : GRP_REC_OFFSET_VALUE_VERSION,
                                        out);
}

void grp_rec_group_key(buf_t *out, proto_str_t group)
{
    proto_rec_group_metadata_key_t k;
    arena_t arena;

    arena_init(&arena, 256);
    proto_rec_group_metadata_key_init(&k);
    k.group = grp_rec_id(&arena, group);
    proto_rec_group_metadata_key_write(&k, 0, out);
    arena_destroy(&arena);
}

static void grp_rec_member_to(arena_t *arena, grp_rec_pmember_t *d, const grp_rec_member_t *m)
{
    proto_rec_group_metadata_value_member_metadata_init(d);
    d->member_id = grp_rec_id(arena, m->member_id);
    d->group_instance_id = grp_rec_id(arena, m->instance_id);
    d->client_id = grp_rec_id(arena, m->client_id);
    d->client_host = grp_rec_id(arena, m->client_host);
    d->rebalance_timeout = m->rebalance_timeout;
    d->session_timeout = m->session_timeout;
    d->subscription = m->subscription;
    d->assignment = m->assignment;
}

void grp_rec_group_value(buf_t *out, const grp_rec_group_t *g)
{
    proto_rec_group_metadata_value_t r;
    grp_rec_pmember_t *pm = xcalloc((size_t)g->nmembers + 1, sizeof(*pm));
    arena_t arena;

    arena_init(&arena, 1024);
    proto_rec_group_metadata_value_init(&r);
    r.protocol_type = grp_rec_id(&arena, g->protocol_type); /* a null one goes out as "" */
    r.generation = g->generation;
    r.protocol = grp_rec_id(&arena, g->protocol);
    r.leader = grp_rec_id(&arena, g->leader);
    r.current_state_timestamp = g->state_ts;
    for (int32_t i = 0; i < g->nmembers; i++)
        grp_rec_member_to(&arena, &pm[i], &g->members[i]);
    r.members.n = g->nmembers;
    r.members.v = pm;
    proto_rec_group_metadata_value_write(&r, GRP_REC_GROUP_VALUE_VERSION, out);
    free(pm);
    arena_destroy(&arena);
}

/* ---- decoding ---- */

int grp_rec_key_decode(const uint8_t *p, size_t len, grp_rec_key_t *k)
{
    proto_rec_group_key_any_t u;
    proto_rec_info_t info;
    int rc = proto_rec_decode(PROTO_REC_KIND_GROUP_KEY, 0, p, len, &u, sizeof(u), NULL, &info);

    memset(k, 0, sizeof(*k));
    if (rc < 0)
        return -1;
    k->version = info.type;
    if (rc > 0) /* a record type this module does not handle */
        return 0;
    switch (info.type) {
    case PROTO_REC_GROUP_METADATA_KEY:
        k->group = u.group_metadata_key.group;
        break;
    case PROTO_REC_LEGACY_OFFSET_COMMIT_KEY: /* the same fields as v1 */
        k->group = u.legacy_offset_commit_key.group;
        k->topic = u.legacy_offset_commit_key.topic;
        k->partition = u.legacy_offset_commit_key.partition;
        break;
    default:
        k->group = u.offset_commit_key.group;
        k->topic = u.offset_commit_key.topic;
        k->partition = u.offset_commit_key.partition;
        break;
    }
    return 0;
}

int grp_rec_offset_decode(const uint8_t *p, size_t len, grp_rec_offset_t *v)
{
    proto_rec_offset_commit_value_t r;

    if (proto_rec_offset_commit_value_read(&r, NULL, p, len, NULL))
        return -1;
    v->offset = r.offset;
    v->leader_epoch = r.leader_epoch; /* -1 below v3 */
    v->metadata = r.metadata;
    v->commit_ts = r.commit_timestamp;
    v->expire_ts = r.expire_timestamp; /* -1 but in v1 */
    return 0;
}

static void grp_rec_member_from(grp_rec_member_t *m, const grp_rec_pmember_t *s)
{
    m->member_id = s->member_id;
    m->instance_id = s->group_instance_id; /* null below v3 */
    m->client_id = s->client_id;
    m->client_host = s->client_host;
    m->rebalance_timeout = s->rebalance_timeout; /* -1 in v0 */
    m->session_timeout = s->session_timeout;
    m->subscription = s->subscription;
    m->assignment = s->assignment;
}

int grp_rec_group_decode(const uint8_t *p, size_t len, grp_rec_group_t *g, arena_t *arena)
{
    proto_rec_group_metadata_value_t r;

    memset(g, 0, sizeof(*g));
    if (proto_rec_group_metadata_value_read(&r, NULL, p, len, arena))
        return -1;
    g->protocol_type = r.protocol_type;
    g->generation = r.generation;
    g->protocol = r.protocol;
    g->leader = r.leader;
    g->state_ts = r.current_state_timestamp; /* -1 below v2 */
    g->nmembers = r.members.n;
    g->members = arena_calloc(arena, (size_t)g->nmembers + 1, sizeof(*g->members));
    for (int32_t i = 0; i < g->nmembers; i++)
        grp_rec_member_from(&g->members[i], &r.members.v[i]);
    return 0;
}

/* ---- partition of a group ---- */

/* Next code point of UTF-8 text; a malformed byte reads as U+FFFD, as
 * Java's decoder replaces it. */
static uint32_t grp_rec_utf8_next(const unsigned char **pp, const unsigned char *end)
{
    const unsigned char *p = *pp;
    uint32_t c = *p++;
    if (c == 0xc0 && p < end && *p == 0x80) { /* a NUL kept as util/cstr.h keeps it */
        *pp = p + 1;
        return 0;
    }
    int more = c >= 0xf0 && c < 0xf5 ? 3 : c >= 0xe0 ? 2 : c >= 0xc2 ? 1 : 0;
    uint32_t min = more == 3 ? 0x10000 : more == 2 ? 0x800 : 0x80;

    if (c < 0x80) {
        *pp = p;
        return c;
    }
    if (!more || c >= 0xf5 || end - p < more) {
        *pp = *pp + 1;
        return 0xfffd;
    }
    c &= 0x3fu >> more;
    for (int i = 0; i < more; i++) {
        if ((p[i] & 0xc0) != 0x80) {
            *pp = *pp + 1;
            return 0xfffd;
        }
        c = (c << 6) | (p[i] & 0x3f);
    }
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) {
        *pp = *pp + 1;
        return 0xfffd;
    }
    *pp = p + more;
    return c;
}

int32_t grp_rec_partition_for(const char *group, size_t len, int32_t n)
{
    const unsigned char *p = (const unsigned char *)group, *end = p + len;
    uint32_t h = 0;

    while (p < end) {
        uint32_t c = grp_rec_utf8_next(&p, end);
        if (c >= 0x10000) {
            c -= 0x10000;
            h = h * 31 + (0xd800 + (c >> 10));
            h = h * 31 + (0xdc00 + (c & 0x3ff));
        } else {
            h = h * 31 + c;
        }
    }
    int32_t s = (int32_t)h;
    /* Kafka's Utils.abs: Integer.MIN_VALUE maps to 0. */
    int32_t a = s == INT32_MIN ? 0 : s < 0 ? -s : s;
    return n > 0 ? a % n : 0;
}

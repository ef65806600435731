/* __consumer_offsets record codecs. Byte layouts (big-endian; "string" is
 * an int16 length and UTF-8 bytes, -1 = null; "bytes" an int32 length):
 *
 * OffsetCommit key, version 1 (version 0 is the same):
 *   version i16 = 1 | group string | topic string | partition i32
 * OffsetCommit value, version 3 (what we write):
 *   version i16 = 3 | offset i64 | leaderEpoch i32 | metadata string |
 *   commitTimestamp i64
 * OffsetCommit value, version 1 (what we write for a commit with a
 * retention time, OffsetCommit v2-4):
 *   version i16 = 1 | offset i64 | metadata string | commitTimestamp i64 |
 *   expireTimestamp i64
 *   (v0 and v2: offset | metadata | commitTimestamp; v4: like v3 with a
 *   compact string and a tagged-field section at the end)
 *
 * GroupMetadata key, version 2:
 *   version i16 = 2 | group string
 * GroupMetadata value, version 3 (what we write):
 *   version i16 = 3 | protocolType string | generation i32 |
 *   protocol string (nullable) | leader string (nullable) |
 *   currentStateTimestamp i64 | members count i32, then each:
 *     memberId string | groupInstanceId string (nullable) |
 *     clientId string | clientHost string | rebalanceTimeout i32 |
 *     sessionTimeout i32 | subscription bytes | assignment bytes
 *   (v0 lacks groupInstanceId, rebalanceTimeout and the timestamp; v1
 *   adds rebalanceTimeout; v2 the timestamp; v3 groupInstanceId; v4 is v3
 *   in the compact encoding with tagged-field sections after each struct)
 *
 * A null value (record value length -1) is a tombstone. */
#include "coord/grp_rec.h"

#include <stdlib.h>
#include <string.h>

#include "util/cstr.h"
#include "util/mem.h"
#include "util/rd.h"

static void grp_rec_put_str(buf_t *out, proto_str_t s)
{
    if (s.len < 0 || !s.p) {
        buf_put_i16(out, -1);
        return;
    }
    buf_put_i16(out, (int16_t)s.len);
    buf_put(out, s.p, (size_t)s.len);
}

/* A coordinator string (a C string in util/cstr.h's form) as the bytes it
 * stands for: records hold what the client sent. */
static void grp_rec_put_id(buf_t *out, proto_str_t s)
{
    if (s.len < 0 || !s.p || !memchr(s.p, 0xc0, (size_t)s.len)) {
        grp_rec_put_str(out, s);
        return;
    }
    char *tmp = xstrndup(s.p, (size_t)s.len);
    size_t n = cstr_unescape(tmp, tmp);
    grp_rec_put_str(out, (proto_str_t){tmp, (int32_t)n});
    free(tmp);
}

static void grp_rec_put_bytes(buf_t *out, proto_bytes_t b)
{
    int32_t len = b.len < 0 ? 0 : b.len;
    buf_put_i32(out, len);
    buf_put(out, b.p, (size_t)len);
}

void grp_rec_offset_key(buf_t *out, proto_str_t group, proto_str_t topic, int32_t partition)
{
    buf_put_i16(out, GRP_REC_KEY_OFFSET);
    grp_rec_put_id(out, group);
    grp_rec_put_id(out, topic);
    buf_put_i32(out, partition);
}

void grp_rec_offset_value(buf_t *out, const grp_rec_offset_t *v)
{
    proto_str_t md = v->metadata.len < 0 ? PROTO_STR("") : v->metadata;
    if (v->expire_ts >= 0) {
        buf_put_i16(out, 1);
        buf_put_i64(out, v->offset);
        grp_rec_put_str(out, md);
        buf_put_i64(out, v->commit_ts);
        buf_put_i64(out, v->expire_ts);
        return;
    }
    buf_put_i16(out, 3);
    buf_put_i64(out, v->offset);
    buf_put_i32(out, v->leader_epoch);
    grp_rec_put_str(out, md);
    buf_put_i64(out, v->commit_ts);
}

void grp_rec_group_key(buf_t *out, proto_str_t group)
{
    buf_put_i16(out, GRP_REC_KEY_GROUP);
    grp_rec_put_id(out, group);
}

void grp_rec_group_value(buf_t *out, const grp_rec_group_t *g)
{
    buf_put_i16(out, 3);
    grp_rec_put_id(out, g->protocol_type.len < 0 ? PROTO_STR("") : g->protocol_type);
    buf_put_i32(out, g->generation);
    grp_rec_put_id(out, g->protocol);
    grp_rec_put_id(out, g->leader);
    buf_put_i64(out, g->state_ts);
    buf_put_i32(out, g->nmembers);
    for (int32_t i = 0; i < g->nmembers; i++) {
        const grp_rec_member_t *m = &g->members[i];
        grp_rec_put_id(out, m->member_id);
        grp_rec_put_id(out, m->instance_id);
        grp_rec_put_id(out, m->client_id);
        grp_rec_put_id(out, m->client_host);
        buf_put_i32(out, m->rebalance_timeout);
        buf_put_i32(out, m->session_timeout);
        grp_rec_put_bytes(out, m->subscription);
        grp_rec_put_bytes(out, m->assignment);
    }
}

/* ---- decoding ---- */

/* A string in the classic (int16) or compact (uvarint len+1) form. */
static proto_str_t grp_rec_str(rd_t *rd, int flex)
{
    proto_str_t s = {NULL, -1};
    int32_t len = flex ? (int32_t)rd_uvarint(rd) - 1 : rd_i16(rd);
    if (len < 0)
        return s;
    s.p = (const char *)rd_take(rd, (size_t)len);
    s.len = s.p ? len : -1;
    return s;
}

static proto_bytes_t grp_rec_bytes(rd_t *rd, int flex)
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
static void grp_rec_skip_tags(rd_t *rd, int flex)
{
    if (!flex)
        return;
    uint32_t n = rd_uvarint(rd);
    for (uint32_t i = 0; i < n && !rd->err; i++) {
        rd_uvarint(rd);
        rd_take(rd, rd_uvarint(rd));
    }
}

int grp_rec_key_decode(const uint8_t *p, size_t len, grp_rec_key_t *k)
{
    rd_t rd;
    rd_init(&rd, p, len);
    memset(k, 0, sizeof(*k));
    k->version = rd_i16(&rd);
    if (rd.err)
        return -1;
    if (k->version > GRP_REC_KEY_GROUP || k->version < 0)
        return 0;
    k->group = grp_rec_str(&rd, 0);
    if (k->version != GRP_REC_KEY_GROUP) {
        k->topic = grp_rec_str(&rd, 0);
        k->partition = rd_i32(&rd);
        if (k->topic.len < 0)
            rd.err = 1;
    }
    return rd.err || k->group.len < 0 ? -1 : 0;
}

int grp_rec_offset_decode(const uint8_t *p, size_t len, grp_rec_offset_t *v)
{
    rd_t rd;
    rd_init(&rd, p, len);
    int16_t ver = rd_i16(&rd);
    int flex = ver >= 4;

    if (ver < 0)
        return -1;
    v->offset = rd_i64(&rd);
    v->leader_epoch = ver >= 3 ? rd_i32(&rd) : -1;
    v->metadata = grp_rec_str(&rd, flex);
    v->commit_ts = rd_i64(&rd);
    v->expire_ts = ver == 1 ? rd_i64(&rd) : -1;
    grp_rec_skip_tags(&rd, flex);
    return rd.err ? -1 : 0;
}

static void grp_rec_member_decode(rd_t *rd, int16_t ver, grp_rec_member_t *m)
{
    int flex = ver >= 4;
    m->member_id = grp_rec_str(rd, flex);
    m->instance_id = ver >= 3 ? grp_rec_str(rd, flex) : (proto_str_t){NULL, -1};
    m->client_id = grp_rec_str(rd, flex);
    m->client_host = grp_rec_str(rd, flex);
    m->rebalance_timeout = ver >= 1 ? rd_i32(rd) : -1;
    m->session_timeout = rd_i32(rd);
    m->subscription = grp_rec_bytes(rd, flex);
    m->assignment = grp_rec_bytes(rd, flex);
    grp_rec_skip_tags(rd, flex);
    if (m->member_id.len < 0 || m->client_id.len < 0 || m->client_host.len < 0)
        rd->err = 1;
}

int grp_rec_group_decode(const uint8_t *p, size_t len, grp_rec_group_t *g, arena_t *arena)
{
    rd_t rd;
    rd_init(&rd, p, len);
    int16_t ver = rd_i16(&rd);
    int flex = ver >= 4;

    memset(g, 0, sizeof(*g));
    if (ver < 0)
        return -1;
    g->protocol_type = grp_rec_str(&rd, flex);
    g->generation = rd_i32(&rd);
    g->protocol = grp_rec_str(&rd, flex);
    g->leader = grp_rec_str(&rd, flex);
    g->state_ts = ver >= 2 ? rd_i64(&rd) : -1;
    int32_t n = flex ? (int32_t)rd_uvarint(&rd) - 1 : rd_i32(&rd);
    /* Each member takes at least 20 bytes: a count beyond that is a lie. */
    if (rd.err || n < 0 || (size_t)n > rd_remain(&rd) / 20 + 1)
        return -1;
    g->nmembers = n;
    g->members = arena_calloc(arena, (size_t)n + 1, sizeof(*g->members));
    for (int32_t i = 0; i < n && !rd.err; i++)
        grp_rec_member_decode(&rd, ver, &g->members[i]);
    grp_rec_skip_tags(&rd, flex);
    if (g->protocol_type.len < 0)
        rd.err = 1;
    return rd.err ? -1 : 0;
}

/* ---- partition of a group ---- */

/* Next code point of UTF-8 text; a malformed byte reads as U+FFFD, as
 * Java's decoder replaces it, but C0 80 as U+0000: that is how a NUL of
 * the group id is kept in a C string (util/cstr.h). */
static uint32_t grp_rec_utf8_next(const unsigned char **pp, const unsigned char *end)
{
    const unsigned char *p = *pp;
    uint32_t c = *p++;
    if (c == 0xc0 && p < end && *p == 0x80) {
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

/* Metadata record codecs: a thin layer over the generated ones. The byte
 * layout of each record body is its protocol/records/metadata/NAME.def
 * (every type we write is flexible from version 0: compact strings and
 * arrays, a tagged-field section after every struct, tagged fields
 * written only when they differ from their default); the framing of a
 * record value, uvarint frameVersion (1) | uvarint apiKey | uvarint
 * version | body, is at the top of src/proto/proto_rec.c.
 *
 * What we write: TopicRecord v0, PartitionRecord v2, ConfigRecord v0,
 * RemoveTopicRecord v0, FeatureLevelRecord v0 (tests/unit/test_rec_compat
 * holds these to the bytes the earlier hand-written codec wrote). */
#include "cluster/meta_rec.h"

#include <string.h>

static const proto_msg_t *meta_rec_schema(int16_t type)
{
    return proto_rec_find(PROTO_REC_KIND_METADATA, type);
}

void meta_rec_init(meta_rec_t *rec, int16_t type)
{
    const proto_msg_t *msg = meta_rec_schema(type);

    memset(rec, 0, sizeof(*rec));
    rec->type = type;
    if (!msg)
        return;
    rec->version = msg->vmax;
    proto_struct_init(msg->st, &rec->u);
}

const char *meta_rec_type_name(int16_t type)
{
    const proto_msg_t *msg = meta_rec_schema(type);
    return msg ? msg->name : "?";
}

void meta_rec_encode(const meta_rec_t *rec, buf_t *out)
{
    const proto_msg_t *msg = meta_rec_schema(rec->type);

    if (msg) {
        proto_rec_encode(msg, &rec->u, rec->version, out);
        return;
    }
    buf_put_uvarint(out, 1); /* frame version */
    buf_put_uvarint(out, (uint32_t)rec->type);
    buf_put_uvarint(out, (uint32_t)rec->version);
    buf_put_uvarint(out, 0); /* no tagged fields */
}

int meta_rec_decode(meta_rec_t *rec, const uint8_t *p, size_t len, arena_t *arena)
{
    proto_rec_info_t info;
    int rc = proto_rec_decode(PROTO_REC_KIND_METADATA, 0, p, len, &rec->u, sizeof(rec->u),
                              arena, &info);

    if (rc < 0)
        return -1;
    if (rc > 0)
        memset(&rec->u, 0, sizeof(rec->u));
    rec->type = info.type;
    rec->version = info.version;
    return rc;
}

/* Framing of internal records. Each record body is a generated schema of
 * protocol/records/DIR/NAME.def, encoded as an API message body of that
 * version is (proto_codec.c); around it, by kind (big-endian integers,
 * uvarints as in the flexible encoding):
 *
 *   metadata     uvarint frameVersion (= 1) | uvarint type (apiKey) |
 *                uvarint version | body
 *                  the value of a __cluster_metadata record (key null)
 *   group-key, txn-key
 *                int16 type | body at version 0
 *                  the key of a __consumer_offsets / __transaction_state
 *                  record: the type says which record it is
 *   group-value, txn-value, data
 *                int16 version | body
 *                  the matching value (a null value is a tombstone); the
 *                  data records EndTxnMarker (a transaction marker's value)
 *                  and ControlRecordTypeSchema (every control record's
 *                  key: version 0 | int16 ControlRecordType)
 *   control      body, whose first field is int16 Version: the version
 *                  of the body itself
 *                  the value of a KRaft control record, whose type is in
 *                  its key (LeaderChangeMessage, SnapshotHeaderRecord, ...);
 *                  the encoder sets Version to the version it writes
 *
 * A reader that meets a type or version it does not define skips the
 * record (returns 1): a newer writer's records are not corruption. */
#include "proto/proto_rec.h"

#include <string.h>

#include "util/rd.h"

#define PROTO_REC_FRAME_VERSION 1

/* A control record's Version field (the first, protogen checks) is the
 * version it is written at: the copy's is set so the two cannot differ. */
static void rec_encode_control(const proto_msg_t *msg, const void *m, int16_t version,
                               buf_t *out)
{
    proto_rec_control_any_t copy;
    if (msg->st->size > sizeof(copy))
        return; /* not a control record of ours: nothing sane to write */
    memcpy(&copy, m, msg->st->size);
    memcpy(&copy, &version, sizeof(version));
    proto_msg_encode(msg, &copy, version, out);
}

void proto_rec_encode(const proto_msg_t *msg, const void *m, int16_t version, buf_t *out)
{
    switch (msg->kind) {
    case PROTO_REC_KIND_METADATA:
        buf_put_uvarint(out, PROTO_REC_FRAME_VERSION);
        buf_put_uvarint(out, (uint32_t)msg->key);
        buf_put_uvarint(out, (uint32_t)version);
        break;
    case PROTO_REC_KIND_GROUP_KEY:
    case PROTO_REC_KIND_TXN_KEY:
        buf_put_i16(out, msg->key);
        version = 0;
        break;
    case PROTO_REC_KIND_GROUP_VALUE:
    case PROTO_REC_KIND_TXN_VALUE:
    case PROTO_REC_KIND_DATA:
        buf_put_i16(out, version);
        break;
    case PROTO_REC_KIND_CONTROL:
        rec_encode_control(msg, m, version, out);
        return;
    default:
        break;
    }
    proto_msg_encode(msg, m, version, out);
}

/* Reads the framing of a kind's record: the type where the framing holds
 * one, and the version (a control record's leads its body, so rd is not
 * moved past it). Returns 0, or -1 when the framing is short or
 * malformed. */
static int rec_frame(int kind, rd_t *rd, int16_t *type, int16_t *version)
{
    switch (kind) {
    case PROTO_REC_KIND_METADATA: {
        uint32_t frame = rd_uvarint(rd), t = rd_uvarint(rd), v = rd_uvarint(rd);
        if (rd->err || frame != PROTO_REC_FRAME_VERSION || t > INT16_MAX || v > INT16_MAX)
            return -1;
        *type = (int16_t)t;
        *version = (int16_t)v;
        return 0;
    }
    case PROTO_REC_KIND_GROUP_KEY:
    case PROTO_REC_KIND_TXN_KEY:
        *type = rd_i16(rd);
        *version = 0;
        break;
    case PROTO_REC_KIND_GROUP_VALUE:
    case PROTO_REC_KIND_TXN_VALUE:
    case PROTO_REC_KIND_DATA:
        *version = rd_i16(rd);
        break;
    case PROTO_REC_KIND_CONTROL: {
        rd_t peek = *rd;
        *version = rd_i16(&peek);
        return peek.err ? -1 : 0;
    }
    default:
        return -1;
    }
    return rd->err ? -1 : 0;
}

static int rec_body(const proto_msg_t *msg, void *m, int16_t version, const rd_t *rd,
                    arena_t *arena)
{
    if (version < msg->vmin || version > msg->vmax)
        return 1;
    return proto_msg_decode(msg, m, version, rd->p, rd_remain(rd), arena, NULL) ? -1 : 0;
}

int proto_rec_decode(int kind, int16_t type, const uint8_t *buf, size_t len, void *m,
                     size_t msize, arena_t *arena, proto_rec_info_t *info)
{
    proto_rec_info_t unused;
    rd_t rd;

    if (!info)
        info = &unused;
    info->msg = NULL;
    info->type = type;
    rd_init(&rd, buf, len);
    if (rec_frame(kind, &rd, &info->type, &info->version))
        return -1;
    if (!(info->msg = proto_rec_find(kind, info->type)))
        return 1;
    if (info->msg->st->size > msize)
        return -1;
    return rec_body(info->msg, m, info->version, &rd, arena);
}

int proto_rec_read(const proto_msg_t *msg, void *m, int16_t *version, const uint8_t *buf,
                   size_t len, arena_t *arena)
{
    int16_t type = msg->key, ver;
    rd_t rd;

    rd_init(&rd, buf, len);
    if (rec_frame(msg->kind, &rd, &type, &ver))
        return -1;
    if (type != msg->key)
        return 1;
    if (version)
        *version = ver;
    return rec_body(msg, m, ver, &rd, arena);
}

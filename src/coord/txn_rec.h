/* Records of __transaction_state in Kafka's schemas
 * (protocol/records/txn/NAME.def): TransactionLogKey (the transactional
 * id) and TransactionLogValue v0 (the entry; v1 once transaction version
 * 2 is served). A null value is a tombstone: the id is gone. */
#ifndef STRAND_COORD_TXN_REC_H
#define STRAND_COORD_TXN_REC_H

#include <stddef.h>
#include <stdint.h>

#include "coord/txn_int.h"
#include "util/buf.h"

void txn_rec_key(buf_t *out, const char *id, size_t id_len);
/* The value of an entry that becomes to. The partitions are null for
 * Empty, as Kafka writes them, else grouped by topic in their order. */
void txn_rec_value(buf_t *out, const txn_transit_t *to);

/* Decoders: 0, or -1 for a malformed record (or a key of another
 * version). The id is copied into *id (malloc'd, NUL-terminated). The
 * value's partitions are malloc'd into to->tps. */
int txn_rec_key_decode(const uint8_t *p, size_t len, char **id, size_t *id_len);
int txn_rec_value_decode(const uint8_t *p, size_t len, txn_transit_t *to);

#endif

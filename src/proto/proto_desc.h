/* Field descriptor tables: the generated code describes every struct as a
 * table of fields (offset, type, version ranges, tag, default), and one
 * generic walker in proto_codec.c encodes, decodes and initialises all of
 * them. That keeps the generated code small and the wire rules in one
 * place; the cost is a switch per field, which is cheap next to a produce
 * request's record bytes (never touched here). */
#ifndef STRAND_PROTO_DESC_H
#define STRAND_PROTO_DESC_H

#include "proto/proto_types.h"

enum proto_type {
    PROTO_T_BOOL = 1,
    PROTO_T_INT8,
    PROTO_T_INT16,
    PROTO_T_UINT16,
    PROTO_T_INT32,
    PROTO_T_UINT32,
    PROTO_T_INT64,
    PROTO_T_FLOAT64,
    PROTO_T_UUID,
    PROTO_T_STRING,
    PROTO_T_BYTES,
    PROTO_T_RECORDS,
    PROTO_T_STRUCT
};

/* Same layout as every generated `struct { int32_t n; T *v; }`. */
typedef struct {
    int32_t n;
    void *v;
} proto_array_t;

struct proto_struct_s;

/* A version range is [min, max]; min > max means "no version". */
typedef struct proto_field_s {
    const char *name;
    uint32_t off;
    uint8_t type;     /* enum proto_type; the element type for arrays */
    uint8_t array;    /* 1: a proto_array_t of type; 2: a nullable struct, a
                       * proto_array_t of one element (n 1) or null (n -1),
                       * on the wire int8 -1 (null) or 1 and the struct */
    uint8_t noflex;   /* keeps classic encoding in flexible versions */
    uint8_t def_null; /* default is null (string, bytes, records, array) */
    int16_t vmin, vmax; /* versions the field exists in */
    int16_t nmin, nmax; /* versions it may be null in */
    int16_t tmin, tmax; /* versions it is a tagged field in */
    int32_t tag;
    uint32_t elem_size; /* arrays: sizeof one element */
    const struct proto_struct_s *sub; /* struct or array-of-struct */
    int64_t def_i;     /* integer and bool defaults */
    double def_f;      /* float64 default */
    const char *def_s; /* string default; NULL = "" */
} proto_field_t;

/* Regular fields come first in wire order, then tagged fields in
 * ascending tag order (the order they are written in). */
typedef struct proto_struct_s {
    const char *name;
    uint32_t size;
    uint16_t nfields;
    const proto_field_t *fields;
} proto_struct_t;

typedef struct proto_msg_s {
    const char *name; /* e.g. "ProduceRequest", "TopicRecord" */
    const proto_struct_t *st;
    int16_t key;      /* API key or record type; -1 for headers and data records */
    int16_t vmin, vmax;
    int16_t flex_min; /* -1: never flexible */
    uint8_t kind;     /* enum proto_rec_kind; NONE for API messages and headers */
} proto_msg_t;

/* Zero-fills m (st->size bytes) and applies the defaults. */
void proto_struct_init(const proto_struct_t *st, void *m);
/* Decodes a whole message body; see proto.h for the contract. If used is
 * not NULL it receives the number of bytes consumed. Versions outside
 * [vmin, vmax] are rejected. */
int proto_msg_decode(const proto_msg_t *msg, void *m, int16_t version,
                     const uint8_t *buf, size_t len, arena_t *arena,
                     size_t *used);
void proto_msg_encode(const proto_msg_t *msg, const void *m, int16_t version,
                      buf_t *out);
/* 1 when the field value at p equals the field's default (deep for
 * structs). Tagged fields are written only when this is 0. */
int proto_field_is_default(const proto_field_t *f, const void *p);
/* An integer field (PROTO_T_BOOL to PROTO_T_INT64) at p, of its type;
 * other types: stores nothing, loads 0. */
void proto_int_store(uint8_t type, void *p, int64_t v);
int64_t proto_int_load(uint8_t type, const void *p);

/* Generated: the message table, for generic tests and tools. resp 0 gives
 * the request, 1 the response; NULL when undefined. */
const proto_msg_t *proto_msg_lookup(int16_t api_key, int resp);
/* Generated: every API message and header in definition order,
 * NULL-terminated; proto_rec_all the same for the internal records. */
extern const proto_msg_t *const proto_msg_all[];
extern const proto_msg_t *const proto_rec_all[];
extern const proto_msg_t proto_msg_request_header;
extern const proto_msg_t proto_msg_response_header;

#endif

/* protogen's model of the .def files, shared by the parser (protogen.c)
 * and the code writer (protogen_emit.c). The generator is a build tool
 * that runs once and exits: everything it allocates goes through
 * galloc() and is freed at exit, and fail() reports the first error with
 * file:line and exits 1. */
#ifndef STRAND_PROTOGEN_H
#define STRAND_PROTOGEN_H

#include <stdio.h>

#define VMAX 0x7fff

enum {
    T_BOOL = 1, T_INT8, T_INT16, T_UINT16, T_INT32, T_UINT32, T_INT64,
    T_FLOAT64, T_UUID, T_STRING, T_BYTES, T_RECORDS, T_STRUCT
};

/* dsl name, C type, descriptor enum, named array type */
typedef struct {
    const char *dsl, *ctype, *enumname, *arrtype;
} prim_t;
extern const prim_t prims[];

/* Record kinds (0: an API message or a header). The framing of each is
 * in src/proto/proto_rec.c; `keyed` kinds are found by their type. */
enum {
    K_NONE = 0, K_METADATA, K_CONTROL, K_DATA, K_GROUP_KEY, K_GROUP_VALUE,
    K_TXN_KEY, K_TXN_VALUE, K_COUNT
};
typedef struct {
    const char *dsl, *snake, *enumname;
    int keyed;
} kind_t;
extern const kind_t kinds[];

typedef struct { int min, max; } vr_t;

typedef struct sdef sdef_t;

typedef struct {
    char *name, *snake;
    int type, array;
    sdef_t *sub;
    vr_t ver, nul, tagv;
    long tag;
    char *def;
    int noflex;
    const char *file;
    int line;
} fdef_t;

struct sdef {
    char *name;
    char *ctype; /* C type name without the _t */
    fdef_t *f;
    int n, cap;
    int emitted, common, dead;
};

typedef struct {
    char *name;   /* ProduceRequest, RequestHeader, TopicRecord */
    char *prefix; /* proto_produce_req, proto_request_header, proto_rec_topic_record */
    char *snake;  /* records: topic_record (the union member name) */
    int key;      /* API key, record type; -1 for headers and data records */
    int kind;     /* K_* */
    vr_t ver;
    int flex_min;
    sdef_t *top;
    sdef_t **st;
    int ns, caps;
} mdef_t;

typedef struct {
    char *name, *snake;
    int key;
    vr_t ver;
    int flex_min;
    mdef_t *req, *resp;
} adef_t;

/* Everything the .def files define, in file order. */
typedef struct {
    adef_t **apis;
    int napis, capapis;
    mdef_t **msgs; /* every message: headers and records included */
    int nmsgs, capmsgs;
} model_t;

void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void *galloc(size_t n);
char *gstrdup(const char *s);
char *gprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int parse_int(const char *s, long lo, long hi, long *out);
int vr_empty(vr_t v);
/* A nullable struct (not an array of them): in C an array of 0 or 1. */
int is_opt(const fdef_t *f);

/* Writers of proto_gen.h and proto_gen.c (protogen_emit.c). */
void emit_header(FILE *o, const model_t *mod);
void emit_source(FILE *o, const model_t *mod);

#endif

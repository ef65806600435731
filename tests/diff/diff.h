/* strand-diff: a differential test of raw requests against two brokers
 * (tests/diff/README.md). The same corpus of requests (valid, edge cases,
 * malformed frames) goes to a subject (Strand) and a reference (Apache
 * Kafka 4.4); what comes back is compared field by field after the values
 * that legitimately differ are normalized, and every difference is
 * reported, grouped, and checked against the allow list.
 *
 * Files: diff_main.c (options, the run), diff_broker.c (connections,
 * framing, the calls of the set-up), diff_fix.c (fixtures and the
 * placeholders that stand for per-broker values), diff_gen.c (valid
 * requests), diff_edge.c (edge-case variants), diff_mal.c (malformed
 * frames), diff_cmp.c (comparing answers), diff_report.c (grouping, the
 * allow list, the report). */
#ifndef STRAND_DIFF_H
#define STRAND_DIFF_H

#include <stdint.h>

#include "proto/proto.h"
#include "proto/proto_desc.h"
#include "util/smap.h"

#define DIFF_MAX_KEY 128
#define DIFF_NAME_MAX 320

/* Placeholders: requests are generated once, with these strings (and
 * uuids) where a value differs by broker or by case, and each broker's
 * copy gets its own values before encoding (diff_fix_apply); answers get
 * the placeholders back (diff_fix_unapply), so that they compare equal. */
enum diff_tok {
    DIFF_TOK_TOPIC,      /* "@topic": diff-a, 3 partitions with records */
    DIFF_TOK_TOPIC2,     /* "@topic2": diff-b, 1 partition, empty */
    DIFF_TOK_NEWTOPIC,   /* a name no topic has (CreateTopics makes it) */
    DIFF_TOK_DELTOPIC,   /* a topic of 1 partition made for the case */
    DIFF_TOK_GROUP,      /* a group made for the case: one member, stable */
    DIFF_TOK_MEMBER,     /* that member's id */
    DIFF_TOK_NEWGROUP,   /* a group id no group has */
    DIFF_TOK_EMPTYGROUP, /* a group made for the case: one committed offset */
    /* Names of nothing, each the case's own: a case that makes what it
     * names (auto-creation, a join) leaves nothing another case finds. */
    DIFF_TOK_UNKTOPIC,   /* a legal topic name */
    DIFF_TOK_UNKGROUP,   /* a legal group id */
    DIFF_TOK_LONGGROUP,  /* a group id of 300 characters */
    DIFF_TOK_LEN249,     /* a topic name of 249 characters (the longest legal) */
    DIFF_TOK_LEN250,     /* a topic name of 250 characters */
    DIFF_TOK_N
};

/* A generation id that stands for the @group's (an int32 placeholder). */
#define DIFF_GEN_MAGIC 0x0d1ff0

/* "@topic" etc.; NULL past the end. */
const char *diff_tok_name(int tok);
/* The placeholder uuid of a topic token. */
proto_uuid_t diff_tok_uuid(int tok);
/* The token a placeholder uuid stands for, or -1. */
int diff_uuid_tok(const proto_uuid_t *u);

/* One broker's values for the placeholders of the current case. */
typedef struct diff_fix {
    char name[DIFF_TOK_N][DIFF_NAME_MAX]; /* "" = not set up */
    proto_uuid_t id[DIFF_TOK_N];          /* topic ids (zero: unknown) */
    int32_t generation;                   /* of the @group */
} diff_fix_t;

/* A broker under comparison: one connection at a time. */
typedef struct diff_broker {
    const char *label; /* "strand", "kafka" (the report's names) */
    char bootstrap[64];
    int fd; /* -1: not connected */
    int32_t corr;
    int16_t vmin[DIFF_MAX_KEY], vmax[DIFF_MAX_KEY]; /* advertised; -1: not */
    proto_uuid_t topic_id[2];                       /* @topic, @topic2 */
    diff_fix_t fix;                                 /* the current case's */
    arena_t arena;                                  /* answers of one case */
    double busy; /* seconds spent waiting for case answers */
} diff_broker_t;

/* How a case is sent: the body as encoded, or changed on the wire. */
enum diff_mal {
    DIFF_MAL_NONE,
    DIFF_MAL_TRUNC_HALF,   /* body cut to half its length */
    DIFF_MAL_TRUNC_ONE,    /* body without its last byte */
    DIFF_MAL_TRAILING,     /* three bytes after the body */
    DIFF_MAL_ARRAY_HUGE,   /* the first array count 2^31-1 */
    DIFF_MAL_ARRAY_NEG,    /* the first array count -2 (classic versions) */
    DIFF_MAL_STRING_OVER,  /* the first string longer than the frame */
    DIFF_MAL_STRING_NEG,   /* the first string length -2 (classic versions) */
    DIFF_MAL_VARINT_LONG,  /* the first compact length a 7-byte varint */
    DIFF_MAL_TAGS_LIE,     /* the last tagged section claims a field past the end */
    DIFF_MAL_CLIENT_LONG,  /* the header's client id longer than the frame */
    DIFF_MAL_CLIENT_NULL,  /* the header's client id null */
    DIFF_MAL_SIZE_ZERO,    /* a frame of size 0 */
    DIFF_MAL_SIZE_HUGE,    /* a size prefix over socket.request.max.bytes */
    DIFF_MAL_SIZE_NEG,     /* a size prefix of -1 */
};

typedef struct diff_case {
    int id;              /* corpus index: names the case's fixtures */
    int16_t key, ver;    /* the request's message and version */
    int16_t hdr_key, hdr_ver; /* what the header says (usually key, ver) */
    int32_t corr;        /* 0: the broker's next correlation id */
    int mal;             /* enum diff_mal */
    char name[128];      /* "valid", "Topics[0].Name=len249", ... */
    const proto_msg_t *msg; /* the request; NULL: no body */
    void *req;           /* the template, placeholders and all */
    uint32_t uses;       /* 1 << token for each placeholder it uses */
} diff_case_t;

typedef struct diff_corpus {
    diff_case_t *v;
    int n, cap;
    arena_t arena; /* every template and its strings */
    uint64_t seed;
} diff_corpus_t;

/* ---- the corpus (diff_gen.c, diff_edge.c, diff_mal.c) ---- */

void diff_corpus_init(diff_corpus_t *cp, uint64_t seed);
void diff_corpus_free(diff_corpus_t *cp);
/* Appends a case for key/ver (header as the message) and returns it. */
diff_case_t *diff_corpus_add(diff_corpus_t *cp, int16_t key, int16_t ver, const char *name);
/* Every case for API key: the versions of both brokers' ranges that
 * protocol/ defines (a version it lacks is reported on sink), each with
 * the valid request, its edge cases and malformed frames, then the
 * header cases of the API. */
struct diff_sink;
void diff_corpus_api(diff_corpus_t *cp, int16_t key, const diff_broker_t *a,
                     const diff_broker_t *b, struct diff_sink *sink);
/* The cases that belong to no API: unknown keys, lying frame sizes. */
void diff_corpus_global(diff_corpus_t *cp);

/* The valid request of key at ver, placeholders in it, in cp's arena. */
void *diff_gen_valid(diff_corpus_t *cp, const proto_msg_t *msg, int16_t ver);
/* Appends the record batch number n of the corpus (two records, fixed
 * keys, values and timestamps: the same bytes on every run). */
void diff_gen_batch(buf_t *out, int n);
/* Appends a consumer protocol subscription (v0, topic diff-a) and an
 * assignment (v0, diff-a partition 0). */
void diff_gen_subscription(buf_t *out);
void diff_gen_assignment(buf_t *out);
/* A deep copy of m (an encode and a decode), in arena. */
void *diff_copy(const proto_msg_t *msg, const void *m, int16_t ver, arena_t *arena);
/* Adds one case per edge-case variant of tmpl's fields. */
void diff_edge_add(diff_corpus_t *cp, const proto_msg_t *msg, int16_t ver, const void *tmpl);
/* Adds the malformed-frame cases of a version. */
void diff_mal_add(diff_corpus_t *cp, const proto_msg_t *msg, int16_t ver, const void *tmpl);
/* Changes an encoded body (msg at ver) as a body mutation mal says;
 * returns 0, or -1 when the body has nothing such to change. */
int diff_mal_apply(int mal, const proto_msg_t *msg, int16_t ver, buf_t *body);
/* Appends to frame the case's frame around body (header, size prefix and
 * their mutations). Returns whether a marker may follow it. */
int diff_mal_frame(const diff_case_t *c, int32_t corr, const buf_t *body, buf_t *frame);

/* Which placeholders m uses (1 << token). */
uint32_t diff_fix_uses(const proto_msg_t *msg, void *m);

/* ---- brokers (diff_broker.c) ---- */

enum diff_outcome {
    DIFF_ANSWERED, /* an answer with the request's correlation id */
    DIFF_NOANSWER, /* none, but the connection went on (acks=0) */
    DIFF_CLOSED,   /* closed without an answer */
    DIFF_TIMEOUT,  /* nothing within the time allowed */
    DIFF_WRONGID,  /* an answer to another correlation id */
};

typedef struct diff_answer {
    int outcome;
    const uint8_t *body; /* after the response header, in the broker's arena */
    size_t len;
} diff_answer_t;

void diff_broker_init(diff_broker_t *b, const char *label, const char *bootstrap);
void diff_broker_free(diff_broker_t *b);
/* Connects when not connected; 0 or -1. */
int diff_broker_connect(diff_broker_t *b);
void diff_broker_disconnect(diff_broker_t *b);
/* Sends the frame (size prefix included) whose header carries corr, then
 * an ApiVersions v0 request as a marker unless marker is 0, and reads
 * until the answer, the marker's answer, a close or timeout_ms. */
void diff_broker_send(diff_broker_t *b, const buf_t *frame, int32_t corr, int marker,
                      int timeout_ms, diff_answer_t *ans);
/* Builds a frame: size, request header (v2 when ver is flexible in our
 * definitions, else v1; client_id NULL: the null string), body. */
void diff_frame(buf_t *out, int16_t key, int16_t ver, int32_t corr, const char *client_id,
                const uint8_t *body, size_t len);
/* One request of the set-up: encodes req at ver, sends, decodes the answer
 * into resp (in the broker's arena). 0, or -1 when it failed (logged). */
int diff_broker_call(diff_broker_t *b, int16_t key, int16_t ver, const void *req, void *resp);
/* Asks ApiVersions (v3) and fills vmin/vmax. 0 or -1. */
int diff_broker_versions(diff_broker_t *b);

/* ---- fixtures (diff_fix.c) ---- */

/* The shared fixtures on a fresh broker: topics diff-a (3 partitions, 4
 * records in each) and diff-b (1 partition), their ids, a warm group
 * coordinator. 0 or -1. */
int diff_fix_setup(diff_broker_t *b);
/* The per-case fixtures c->uses asks for, into b->fix. 0 or -1. */
int diff_fix_case(diff_broker_t *b, const diff_case_t *c);
/* Placeholders to b->fix's values, in place. */
void diff_fix_apply(const diff_fix_t *fix, const proto_msg_t *msg, void *m);
/* b->fix's values back to placeholders, in place (answers). */
void diff_fix_unapply(const diff_fix_t *fix, const proto_msg_t *msg, void *m);

/* ---- comparing (diff_cmp.c) and reporting (diff_report.c) ---- */

typedef struct diff_allow_s {
    char *api, *cas, *path, *what, *reason;
    int line, used;
} diff_allow_t;

typedef struct diff_group_s {
    int16_t key;
    char *cas, *path, *what;
    uint64_t versions; /* bit v: seen at version v (63: any higher) */
    int count;
    int allowed; /* the allow line, 0: new */
} diff_group_t;

typedef struct diff_sink {
    const char *la, *lb; /* labels of the two brokers */
    diff_group_t *v;
    int n, cap;
    smap_t index; /* "key\tcase\tpath\twhat" -> group number + 1 */
    int total;    /* differences before grouping */
} diff_sink_t;

void diff_sink_init(diff_sink_t *s, const char *la, const char *lb);
void diff_sink_free(diff_sink_t *s);
/* Records one difference (what: "<a's>/<b's>", no spaces). */
void diff_sink_add(diff_sink_t *s, int16_t key, int16_t ver, const char *cas, const char *path,
                   const char *what);

/* Compares the two answers to case c and records what differs. The
 * answers' bodies are decoded in the brokers' arenas. */
void diff_cmp_answers(diff_sink_t *s, const diff_case_t *c, diff_broker_t *a,
                      const diff_answer_t *aa, diff_broker_t *b, const diff_answer_t *ab);

/* Reads the allow list; NULL path: none. Returns the entries (caller
 * frees with diff_allow_free) or NULL on a malformed file (printed). */
diff_allow_t *diff_allow_load(const char *path, int *n);
void diff_allow_free(diff_allow_t *al, int n);
/* Prints the report; returns the number of new (not allowed) groups. */
int diff_report(diff_sink_t *s, diff_allow_t *al, int nal, const char *tsv_path);

/* The API's name ("Produce"), or "key N". Static storage. */
const char *diff_api_name(int16_t key);

#endif

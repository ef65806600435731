/* 0007-api-versions: raw ApiVersions requests.
 *
 * - v0 (header v1): answer = correlation id, error 0, [key min max].
 * - v3 (header v2, with client software name/version): the answer still has
 *   the v0 response header (correlation id only, no tag buffer: ApiVersions
 *   is the exception, so a client can read it before it knows versions), then
 *   a flexible body: error, compact array of [key min max tags], throttle
 *   time, tags. Both answers list the same ranges, parsed to the last byte.
 * - v3 with a client software name Kafka's pattern refuses: error 42
 *   (INVALID_REQUEST) and no keys, as Kafka 4.x answers.
 * - The ranges include every version librdkafka 2.0.2 needs to see
 *   advertised (its feature probes and the versions it sends).
 * - Every key we advertise has the range Kafka 4.4 advertises, taken from
 *   kafka-4.4-api-versions.txt beside this file (Kafka's own answer); with
 *   KAFKA_REF=1 that table must equal the live Kafka's answer exactly.
 * - v5 (KIP-1242 in Kafka's terms: the client names the cluster and node
 *   it means to reach): the right cluster id and node id are answered in
 *   full, a wrong one of either REBOOTSTRAP_REQUIRED (129) with no keys,
 *   only one of the two INVALID_REQUEST (42); v6 (too new) gets error 35
 *   and the v0 answer with our ApiVersions range only. */
#include "testlib/testlib.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_KEYS 200

typedef struct range {
    int16_t key, min, max;
} range;

typedef struct parser {
    const uint8_t *p, *end;
} parser;

static void need(parser *ps, size_t n, const char *what)
{
    TL_ASSERT((size_t)(ps->end - ps->p) >= n, "answer ends inside %s", what);
}

static int16_t get16(parser *ps, const char *what)
{
    need(ps, 2, what);
    ps->p += 2;
    return tl_get_i16(ps->p - 2);
}

static int32_t get32(parser *ps, const char *what)
{
    need(ps, 4, what);
    ps->p += 4;
    return tl_get_i32(ps->p - 4);
}

static uint64_t getuv(parser *ps, const char *what)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        uint8_t b;
        need(ps, 1, what);
        b = *ps->p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return v;
    }
    tl_fail("varint too long in %s", what);
}

static void skip_tags(parser *ps, const char *what)
{
    uint64_t n = getuv(ps, what);
    while (n--) {
        uint64_t size;
        (void)getuv(ps, what); /* tag */
        size = getuv(ps, what);
        need(ps, (size_t)size, what);
        ps->p += size;
    }
}

static int exchange(const tl_req *r, uint8_t **resp)
{
    const char *bs = tl_bootstrap();
    int fd = tl_connect(bs, 10000), len;
    TL_ASSERT(fd >= 0, "connect to %s failed", bs);
    TL_ASSERT_EQ(tl_send_all(fd, r->data, r->len), 0);
    len = tl_recv_frame(fd, resp, 10000);
    TL_ASSERT(len > 0, "no answer");
    close(fd);
    return len;
}

static int ask_v0(range *out)
{
    tl_req r;
    uint8_t *resp;
    parser ps;
    int len, n;

    tl_req_header(&r, 18, 0, 100, "t0007");
    tl_req_finish(&r);
    len = exchange(&r, &resp);
    ps = (parser){resp, resp + len};
    TL_ASSERT_EQ(get32(&ps, "correlation id"), 100);
    TL_ASSERT_EQ(get16(&ps, "error"), 0);
    n = get32(&ps, "array length");
    TL_ASSERT(n > 0 && n <= MAX_KEYS, "%d keys", n);
    for (int i = 0; i < n; i++) {
        out[i].key = get16(&ps, "key");
        out[i].min = get16(&ps, "min");
        out[i].max = get16(&ps, "max");
    }
    TL_ASSERT(ps.p == ps.end, "%d bytes after the v0 body", (int)(ps.end - ps.p));
    free(resp);
    return n;
}

static void v3_request(tl_req *r, int32_t corr, const char *name)
{
    tl_req_header(r, 18, 3, corr, "t0007");
    tl_req_i8(r, 0); /* request header v2: empty tag buffer */
    tl_req_i8(r, (int8_t)(strlen(name) + 1));
    tl_req_bytes(r, name, strlen(name));
    tl_req_i8(r, 4);
    tl_req_bytes(r, "1.0", 3);
    tl_req_i8(r, 0); /* body tags */
    tl_req_finish(r);
}

/* The flexible answer (v3+) to r, parsed to its last byte; returns the
 * key count and sets *err. */
static int ask_flexible(const tl_req *r, int32_t corr, range *out, int16_t *err)
{
    uint8_t *resp;
    parser ps;
    int len, n;

    len = exchange(r, &resp);
    ps = (parser){resp, resp + len};
    TL_ASSERT_EQ(get32(&ps, "correlation id"), corr);
    /* A response header v1 would put a 0 tag byte here, and the error code
     * would read as 0x00XX or fail the exact-length check below. */
    *err = get16(&ps, "error");
    n = (int)getuv(&ps, "compact array length") - 1;
    TL_ASSERT(n >= 0 && n <= MAX_KEYS, "%d keys", n);
    for (int i = 0; i < n; i++) {
        out[i].key = get16(&ps, "key");
        out[i].min = get16(&ps, "min");
        out[i].max = get16(&ps, "max");
        skip_tags(&ps, "key tags");
    }
    TL_ASSERT_EQ(get32(&ps, "throttle time"), 0);
    skip_tags(&ps, "body tags");
    TL_ASSERT(ps.p == ps.end, "%d bytes after the flexible body", (int)(ps.end - ps.p));
    free(resp);
    return n;
}

static int ask_v3(range *out)
{
    tl_req r;
    int16_t err;
    v3_request(&r, 300, "strand-tests");
    int n = ask_flexible(&r, 300, out, &err);
    TL_ASSERT_EQ(err, 0);
    TL_ASSERT(n > 0, "no keys");
    return n;
}

/* v5 with the cluster id (NULL: null) and node id the client means. */
static int ask_v5(const char *cluster, int32_t node, range *out, int16_t *err)
{
    tl_req r;
    tl_req_header(&r, 18, 5, 500, "t0007");
    tl_req_i8(&r, 0); /* request header v2: empty tag buffer */
    tl_req_i8(&r, 6); /* compact strings: length + 1 */
    tl_req_bytes(&r, "t0007", 5);
    tl_req_i8(&r, 4);
    tl_req_bytes(&r, "4.4", 3);
    tl_req_i8(&r, cluster ? (int8_t)(strlen(cluster) + 1) : 0);
    if (cluster)
        tl_req_bytes(&r, cluster, strlen(cluster));
    tl_req_i32(&r, node);
    tl_req_i8(&r, 0); /* body tags */
    tl_req_finish(&r);
    return ask_flexible(&r, 500, out, err);
}

/* v6 is newer than Kafka 4.4 and we know: error 35 and, at v0, the range
 * of ApiVersions alone, so that the client asks again within it. */
static void ask_v6(void)
{
    static const uint8_t want[] = {0, 0, 0, 66, 0, 35, 0, 0, 0, 1, 0, 18, 0, 0, 0, 5};
    tl_req r;
    uint8_t *resp;
    tl_req_header(&r, 18, 6, 66, "t0007");
    tl_req_i8(&r, 0);
    tl_req_i8(&r, 2);
    tl_req_bytes(&r, "x", 1);
    tl_req_i8(&r, 2);
    tl_req_bytes(&r, "1", 1);
    tl_req_i8(&r, 0);
    tl_req_i32(&r, -1);
    tl_req_i8(&r, 0);
    tl_req_finish(&r);
    int len = exchange(&r, &resp);
    TL_ASSERT(len == (int)sizeof(want) && memcmp(resp, want, sizeof(want)) == 0,
              "answer to ApiVersions v6: %d bytes, error %d", len,
              len >= 6 ? tl_get_i16(resp + 4) : -1);
    free(resp);
}

/* Kafka refuses software names outside [a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?
 * and answers exactly: error 42, empty key array, throttle 0, no tags. */
static void ask_v3_bad_name(void)
{
    static const uint8_t want[] = {0, 0, 0, 44, 0, 42, 1, 0, 0, 0, 0, 0};
    tl_req r;
    uint8_t *resp;
    int len;
    v3_request(&r, 44, "bad name!");
    len = exchange(&r, &resp);
    TL_ASSERT(len == (int)sizeof(want) && memcmp(resp, want, sizeof(want)) == 0,
              "answer to a bad software name: %d bytes, error %d", len,
              len >= 6 ? tl_get_i16(resp + 4) : -1);
    free(resp);
}

static const range *find(const range *r, int n, int16_t key)
{
    for (int i = 0; i < n; i++)
        if (r[i].key == key)
            return &r[i];
    return NULL;
}

/* kafka-4.4-api-versions.txt: "key min max name" lines, # comments. */
static int load_kafka(range *out)
{
    const char *src = getenv("STRAND_SRCDIR");
    char path[1024], line[256];
    int n = 0;
    snprintf(path, sizeof(path), "%s/tests/integration/kafka-4.4-api-versions.txt",
             src && *src ? src : "..");
    FILE *f = fopen(path, "r");
    TL_ASSERT(f != NULL, "cannot read %s: %s (set STRAND_SRCDIR)", path, strerror(errno));
    while (fgets(line, sizeof(line), f)) {
        int k, lo, hi;
        if (line[0] == '#' || line[0] == '\n')
            continue;
        TL_ASSERT(sscanf(line, "%d %d %d", &k, &lo, &hi) == 3 && n < MAX_KEYS, "%s: bad line %s",
                  path, line);
        out[n++] = (range){(int16_t)k, (int16_t)lo, (int16_t)hi};
    }
    fclose(f);
    TL_ASSERT(n > 0, "%s: no keys", path);
    return n;
}

/* Against Strand: every key it advertises has Kafka's range. Against
 * Kafka: the table is its answer, key for key. Lists every difference
 * before failing. */
static void check_kafka(const range *got, int n)
{
    static range want[MAX_KEYS];
    int nw = load_kafka(want), bad = 0, missing = 0;
    for (int i = 0; i < n; i++) {
        const range *k = find(want, nw, got[i].key);
        if (k && k->min == got[i].min && k->max == got[i].max)
            continue;
        bad++;
        if (k)
            tl_log("key %d: advertised %d..%d, Kafka 4.4 %d..%d", got[i].key, got[i].min,
                   got[i].max, k->min, k->max);
        else
            tl_log("key %d: advertised %d..%d, Kafka 4.4 has no such key", got[i].key,
                   got[i].min, got[i].max);
    }
    for (int i = 0; i < nw; i++)
        if (!find(got, n, want[i].key)) {
            missing++;
            if (tl_is_kafka())
                tl_log("key %d: in the table, not in Kafka's answer", want[i].key);
        }
    TL_ASSERT(bad == 0, "%d key(s) advertised with another range than Kafka 4.4's", bad);
    if (tl_is_kafka())
        TL_ASSERT(missing == 0, "kafka-4.4-api-versions.txt is not the live Kafka's answer");
    tl_log("%d keys with Kafka 4.4's ranges; %d of its keys not advertised", n, missing);
}

/* v5 against the cluster and node that librdkafka's metadata shows. */
static void check_v5(void)
{
    static range v5[MAX_KEYS];
    const struct rd_kafka_metadata *md;
    char wrong[64];
    int16_t err;
    int n;
    rd_kafka_t *rk = tl_new(RD_KAFKA_PRODUCER, tl_conf(tl_bootstrap()));
    TL_ASSERT(rd_kafka_metadata(rk, 0, NULL, &md, 10000) == 0 && md->broker_cnt == 1,
              "metadata");
    int32_t node = md->brokers[0].id;
    char *cluster = rd_kafka_clusterid(rk, 10000);
    TL_ASSERT(cluster != NULL, "no cluster id");
    rd_kafka_metadata_destroy(md);
    rd_kafka_destroy(rk);

    n = ask_v5(NULL, -1, v5, &err);
    TL_ASSERT(err == 0 && n > 0, "v5 without a target: error %d, %d keys", err, n);
    check_kafka(v5, n);
    n = ask_v5(cluster, node, v5, &err);
    TL_ASSERT(err == 0 && n > 0, "v5 to cluster %s node %d: error %d", cluster, node, err);
    n = ask_v5(cluster, node + 1, v5, &err);
    TL_ASSERT(err == 129 && n == 0, "v5 to node %d of %d: error %d", node + 1, node, err);
    snprintf(wrong, sizeof(wrong), "%sX", cluster);
    n = ask_v5(wrong, node, v5, &err);
    TL_ASSERT(err == 129 && n == 0, "v5 to cluster %s: error %d", wrong, err);
    n = ask_v5(cluster, -1, v5, &err);
    TL_ASSERT(err == 42 && n == 0, "v5 with a cluster id only: error %d", err);
    n = ask_v5(NULL, node, v5, &err);
    TL_ASSERT(err == 42 && n == 0, "v5 with a node id only: error %d", err);
    free(cluster);
}

/* Versions librdkafka 2.0.2 needs inside the advertised range: its feature
 * probes (MSGVER2, ZSTD, idempotence, groups, ...) and, for the APIs it
 * uses, the version it sends (API-TABLE 4.2). */
static const struct {
    int16_t key;
    const char *name;
    int16_t versions[4];
    int nversions;
} needs[] = {
    {0, "Produce", {0, 3, 7}, 3},        {1, "Fetch", {4, 10, 11}, 3},
    {2, "ListOffsets", {1, 2}, 2},        {3, "Metadata", {4}, 1},
    {8, "OffsetCommit", {2, 7}, 2},       {9, "OffsetFetch", {1, 7}, 2},
    {10, "FindCoordinator", {0, 2}, 2},   {11, "JoinGroup", {0, 5}, 2},
    {12, "Heartbeat", {0, 3}, 2},         {13, "LeaveGroup", {0, 1}, 2},
    {14, "SyncGroup", {0, 3}, 2},         {18, "ApiVersions", {0, 3}, 2},
    {19, "CreateTopics", {4}, 1},         {22, "InitProducerId", {0, 4}, 2},
};

/* Lists every shortfall before failing, so one run shows all that is missing. */
static void check_needs(const range *r, int n)
{
    int missing = 0;
    for (size_t i = 0; i < sizeof(needs) / sizeof(needs[0]); i++) {
        const range *got = find(r, n, needs[i].key);
        if (!got) {
            tl_log("%s (%d) is not advertised", needs[i].name, needs[i].key);
            missing++;
            continue;
        }
        for (int v = 0; v < needs[i].nversions; v++) {
            if (got->min <= needs[i].versions[v] && needs[i].versions[v] <= got->max)
                continue;
            tl_log("%s (%d) advertised %d..%d, librdkafka 2.0.2 needs %d", needs[i].name,
                   needs[i].key, got->min, got->max, needs[i].versions[v]);
            missing++;
        }
    }
    TL_ASSERT(missing == 0, "%d version(s) librdkafka 2.0.2 needs are not advertised", missing);
}

int main(void)
{
    static range v0[MAX_KEYS], v3[MAX_KEYS];
    int n0, n3;

    tl_init("0007-api-versions");
    tl_bootstrap();
    n0 = ask_v0(v0);
    n3 = ask_v3(v3);
    TL_ASSERT_EQ(n0, n3);
    for (int i = 0; i < n0; i++) {
        const range *o = find(v3, n3, v0[i].key);
        TL_ASSERT(o != NULL, "key %d in the v0 answer only", v0[i].key);
        TL_ASSERT(o->min == v0[i].min && o->max == v0[i].max, "key %d: v0 %d..%d, v3 %d..%d",
                  v0[i].key, v0[i].min, v0[i].max, o->min, o->max);
        TL_ASSERT(v0[i].min >= 0 && v0[i].min <= v0[i].max, "key %d: range %d..%d",
                  v0[i].key, v0[i].min, v0[i].max);
        TL_ASSERT(find(v0 + i + 1, n0 - i - 1, v0[i].key) == NULL, "key %d twice", v0[i].key);
    }
    ask_v3_bad_name();
    check_needs(v0, n0);
    check_kafka(v3, n3);
    check_v5();
    ask_v6();
    tl_log("%d APIs advertised, the same in v0 and v3; librdkafka's needs met", n0);
    return tl_done();
}

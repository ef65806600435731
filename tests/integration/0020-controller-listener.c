/* 0020-controller-listener: a combined node answers on its CONTROLLER
 * listener as a Kafka 4.4 controller does, and keeps the broker's APIs to
 * the broker listener.
 *
 * - ApiVersions v3 on the controller listener: every key advertised there
 *   has the range Kafka 4.4 advertises there, taken from
 *   kafka-4.4-controller-api-versions.txt beside this file (Kafka's own
 *   answer); every key of that table Strand implements is advertised,
 *   except Fetch (on a controller listener it is the quorum's fetch of
 *   the metadata log, which the Raft driver serves: Strand-specific until
 *   then). With KAFKA_REF=1 the table must equal the live answer.
 * - A broker-only API (Metadata, Produce) on the controller listener is
 *   refused as an unknown API there: the connection is closed.
 * - DescribeCluster on the controller listener: endpoint type 2 describes
 *   the controllers (this node at its controller listener), type 1 is
 *   MISMATCHED_ENDPOINT_TYPE (v0, which cannot ask for type 2,
 *   INVALID_REQUEST), with Kafka's message.
 * - The broker listener's ApiVersions lists no controller-only key. */
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

static char ctl_addr[64];
static int ctl_port;

/* ---- the answer ---- */

typedef struct parser {
    const uint8_t *p, *end;
} parser;

static const uint8_t *take(parser *ps, size_t n, const char *what)
{
    TL_ASSERT((size_t)(ps->end - ps->p) >= n, "answer ends inside %s", what);
    ps->p += n;
    return ps->p - n;
}

static int16_t get16(parser *ps, const char *what)
{
    return tl_get_i16(take(ps, 2, what));
}

static int32_t get32(parser *ps, const char *what)
{
    return tl_get_i32(take(ps, 4, what));
}

static uint64_t getuv(parser *ps, const char *what)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        uint8_t b = *take(ps, 1, what);
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return v;
    }
    tl_fail("%s: varint too long", what);
}

/* A compact string: its text into out (cap bytes), -1 for null. */
static int get_cstr(parser *ps, char *out, size_t cap, const char *what)
{
    uint64_t n = getuv(ps, what);
    if (n == 0)
        return -1;
    const uint8_t *p = take(ps, (size_t)(n - 1), what);
    snprintf(out, cap, "%.*s", (int)(n - 1), (const char *)p);
    return (int)(n - 1);
}

static void skip_tags(parser *ps, const char *what)
{
    uint64_t n = getuv(ps, what);
    for (uint64_t i = 0; i < n; i++) {
        getuv(ps, what);
        take(ps, (size_t)getuv(ps, what), what);
    }
}

/* Sends r to addr; returns the answer's length (*resp, freed by the
 * caller), or -1 when the connection was closed without one. */
static int exchange(const char *addr, const tl_req *r, uint8_t **resp)
{
    int fd = tl_connect(addr, 10000), len;

    TL_ASSERT(fd >= 0, "connect to %s failed", addr);
    TL_ASSERT_EQ(tl_send_all(fd, r->data, r->len), 0);
    len = tl_recv_frame(fd, resp, 10000);
    close(fd);
    return len > 0 ? len : -1;
}

static int ask_versions(const char *addr, range *out)
{
    tl_req r;
    uint8_t *resp;
    parser ps;
    int len, n;

    tl_req_header(&r, 18, 3, 300, "t0020");
    tl_req_i8(&r, 0); /* header tags */
    tl_req_i8(&r, 6);
    tl_req_bytes(&r, "t0020", 5);
    tl_req_i8(&r, 4);
    tl_req_bytes(&r, "1.0", 3);
    tl_req_i8(&r, 0);
    tl_req_finish(&r);
    len = exchange(addr, &r, &resp);
    TL_ASSERT(len > 0, "%s: no ApiVersions answer", addr);
    ps = (parser){resp, resp + len};
    TL_ASSERT_EQ(get32(&ps, "correlation id"), 300);
    TL_ASSERT_EQ(get16(&ps, "error"), 0);
    n = (int)getuv(&ps, "keys") - 1;
    TL_ASSERT(n > 0 && n <= MAX_KEYS, "%d keys", n);
    for (int i = 0; i < n; i++) {
        out[i].key = get16(&ps, "key");
        out[i].min = get16(&ps, "min");
        out[i].max = get16(&ps, "max");
        skip_tags(&ps, "key tags");
    }
    TL_ASSERT_EQ(get32(&ps, "throttle"), 0);
    skip_tags(&ps, "body tags");
    TL_ASSERT(ps.p == ps.end, "%d bytes after the body", (int)(ps.end - ps.p));
    free(resp);
    return n;
}

static const range *find(const range *r, int n, int16_t key)
{
    for (int i = 0; i < n; i++)
        if (r[i].key == key)
            return &r[i];
    return NULL;
}

static int load_table(range *out)
{
    const char *src = getenv("STRAND_SRCDIR");
    char path[1024], line[256];
    int n = 0, k, lo, hi;
    FILE *f;

    snprintf(path, sizeof(path), "%s/tests/integration/kafka-4.4-controller-api-versions.txt",
             src && *src ? src : "..");
    f = fopen(path, "r");
    TL_ASSERT(f, "cannot read %s: %s (set STRAND_SRCDIR)", path, strerror(errno));
    while (fgets(line, sizeof(line), f)) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        TL_ASSERT(sscanf(line, "%d %d %d", &k, &lo, &hi) == 3 && n < MAX_KEYS, "bad line %s",
                  line);
        out[n++] = (range){(int16_t)k, (int16_t)lo, (int16_t)hi};
    }
    fclose(f);
    return n;
}

/* ---- the checks ---- */

/* The keys Kafka 4.4 serves on controller listeners only (Vote,
 * BeginQuorumEpoch, EndQuorumEpoch, AlterPartition, Envelope,
 * FetchSnapshot, BrokerRegistration, BrokerHeartbeat, AllocateProducerIds,
 * ControllerRegistration, AssignReplicasToDirs, UpdateRaftVoter). */
static const int16_t controller_only[] = {52, 53, 54, 56, 58, 59, 62, 63, 67, 70, 73, 82};

static void check_versions(const char *broker_addr)
{
    static range ctl[MAX_KEYS], brk[MAX_KEYS], want[MAX_KEYS];
    int nc = ask_versions(ctl_addr, ctl), nb = ask_versions(broker_addr, brk);
    int nw = load_table(want), bad = 0, served = 0;

    for (int i = 0; i < nc; i++) {
        const range *k = find(want, nw, ctl[i].key);
        if (k && k->min == ctl[i].min && k->max == ctl[i].max)
            continue;
        bad++;
        tl_log("key %d: advertised %d..%d on the controller listener, Kafka %d..%d", ctl[i].key,
               ctl[i].min, ctl[i].max, k ? k->min : -1, k ? k->max : -1);
    }
    TL_ASSERT(bad == 0, "%d controller key(s) not as Kafka 4.4 advertises them", bad);
    for (int i = 0; i < nw; i++) {
        int in_ctl = find(ctl, nc, want[i].key) != NULL;
        if (tl_is_kafka())
            TL_ASSERT(in_ctl, "key %d: in the table, not in Kafka's answer", want[i].key);
        else if (find(brk, nb, want[i].key) && want[i].key != 1)
            TL_ASSERT(in_ctl, "key %d: implemented, not advertised on the controller listener",
                      want[i].key);
        served += in_ctl;
    }
    if (tl_is_kafka())
        TL_ASSERT_EQ(nc, nw);
    for (size_t i = 0; i < sizeof(controller_only) / sizeof(controller_only[0]); i++)
        TL_ASSERT(!find(brk, nb, controller_only[i]),
                  "controller-only key %d advertised on the broker listener", controller_only[i]);
    tl_log("controller listener: %d keys, each with Kafka 4.4's range (%d of its %d)", nc, served,
           nw);
}

/* A broker-only API there is refused as an unknown one: closed. */
static void check_broker_only(void)
{
    tl_req r;
    uint8_t *resp = NULL;

    tl_req_header(&r, 3, 12, 7, "t0020"); /* Metadata v12, all topics */
    tl_req_i8(&r, 0);
    tl_req_i8(&r, 0); /* topics: null */
    tl_req_i8(&r, 0); /* allow_auto_topic_creation */
    tl_req_i8(&r, 0); /* include_topic_authorized_operations */
    tl_req_i8(&r, 0);
    tl_req_finish(&r);
    TL_ASSERT(exchange(ctl_addr, &r, &resp) < 0, "Metadata answered on the controller listener");
    tl_req_header(&r, 0, 9, 8, "t0020"); /* Produce v9: closed before its body is read */
    tl_req_i8(&r, 0);
    tl_req_i8(&r, 0);
    tl_req_finish(&r);
    TL_ASSERT(exchange(ctl_addr, &r, &resp) < 0, "Produce answered on the controller listener");
    tl_log("Metadata and Produce on the controller listener: connection closed");
}

/* DescribeCluster v(ver) with endpoint type et (v0: none); returns the
 * error code, the message and the first node in id/host/port. */
static int16_t describe_cluster(int ver, int et, char *msg, int32_t *id, char *host, int32_t *port)
{
    tl_req r;
    uint8_t *resp;
    parser ps;
    int len;

    tl_req_header(&r, 60, (int16_t)ver, 9, "t0020");
    tl_req_i8(&r, 0);
    tl_req_i8(&r, 0); /* include_cluster_authorized_operations */
    if (ver >= 1)
        tl_req_i8(&r, (int8_t)et);
    if (ver >= 2)
        tl_req_i8(&r, 0); /* include_fenced_brokers */
    tl_req_i8(&r, 0);
    tl_req_finish(&r);
    len = exchange(ctl_addr, &r, &resp);
    TL_ASSERT(len > 0, "DescribeCluster v%d: no answer", ver);
    ps = (parser){resp, resp + len};
    get32(&ps, "correlation id");
    skip_tags(&ps, "header tags");
    get32(&ps, "throttle");
    int16_t err = get16(&ps, "error");
    msg[0] = '\0';
    get_cstr(&ps, msg, 256, "message");
    if (ver >= 1)
        take(&ps, 1, "endpoint type");
    char cid[64];
    get_cstr(&ps, cid, sizeof(cid), "cluster id");
    get32(&ps, "controller id");
    *id = -1;
    if (getuv(&ps, "brokers") > 1) {
        *id = get32(&ps, "broker id");
        get_cstr(&ps, host, 256, "host");
        *port = get32(&ps, "port");
    }
    free(resp);
    return err;
}

static void check_describe_cluster(void)
{
    static const char mismatch[] = "The request was sent to an endpoint of type CONTROLLER, but "
                                   "we wanted an endpoint of type BROKER";
    char msg[256], host[256];
    int32_t id, port;

    TL_ASSERT_EQ(describe_cluster(1, 2, msg, &id, host, &port), 0);
    TL_ASSERT(id == 1 && port == ctl_port && !strcmp(host, "127.0.0.1"),
              "controllers: node %d at %s:%d, expected 1 at %s", id, host, port, ctl_addr);
    TL_ASSERT_EQ(describe_cluster(2, 2, msg, &id, host, &port), 0);
    TL_ASSERT_EQ(port, ctl_port);
    TL_ASSERT_EQ(describe_cluster(1, 1, msg, &id, host, &port), 114);
    TL_ASSERT(!strcmp(msg, mismatch), "message '%s'", msg);
    TL_ASSERT_EQ(id, -1);
    TL_ASSERT_EQ(describe_cluster(0, 1, msg, &id, host, &port), 42);
    TL_ASSERT(!strcmp(msg, mismatch), "message '%s'", msg);
    TL_ASSERT_EQ(describe_cluster(1, 3, msg, &id, host, &port), 115);
    TL_ASSERT(!strcmp(msg, "Unsupported endpoint type 3"), "message '%s'", msg);
    tl_log("DescribeCluster on the controller listener: the controllers; types 1 and 3 refused");
}

/* The controller port from dir/server.properties (written for Strand by
 * the test library, for Kafka by kafka-ref.sh). */
static void find_controller(const char *dir)
{
    char line[1024], *p;
    FILE *f = fopen(tl_fmt("%s/server.properties", dir), "r");

    TL_ASSERT(f, "%s/server.properties: %s", dir, strerror(errno));
    while (fgets(line, sizeof(line), f))
        if (!strncmp(line, "listeners=", 10) && (p = strstr(line, "CONTROLLER://127.0.0.1:")))
            ctl_port = atoi(p + strlen("CONTROLLER://127.0.0.1:"));
    fclose(f);
    TL_ASSERT(ctl_port > 0, "no CONTROLLER listener in %s/server.properties", dir);
    snprintf(ctl_addr, sizeof(ctl_addr), "127.0.0.1:%d", ctl_port);
}

int main(void)
{
    tl_broker b = {0};
    char *dir;

    tl_init("0020-controller-listener");
    dir = tl_scratch_dir("0020");
    tl_broker_start(&b, dir, NULL);
    find_controller(b.dir);
    check_versions(b.bootstrap);
    check_broker_only();
    check_describe_cluster();
    if (b.kafka)
        tl_broker_stop(&b);
    else
        TL_ASSERT_EQ(tl_broker_stop(&b), 0);
    free(dir);
    return tl_done();
}

/* Metadata snapshots (src/cluster/meta_snap.h, meta_image_recs.h): image
 * to snapshot bytes to image over random images, the files (atomic write,
 * list, load, raw reads), torn and corrupt snapshots refused, and the
 * snapshots Apache Kafka 4.4 writes: they load, and for the bootstrap
 * snapshot our writer gives the same bytes, batch by batch. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cluster/meta_image.h"
#include "cluster/meta_image_recs.h"
#include "cluster/meta_snap.h"
#include "log/log_batch.h"
#include "proto/proto_gen.h"
#include "tests/unit/meta_snap_kafka.h"
#include "unit.h"
#include "unit_image.h"

static meta_str_t S(const char *s)
{
    meta_str_t v = {s, (int32_t)strlen(s)};
    return v;
}

static uint64_t rng_state;
static uint32_t rnd(uint32_t n)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(rng_state >> 33) % n;
}

static void apply(meta_image_t *img, const meta_rec_t *rec)
{
    char err[256];
    CU_ASSERT_EQUAL_FATAL(meta_image_apply(img, rec, err, sizeof(err)), 0);
}

static void rand_topic(meta_image_t *img, int t)
{
    char name[32];
    meta_rec_t rec;
    uint8_t id[16];
    int32_t reps[4], isr[4];
    proto_uuid_t dir = {{0}};

    snprintf(name, sizeof(name), "%s%d", rnd(2) ? "t." : "t_", t);
    for (int i = 0; i < 16; i++)
        id[i] = (uint8_t)rnd(256);
    meta_rec_init(&rec, META_REC_TOPIC);
    rec.u.topic.name = S(name);
    memcpy(rec.u.topic.topic_id.b, id, 16);
    apply(img, &rec);
    int np = 1 + (int)rnd(5);
    for (int p = 0; p < np; p++) {
        meta_rec_init(&rec, META_REC_PARTITION);
        meta_part_rec_t *r = &rec.u.part;
        r->partition_id = p;
        memcpy(r->topic_id.b, id, 16);
        r->replicas.n = 1 + (int32_t)rnd(4);
        r->isr.n = 1 + (int32_t)rnd((uint32_t)r->replicas.n);
        for (int i = 0; i < 4; i++)
            reps[i] = isr[i] = (int32_t)rnd(10);
        r->replicas.v = reps;
        r->isr.v = isr;
        r->removing_replicas.n = r->adding_replicas.n = 0;
        r->leader = reps[0];
        r->leader_epoch = (int32_t)rnd(100);
        r->partition_epoch = (int32_t)rnd(100);
        /* each replica its own dir; zero = unassigned, sometimes */
        proto_uuid_t dirs[4] = {dir, dir, dir, dir};
        for (int i = 0; i < 4; i++)
            dirs[i].b[0] = (uint8_t)rnd(3), dirs[i].b[1] = (uint8_t)i;
        r->directories.n = r->replicas.n;
        r->directories.v = dirs;
        apply(img, &rec);
    }
}

static void rand_config(meta_image_t *img, int8_t type, const char *res, int k)
{
    char key[32], val[32];
    meta_rec_t rec;
    snprintf(key, sizeof(key), "key.%d", k);
    snprintf(val, sizeof(val), "%u", rnd(100000));
    meta_rec_init(&rec, META_REC_CONFIG);
    rec.u.config.resource_type = type;
    rec.u.config.resource_name = S(res);
    rec.u.config.name = S(key);
    rec.u.config.value = S(val);
    apply(img, &rec);
}

/* A broker's registration: endpoints, features, maybe a rack and log
 * dirs, fenced or not, in controlled shutdown or not. */
static void rand_broker(meta_image_t *img, int32_t id)
{
    meta_rec_t rec;
    proto_rec_register_broker_record_broker_endpoint_t eps[2];
    proto_rec_register_broker_record_broker_feature_t fs[2];
    proto_uuid_t dirs[2];
    proto_rec_register_broker_record_t *r = &rec.u.register_broker;
    meta_rec_init(&rec, META_REC_REGISTER_BROKER);
    r->broker_id = id;
    r->incarnation_id.b[3] = (uint8_t)rnd(256);
    r->broker_epoch = rnd(1000);
    memset(eps, 0, sizeof(eps));
    eps[0].name = S("PLAINTEXT");
    eps[0].host = S("127.0.0.1");
    eps[0].port = (uint16_t)(9000 + id);
    eps[1].name = S("SSL");
    eps[1].host = S("broker.example");
    eps[1].port = (uint16_t)(9100 + id);
    eps[1].security_protocol = 1;
    r->end_points.n = 1 + (int32_t)rnd(2);
    r->end_points.v = eps;
    fs[0].name = S("metadata.version");
    fs[0].min_supported_version = 7;
    fs[0].max_supported_version = (int16_t)(20 + rnd(10));
    fs[1].name = S("group.version");
    fs[1].min_supported_version = 0;
    fs[1].max_supported_version = 1;
    r->features.n = (int32_t)rnd(3);
    r->features.v = fs;
    r->rack = rnd(2) ? S("rack-a") : (meta_str_t){NULL, -1};
    r->fenced = rnd(2);
    r->in_controlled_shutdown = rnd(2);
    memset(dirs, 0, sizeof(dirs));
    dirs[0].b[0] = (uint8_t)id;
    dirs[1].b[1] = (uint8_t)rnd(256);
    r->log_dirs.n = (int32_t)rnd(3);
    r->log_dirs.v = dirs;
    apply(img, &rec);
}

static void rand_controller(meta_image_t *img, int32_t id)
{
    meta_rec_t rec;
    proto_rec_register_controller_record_controller_endpoint_t ep;
    proto_rec_register_controller_record_controller_feature_t f;
    proto_rec_register_controller_record_t *r = &rec.u.register_controller;
    meta_rec_init(&rec, META_REC_REGISTER_CONTROLLER);
    r->controller_id = id;
    r->incarnation_id.b[5] = (uint8_t)rnd(256);
    memset(&ep, 0, sizeof(ep));
    ep.name = S("CONTROLLER");
    ep.host = S("127.0.0.1");
    ep.port = (uint16_t)(9093 + id);
    r->end_points.n = 1;
    r->end_points.v = &ep;
    f.name = S("kraft.version");
    f.min_supported_version = 0;
    f.max_supported_version = 1;
    r->features.n = (int32_t)rnd(2);
    r->features.v = &f;
    apply(img, &rec);
}

static void rand_image(meta_image_t *img)
{
    meta_rec_t rec;
    static const char *feats[] = {"metadata.version", "group.version", "transaction.version",
                                  "share.version"};
    meta_image_init(img);
    for (int i = 0; i < 4; i++) {
        meta_rec_init(&rec, META_REC_FEATURE_LEVEL);
        rec.u.feature.name = S(feats[i]);
        rec.u.feature.feature_level = (int16_t)rnd(30);
        apply(img, &rec);
    }
    for (int32_t b = (int32_t)rnd(5); b > 0; b--)
        rand_broker(img, 3 + b);
    for (int32_t c = (int32_t)rnd(4); c > 0; c--)
        rand_controller(img, c);
    int nt = (int)rnd(40);
    for (int t = 0; t < nt; t++)
        rand_topic(img, t);
    size_t pos = 0;
    mi_topic_t *t;
    while ((t = meta_image_topic_next(img, &pos)) != NULL)
        for (int k = (int)rnd(3); k > 0; k--)
            rand_config(img, META_RES_TOPIC, t->name, (int)rnd(5));
    for (int k = (int)rnd(4); k > 0; k--)
        rand_config(img, META_RES_BROKER, rnd(2) ? "" : "1", (int)rnd(5));
    if (rnd(2)) {
        meta_rec_init(&rec, META_REC_PRODUCER_IDS);
        rec.u.producer_ids.next_producer_id = 1000 * (1 + (int64_t)rnd(50));
        apply(img, &rec);
    }
}

/* ---- tests ---- */

static void test_round_trip_random(void)
{
    meta_snap_id_t id = {1234, 7};
    for (int seed = 1; seed <= 200; seed++) {
        meta_image_t img, back;
        meta_snap_info_t info;
        buf_t b;
        char err[256] = "";
        rng_state = (uint64_t)seed;
        rand_image(&img);
        buf_init(&b);
        meta_snap_build(&b, id, &img, 555, NULL, 0, 1000 + seed);
        meta_image_init(&back);
        memset(&info, 0, sizeof(info));
        int rc = meta_snap_parse(b.p, b.len, &back, &info, err, sizeof(err));
        if (rc != 0)
            printf("seed %d: %s\n", seed, err);
        CU_ASSERT_EQUAL(rc, 0);
        CU_ASSERT_EQUAL(info.last_ts, 555);
        CU_ASSERT(image_eq(&img, &back));
        meta_image_free(&img);
        meta_image_free(&back);
        buf_free(&b);
    }
}

/* Many records: several data batches of at most 1024, offsets following on. */
static void test_batches(void)
{
    meta_image_t img, back;
    meta_snap_id_t id = {99, 3};
    buf_t b;
    char err[256];
    int nbatches = 0;

    meta_image_init(&img);
    for (int t = 0; t < 300; t++)
        rand_topic(&img, t);
    buf_init(&b);
    meta_snap_build(&b, id, &img, 1, NULL, 0, 2);
    for (size_t off = 0; off < b.len; nbatches++) {
        log_batch_hdr_t h;
        CU_ASSERT_EQUAL_FATAL(log_batch_hdr_parse(b.p + off, b.len - off, &h), 0);
        CU_ASSERT_EQUAL(h.leader_epoch, 3);
        CU_ASSERT(h.records_count <= META_SNAP_BATCH_RECORDS);
        off += (size_t)log_batch_total_size(b.p + off, b.len - off);
    }
    CU_ASSERT(nbatches >= 4);
    meta_image_init(&back);
    CU_ASSERT_EQUAL(meta_snap_parse(b.p, b.len, &back, NULL, err, sizeof(err)), 0);
    CU_ASSERT(image_eq(&img, &back));
    meta_image_free(&img);
    meta_image_free(&back);
    buf_free(&b);
}

/* Every cut and every flipped byte is refused. */
static void test_torn_corrupt(void)
{
    meta_image_t img, back;
    meta_snap_id_t id = {10, 1};
    buf_t b;
    char err[256];

    rng_state = 42;
    rand_image(&img);
    buf_init(&b);
    meta_snap_build(&b, id, &img, 1, NULL, 0, 2);
    for (size_t cut = 0; cut < b.len; cut += 1 + cut / 50) {
        meta_image_init(&back);
        CU_ASSERT_EQUAL(meta_snap_parse(b.p, cut, &back, NULL, err, sizeof(err)), -1);
        meta_image_free(&back);
    }
    /* partitionLeaderEpoch (bytes 12-15 of a batch) is outside the CRC,
     * in Kafka's format as in ours: not flipped. */
    for (size_t i = 0, bstart = 0, bsize = 0; i < b.len; i += 7) {
        while (i >= bstart + bsize) {
            bstart += bsize;
            bsize = (size_t)log_batch_total_size(b.p + bstart, b.len - bstart);
        }
        if (i - bstart >= 12 && i - bstart < 16)
            continue;
        b.p[i] ^= 0x40;
        meta_image_init(&back);
        CU_ASSERT_EQUAL(meta_snap_parse(b.p, b.len, &back, NULL, err, sizeof(err)), -1);
        meta_image_free(&back);
        b.p[i] ^= 0x40;
    }
    meta_image_free(&img);
    buf_free(&b);
}

static char tmpdir[64];

static void mkscratch(void)
{
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_meta_snap.XXXXXX");
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(tmpdir));
}

static void rmscratch(void)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    CU_ASSERT_EQUAL(system(cmd), 0);
}

static void touch(const char *name, const void *p, size_t n)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fwrite(p, 1, n, f);
    fclose(f);
}

static int exists(const char *name)
{
    char path[256];
    struct stat st;
    snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
    return stat(path, &st) == 0;
}

static void test_files(void)
{
    meta_image_t img, back;
    meta_snap_id_t a = {155, 1}, b2 = {2000, 2}, got, *ids;
    meta_snap_reader_t rd;
    char name[64], err[256];
    buf_t b;
    uint8_t chunk[100];

    meta_snap_name(a, name, sizeof(name));
    CU_ASSERT_STRING_EQUAL(name, "00000000000000000155-0000000001.checkpoint");
    CU_ASSERT(meta_snap_parse_name(name, &got) && got.end_offset == 155 && got.epoch == 1);
    CU_ASSERT(!meta_snap_parse_name("00000000000000000155-0000000001.checkpoint.part", &got));
    mkscratch();
    rng_state = 7;
    rand_image(&img);
    buf_init(&b);
    meta_snap_build(&b, a, &img, 1, NULL, 0, 2);
    CU_ASSERT_EQUAL(meta_snap_write(tmpdir, a, b.p, b.len), 0);
    CU_ASSERT_EQUAL(meta_snap_write(tmpdir, b2, b.p, b.len), 0);
    CU_ASSERT(exists(name) && !exists("00000000000000000155-0000000001.checkpoint.part"));
    CU_ASSERT_EQUAL(meta_snap_list(tmpdir, &ids), 2);
    CU_ASSERT(ids[0].end_offset == 155 && ids[1].end_offset == 2000);
    free(ids);
    CU_ASSERT(meta_snap_latest(tmpdir, &got) == 1 && got.end_offset == 2000 && got.epoch == 2);
    /* Raw reads by position give the file's bytes. */
    CU_ASSERT_EQUAL_FATAL(meta_snap_reader_open(&rd, tmpdir, a), 0);
    CU_ASSERT_EQUAL(rd.size, (int64_t)b.len);
    CU_ASSERT_EQUAL(meta_snap_reader_read(&rd, 10, chunk, sizeof(chunk)), (ssize_t)sizeof(chunk));
    CU_ASSERT(!memcmp(chunk, b.p + 10, sizeof(chunk)));
    CU_ASSERT_EQUAL(meta_snap_reader_read(&rd, rd.size - 5, chunk, sizeof(chunk)), 5);
    CU_ASSERT_EQUAL(meta_snap_reader_read(&rd, rd.size, chunk, sizeof(chunk)), 0);
    meta_snap_reader_close(&rd);
    meta_image_init(&back);
    CU_ASSERT_EQUAL(meta_snap_load(tmpdir, a, &back, NULL, err, sizeof(err)), 0);
    CU_ASSERT(image_eq(&img, &back));
    meta_image_free(&back);
    /* Recovery: a .part is removed, a torn latest snapshot is removed and
     * the one before it loads; the bounds on the end offset hold. */
    touch("00000000000000003000-0000000002.checkpoint.part", b.p, b.len / 2);
    touch("00000000000000004000-0000000002.checkpoint", b.p, b.len - 1);
    meta_image_init(&back);
    CU_ASSERT_EQUAL(meta_snap_recover(tmpdir, 0, 5000, &back, &got, NULL), 1);
    CU_ASSERT_EQUAL(got.end_offset, 2000);
    CU_ASSERT(image_eq(&img, &back));
    CU_ASSERT(!exists("00000000000000003000-0000000002.checkpoint.part"));
    CU_ASSERT(!exists("00000000000000004000-0000000002.checkpoint"));
    meta_image_free(&back);
    meta_image_init(&back);
    CU_ASSERT_EQUAL(meta_snap_recover(tmpdir, 0, 1999, &back, &got, NULL), 1);
    CU_ASSERT_EQUAL(got.end_offset, 155);
    meta_image_free(&back);
    meta_image_init(&back);
    CU_ASSERT_EQUAL(meta_snap_recover(tmpdir, 156, 1999, &back, &got, NULL), 0);
    meta_image_free(&back);
    CU_ASSERT_EQUAL(meta_snap_remove(tmpdir, a), 0);
    CU_ASSERT(!exists(name));
    meta_image_free(&img);
    buf_free(&b);
    rmscratch();
}

/* A Kafka 4.4 node's snapshot: topics, configs, features, producer ids. */
static void test_kafka_snapshot(void)
{
    meta_image_t img;
    meta_snap_info_t info;
    char err[256] = "";

    meta_image_init(&img);
    memset(&info, 0, sizeof(info));
    CU_ASSERT_EQUAL_FATAL(
        meta_snap_parse(kafka_snap_155, sizeof(kafka_snap_155), &img, &info, err, sizeof(err)),
        0);
    CU_ASSERT_EQUAL(info.last_ts, 1796138231624LL);
    mi_topic_t *alpha = meta_image_topic(&img, "alpha", 5);
    CU_ASSERT_PTR_NOT_NULL_FATAL(alpha);
    CU_ASSERT_EQUAL(alpha->nparts, 3);
    CU_ASSERT(alpha->parts[2].present && alpha->parts[2].leader == 1);
    CU_ASSERT_PTR_NOT_NULL(meta_image_topic(&img, "beta.x", 6));
    CU_ASSERT_STRING_EQUAL(meta_image_config_get(&img, META_RES_TOPIC, "alpha", 5,
                                                 "retention.ms"), "12345");
    CU_ASSERT_STRING_EQUAL(meta_image_config_get(&img, META_RES_BROKER, "", 0,
                                                 "log.retention.ms"), "99999");
    CU_ASSERT_EQUAL(meta_image_feature(&img, "metadata.version"), 33);
    CU_ASSERT_EQUAL(img.next_producer_id, 1000);
    meta_image_free(&img);
}

typedef struct ctl_seen_s {
    int n;
    int16_t types[4];
    buf_t vals[4];
} ctl_seen_t;

static void on_ctl(void *arg, int16_t type, const uint8_t *value, size_t len)
{
    ctl_seen_t *s = arg;
    if (s->n < 4) {
        s->types[s->n] = type;
        buf_init(&s->vals[s->n]);
        buf_put(&s->vals[s->n], value, len);
        s->n++;
    }
}

/* The i-th batch of a snapshot: its position and size. */
static size_t nth_batch(const uint8_t *p, size_t len, int i, size_t *size)
{
    size_t off = 0;
    for (;; i--) {
        *size = (size_t)log_batch_total_size(p + off, len - off);
        if (i == 0)
            return off;
        off += *size;
    }
}

static int64_t batch_time(const uint8_t *p)
{
    log_batch_hdr_t h;
    log_batch_hdr_parse(p, LOG_BATCH_HDR_SIZE, &h);
    return h.base_timestamp;
}

/* kafka-storage format --standalone: KRaftVersion and Voters come after
 * the header in its batch, and our writer, given the same image, control
 * records and times, writes every batch byte for byte as Kafka did. */
static void test_kafka_standalone_bytes(void)
{
    const uint8_t *k = kafka_snap_standalone;
    size_t klen = sizeof(kafka_snap_standalone);
    meta_image_t img;
    meta_snap_info_t info;
    ctl_seen_t seen;
    meta_snap_ctl_t ctl[2];
    meta_snap_id_t id = {0, 0};
    char err[256] = "";

    memset(&seen, 0, sizeof(seen));
    memset(&info, 0, sizeof(info));
    info.on_ctl = on_ctl;
    info.arg = &seen;
    meta_image_init(&img);
    CU_ASSERT_EQUAL_FATAL(meta_snap_parse(k, klen, &img, &info, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL_FATAL(seen.n, 2);
    CU_ASSERT_EQUAL(seen.types[0], PROTO_REC_K_RAFT_VERSION_RECORD);
    CU_ASSERT_EQUAL(seen.types[1], PROTO_REC_VOTERS_RECORD);
    for (int i = 0; i < 2; i++)
        ctl[i] = (meta_snap_ctl_t){seen.types[i], seen.vals[i].p, seen.vals[i].len};
    for (int i = 0; i < 3; i++) {
        size_t ksize, ours, koff = nth_batch(k, klen, i, &ksize);
        buf_t b;
        buf_init(&b);
        meta_snap_build(&b, id, &img, info.last_ts, ctl, 2, batch_time(k + koff));
        size_t off = nth_batch(b.p, b.len, i, &ours);
        CU_ASSERT_EQUAL(ours, ksize);
        CU_ASSERT(ours == ksize && !memcmp(b.p + off, k + koff, ksize));
        buf_free(&b);
    }
    for (int i = 0; i < seen.n; i++)
        buf_free(&seen.vals[i]);
    meta_image_free(&img);
}

int main(void)
{
    CU_initialize_registry();
    CU_pSuite s = CU_add_suite("meta_snap", NULL, NULL);
    CU_add_test(s, "image to snapshot to image, random images", test_round_trip_random);
    CU_add_test(s, "data batches of at most 1024 records", test_batches);
    CU_add_test(s, "torn and corrupt snapshots are refused", test_torn_corrupt);
    CU_add_test(s, "files: write, list, read, recover", test_files);
    CU_add_test(s, "a Kafka 4.4 snapshot loads", test_kafka_snapshot);
    CU_add_test(s, "Kafka's bootstrap snapshot, byte for byte", test_kafka_standalone_bytes);
    return unit_run();
}

/* In-process fuzz of the pure decoders and validators: no sockets, so a
 * crash or sanitizer report points straight at the decoder. Inputs are
 * valid encodings made by tests/fuzz/fuzz_gen.c, then mutated by
 * tests/fuzz/fuzz_mut.c (lengths and counts that lie, limits in integer
 * fields, bit flips, truncation, splices, tagged fields). Beside "does
 * not crash", each decoder is held to a property:
 *   proto       valid bytes decode, use every byte and encode back to
 *               the same bytes; mutated bytes that decode re-encode to a
 *               fixed point (decode(encode(m)) encodes the same again)
 *   batches     a batch the validator accepts iterates to exactly its
 *               record count (produce validates, fetch and the group and
 *               metadata replays iterate: they must agree)
 *   compression round trips; corrupt input fails or stays under max_out
 *   meta_rec    records that decode re-encode and decode again
 * Deterministic: FUZZ_SEED picks the seed (default 1), FUZZ_SCALE
 * multiplies the iterations (default 1: 2-3 s under ASan). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/meta_rec.h"
#include "fuzz/fuzz_gen.h"
#include "fuzz/fuzz_mut.h"
#include "log/log_batch.h"
#include "proto/proto.h"
#include "proto/proto_desc.h"
#include "unit.h"
#include "util/compress.h"
#include "util/props.h"

static arena_t arena, darena;
static fuzz_gen_t gen;
static int scale = 1;

static int setup(void)
{
    const char *s = getenv("FUZZ_SEED"), *k = getenv("FUZZ_SCALE");
    arena_init(&arena, 64 << 10);
    arena_init(&darena, 64 << 10);
    fuzz_gen_init(&gen, s ? strtoull(s, NULL, 0) : 1, &arena);
    static const char *const topics[] = { "t0", "topic-1", "x" };
    static const char *const groups[] = { "g0" };
    gen.topics = topics;
    gen.ntopics = 3;
    gen.groups = groups;
    gen.ngroups = 1;
    if (k && atoi(k) > 0)
        scale = atoi(k);
    return 0;
}

static int teardown(void)
{
    arena_destroy(&arena);
    arena_destroy(&darena);
    log_batch_thread_cleanup();
    compress_thread_cleanup();
    return 0;
}

static void dump(const char *what, const proto_msg_t *msg, int16_t v, const uint8_t *p, size_t n)
{
    fprintf(stderr, "\n  %s: %s v%d, %zu bytes:", what, msg->name, v, n);
    for (size_t i = 0; i < n && i < 256; i++)
        fprintf(stderr, " %02x", p[i]);
    fprintf(stderr, "\n");
}

/* ---- generated codecs ---- */

/* decode then encode; -1 if it does not decode. */
static int reencode(const proto_msg_t *msg, int16_t v, const uint8_t *p, size_t n, buf_t *out,
                    size_t *used)
{
    void *m = arena_alloc(&darena, msg->st->size);
    if (proto_msg_decode(msg, m, v, p, n, &darena, used) < 0)
        return -1;
    buf_init(out);
    proto_msg_encode(msg, m, v, out);
    return 0;
}

/* A valid message: decodes whole and encodes back to the same bytes. */
static void check_roundtrip(const proto_msg_t *msg, int16_t v, const buf_t *enc)
{
    buf_t again;
    size_t used = 0;
    int ok = reencode(msg, v, enc->p, enc->len, &again, &used) == 0;
    CU_ASSERT(ok);
    if (!ok) {
        dump("valid bytes do not decode", msg, v, enc->p, enc->len);
        return;
    }
    int same = used == enc->len && again.len == enc->len &&
               (!enc->len || !memcmp(again.p, enc->p, enc->len));
    CU_ASSERT(same);
    if (!same) {
        dump("round trip differs, in", msg, v, enc->p, enc->len);
        dump("out", msg, v, again.p, again.len);
    }
    buf_free(&again);
}

/* Mutated bytes: no crash; what decodes reaches a fixed point. */
static void check_mutated(const proto_msg_t *msg, int16_t v, const fuzz_bytes_t *b)
{
    buf_t e1, e2;
    if (reencode(msg, v, b->p, b->len, &e1, NULL) < 0)
        return;
    int ok = reencode(msg, v, e1.p, e1.len, &e2, NULL) == 0;
    CU_ASSERT(ok);
    if (ok) {
        int same = e1.len == e2.len && (!e1.len || !memcmp(e1.p, e2.p, e1.len));
        CU_ASSERT(same);
        if (!same)
            dump("no fixed point for", msg, v, b->p, b->len);
        buf_free(&e2);
    } else {
        dump("re-encoded bytes do not decode, from", msg, v, b->p, b->len);
    }
    buf_free(&e1);
}

static void fuzz_one_version(const proto_msg_t *msg, int16_t v, int rounds, int mutations)
{
    fuzz_sites_t *sites = malloc(sizeof(*sites));
    fuzz_bytes_t b = { 0 };
    char desc[200];
    for (int r = 0; r < rounds; r++) {
        buf_t enc;
        arena_reset(&arena);
        arena_reset(&darena);
        void *m = fuzz_gen_msg(&gen, msg, v);
        buf_init(&enc);
        proto_msg_encode(msg, m, v, &enc);
        check_roundtrip(msg, v, &enc);
        CU_ASSERT(fuzz_sites_find(msg, v, enc.p, enc.len, sites) == 0);
        for (int k = 0; k < mutations; k++) {
            fuzz_bytes_set(&b, enc.p, enc.len);
            fuzz_mutate(&gen, &b, sites, enc.p, enc.len, desc, sizeof(desc));
            check_mutated(msg, v, &b);
        }
        buf_free(&enc);
    }
    fuzz_bytes_free(&b);
    free(sites);
}

static void test_proto_messages(void)
{
    for (int i = 0; proto_msg_all[i]; i++) {
        const proto_msg_t *msg = proto_msg_all[i];
        for (int16_t v = msg->vmin; v <= msg->vmax; v++)
            fuzz_one_version(msg, v, 40 * scale, 12);
    }
}

/* Request headers of every API and version, then mutated. */
static void test_proto_req_header(void)
{
    fuzz_bytes_t b = { 0 };
    char desc[200];
    int nmsg = 0;
    while (proto_msg_all[nmsg])
        nmsg++;
    for (int n = 0; n < 20000 * scale; n++) {
        const proto_msg_t *msg = proto_msg_all[2 + fuzz_below(&gen.rng, (uint32_t)nmsg - 2)];
        proto_req_header_t h = { msg->key, (int16_t)(msg->vmin + (int16_t)fuzz_below(&gen.rng, 3)),
                                 (int32_t)fuzz_rand(&gen.rng), PROTO_STR("fuzz") };
        buf_t out;
        buf_init(&out);
        proto_req_header_encode(&out, &h);
        buf_put(&out, "\x00\x01\x02", 3);
        fuzz_bytes_set(&b, out.p, out.len);
        fuzz_mutate(&gen, &b, NULL, NULL, 0, desc, sizeof(desc));
        proto_req_header_t got;
        size_t hl = 0;
        if (proto_req_header_decode(&got, b.p, b.len, &hl) == 0)
            CU_ASSERT(hl <= b.len && (got.client_id.len < 0 || got.client_id.len <= (int32_t)hl));
        buf_free(&out);
    }
    fuzz_bytes_free(&b);
}

/* Regression (found by the libFuzzer target): a tagged-field section cut
 * short inside a tag or size went on with a NULL slice (NULL + 0 is
 * undefined; clang's UBSan reports it). It must fail cleanly. */
static void test_proto_tagged_section_cut_short(void)
{
    /* ApiVersions v3 body: two empty compact strings, a tagged-field
     * count of 1, then the tag, the size and nothing (each cut). */
    static const uint8_t cut[][5] = { { 0x01, 0x01, 0x01 }, { 0x01, 0x01, 0x01, 0x00 },
                                      { 0x01, 0x01, 0x01, 0x80 }, { 0x01, 0x01, 0x01, 0x00, 0x02 } };
    static const size_t len[] = { 3, 4, 4, 5 };
    for (int i = 0; i < 4; i++) {
        proto_api_versions_req_t r;
        arena_reset(&darena);
        CU_ASSERT_EQUAL(proto_api_versions_req_decode(&r, 3, cut[i], len[i], &darena), -1);
    }
    static const uint8_t whole[] = { 0x01, 0x01, 0x01, 0x05, 0x00 }; /* tag 5, empty */
    proto_api_versions_req_t r;
    CU_ASSERT_EQUAL(proto_api_versions_req_decode(&r, 3, whole, sizeof(whole), &darena), 0);
}

/* ---- record batches ---- */

static log_batch_limits_t no_limits(void)
{
    log_batch_limits_t lim;
    memset(&lim, 0, sizeof(lim));
    lim.ts_before_max_ms = INT64_MAX;
    lim.ts_after_max_ms = INT64_MAX;
    lim.now_ms = gen.now_ms;
    lim.produce_version = 9;
    return lim;
}

/* Iterates the batch; returns the record count, or -1 if the iterator
 * refuses it or reports corruption. */
static int iterate(const uint8_t *p, size_t len)
{
    log_batch_iter_t *it = log_batch_iter_new(p, len);
    log_record_t rec;
    int n = 0, rc;
    if (!it)
        return -1;
    while ((rc = log_batch_iter_next(it, &rec)) == 1) {
        log_header_t h;
        const uint8_t *hp = rec.headers, *he = rec.headers + rec.headers_len;
        n++;
        while (rec.headers && log_record_header_next(&hp, he, &h) == 1)
            ;
    }
    log_batch_iter_free(it);
    return rc == 0 ? n : -1;
}

/* A header field set to a limit, or a blind mutation; then, most of the
 * time, a correct CRC so that the validator looks past it. */
static void mutate_batch(fuzz_bytes_t *b, char *desc, size_t dl)
{
    static const int offs[] = { LOG_BATCH_OFF_LENGTH, LOG_BATCH_OFF_ATTRIBUTES,
                                LOG_BATCH_OFF_LAST_OFFSET_DELTA, LOG_BATCH_OFF_RECORDS_COUNT,
                                LOG_BATCH_OFF_MAGIC, LOG_BATCH_OFF_BASE_SEQUENCE,
                                LOG_BATCH_OFF_PRODUCER_ID };
    static const int widths[] = { 4, 2, 4, 4, 1, 4, 8 };
    if (fuzz_chance(&gen.rng, 30) && b->len >= LOG_BATCH_HDR_SIZE) {
        int i = (int)fuzz_below(&gen.rng, sizeof(offs) / sizeof(offs[0]));
        int64_t v = fuzz_chance(&gen.rng, 50) ? fuzz_gen_interesting(&gen, widths[i])
                                              : (int64_t)fuzz_below(&gen.rng, 8);
        for (int k = widths[i] - 1; k >= 0; k--, v >>= 8)
            b->p[offs[i] + k] = (uint8_t)v;
        snprintf(desc, dl, "header field at %d", offs[i]);
    } else {
        fuzz_mutate(&gen, b, NULL, NULL, 0, desc, dl);
    }
    if (fuzz_chance(&gen.rng, 75))
        log_batch_update_crc(b->p, b->len);
}

static void test_batches(void)
{
    fuzz_bytes_t b = { 0 };
    char desc[200];
    log_batch_limits_t lim = no_limits();
    for (int r = 0; r < 1000 * scale; r++) {
        buf_t out;
        log_batch_hdr_t h;
        buf_init(&out);
        arena_reset(&arena);
        fuzz_gen_batch(&gen, &out);
        int16_t e = log_batch_validate(out.p, out.len, &lim, &h);
        CU_ASSERT_EQUAL(e, 0);
        if (e) {
            fprintf(stderr, "\n  a built batch of %zu bytes, attributes %d: error %d\n", out.len,
                    out.len > 22 ? out.p[22] : -1, e);
            compress_thread_cleanup();
            log_batch_thread_cleanup();
            fprintf(stderr, "  after cleanup: %d\n", log_batch_validate(out.p, out.len, &lim, &h));
        }
        else
            CU_ASSERT_EQUAL(iterate(out.p, out.len), h.records_count);
        for (int k = 0; k < 30; k++) {
            log_batch_vinfo_t info;
            fuzz_bytes_set(&b, out.p, out.len);
            mutate_batch(&b, desc, sizeof(desc));
            e = log_batch_validate_ex(b.p, b.len, &lim, &h, &info);
            int n = iterate(b.p, b.len);
            if (e == 0 && n != h.records_count) {
                CU_FAIL("the validator accepted a batch the iterator does not read");
                fprintf(stderr, "\n  after %s: %d records read, %d announced\n", desc, n,
                        h.records_count);
            }
        }
        buf_free(&out);
    }
    fuzz_bytes_free(&b);
}

/* ---- compression ---- */

static void test_decompress(void)
{
    fuzz_bytes_t b = { 0 };
    char desc[200];
    for (int codec = 1; codec <= 4; codec++) {
        for (int r = 0; r < 200 * scale; r++) {
            size_t n = fuzz_below(&gen.rng, 3000);
            uint8_t *in = fuzz_gen_bytes(&gen, n);
            for (size_t i = 0; i < n; i++) /* compressible: few symbols */
                in[i] = (uint8_t)('a' + in[i] % (1 + r % 8));
            buf_t c, u;
            buf_init(&c);
            buf_init(&u);
            CU_ASSERT_EQUAL_FATAL(compress_compress(codec, 0, in, n, &c), 0);
            CU_ASSERT_EQUAL(compress_decompress(codec, c.p, c.len, &u, 1 << 20), 0);
            CU_ASSERT(u.len == n && (!n || !memcmp(u.p, in, n)));
            for (int k = 0; k < 25; k++) {
                buf_t o;
                int over = 0;
                size_t max = fuzz_chance(&gen.rng, 20) ? n / 2 : 1 << 20;
                fuzz_bytes_set(&b, c.p, c.len);
                fuzz_mutate(&gen, &b, NULL, NULL, 0, desc, sizeof(desc));
                buf_init(&o);
                buf_put(&o, "xy", 2); /* the output is appended to */
                int rc = compress_decompress_ex(codec, b.p, b.len, &o, max, &over);
                CU_ASSERT(rc == 0 ? o.len <= 2 + max : o.len == 2);
                buf_free(&o);
                /* a failure leaves the thread's decoder usable */
                buf_init(&o);
                int again = compress_decompress(codec, c.p, c.len, &o, 1 << 20);
                CU_ASSERT(again == 0 && o.len == n);
                if (again)
                    fprintf(stderr, "\n  codec %d broken after %s (%s)\n", codec, desc,
                            rc ? "failed" : "decoded");
                buf_free(&o);
            }
            buf_free(&c);
            buf_free(&u);
            arena_reset(&arena);
        }
    }
    fuzz_bytes_free(&b);
}

/* Regression: one LZ4 frame that stopped after a header declaring a
 * content size made every later LZ4 batch fail to decompress (liblz4
 * 1.9.4 keeps that state through LZ4F_resetDecompressionContext), so one
 * bad Produce broke LZ4 for every producer until a restart. */
static void test_lz4_bad_header_then_good_frame(void)
{
    static const uint8_t bad[] = { 0x04, 0x22, 0x4d, 0x18, 0x68, 0x40, 0x82, 0xfe, 0x00,
                                   0x00, 0x00, 0xf0, 0x04, 0x65, 0x61 };
    static const uint8_t text[] = "one bad frame must not break the next";
    buf_t c, u;
    buf_init(&c);
    buf_init(&u);
    CU_ASSERT_EQUAL_FATAL(compress_compress(COMPRESS_LZ4, 0, text, sizeof(text), &c), 0);
    CU_ASSERT_EQUAL(compress_decompress(COMPRESS_LZ4, bad, sizeof(bad), &u, 1 << 20), -1);
    CU_ASSERT_EQUAL(u.len, 0);
    CU_ASSERT_EQUAL(compress_decompress(COMPRESS_LZ4, c.p, c.len, &u, 1 << 20), 0);
    CU_ASSERT(u.len == sizeof(text) && !memcmp(u.p, text, sizeof(text)));
    buf_free(&c);
    buf_free(&u);
}

/* ---- server.properties ---- */

static void test_props(void)
{
    static const char *const bits[] = {
        "key", "=", ":", " ", "\t", "\\", "\n", "\r\n", "#", "!", "\\u00e9", "\\u12", "\\uzzzz",
        "\\t", "value", "a.b.c", "\\\n", "\0", "\xff", "=\\", "  \\\n  ",
    };
    for (int r = 0; r < 20000 * scale; r++) {
        char text[512];
        size_t len = 0;
        int parts = (int)fuzz_below(&gen.rng, 40);
        for (int i = 0; i < parts; i++) {
            const char *s = bits[fuzz_below(&gen.rng, sizeof(bits) / sizeof(bits[0]))];
            size_t l = s[0] ? strlen(s) : 1;
            if (len + l >= sizeof(text))
                break;
            memcpy(text + len, s, l);
            len += l;
        }
        props_t props;
        int line = 0;
        props_init(&props);
        if (props_parse(&props, text, len, &line) == 0)
            for (int i = 0; i < props.n; i++) {
                CU_ASSERT(props.v[i].key != NULL && props.v[i].value != NULL);
                props_get(&props, props.v[i].key);
            }
        else
            CU_ASSERT(line >= 1);
        props_free(&props);
    }
}

/* ---- metadata log records ---- */

static meta_str_t mstr(proto_str_t s)
{
    return (meta_str_t){ s.p, s.len };
}

/* A record of each type we write, with random contents. */
static void make_meta_rec(meta_rec_t *rec, int16_t type)
{
    static int32_t one[] = { 1 };
    static proto_uuid_t dirs[1];
    meta_rec_init(rec, type);
    switch (type) {
    case META_REC_TOPIC:
        rec->u.topic.name = mstr(fuzz_gen_topic(&gen));
        memcpy(rec->u.topic.topic_id.b, fuzz_gen_bytes(&gen, 16), 16);
        break;
    case META_REC_PARTITION:
        rec->u.part.partition_id = (int32_t)fuzz_below(&gen.rng, 8);
        memcpy(rec->u.part.topic_id.b, fuzz_gen_bytes(&gen, 16), 16);
        rec->u.part.replicas = rec->u.part.isr = (meta_i32s_t){ 1, one };
        rec->u.part.leader = 1;
        rec->u.part.leader_epoch = (int32_t)fuzz_below(&gen.rng, 3);
        rec->u.part.directories = (meta_uuids_t){ 1, dirs };
        break;
    case META_REC_PARTITION_CHANGE:
        rec->u.change.partition_id = (int32_t)fuzz_below(&gen.rng, 8);
        rec->u.change.isr = (meta_i32s_t){ 1, one };
        rec->u.change.leader = 1;
        break;
    case META_REC_CONFIG:
        rec->u.config.resource_type = fuzz_chance(&gen.rng, 50) ? META_RES_TOPIC : META_RES_BROKER;
        rec->u.config.resource_name = mstr(fuzz_gen_topic(&gen));
        rec->u.config.name = (meta_str_t){ "retention.ms", 12 };
        rec->u.config.value = fuzz_chance(&gen.rng, 20) ? (meta_str_t){ NULL, -1 }
                                                         : (meta_str_t){ "1000", 4 };
        break;
    case META_REC_FEATURE_LEVEL:
        rec->u.feature.name = (meta_str_t){ "metadata.version", 16 };
        rec->u.feature.feature_level = 20;
        break;
    case META_REC_REMOVE_TOPIC:
        memcpy(rec->u.remove_topic.topic_id.b, fuzz_gen_bytes(&gen, 16), 16);
        break;
    }
}

static void test_meta_records(void)
{
    static const int16_t types[] = { META_REC_TOPIC, META_REC_PARTITION, META_REC_CONFIG,
                                     META_REC_PARTITION_CHANGE, META_REC_REMOVE_TOPIC,
                                     META_REC_FEATURE_LEVEL, META_REC_NOOP };
    fuzz_bytes_t b = { 0 };
    char desc[200];
    for (int r = 0; r < 2000 * scale; r++) {
        meta_rec_t rec, got;
        buf_t enc;
        arena_reset(&arena);
        arena_reset(&darena);
        make_meta_rec(&rec, types[r % (int)(sizeof(types) / sizeof(types[0]))]);
        buf_init(&enc);
        meta_rec_encode(&rec, &enc);
        CU_ASSERT_EQUAL(meta_rec_decode(&got, enc.p, enc.len, &darena), 0);
        for (int k = 0; k < 30; k++) {
            fuzz_bytes_set(&b, enc.p, enc.len);
            fuzz_mutate(&gen, &b, NULL, NULL, 0, desc, sizeof(desc));
            if (meta_rec_decode(&got, b.p, b.len, &darena) != 0)
                continue;
            buf_t again;
            buf_init(&again);
            meta_rec_encode(&got, &again);
            CU_ASSERT_EQUAL(meta_rec_decode(&rec, again.p, again.len, &darena), 0);
            buf_free(&again);
            make_meta_rec(&rec, types[r % (int)(sizeof(types) / sizeof(types[0]))]);
        }
        buf_free(&enc);
    }
    fuzz_bytes_free(&b);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("fuzz_decoders", setup, teardown);
    CU_add_test(s, "proto_messages", test_proto_messages);
    CU_add_test(s, "proto_req_header", test_proto_req_header);
    CU_add_test(s, "proto_tagged_section_cut_short", test_proto_tagged_section_cut_short);
    CU_add_test(s, "batches", test_batches);
    CU_add_test(s, "decompress", test_decompress);
    CU_add_test(s, "lz4_bad_header_then_good_frame", test_lz4_bad_header_then_good_frame);
    CU_add_test(s, "props", test_props);
    CU_add_test(s, "meta_records", test_meta_records);
    return unit_run();
}

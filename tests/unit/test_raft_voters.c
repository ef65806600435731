/* The voter set of a dynamic quorum (src/cluster/raft_voters.h): its
 * records round-trip and read Kafka's; the set in force at each offset,
 * a truncation that removes a VotersRecord bringing back the set before
 * it; and the control records a snapshot at an offset holds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/raft_voters.h"
#include "proto/proto_gen.h"
#include "unit.h"

static raft_voter_t mk_voter(int32_t id, uint16_t port)
{
    raft_voter_t v;

    memset(&v, 0, sizeof(v));
    v.id = id;
    v.dir_id[15] = (uint8_t)id;
    v.neps = 1;
    snprintf(v.eps[0].name, sizeof(v.eps[0].name), "CONTROLLER");
    snprintf(v.eps[0].host, sizeof(v.eps[0].host), "127.0.0.1");
    v.eps[0].port = port;
    v.kv_max = 1;
    return v;
}

static void mk_set(raft_voters_t *vs, int n)
{
    raft_voters_init(vs);
    for (int i = 1; i <= n; i++) {
        raft_voter_t v = mk_voter(i, (uint16_t)(9092 + i));
        raft_voters_add(vs, &v);
    }
}

/* Kafka's VotersRecord value of voter 1 (127.0.0.1:19093, directory id
 * YNfMZFLSS42Wdi0NEJr5TQ), as its format --standalone wrote it. */
static const uint8_t kafka_voters[] = {
    0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x01, 0x60, 0xd7, 0xcc, 0x64, 0x52, 0xd2, 0x4b,
    0x8d, 0x96, 0x76, 0x2d, 0x0d, 0x10, 0x9a, 0xf9, 0x4d, 0x02, 0x0b, 'C', 'O', 'N', 'T',
    'R', 'O', 'L', 'L', 'E', 'R', 0x0a, '1', '2', '7', '.', '0', '.', '0', '.', '1', 0x4a,
    0x95, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00};

static void test_records(void)
{
    raft_voters_t vs, back;
    buf_t b;

    raft_voters_init(&back);
    CU_ASSERT_EQUAL_FATAL(raft_voters_decode(&back, kafka_voters, sizeof(kafka_voters)), 0);
    CU_ASSERT_EQUAL_FATAL(back.n, 1);
    CU_ASSERT_EQUAL(back.v[0].id, 1);
    CU_ASSERT_EQUAL(back.v[0].eps[0].port, 19093);
    CU_ASSERT_STRING_EQUAL(back.v[0].eps[0].name, "CONTROLLER");
    buf_init(&b);
    raft_voters_encode(&back, &b);
    CU_ASSERT(b.len == sizeof(kafka_voters) && !memcmp(b.p, kafka_voters, b.len));
    raft_voters_free(&back);
    buf_free(&b), buf_init(&b);
    mk_set(&vs, 3);
    raft_voters_encode(&vs, &b);
    CU_ASSERT_EQUAL_FATAL(raft_voters_decode(&back, b.p, b.len), 0);
    CU_ASSERT(raft_voters_equal(&vs, &back));
    CU_ASSERT_EQUAL(raft_voters_decode(&back, b.p, b.len - 3), -1);
    CU_ASSERT_EQUAL(back.n, 0);
    buf_free(&b), buf_init(&b);
    raft_kraft_version_encode(1, &b);
    CU_ASSERT_EQUAL(raft_kraft_version_decode(b.p, b.len), 1);
    CU_ASSERT_EQUAL(raft_kraft_version_decode(b.p, 1), -1);
    raft_voters_free(&vs);
    buf_free(&b);
}

static int n_at(const raft_voters_hist_t *h, int64_t off)
{
    const raft_voters_entry_t *e = raft_voters_hist_at(h, off);
    return !e ? -1 : e->has_set ? e->set.n : -2;
}

static void test_history(void)
{
    raft_voters_hist_t h;
    raft_voters_t one, two, three;

    mk_set(&one, 1), mk_set(&two, 2), mk_set(&three, 3);
    raft_voters_hist_init(&h);
    CU_ASSERT_EQUAL(n_at(&h, 5), -1);
    raft_voters_hist_put(&h, -1, 1, &one); /* the bootstrap checkpoint */
    raft_voters_hist_put(&h, 10, 1, &two);
    raft_voters_hist_put(&h, 20, 1, &three);
    CU_ASSERT_EQUAL(n_at(&h, 0), 1);
    CU_ASSERT_EQUAL(n_at(&h, 9), 1);
    CU_ASSERT_EQUAL(n_at(&h, 10), 2);
    CU_ASSERT_EQUAL(n_at(&h, 25), 3);
    raft_voters_hist_truncate(&h, 20); /* offset 20 removed */
    CU_ASSERT_EQUAL(n_at(&h, 25), 2);
    raft_voters_hist_put(&h, 15, 1, &one); /* a new leader's log from 15 */
    CU_ASSERT_EQUAL(n_at(&h, 16), 1);
    CU_ASSERT_EQUAL(n_at(&h, 12), 2);
    raft_voters_hist_trim(&h, 12);
    CU_ASSERT_EQUAL(h.n, 2);
    CU_ASSERT_EQUAL(n_at(&h, 12), 2);
    raft_voters_hist_put(&h, 30, 1, NULL); /* a KRaftVersionRecord alone */
    CU_ASSERT_EQUAL(n_at(&h, 30), 1);
    raft_voters_hist_free(&h);
    raft_voters_hist_put(&h, -1, 1, NULL); /* --no-initial-controllers */
    CU_ASSERT_EQUAL(n_at(&h, 0), -2);
    raft_voters_hist_free(&h);
    raft_voters_free(&one), raft_voters_free(&two), raft_voters_free(&three);
}

/* A snapshot ending at end_offset holds the set in force at end_offset-1. */
static void test_snapshot_ctl(void)
{
    raft_voters_hist_t h;
    raft_voters_t one, two, back;
    meta_snap_ctl_t ctl[2];
    buf_t scratch;

    mk_set(&one, 1), mk_set(&two, 2);
    raft_voters_init(&back);
    raft_voters_hist_init(&h);
    buf_init(&scratch);
    CU_ASSERT_EQUAL(raft_voters_hist_ctl(&h, 10, ctl, &scratch), 0); /* static */
    raft_voters_hist_put(&h, -1, 1, NULL);
    CU_ASSERT_EQUAL(raft_voters_hist_ctl(&h, 10, ctl, &scratch), 1);
    CU_ASSERT_EQUAL(ctl[0].type, PROTO_REC_K_RAFT_VERSION_RECORD);
    raft_voters_hist_put(&h, 3, 1, &one);
    raft_voters_hist_put(&h, 9, 1, &two);
    buf_free(&scratch), buf_init(&scratch);
    buf_put(&scratch, "xx", 2); /* the values go after what is there */
    CU_ASSERT_EQUAL_FATAL(raft_voters_hist_ctl(&h, 9, ctl, &scratch), 2);
    CU_ASSERT_EQUAL(raft_kraft_version_decode(ctl[0].value, ctl[0].len), 1);
    CU_ASSERT_EQUAL(ctl[1].type, PROTO_REC_VOTERS_RECORD);
    CU_ASSERT_EQUAL_FATAL(raft_voters_decode(&back, ctl[1].value, ctl[1].len), 0);
    CU_ASSERT(raft_voters_equal(&back, &one));
    raft_voters_free(&back);
    CU_ASSERT_EQUAL_FATAL(raft_voters_hist_ctl(&h, 10, ctl, &scratch), 2);
    CU_ASSERT_EQUAL_FATAL(raft_voters_decode(&back, ctl[1].value, ctl[1].len), 0);
    CU_ASSERT(raft_voters_equal(&back, &two));
    raft_voters_free(&back);
    buf_free(&scratch);
    raft_voters_hist_free(&h);
    raft_voters_free(&one), raft_voters_free(&two);
}

int main(void)
{
    CU_initialize_registry();
    CU_pSuite s = CU_add_suite("raft_voters", NULL, NULL);
    CU_add_test(s, "VotersRecord and KRaftVersionRecord, Kafka's bytes", test_records);
    CU_add_test(s, "the set in force at each offset, truncation, trim", test_history);
    CU_add_test(s, "a snapshot's control records at an offset", test_snapshot_ctl);
    return unit_run();
}

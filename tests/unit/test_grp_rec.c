/* Unit tests of the __consumer_offsets record codecs (coord/grp_rec.c):
 * exact bytes of what we write, decoding of every value version Kafka
 * writes, and the group -> partition hash against values from Java. */
#include <CUnit/CUnit.h>
#include <string.h>

#include "coord/grp_rec.h"
#include "unit.h"

static void expect_bytes(const buf_t *b, const char *want, size_t n)
{
    CU_ASSERT_EQUAL_FATAL(b->len, n);
    CU_ASSERT(memcmp(b->p, want, n) == 0);
}

static void test_offset_key(void)
{
    buf_t b;
    buf_init(&b);
    grp_rec_offset_key(&b, PROTO_STR("g1"), PROTO_STR("tp"), 7);
    expect_bytes(&b, "\x00\x01" "\x00\x02g1" "\x00\x02tp" "\x00\x00\x00\x07", 14);
    buf_free(&b);
}

static void test_offset_value_v3(void)
{
    buf_t b;
    grp_rec_offset_t v = {0x0102030405060708LL, 5, PROTO_STR("md"), 1000, -1};
    buf_init(&b);
    grp_rec_offset_value(&b, &v);
    expect_bytes(&b,
                 "\x00\x03"
                 "\x01\x02\x03\x04\x05\x06\x07\x08"
                 "\x00\x00\x00\x05"
                 "\x00\x02md"
                 "\x00\x00\x00\x00\x00\x00\x03\xe8",
                 2 + 8 + 4 + 4 + 8);
    grp_rec_offset_t d;
    CU_ASSERT_EQUAL(grp_rec_offset_decode(b.p, b.len, &d), 0);
    CU_ASSERT_EQUAL(d.offset, v.offset);
    CU_ASSERT_EQUAL(d.leader_epoch, 5);
    CU_ASSERT_EQUAL(d.metadata.len, 2);
    CU_ASSERT(memcmp(d.metadata.p, "md", 2) == 0);
    CU_ASSERT_EQUAL(d.commit_ts, 1000);
    CU_ASSERT_EQUAL(d.expire_ts, -1);
    /* A null metadata is written as "". */
    v.metadata = PROTO_STR_NULL;
    buf_free(&b);
    buf_init(&b);
    grp_rec_offset_value(&b, &v);
    CU_ASSERT_EQUAL(b.len, 2 + 8 + 4 + 2 + 8);
    CU_ASSERT(memcmp(b.p + 14, "\x00\x00", 2) == 0);
    buf_free(&b);
}

static void test_offset_value_v1(void)
{
    buf_t b;
    grp_rec_offset_t v = {42, 9, PROTO_STR(""), 1000, 2000}, d;
    buf_init(&b);
    grp_rec_offset_value(&b, &v);
    expect_bytes(&b,
                 "\x00\x01"
                 "\x00\x00\x00\x00\x00\x00\x00\x2a"
                 "\x00\x00"
                 "\x00\x00\x00\x00\x00\x00\x03\xe8"
                 "\x00\x00\x00\x00\x00\x00\x07\xd0",
                 28);
    CU_ASSERT_EQUAL(grp_rec_offset_decode(b.p, b.len, &d), 0);
    CU_ASSERT_EQUAL(d.offset, 42);
    CU_ASSERT_EQUAL(d.leader_epoch, -1);
    CU_ASSERT_EQUAL(d.expire_ts, 2000);
    buf_free(&b);
}

static void test_offset_value_old_new(void)
{
    grp_rec_offset_t d;
    /* v0: offset, metadata, commit timestamp. */
    static const uint8_t v0[] = "\x00\x00" "\x00\x00\x00\x00\x00\x00\x00\x05" "\x00\x01x"
                                "\x00\x00\x00\x00\x00\x00\x00\x09";
    CU_ASSERT_EQUAL(grp_rec_offset_decode(v0, sizeof(v0) - 1, &d), 0);
    CU_ASSERT_EQUAL(d.offset, 5);
    CU_ASSERT_EQUAL(d.metadata.len, 1);
    CU_ASSERT_EQUAL(d.commit_ts, 9);
    CU_ASSERT_EQUAL(d.leader_epoch, -1);
    /* v4: flexible, compact metadata, one unknown tagged field. */
    static const uint8_t v4[] = "\x00\x04" "\x00\x00\x00\x00\x00\x00\x00\x06" "\x00\x00\x00\x02"
                                "\x03" "ab" "\x00\x00\x00\x00\x00\x00\x00\x07"
                                "\x01" "\x05\x02zz";
    CU_ASSERT_EQUAL(grp_rec_offset_decode(v4, sizeof(v4) - 1, &d), 0);
    CU_ASSERT_EQUAL(d.offset, 6);
    CU_ASSERT_EQUAL(d.leader_epoch, 2);
    CU_ASSERT_EQUAL(d.metadata.len, 2);
    CU_ASSERT_EQUAL(d.commit_ts, 7);
    /* Short records fail. */
    CU_ASSERT_EQUAL(grp_rec_offset_decode(v4, 12, &d), -1);
    CU_ASSERT_EQUAL(grp_rec_offset_decode(v4, sizeof(v4) - 3, &d), -1);
}

static void test_group_roundtrip(void)
{
    buf_t b;
    grp_rec_member_t m[2] = {
        {PROTO_STR("m1"), PROTO_STR_NULL, PROTO_STR("c1"), PROTO_STR("/h"), 300, 100,
         {(const uint8_t *)"S", 1}, {(const uint8_t *)"AB", 2}},
        {PROTO_STR("m2"), PROTO_STR("i2"), PROTO_STR("c2"), PROTO_STR("/h"), 300, 100,
         {(const uint8_t *)"", 0}, {NULL, 0}},
    };
    grp_rec_group_t g = {PROTO_STR("consumer"), 3, PROTO_STR("range"), PROTO_STR("m1"), 77, 2, m};
    buf_init(&b);
    grp_rec_group_key(&b, PROTO_STR("grp"));
    expect_bytes(&b, "\x00\x02\x00\x03grp", 7);
    buf_free(&b);

    buf_init(&b);
    grp_rec_group_value(&b, &g);
    static const char want[] =
        "\x00\x03" "\x00\x08" "consumer" "\x00\x00\x00\x03" "\x00\x05range" "\x00\x02m1"
        "\x00\x00\x00\x00\x00\x00\x00\x4d" "\x00\x00\x00\x02"
        "\x00\x02m1" "\xff\xff" "\x00\x02" "c1" "\x00\x02/h" "\x00\x00\x01\x2c" "\x00\x00\x00\x64"
        "\x00\x00\x00\x01S" "\x00\x00\x00\x02" "AB"
        "\x00\x02m2" "\x00\x02i2" "\x00\x02" "c2" "\x00\x02/h" "\x00\x00\x01\x2c" "\x00\x00\x00\x64"
        "\x00\x00\x00\x00" "\x00\x00\x00\x00";
    expect_bytes(&b, want, sizeof(want) - 1);

    arena_t a;
    grp_rec_group_t d;
    arena_init(&a, 1024);
    CU_ASSERT_EQUAL_FATAL(grp_rec_group_decode(b.p, b.len, &d, &a), 0);
    CU_ASSERT_EQUAL(d.generation, 3);
    CU_ASSERT_EQUAL(d.protocol.len, 5);
    CU_ASSERT_EQUAL(d.state_ts, 77);
    CU_ASSERT_EQUAL_FATAL(d.nmembers, 2);
    CU_ASSERT_EQUAL(d.members[0].instance_id.len, -1);
    CU_ASSERT_EQUAL(d.members[1].instance_id.len, 2);
    CU_ASSERT_EQUAL(d.members[0].assignment.len, 2);
    CU_ASSERT(memcmp(d.members[0].assignment.p, "AB", 2) == 0);
    CU_ASSERT_EQUAL(d.members[0].rebalance_timeout, 300);
    CU_ASSERT_EQUAL(d.members[1].session_timeout, 100);
    /* Truncations never read past the end. */
    for (size_t n = 0; n < b.len; n++)
        CU_ASSERT_EQUAL(grp_rec_group_decode(b.p, n, &d, &a), -1);
    arena_destroy(&a);
    buf_free(&b);
}

static void test_group_v0_v4(void)
{
    arena_t a;
    grp_rec_group_t d;
    arena_init(&a, 1024);
    /* v0: no rebalance timeout, timestamp or instance id; null protocol. */
    static const uint8_t v0[] = "\x00\x00" "\x00\x01x" "\x00\x00\x00\x01" "\xff\xff" "\xff\xff"
                                "\x00\x00\x00\x01"
                                "\x00\x01m" "\x00\x01" "c" "\x00\x01h" "\x00\x00\x00\x0a"
                                "\x00\x00\x00\x00" "\x00\x00\x00\x00";
    CU_ASSERT_EQUAL_FATAL(grp_rec_group_decode(v0, sizeof(v0) - 1, &d, &a), 0);
    CU_ASSERT_EQUAL(d.protocol.len, -1);
    CU_ASSERT_EQUAL(d.leader.len, -1);
    CU_ASSERT_EQUAL(d.state_ts, -1);
    CU_ASSERT_EQUAL_FATAL(d.nmembers, 1);
    CU_ASSERT_EQUAL(d.members[0].rebalance_timeout, -1);
    CU_ASSERT_EQUAL(d.members[0].session_timeout, 10);
    CU_ASSERT_EQUAL(d.members[0].instance_id.len, -1);
    /* v4: compact, tagged sections after the member and the group. */
    static const uint8_t v4[] = "\x00\x04" "\x02x" "\x00\x00\x00\x02" "\x03pr" "\x02m"
                                "\x00\x00\x00\x00\x00\x00\x00\x05" "\x02"
                                "\x02m" "\x00" "\x02" "c" "\x02h" "\x00\x00\x00\x01"
                                "\x00\x00\x00\x02" "\x02S" "\x03" "AS" "\x00"
                                "\x00";
    CU_ASSERT_EQUAL_FATAL(grp_rec_group_decode(v4, sizeof(v4) - 1, &d, &a), 0);
    CU_ASSERT_EQUAL(d.generation, 2);
    CU_ASSERT_EQUAL(d.protocol.len, 2);
    CU_ASSERT_EQUAL(d.state_ts, 5);
    CU_ASSERT_EQUAL_FATAL(d.nmembers, 1);
    CU_ASSERT_EQUAL(d.members[0].instance_id.len, -1);
    CU_ASSERT_EQUAL(d.members[0].subscription.len, 1);
    CU_ASSERT_EQUAL(d.members[0].assignment.len, 2);
    arena_destroy(&a);
}

static void test_key_decode(void)
{
    grp_rec_key_t k;
    static const uint8_t ok[] = "\x00\x01" "\x00\x02g1" "\x00\x02tp" "\x00\x00\x00\x07";
    CU_ASSERT_EQUAL(grp_rec_key_decode(ok, sizeof(ok) - 1, &k), 0);
    CU_ASSERT_EQUAL(k.version, 1);
    CU_ASSERT_EQUAL(k.partition, 7);
    CU_ASSERT_EQUAL(k.topic.len, 2);
    CU_ASSERT_EQUAL(grp_rec_key_decode(ok, sizeof(ok) - 2, &k), -1);
    static const uint8_t grp[] = "\x00\x02\x00\x03grp";
    CU_ASSERT_EQUAL(grp_rec_key_decode(grp, 7, &k), 0);
    CU_ASSERT_EQUAL(k.version, 2);
    CU_ASSERT_EQUAL(k.group.len, 3);
    /* A KIP-848 record key: not ours, not an error. */
    static const uint8_t other[] = "\x00\x03\x00\x01x";
    CU_ASSERT_EQUAL(grp_rec_key_decode(other, 5, &k), 0);
    CU_ASSERT_EQUAL(k.version, 3);
}

/* Expected values printed by Java: abs(s.hashCode()) % 50, Kafka's abs. */
static void test_partition_for(void)
{
    CU_ASSERT_EQUAL(grp_rec_partition_for("hello", 5, 50), 22);
    CU_ASSERT_EQUAL(grp_rec_partition_for("my-group", 8, 50), 12);
    CU_ASSERT_EQUAL(grp_rec_partition_for("", 0, 50), 0);
    CU_ASSERT_EQUAL(grp_rec_partition_for("grp-\xc3\xa9\xe4\xb8\xad", 9, 50), 26);
    /* A NUL kept as C0 80 (util/cstr.h) hashes as the NUL: "a\0b" is
     * 97*31^2 + 0*31 + 98 = 93315, 93315 % 50 = 15. */
    CU_ASSERT_EQUAL(grp_rec_partition_for("a\0b", 3, 50), 15);
    CU_ASSERT_EQUAL(grp_rec_partition_for("a\xc0\x80" "b", 4, 50), 15);
    CU_ASSERT_EQUAL(grp_rec_partition_for("x\xf0\x9f\x98\x80y", 6, 50), 10);
    /* hashCode() == Integer.MIN_VALUE */
    CU_ASSERT_EQUAL(grp_rec_partition_for("polygenelubricants", 18, 50), 0);
    CU_ASSERT_EQUAL(grp_rec_partition_for("hello", 5, 1), 0);
}

int main(void)
{
    CU_initialize_registry();
    CU_pSuite s = CU_add_suite("grp_rec", NULL, NULL);
    CU_add_test(s, "offset key", test_offset_key);
    CU_add_test(s, "offset value v3", test_offset_value_v3);
    CU_add_test(s, "offset value v1", test_offset_value_v1);
    CU_add_test(s, "offset value v0 and v4", test_offset_value_old_new);
    CU_add_test(s, "group key and value v3", test_group_roundtrip);
    CU_add_test(s, "group value v0 and v4", test_group_v0_v4);
    CU_add_test(s, "key decode", test_key_decode);
    CU_add_test(s, "partition for group", test_partition_for);
    return unit_run();
}

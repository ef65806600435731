/* The quorum-state file (cluster/raft_state.c): Kafka 4.4's own file (a
 * static quorum of one, written by a Kafka 4.4 controller) is read and
 * written back byte for byte; the dynamic quorum's version 1; keys in any
 * order and unknown ones; malformed files refused; a missing file; the
 * atomic write. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster/raft_state.h"
#include "tests/unit/unit.h"

/* __cluster_metadata-0/quorum-state of a Kafka 4.4 node after its ninth
 * start (process.roles=broker,controller, controller.quorum.voters). */
static const char kafka_v0[] = "{\"clusterId\":\"\",\"leaderId\":1,\"leaderEpoch\":9,\"votedId\":-1,"
                               "\"appliedOffset\":0,\"currentVoters\":[{\"voterId\":1}],"
                               "\"data_version\":0}";

static void test_kafka_v0(void)
{
    raft_qstate_t st;
    char err[256], out[512];
    CU_ASSERT_EQUAL_FATAL(raft_qstate_decode(kafka_v0, &st, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(st.version, 0);
    CU_ASSERT_EQUAL(st.leader_id, 1);
    CU_ASSERT_EQUAL(st.epoch, 9);
    CU_ASSERT_EQUAL(st.voted_id, -1);
    CU_ASSERT_EQUAL(st.nvoters, 1);
    CU_ASSERT_EQUAL(st.voters[0], 1);
    int n = raft_qstate_encode(&st, out, sizeof(out));
    CU_ASSERT_EQUAL(n, (int)strlen(kafka_v0));
    CU_ASSERT_STRING_EQUAL(out, kafka_v0);
}

static void test_v1(void)
{
    raft_qstate_t st, back;
    char err[256], out[512];
    raft_qstate_init(&st, 1);
    st.epoch = 7;
    st.voted_id = 3;
    for (int i = 0; i < 16; i++)
        st.voted_dir[i] = (uint8_t)(i * 17);
    CU_ASSERT(raft_qstate_encode(&st, out, sizeof(out)) > 0);
    CU_ASSERT(strstr(out, "\"data_version\":1") != NULL);
    CU_ASSERT(strstr(out, "currentVoters") == NULL);
    CU_ASSERT_EQUAL_FATAL(raft_qstate_decode(out, &back, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(back.version, 1);
    CU_ASSERT_EQUAL(back.epoch, 7);
    CU_ASSERT_EQUAL(back.leader_id, -1);
    CU_ASSERT_EQUAL(back.voted_id, 3);
    CU_ASSERT_EQUAL(memcmp(back.voted_dir, st.voted_dir, 16), 0);
    CU_ASSERT_EQUAL(raft_qstate_encode(&st, out, 20), -1);
}

static void test_any_order(void)
{
    raft_qstate_t st;
    char err[256];
    const char *t = " { \"data_version\" : 0 , \"votedId\":2, \"extra\":\"x\", \"leaderEpoch\":4,"
                    "\"currentVoters\":[{\"voterId\":1,\"other\":5},{\"voterId\":2}],"
                    "\"leaderId\":-1 }\n";
    CU_ASSERT_EQUAL_FATAL(raft_qstate_decode(t, &st, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(st.voted_id, 2);
    CU_ASSERT_EQUAL(st.epoch, 4);
    CU_ASSERT_EQUAL(st.nvoters, 2);
    CU_ASSERT_EQUAL(st.voters[1], 2);
}

static void test_malformed(void)
{
    static const char *bad[] = {
        "", "{", "[]", "{\"leaderId\":}", "{\"leaderEpoch\":1", "{\"leaderEpoch\":1}x",
        "{\"leaderEpoch\":99999999999}", "{\"leaderEpoch\":-1}", "{\"data_version\":2}",
        "{\"votedDirectoryId\":\"nope\"}", "{\"currentVoters\":[{\"voterId\":\"a\"}]}",
        "{\"clusterId\":\"a\\\"b\"}",
    };
    raft_qstate_t st;
    char err[256];
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = '\0';
        CU_ASSERT_EQUAL(raft_qstate_decode(bad[i], &st, err, sizeof(err)), -1);
        CU_ASSERT(strstr(err, "quorum state") != NULL);
    }
}

static void test_files(void)
{
    char dir[] = "/tmp/raft-state-XXXXXX", err[256], path[512];
    raft_qstate_t st, back;
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    CU_ASSERT_EQUAL(raft_qstate_read(dir, &st, err, sizeof(err)), 1);
    CU_ASSERT_EQUAL(st.epoch, 0);
    CU_ASSERT_EQUAL(st.leader_id, -1);
    st.epoch = 12;
    st.leader_id = 2;
    st.voters[st.nvoters++] = 2;
    CU_ASSERT_EQUAL(raft_qstate_write(dir, &st), 0);
    CU_ASSERT_EQUAL(raft_qstate_read(dir, &back, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(back.epoch, 12);
    CU_ASSERT_EQUAL(back.leader_id, 2);
    snprintf(path, sizeof(path), "%s/quorum-state.tmp", dir);
    CU_ASSERT_EQUAL(access(path, F_OK), -1);
    snprintf(path, sizeof(path), "%s/quorum-state", dir);
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("{\"leaderEpoch\":", f);
    fclose(f);
    CU_ASSERT_EQUAL(raft_qstate_read(dir, &back, err, sizeof(err)), -1);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("raft_state", NULL, NULL);
    CU_add_test(s, "Kafka 4.4's file, byte for byte", test_kafka_v0);
    CU_add_test(s, "version 1", test_v1);
    CU_add_test(s, "keys in any order", test_any_order);
    CU_add_test(s, "malformed", test_malformed);
    CU_add_test(s, "read and write", test_files);
    return unit_run();
}

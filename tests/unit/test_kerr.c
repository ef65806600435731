/* The error table: codes as Kafka numbers them (a wrong number would be
 * a wrong answer on the wire), names for logs, and unknown codes. */
#include "tests/unit/unit.h"
#include "util/kerr.h"

#include <string.h>

static void test_codes(void)
{
    CU_ASSERT_EQUAL(KERR_UNKNOWN_SERVER_ERROR, -1);
    CU_ASSERT_EQUAL(KERR_NONE, 0);
    CU_ASSERT_EQUAL(KERR_NOT_LEADER_OR_FOLLOWER, 6);
    CU_ASSERT_EQUAL(KERR_KAFKA_STORAGE_ERROR, 56);
    CU_ASSERT_EQUAL(KERR_UNKNOWN_TOPIC_ID, 100);
    CU_ASSERT_EQUAL(KERR_UNSUPPORTED_ENDPOINT_TYPE, 115);
    CU_ASSERT_EQUAL(KERR_TRANSACTION_ABORTABLE, 120);
    CU_ASSERT_EQUAL(KERR_REBOOTSTRAP_REQUIRED, 129);
}

static void test_names(void)
{
    CU_ASSERT_STRING_EQUAL(kerr_name(KERR_NONE), "NONE");
    CU_ASSERT_STRING_EQUAL(kerr_name(-1), "UNKNOWN_SERVER_ERROR");
    CU_ASSERT_STRING_EQUAL(kerr_name(87), "INVALID_RECORD");
    CU_ASSERT_STRING_EQUAL(kerr_name(-2), "UNKNOWN_ERROR_CODE");
    CU_ASSERT_STRING_EQUAL(kerr_name(30000), "UNKNOWN_ERROR_CODE");
}

/* Every code from -1 up to the last one has a name: no gap in the table. */
static void test_dense(void)
{
    int last = -1;
#define KERR_LAST_(name, code) last = (code);
    KERR_LIST(KERR_LAST_)
#undef KERR_LAST_
    for (int c = -1; c <= last; c++)
        CU_ASSERT(strcmp(kerr_name((int16_t)c), "UNKNOWN_ERROR_CODE") != 0);
}

int main(void)
{
    CU_initialize_registry();
    CU_pSuite s = CU_add_suite("kerr", NULL, NULL);
    CU_add_test(s, "codes", test_codes);
    CU_add_test(s, "names", test_names);
    CU_add_test(s, "no gaps", test_dense);
    return unit_run();
}

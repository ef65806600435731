/* Shared runner for the CUnit test programs: each program registers its
 * suites and returns unit_run(), which prints CUnit's report and one
 * "N passed, N failed" line that tests/run-tests.sh adds up. */
#ifndef STRAND_TESTS_UNIT_H
#define STRAND_TESTS_UNIT_H

#include <CUnit/Basic.h>
#include <stdio.h>

static inline int unit_run(void)
{
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned run = CU_get_number_of_tests_run();
    unsigned failed = CU_get_number_of_tests_failed();
    CU_cleanup_registry();
    printf("%u passed, %u failed\n", run - failed, failed);
    return failed ? 1 : 0;
}

#endif

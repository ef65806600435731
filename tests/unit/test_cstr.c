/* util/cstr: protocol strings kept as C strings without losing a byte. */
#include "tests/unit/unit.h"
#include "util/cstr.h"

#include <stdlib.h>
#include <string.h>

/* Bytes in, C string, bytes out: the same. */
static void round_trip(const char *p, size_t n, const char *want_c)
{
    arena_t arena;
    size_t len;
    arena_init(&arena, 256);
    char *c = cstr_dup(p, n);
    CU_ASSERT_STRING_EQUAL(c, want_c);
    CU_ASSERT_STRING_EQUAL(cstr_arena_dup(&arena, p, n), want_c);
    const char *b = cstr_bytes(&arena, c, &len);
    CU_ASSERT_EQUAL(len, n);
    CU_ASSERT(!memcmp(b, p, n));
    CU_ASSERT_EQUAL(cstr_escaped(c), memchr(p, 0, n) != NULL);
    free(c);
    arena_destroy(&arena);
}

static void test_round_trip(void)
{
    round_trip("", 0, "");
    round_trip("group-1", 7, "group-1");
    round_trip("Hello\0world!", 12, "Hello\xc0\x80world!");
    round_trip("\0\0", 2, "\xc0\x80\xc0\x80");
    round_trip("x\0", 2, "x\xc0\x80");
    round_trip("caf\xc3\xa9", 5, "caf\xc3\xa9"); /* UTF-8 stays as it is */
}

/* Without an escaped NUL the C string itself is the bytes (no copy). */
static void test_no_copy(void)
{
    arena_t arena;
    size_t len;
    const char *s = "plain";
    arena_init(&arena, 256);
    CU_ASSERT_PTR_EQUAL(cstr_bytes(&arena, s, &len), s);
    CU_ASSERT_EQUAL(len, 5);
    arena_destroy(&arena);
}

/* Two ids that differ only after a NUL stay two C strings. */
static void test_apart(void)
{
    char *a = cstr_dup("g\0x", 3), *b = cstr_dup("g", 1);
    CU_ASSERT(strcmp(a, b) != 0);
    free(a);
    free(b);
}

int main(void)
{
    CU_initialize_registry();
    CU_pSuite s = CU_add_suite("cstr", NULL, NULL);
    CU_add_test(s, "round trip", test_round_trip);
    CU_add_test(s, "no copy without a NUL", test_no_copy);
    CU_add_test(s, "ids apart after a NUL", test_apart);
    return unit_run();
}

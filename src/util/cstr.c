/* cstr: see cstr.h. */
#include "util/cstr.h"

#include <string.h>

#include "util/mem.h"

static size_t cstr_escaped_len(const char *p, size_t n)
{
    size_t k = n;
    for (const char *q = p; (q = memchr(q, 0, n - (size_t)(q - p))); q++)
        k++;
    return k;
}

static void cstr_escape(char *out, const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i]) {
            *out++ = p[i];
        } else {
            *out++ = (char)0xc0;
            *out++ = (char)0x80;
        }
    }
    *out = 0;
}

char *cstr_dup(const char *p, size_t n)
{
    if (!memchr(p, 0, n))
        return xstrndup(p, n);
    char *s = xmalloc(cstr_escaped_len(p, n) + 1);
    cstr_escape(s, p, n);
    return s;
}

char *cstr_arena_dup(arena_t *arena, const char *p, size_t n)
{
    if (!memchr(p, 0, n))
        return arena_strndup(arena, p, n);
    char *s = arena_alloc(arena, cstr_escaped_len(p, n) + 1);
    cstr_escape(s, p, n);
    return s;
}

int cstr_escaped(const char *s)
{
    return strstr(s, "\xc0\x80") != NULL;
}

size_t cstr_unescape(char *out, const char *s)
{
    size_t k = 0;
    for (; *s; s++) {
        if ((unsigned char)s[0] == 0xc0 && (unsigned char)s[1] == 0x80) {
            out[k++] = 0;
            s++;
        } else {
            out[k++] = *s;
        }
    }
    return k;
}

const char *cstr_bytes(arena_t *arena, const char *s, size_t *len)
{
    if (!cstr_escaped(s)) {
        *len = strlen(s);
        return s;
    }
    char *out = arena_alloc(arena, strlen(s) + 1);
    *len = cstr_unescape(out, s);
    return out;
}

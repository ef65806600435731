/* Allocation wrappers. The broker treats out-of-memory as fatal (as Redis
 * does): every caller would otherwise need a failure path that cannot be
 * tested and would most likely lose data anyway. */
#ifndef STRAND_UTIL_MEM_H
#define STRAND_UTIL_MEM_H

#include <stddef.h>

/* All return memory owned by the caller (free with free()); never NULL. */
void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t n);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);

#endif

/* Java-properties files (Kafka's server.properties): key=value, key:value or
 * "key value" lines, # and ! comments, backslash line continuations and
 * the \t \n \r \f \uXXXX \\ escapes. Later assignments of a key win, as in
 * java.util.Properties. */
#ifndef STRAND_UTIL_PROPS_H
#define STRAND_UTIL_PROPS_H

#include <stddef.h>

typedef struct props_entry_s {
    char *key;
    char *value;
    int used; /* set by props_get(): lets the caller report unused keys */
} props_entry_t;

typedef struct props_s {
    props_entry_t *v;
    int n;
    int cap;
} props_t;

void props_init(props_t *props);
void props_free(props_t *props);
/* Parses text into props (appending/overriding). Returns 0, or -1 with
 * *errline set to the 1-based line of a malformed escape. */
int props_parse(props_t *props, const char *text, size_t len, int *errline);
/* Reads and parses a file. Returns 0, or -1 with errno (EINVAL when the
 * file is malformed, *errline then names the line). */
int props_load(props_t *props, const char *path, int *errline);
/* Copies key and value; replaces an existing key's value. */
void props_set(props_t *props, const char *key, const char *value);
/* Returns the value owned by props (valid until it changes) or NULL;
 * marks the key as used. */
const char *props_get(props_t *props, const char *key);

#endif

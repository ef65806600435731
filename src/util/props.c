#include "util/props.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/buf.h"
#include "util/mem.h"

void props_init(props_t *props)
{
    memset(props, 0, sizeof(*props));
}

void props_free(props_t *props)
{
    for (int i = 0; i < props->n; i++) {
        free(props->v[i].key);
        free(props->v[i].value);
    }
    free(props->v);
    memset(props, 0, sizeof(*props));
}

static props_entry_t *props_find(props_t *props, const char *key)
{
    for (int i = 0; i < props->n; i++)
        if (!strcmp(props->v[i].key, key))
            return &props->v[i];
    return NULL;
}

void props_set(props_t *props, const char *key, const char *value)
{
    props_entry_t *e = props_find(props, key);
    if (e) {
        free(e->value);
        e->value = xstrdup(value);
        return;
    }
    if (props->n == props->cap) {
        props->cap = props->cap ? props->cap * 2 : 32;
        props->v = xrealloc(props->v, (size_t)props->cap * sizeof(*props->v));
    }
    e = &props->v[props->n++];
    e->key = xstrdup(key);
    e->value = xstrdup(value);
    e->used = 0;
}

const char *props_get(props_t *props, const char *key)
{
    props_entry_t *e = props_find(props, key);
    if (!e)
        return NULL;
    e->used = 1;
    return e->value;
}

static int props_hex(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Appends the UTF-8 form of code point cp. */
static void props_put_utf8(buf_t *out, unsigned cp)
{
    if (cp < 0x80) {
        buf_put_i8(out, (int8_t)cp);
    } else if (cp < 0x800) {
        buf_put_i8(out, (int8_t)(0xc0 | (cp >> 6)));
        buf_put_i8(out, (int8_t)(0x80 | (cp & 0x3f)));
    } else {
        buf_put_i8(out, (int8_t)(0xe0 | (cp >> 12)));
        buf_put_i8(out, (int8_t)(0x80 | ((cp >> 6) & 0x3f)));
        buf_put_i8(out, (int8_t)(0x80 | (cp & 0x3f)));
    }
}

/* Joins continuation lines and resolves escapes of one logical line,
 * starting at *pos. Returns the logical line in out (NUL-terminated). */
static int props_logical_line(const char *t, size_t len, size_t *pos, buf_t *out, int *lineno)
{
    size_t i = *pos;
    int at_start = 1;

    out->len = 0;
    while (i < len && t[i] != '\n' && t[i] != '\r') {
        char c = t[i++];
        if (at_start && (c == ' ' || c == '\t' || c == '\f'))
            continue;
        at_start = 0;
        if (c != '\\') {
            buf_put_i8(out, c);
            continue;
        }
        if (i >= len || t[i] == '\n' || t[i] == '\r') {
            /* Continuation: skip the line break and leading blanks. */
            if (i < len && t[i] == '\r')
                i++;
            if (i < len && t[i] == '\n')
                i++;
            (*lineno)++;
            at_start = 1;
            continue;
        }
        c = t[i++];
        switch (c) {
        case 't': buf_put_i8(out, '\t'); break;
        case 'n': buf_put_i8(out, '\n'); break;
        case 'r': buf_put_i8(out, '\r'); break;
        case 'f': buf_put_i8(out, '\f'); break;
        case 'u': {
            unsigned cp = 0;
            for (int k = 0; k < 4; k++) {
                int h = i < len ? props_hex(t[i]) : -1;
                if (h < 0)
                    return -1;
                cp = cp * 16 + (unsigned)h;
                i++;
            }
            props_put_utf8(out, cp);
            break;
        }
        default:
            /* Escaped separators (\= \: \ ) keep the character but mark
             * it as literal with a 0x01 prefix, resolved by the caller. */
            if (c == '=' || c == ':' || c == ' ')
                buf_put_i8(out, 0x01);
            buf_put_i8(out, c);
        }
    }
    while (i < len && (t[i] == '\n' || t[i] == '\r'))
        if (t[i++] == '\n')
            break;
    *pos = i;
    buf_put_i8(out, 0);
    return 0;
}

/* Removes the 0x01 literal markers in place. */
static void props_unmark(char *s)
{
    char *w = s;
    for (; *s; s++)
        if (*s != 0x01)
            *w++ = *s;
    *w = '\0';
}

static void props_split(props_t *props, char *line)
{
    char *p = line;
    while (*p && *p != '=' && *p != ':' && *p != ' ' && *p != '\t' && *p != '\f') {
        if (*p == 0x01)
            p++;
        if (*p)
            p++;
    }
    char *key_end = p;
    while (*p == ' ' || *p == '\t' || *p == '\f')
        p++;
    if (*p == '=' || *p == ':')
        p++;
    while (*p == ' ' || *p == '\t' || *p == '\f')
        p++;
    char saved = *key_end;
    *key_end = '\0';
    char *key = xstrdup(line);
    *key_end = saved;
    char *value = xstrdup(p);
    props_unmark(key);
    props_unmark(value);
    if (*key)
        props_set(props, key, value);
    free(key);
    free(value);
}

int props_parse(props_t *props, const char *text, size_t len, int *errline)
{
    buf_t line;
    size_t pos = 0;
    int lineno = 0;

    buf_init(&line);
    while (pos < len) {
        lineno++;
        int first = lineno;
        /* Comment lines may not continue, so check before joining. */
        size_t k = pos;
        while (k < len && (text[k] == ' ' || text[k] == '\t' || text[k] == '\f'))
            k++;
        if (k < len && (text[k] == '#' || text[k] == '!')) {
            while (pos < len && text[pos] != '\n')
                pos++;
            if (pos < len)
                pos++;
            continue;
        }
        if (props_logical_line(text, len, &pos, &line, &lineno) < 0) {
            if (errline)
                *errline = first;
            buf_free(&line);
            return -1;
        }
        if (line.p[0])
            props_split(props, (char *)line.p);
    }
    buf_free(&line);
    return 0;
}

int props_load(props_t *props, const char *path, int *errline)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) < 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    size_t len = (size_t)st.st_size, got = 0;
    char *text = xmalloc(len + 1);
    while (got < len) {
        ssize_t r = read(fd, text + got, len - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    int rc = props_parse(props, text, got, errline);
    free(text);
    if (rc < 0)
        errno = EINVAL;
    return rc;
}

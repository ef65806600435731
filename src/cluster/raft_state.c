/* The quorum-state file (raft_state.h has its layout). The reader is a
 * small JSON reader for this one shape: an object of numbers, strings
 * and arrays, nothing deeper than the voters' objects. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/raft_state.h"
#include "log/log_ckpt.h"
#include "util/uuid.h"

void raft_qstate_init(raft_qstate_t *st, int version)
{
    memset(st, 0, sizeof(*st));
    st->version = version;
    st->leader_id = st->voted_id = -1;
}

static int put(char *out, size_t cap, size_t *len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int put(char *out, size_t cap, size_t *len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(out + *len, cap - *len, fmt, ap);
    va_end(ap);
    if (k < 0 || (size_t)k >= cap - *len)
        return -1;
    *len += (size_t)k;
    return 0;
}

static int encode_v0(const raft_qstate_t *st, char *out, size_t cap, size_t *len)
{
    if (put(out, cap, len,
            "{\"clusterId\":\"\",\"leaderId\":%d,\"leaderEpoch\":%d,\"votedId\":%d,"
            "\"appliedOffset\":0,\"currentVoters\":[",
            st->leader_id, st->epoch, st->voted_id) < 0)
        return -1;
    for (int i = 0; i < st->nvoters; i++)
        if (put(out, cap, len, "%s{\"voterId\":%d}", i ? "," : "", st->voters[i]) < 0)
            return -1;
    return put(out, cap, len, "],\"data_version\":0}");
}

int raft_qstate_encode(const raft_qstate_t *st, char *out, size_t cap)
{
    size_t len = 0;
    char dir[UUID_STR_LEN + 1];
    if (cap == 0)
        return -1;
    if (st->version == 0) {
        if (encode_v0(st, out, cap, &len) < 0)
            return -1;
    } else {
        uuid_to_base64(st->voted_dir, dir);
        if (put(out, cap, &len,
                "{\"leaderId\":%d,\"leaderEpoch\":%d,\"votedId\":%d,\"votedDirectoryId\":\"%s\","
                "\"data_version\":1}",
                st->leader_id, st->epoch, st->voted_id, dir) < 0)
            return -1;
    }
    return (int)len;
}

/* The reader. */

typedef struct jrd_s {
    const char *p;
} jrd_t;

static void ws(jrd_t *r)
{
    while (isspace((unsigned char)*r->p))
        r->p++;
}

static int lit(jrd_t *r, char c)
{
    ws(r);
    if (*r->p != c)
        return -1;
    r->p++;
    return 0;
}

/* A string without escapes (none of this file's strings has one). */
static int str(jrd_t *r, char *out, size_t cap)
{
    if (lit(r, '"') < 0)
        return -1;
    const char *end = strchr(r->p, '"');
    if (!end || memchr(r->p, '\\', (size_t)(end - r->p)) || (size_t)(end - r->p) >= cap)
        return -1;
    memcpy(out, r->p, (size_t)(end - r->p));
    out[end - r->p] = '\0';
    r->p = end + 1;
    return 0;
}

static int num(jrd_t *r, int64_t *v)
{
    ws(r);
    char *end;
    errno = 0;
    long long x = strtoll(r->p, &end, 10);
    if (end == r->p || errno)
        return -1;
    r->p = end;
    *v = x;
    return 0;
}

static int int32_of(jrd_t *r, int32_t *v)
{
    int64_t x;
    if (num(r, &x) < 0 || x < INT32_MIN || x > INT32_MAX)
        return -1;
    *v = (int32_t)x;
    return 0;
}

/* [{"voterId":N,...},...]; other keys of a voter are passed over. */
static int voters(jrd_t *r, raft_qstate_t *st)
{
    char key[64];
    ws(r);
    if (strncmp(r->p, "null", 4) == 0) {
        r->p += 4;
        return 0;
    }
    if (lit(r, '[') < 0)
        return -1;
    ws(r);
    if (*r->p == ']')
        return r->p++, 0;
    do {
        if (lit(r, '{') < 0)
            return -1;
        do {
            int32_t id;
            if (str(r, key, sizeof(key)) < 0 || lit(r, ':') < 0 || int32_of(r, &id) < 0)
                return -1;
            if (strcmp(key, "voterId") == 0) {
                if (st->nvoters == RAFT_MAX_VOTERS)
                    return -1;
                st->voters[st->nvoters++] = id;
            }
            ws(r);
        } while (*r->p == ',' && r->p++);
        if (lit(r, '}') < 0)
            return -1;
        ws(r);
    } while (*r->p == ',' && r->p++);
    return lit(r, ']');
}

static int value(jrd_t *r, const char *key, raft_qstate_t *st)
{
    char s[64];
    int32_t v;
    if (strcmp(key, "currentVoters") == 0)
        return voters(r, st);
    ws(r);
    if (*r->p == '"') {
        if (str(r, s, sizeof(s)) < 0)
            return -1;
        if (strcmp(key, "votedDirectoryId") == 0 && uuid_from_base64(s, st->voted_dir) < 0)
            return -1;
        return 0;
    }
    if (int32_of(r, &v) < 0)
        return -1;
    if (strcmp(key, "leaderId") == 0)
        st->leader_id = v;
    else if (strcmp(key, "leaderEpoch") == 0)
        st->epoch = v;
    else if (strcmp(key, "votedId") == 0)
        st->voted_id = v;
    else if (strcmp(key, "data_version") == 0)
        st->version = v;
    return 0;
}

int raft_qstate_decode(const char *text, raft_qstate_t *st, char *err, size_t errlen)
{
    jrd_t r = {text};
    char key[64];
    raft_qstate_init(st, 0);
    if (lit(&r, '{') < 0)
        goto bad;
    do {
        if (str(&r, key, sizeof(key)) < 0 || lit(&r, ':') < 0 || value(&r, key, st) < 0)
            goto bad;
        ws(&r);
    } while (*r.p == ',' && r.p++);
    if (lit(&r, '}') < 0)
        goto bad;
    ws(&r);
    if (*r.p || st->version < 0 || st->version > 1 || st->epoch < 0)
        goto bad;
    return 0;
bad:
    snprintf(err, errlen, "Error while reading the quorum state: malformed JSON near offset %d",
             (int)(r.p - text));
    return -1;
}

static void state_path(const char *dir, char *path, size_t cap)
{
    snprintf(path, cap, "%s/%s", dir, RAFT_STATE_FILE);
}

int raft_qstate_read(const char *dir, raft_qstate_t *st, char *err, size_t errlen)
{
    char path[4096];
    size_t len;
    state_path(dir, path, sizeof(path));
    char *text = log_ckpt_read_file(path, &len);
    if (!text) {
        raft_qstate_init(st, 0);
        if (errno == ENOENT)
            return 1;
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    int rc = raft_qstate_decode(text, st, err, errlen);
    free(text);
    return rc;
}

int raft_qstate_write(const char *dir, const raft_qstate_t *st)
{
    char path[4096], text[1024];
    state_path(dir, path, sizeof(path));
    int n = raft_qstate_encode(st, text, sizeof(text));
    if (n < 0) {
        errno = EOVERFLOW;
        return -1;
    }
    return log_ckpt_write_file(path, text, (size_t)n) == 0 ? 0 : -1;
}

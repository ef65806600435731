/* Fault injection: the rules behind the wrappers of fault.h. A few rules
 * at most are armed at once, so they are a small fixed array scanned in
 * order; the first rule that fires decides. All of fault_st is guarded by
 * its mutex, which only armed calls and the arming functions take: the
 * wrappers' unarmed path reads fault_armed alone. */
#include "util/fault.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "util/logging.h"
#include "util/mem.h"

#define FAULT_MAX_RULES 8

typedef struct fault_slot_s {
    fault_rule_t rule;
    char *while_path; /* owned copy of rule.while_path */
    int64_t seen;     /* matching calls since the rule was armed */
    int64_t fired;    /* calls it failed */
} fault_slot_t;

atomic_int fault_armed;

static struct {
    pthread_mutex_t mu;
    fault_slot_t slots[FAULT_MAX_RULES];
    int nslots;
    int counting;
    int paused;
    int short_pending;   /* the write after a short one fails... */
    pthread_t short_thread; /* ...when short_thread makes it */
    int short_err;
    int64_t calls[FAULT_NOPS + 1]; /* [FAULT_NOPS] = all kinds */
    int64_t injected;
    int env_loaded;
} fault_st = {.mu = PTHREAD_MUTEX_INITIALIZER};

static const char *const fault_names[FAULT_NOPS + 1] = {
    "open", "read", "write", "sync", "msync", "rename",
    "truncate", "unlink", "mkdir", "mmap", "any",
};

const char *fault_op_name(int op)
{
    return op >= 0 && op <= FAULT_NOPS ? fault_names[op] : "?";
}

static int fault_active(void)
{
    return !fault_st.paused && (fault_st.nslots > 0 || fault_st.counting || fault_st.short_pending);
}

/* Called with the mutex held, after every change of the state. */
static void fault_update_armed(void)
{
    atomic_store_explicit(&fault_armed, fault_active(), memory_order_relaxed);
}

static void fault_lock(void)
{
    pthread_mutex_lock(&fault_st.mu);
}

static void fault_unlock(void)
{
    pthread_mutex_unlock(&fault_st.mu);
}

/* Whether the call is one the slot counts (and counts it). */
static int fault_slot_counts(fault_slot_t *s, fault_op_t op)
{
    if (s->rule.op != FAULT_ANY && s->rule.op != (int)op)
        return 0;
    if (s->while_path && access(s->while_path, F_OK) != 0)
        return 0;
    s->seen++;
    return 1;
}

/* Whether the slot wants the call it just counted to fail. */
static int fault_slot_due(const fault_slot_t *s)
{
    if (s->rule.count > 0 && s->fired >= s->rule.count)
        return 0;
    if (s->rule.nth > 0)
        return s->seen >= s->rule.nth && (s->rule.count > 0 || s->fired == 0);
    return s->seen > s->rule.after;
}

/* The write that follows a short one on the same thread fails. Returns
 * the errno to fail it with, or 0. */
static int fault_short_follow_up(fault_op_t op)
{
    if (op != FAULT_WRITE || !fault_st.short_pending ||
        !pthread_equal(fault_st.short_thread, pthread_self()))
        return 0;
    fault_st.short_pending = 0;
    fault_update_armed();
    fault_st.injected++;
    return fault_st.short_err;
}

/* Counts the call against every rule; the first one due decides. Returns
 * the errno to fail it with, or 0 (*len may have been cut). */
static int fault_apply(fault_op_t op, size_t *len)
{
    fault_slot_t *hit = NULL;
    int err;

    for (int i = 0; i < fault_st.nslots; i++) {
        fault_slot_t *s = &fault_st.slots[i];
        if (fault_slot_counts(s, op) && !hit && fault_slot_due(s))
            hit = s;
    }
    if (!hit)
        return 0;
    hit->fired++;
    fault_st.injected++;
    err = hit->rule.err ? hit->rule.err : EIO;
    if (hit->rule.short_write && op == FAULT_WRITE && len && *len > 1) {
        *len /= 2;
        fault_st.short_pending = 1;
        fault_st.short_thread = pthread_self();
        fault_st.short_err = err;
        fault_update_armed();
        return 0;
    }
    return err;
}

/* A call that saw fault_armed set may find the rules gone by the time it
 * holds the mutex: it then passes uncounted, as if it had come earlier. */
int fault_check(fault_op_t op, size_t *len)
{
    int err = 0;

    fault_lock();
    if (fault_active()) {
        fault_st.calls[op]++;
        fault_st.calls[FAULT_NOPS]++;
        err = fault_short_follow_up(op);
        if (!err)
            err = fault_apply(op, len);
    }
    fault_unlock();
    if (!err)
        return 0;
    errno = err;
    return -1;
}

static int fault_add_locked(const fault_rule_t *rule)
{
    fault_slot_t *s;

    if (rule->op < 0 || rule->op > FAULT_ANY || rule->nth < 0 || rule->count < 0 ||
        fault_st.nslots == FAULT_MAX_RULES) {
        errno = EINVAL;
        return -1;
    }
    s = &fault_st.slots[fault_st.nslots++];
    memset(s, 0, sizeof(*s));
    s->rule = *rule;
    if (rule->while_path) {
        s->while_path = xstrdup(rule->while_path);
        s->rule.while_path = s->while_path;
    }
    fault_update_armed();
    return 0;
}

int fault_add(const fault_rule_t *rule)
{
    fault_lock();
    int rc = fault_add_locked(rule);
    fault_unlock();
    return rc;
}

int fault_fail_nth(int op, int64_t nth, int err)
{
    fault_rule_t r = {.op = op, .nth = nth, .err = err};

    if (nth <= 0) {
        errno = EINVAL;
        return -1;
    }
    return fault_add(&r);
}

int fault_fail_after(int op, int64_t n, int err)
{
    fault_rule_t r = {.op = op, .after = n, .err = err};
    return fault_add(&r);
}

int fault_short_write_nth(int64_t nth, int err)
{
    fault_rule_t r = {.op = FAULT_WRITE, .nth = nth, .err = err, .short_write = 1};

    if (nth <= 0) {
        errno = EINVAL;
        return -1;
    }
    return fault_add(&r);
}

void fault_count_calls(void)
{
    fault_lock();
    fault_st.counting = 1;
    fault_update_armed();
    fault_unlock();
}

static void fault_disarm_locked(void)
{
    for (int i = 0; i < fault_st.nslots; i++)
        free(fault_st.slots[i].while_path);
    fault_st.nslots = 0;
    fault_st.short_pending = 0;
    fault_update_armed();
}

void fault_disarm(void)
{
    fault_lock();
    fault_disarm_locked();
    fault_unlock();
}

void fault_reset(void)
{
    fault_lock();
    fault_disarm_locked();
    fault_st.counting = 0;
    fault_st.paused = 0;
    memset(fault_st.calls, 0, sizeof(fault_st.calls));
    fault_st.injected = 0;
    fault_update_armed();
    fault_unlock();
}

void fault_pause(void)
{
    fault_lock();
    fault_st.paused++;
    fault_update_armed();
    fault_unlock();
}

void fault_resume(void)
{
    fault_lock();
    if (fault_st.paused > 0)
        fault_st.paused--;
    fault_update_armed();
    fault_unlock();
}

int64_t fault_calls(int op)
{
    int64_t n = 0;

    fault_lock();
    if (op >= 0 && op <= FAULT_NOPS)
        n = fault_st.calls[op];
    fault_unlock();
    return n;
}

int64_t fault_injected(void)
{
    fault_lock();
    int64_t n = fault_st.injected;
    fault_unlock();
    return n;
}

/* ---- specs ---- */

static const struct {
    const char *name;
    int op;
} fault_aliases[] = {
    {"pwrite", FAULT_WRITE},   {"fsync", FAULT_SYNC},    {"fdatasync", FAULT_SYNC},
    {"ftruncate", FAULT_TRUNCATE}, {"opendir", FAULT_OPEN}, {"remove", FAULT_UNLINK},
};

static const struct {
    const char *name;
    int err;
} fault_errnos[] = {
    {"EIO", EIO},       {"ENOSPC", ENOSPC}, {"EROFS", EROFS}, {"EDQUOT", EDQUOT},
    {"EFBIG", EFBIG},   {"ENOMEM", ENOMEM}, {"EACCES", EACCES}, {"EPERM", EPERM},
    {"EBUSY", EBUSY},   {"EMFILE", EMFILE},
};

static int fault_parse_op(const char *s, size_t n)
{
    for (int i = 0; i <= FAULT_NOPS; i++)
        if (strlen(fault_names[i]) == n && !strncmp(s, fault_names[i], n))
            return i;
    for (size_t i = 0; i < sizeof(fault_aliases) / sizeof(fault_aliases[0]); i++)
        if (strlen(fault_aliases[i].name) == n && !strncmp(s, fault_aliases[i].name, n))
            return fault_aliases[i].op;
    return -1;
}

static int fault_parse_errno(const char *v)
{
    char *end;
    long n;

    for (size_t i = 0; i < sizeof(fault_errnos) / sizeof(fault_errnos[0]); i++)
        if (!strcmp(v, fault_errnos[i].name))
            return fault_errnos[i].err;
    n = strtol(v, &end, 10);
    return *v && !*end && n > 0 && n < 4096 ? (int)n : -1;
}

static int fault_parse_count(const char *v, int64_t *out)
{
    char *end;
    long long n = strtoll(v, &end, 10);

    if (!*v || *end || n < 0)
        return -1;
    *out = n;
    return 0;
}

/* Applies "key=value" to rule r; returns -1 if it is not understood. */
static int fault_parse_kv(fault_rule_t *r, char *kv)
{
    char *eq = strchr(kv, '=');
    const char *v;

    if (!eq)
        return -1;
    *eq = '\0';
    v = eq + 1;
    if (!strcmp(kv, "nth"))
        return fault_parse_count(v, &r->nth) < 0 || r->nth == 0 ? -1 : 0;
    if (!strcmp(kv, "after"))
        return fault_parse_count(v, &r->after);
    if (!strcmp(kv, "count"))
        return fault_parse_count(v, &r->count) < 0 || r->count == 0 ? -1 : 0;
    if (!strcmp(kv, "errno"))
        return (r->err = fault_parse_errno(v)) < 0 ? -1 : 0;
    if (!strcmp(kv, "short")) {
        r->short_write = !strcmp(v, "1");
        return r->short_write || !strcmp(v, "0") ? 0 : -1;
    }
    if (!strcmp(kv, "while")) {
        r->while_path = v;
        return *v ? 0 : -1;
    }
    return -1;
}

/* Parses one rule in place (s is modified); 0 or -1 with err filled. */
static int fault_parse_rule(char *s, fault_rule_t *r, char *err, size_t errlen)
{
    char *save = NULL, *tok = strtok_r(s, ":", &save);

    memset(r, 0, sizeof(*r));
    if (!tok || (r->op = fault_parse_op(tok, strlen(tok))) < 0) {
        snprintf(err, errlen, "unknown kind of call '%s'", tok ? tok : "");
        return -1;
    }
    while ((tok = strtok_r(NULL, ":", &save)) != NULL) {
        char copy[256];
        snprintf(copy, sizeof(copy), "%s", tok);
        if (fault_parse_kv(r, tok) < 0) {
            snprintf(err, errlen, "bad setting '%s' for %s", copy, fault_op_name(r->op));
            return -1;
        }
    }
    if (r->short_write && r->op != FAULT_WRITE) {
        snprintf(err, errlen, "short=1 applies to write only");
        return -1;
    }
    return 0;
}

int fault_parse(const char *spec, char *err, size_t errlen)
{
    char *copy = xstrdup(spec), *save = NULL, *one;
    fault_rule_t rules[FAULT_MAX_RULES];
    int n = 0, rc = -1;

    fault_lock();
    for (one = strtok_r(copy, ";", &save); one; one = strtok_r(NULL, ";", &save)) {
        if (!*one)
            continue;
        if (n + fault_st.nslots == FAULT_MAX_RULES) {
            snprintf(err, errlen, "more than %d rules", FAULT_MAX_RULES);
            goto out;
        }
        if (fault_parse_rule(one, &rules[n], err, errlen) < 0)
            goto out;
        n++;
    }
    /* the rules point into copy: fault_add copies what it keeps */
    for (int i = 0; i < n; i++)
        fault_add_locked(&rules[i]);
    rc = 0;
out:
    fault_unlock();
    free(copy);
    return rc;
}

int fault_env_load(char *err, size_t errlen)
{
    const char *spec = getenv("STRAND_FAULT");
    int loaded;

    fault_lock();
    loaded = fault_st.env_loaded;
    fault_st.env_loaded = 1;
    fault_unlock();
    if (loaded)
        return 0;
    if (!spec || !*spec)
        return 0;
    if (fault_parse(spec, err, errlen) < 0)
        return -1;
    lg_warn("fault injection armed from STRAND_FAULT: %s", spec);
    return 0;
}

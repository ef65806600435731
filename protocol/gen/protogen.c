/* protogen: compiles protocol/NAME.def into proto_gen.h and proto_gen.c.
 *
 * The .def language (described in full in protocol/README.md) is line
 * oriented; nesting is by indentation, two spaces a level:
 *
 *   api Produce key=0 versions=0-12 flexible=9+
 *   request
 *     Acks int16 0+
 *     TopicData []TopicProduceData 0+
 *       Name string 0+
 *   response
 *     ...
 *   header RequestHeader versions=0-2 flexible=2+
 *   common SomeStruct 0+          (a struct shared inside one message)
 *
 * A field line is `Name type versions [nullable=V] [tag=N tagged=V]
 * [default=X] [noflex]`. Output: C structs, one descriptor table per
 * struct (walked by src/proto/proto_codec.c), thin typed wrappers, the API
 * table. The generator is a build tool: it reports the first error with
 * file:line and exits 1, and frees everything before exiting so that it
 * runs clean under LeakSanitizer in sanitizer builds.
 *
 * usage: protogen -I srcdir -o outbase file.def...
 *   writes outbase.h and outbase.c; file names are relative to srcdir. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#define VMAX 0x7fff
#define MAXDEPTH 16

enum {
    T_BOOL = 1, T_INT8, T_INT16, T_UINT16, T_INT32, T_UINT32, T_INT64,
    T_FLOAT64, T_UUID, T_STRING, T_BYTES, T_RECORDS, T_STRUCT
};

static const struct {
    const char *dsl, *ctype, *enumname;
} prims[] = {
    [T_BOOL] = { "bool", "bool", "PROTO_T_BOOL" },
    [T_INT8] = { "int8", "int8_t", "PROTO_T_INT8" },
    [T_INT16] = { "int16", "int16_t", "PROTO_T_INT16" },
    [T_UINT16] = { "uint16", "uint16_t", "PROTO_T_UINT16" },
    [T_INT32] = { "int32", "int32_t", "PROTO_T_INT32" },
    [T_UINT32] = { "uint32", "uint32_t", "PROTO_T_UINT32" },
    [T_INT64] = { "int64", "int64_t", "PROTO_T_INT64" },
    [T_FLOAT64] = { "float64", "double", "PROTO_T_FLOAT64" },
    [T_UUID] = { "uuid", "proto_uuid_t", "PROTO_T_UUID" },
    [T_STRING] = { "string", "proto_str_t", "PROTO_T_STRING" },
    [T_BYTES] = { "bytes", "proto_bytes_t", "PROTO_T_BYTES" },
    [T_RECORDS] = { "records", "proto_records_t", "PROTO_T_RECORDS" },
    [T_STRUCT] = { NULL, NULL, "PROTO_T_STRUCT" },
};

typedef struct { int min, max; } vr_t;

typedef struct sdef sdef_t;

typedef struct {
    char *name, *snake;
    int type, array;
    sdef_t *sub;
    vr_t ver, nul, tagv;
    long tag;
    char *def;
    int noflex;
    const char *file;
    int line;
} fdef_t;

struct sdef {
    char *name;
    char *ctype; /* C type name without the _t */
    fdef_t *f;
    int n, cap;
    int emitted, common, dead;
};

typedef struct {
    char *name;   /* ProduceRequest, RequestHeader */
    char *prefix; /* proto_produce_req, proto_request_header */
    int key;
    vr_t ver;
    int flex_min;
    sdef_t *top;
    sdef_t **st;
    int ns, caps;
} mdef_t;

typedef struct {
    char *name, *snake;
    int key;
    vr_t ver;
    int flex_min;
    mdef_t *req, *resp;
} adef_t;

/* Every allocation is remembered and released at exit. */
static void **allocs;
static size_t nallocs, capallocs;
static const char *cur_file;
static int cur_line;
static FILE *cur_fp; /* closed by fail() */

static void fail(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));

static void free_all(void)
{
    for (size_t i = 0; i < nallocs; i++)
        free(allocs[i]);
    free(allocs);
    allocs = NULL;
    nallocs = capallocs = 0;
}

static void fail(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "protogen: %s:%d: ", cur_file ? cur_file : "-", cur_line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    if (cur_fp)
        fclose(cur_fp);
    free_all();
    exit(1);
}

static void *galloc(size_t n)
{
    if (nallocs == capallocs) {
        capallocs = capallocs ? capallocs * 2 : 256;
        void **na = realloc(allocs, capallocs * sizeof(*allocs));
        if (!na)
            fail("out of memory");
        allocs = na;
    }
    void *p = calloc(1, n ? n : 1);
    if (!p)
        fail("out of memory");
    allocs[nallocs++] = p;
    return p;
}

/* Grows an array allocated by galloc (keeps the registry in sync). */
static void *ggrow(void *old, size_t oldn, size_t newn, size_t elem)
{
    void *p = galloc(newn * elem);
    if (old)
        memcpy(p, old, oldn * elem);
    return p;
}

static char *gstrdup(const char *s)
{
    size_t n = strlen(s);
    char *p = galloc(n + 1);
    memcpy(p, s, n + 1);
    return p;
}

static char *gprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static char *gprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *p = galloc((size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return p;
}

/* CamelCase to snake_case: ApiVersions -> api_versions, and an acronym
 * run ends before its last capital when a lower case letter follows
 * (ABCDef -> abc_def). */
static char *snake(const char *s)
{
    size_t n = strlen(s);
    char *out = galloc(2 * n + 1);
    char *w = out;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (isupper(c) && i > 0) {
            unsigned char pc = (unsigned char)s[i - 1];
            unsigned char nc = (unsigned char)s[i + 1];
            if (islower(pc) || isdigit(pc) || (isupper(pc) && islower(nc)))
                *w++ = '_';
        }
        *w++ = (char)tolower(c);
    }
    *w = 0;
    return out;
}

static int is_c_keyword(const char *s)
{
    static const char *const kw[] = {
        "auto", "break", "case", "char", "const", "continue", "default",
        "do", "double", "else", "enum", "extern", "float", "for", "goto",
        "if", "inline", "int", "long", "register", "restrict", "return",
        "short", "signed", "sizeof", "static", "struct", "switch",
        "typedef", "union", "unsigned", "void", "volatile", "while",
        "bool", "true", "false", NULL
    };
    for (int i = 0; kw[i]; i++)
        if (!strcmp(s, kw[i]))
            return 1;
    return 0;
}

static int parse_int(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 0);
    if (errno || end == s || *end || v < lo || v > hi)
        return -1;
    *out = (long)v;
    return 0;
}

/* "none", "N", "N+", "N-M" */
static vr_t parse_vr(const char *s)
{
    vr_t r;
    long a, b;
    char tmp[64];
    if (!strcmp(s, "none"))
        return (vr_t){ 1, 0 };
    if (strlen(s) >= sizeof(tmp))
        fail("bad version range '%s'", s);
    strcpy(tmp, s);
    size_t n = strlen(tmp);
    char *dash = strchr(tmp, '-');
    if (n && tmp[n - 1] == '+') {
        tmp[n - 1] = 0;
        if (parse_int(tmp, 0, VMAX, &a))
            fail("bad version range '%s'", s);
        r.min = (int)a;
        r.max = VMAX;
    } else if (dash) {
        *dash = 0;
        if (parse_int(tmp, 0, VMAX, &a) || parse_int(dash + 1, 0, VMAX, &b) ||
            b < a)
            fail("bad version range '%s'", s);
        r.min = (int)a;
        r.max = (int)b;
    } else {
        if (parse_int(tmp, 0, VMAX, &a))
            fail("bad version range '%s'", s);
        r.min = r.max = (int)a;
    }
    return r;
}

static int vr_empty(vr_t v)
{
    return v.min > v.max;
}

/* ---- the model ---- */

static adef_t **apis;
static int napis, capapis;
static mdef_t **msgs; /* every message, headers included, in file order */
static int nmsgs, capmsgs;

static mdef_t *new_msg(const char *name, const char *prefix, int key,
                       vr_t ver, int flex_min)
{
    mdef_t *m = galloc(sizeof(*m));
    m->name = gstrdup(name);
    m->prefix = gstrdup(prefix);
    m->key = key;
    m->ver = ver;
    m->flex_min = flex_min;
    m->top = galloc(sizeof(*m->top));
    m->top->name = m->name;
    m->top->ctype = m->prefix;
    if (nmsgs == capmsgs) {
        msgs = ggrow(msgs, (size_t)nmsgs, (size_t)(capmsgs = capmsgs ? capmsgs * 2 : 64),
                     sizeof(*msgs));
    }
    msgs[nmsgs++] = m;
    return m;
}

static sdef_t *new_struct(mdef_t *m, const char *name, int common)
{
    sdef_t *s = galloc(sizeof(*s));
    s->name = gstrdup(name);
    s->ctype = gprintf("%s_%s", m->prefix, snake(name));
    s->common = common;
    if (m->ns == m->caps) {
        m->st = ggrow(m->st, (size_t)m->ns, (size_t)(m->caps = m->caps ? m->caps * 2 : 16),
                      sizeof(*m->st));
    }
    m->st[m->ns++] = s;
    return s;
}

static fdef_t *add_field(sdef_t *s)
{
    if (s->n == s->cap) {
        s->f = ggrow(s->f, (size_t)s->n, (size_t)(s->cap = s->cap ? s->cap * 2 : 8),
                     sizeof(*s->f));
    }
    fdef_t *f = &s->f[s->n++];
    memset(f, 0, sizeof(*f));
    f->tag = -1;
    f->nul = f->tagv = (vr_t){ 1, 0 };
    f->file = cur_file;
    f->line = cur_line;
    return f;
}

/* ---- parsing ---- */

typedef struct {
    adef_t *api;
    mdef_t *msg;
    sdef_t *stack[MAXDEPTH];
    int sp; /* valid entries of stack */
} pstate_t;

static int split(char *line, char **tok, int max)
{
    int n = 0;
    char *p = line;
    while (*p) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p)
            break;
        if (n == max)
            fail("too many words");
        tok[n++] = p;
        while (*p && *p != ' ' && *p != '\t')
            p++;
        if (*p)
            *p++ = 0;
    }
    return n;
}

/* key=value attribute lookup among tok[from..n) */
static const char *attr(char **tok, int n, int from, const char *key)
{
    size_t kl = strlen(key);
    for (int i = from; i < n; i++)
        if (!strncmp(tok[i], key, kl) && tok[i][kl] == '=')
            return tok[i] + kl + 1;
    return NULL;
}

static int parse_flex(const char *s)
{
    if (!s)
        fail("missing flexible=");
    vr_t f = parse_vr(s);
    if (vr_empty(f))
        return -1;
    if (f.max != VMAX)
        fail("flexible= must be N+ or none");
    return f.min;
}

static void check_attrs(char **tok, int n, int from, const char *const *ok)
{
    for (int i = from; i < n; i++) {
        int good = 0;
        for (int k = 0; ok[k]; k++) {
            size_t kl = strlen(ok[k]);
            if (!strncmp(tok[i], ok[k], kl) &&
                (tok[i][kl] == '=' || (tok[i][kl] == 0 && !strcmp(ok[k], "noflex"))))
                good = 1;
        }
        if (!good)
            fail("unknown attribute '%s'", tok[i]);
    }
}

static void parse_api(pstate_t *ps, char **tok, int n)
{
    static const char *const ok[] = { "key", "versions", "flexible", NULL };
    check_attrs(tok, n, 2, ok);
    if (n < 2)
        fail("api needs a name");
    adef_t *a = galloc(sizeof(*a));
    long key;
    const char *ks = attr(tok, n, 2, "key");
    const char *vs = attr(tok, n, 2, "versions");
    if (!ks || parse_int(ks, 0, 32767, &key))
        fail("api needs key=N");
    if (!vs)
        fail("api needs versions=");
    a->name = gstrdup(tok[1]);
    a->snake = snake(tok[1]);
    a->key = (int)key;
    a->ver = parse_vr(vs);
    a->flex_min = parse_flex(attr(tok, n, 2, "flexible"));
    for (int i = 0; i < napis; i++)
        if (apis[i]->key == a->key || !strcmp(apis[i]->name, a->name))
            fail("api %s defined twice", a->name);
    if (napis == capapis)
        apis = ggrow(apis, (size_t)napis, (size_t)(capapis = capapis ? capapis * 2 : 32),
                     sizeof(*apis));
    apis[napis++] = a;
    ps->api = a;
    ps->msg = NULL;
    ps->sp = 0;
}

static void parse_top(pstate_t *ps, char **tok, int n)
{
    if (!strcmp(tok[0], "api")) {
        parse_api(ps, tok, n);
    } else if (!strcmp(tok[0], "request") || !strcmp(tok[0], "response")) {
        int resp = tok[0][2] == 's';
        adef_t *a = ps->api;
        if (!a || n != 1)
            fail("'%s' must follow an api line and stand alone", tok[0]);
        if (resp ? a->resp : a->req)
            fail("second %s for %s", tok[0], a->name);
        char *name = gprintf("%s%s", a->name, resp ? "Response" : "Request");
        char *prefix = gprintf("proto_%s_%s", a->snake, resp ? "resp" : "req");
        ps->msg = new_msg(name, prefix, a->key, a->ver, a->flex_min);
        *(resp ? &a->resp : &a->req) = ps->msg;
        ps->stack[0] = ps->msg->top;
        ps->sp = 1;
    } else if (!strcmp(tok[0], "header")) {
        static const char *const ok[] = { "versions", "flexible", NULL };
        check_attrs(tok, n, 2, ok);
        const char *vs = attr(tok, n, 2, "versions");
        if (n < 2 || !vs)
            fail("header needs a name and versions=");
        ps->api = NULL;
        ps->msg = new_msg(tok[1], gprintf("proto_%s", snake(tok[1])), -1,
                          parse_vr(vs), parse_flex(attr(tok, n, 2, "flexible")));
        ps->stack[0] = ps->msg->top;
        ps->sp = 1;
    } else if (!strcmp(tok[0], "common")) {
        if (!ps->msg || n < 2 || n > 3)
            fail("'common Name [versions]' must follow a message");
        ps->stack[0] = new_struct(ps->msg, tok[1], 1);
        ps->sp = 1;
    } else {
        fail("unknown keyword '%s'", tok[0]);
    }
}

static int prim_type(const char *t)
{
    for (int i = T_BOOL; i < T_STRUCT; i++)
        if (!strcmp(prims[i].dsl, t))
            return i;
    return 0;
}

static void parse_field(pstate_t *ps, int depth, char **tok, int n)
{
    static const char *const ok[] = { "nullable", "tag", "tagged", "default",
                                      "noflex", NULL };
    if (depth > ps->sp || depth >= MAXDEPTH)
        fail("field indented too deep");
    if (n < 3)
        fail("field needs: Name type versions");
    check_attrs(tok, n, 3, ok);
    sdef_t *parent = ps->stack[depth - 1];
    fdef_t *f = add_field(parent);
    const char *t = tok[1];
    f->name = gstrdup(tok[0]);
    f->snake = snake(tok[0]);
    if (is_c_keyword(f->snake))
        f->snake = gprintf("%s_", f->snake);
    if (!isupper((unsigned char)tok[0][0]))
        fail("field names are CamelCase: '%s'", tok[0]);
    if (!strncmp(t, "[]", 2)) {
        f->array = 1;
        t += 2;
    }
    f->type = prim_type(t);
    f->ver = parse_vr(tok[2]);
    ps->sp = depth;
    if (!f->type) {
        if (!isupper((unsigned char)t[0]))
            fail("unknown type '%s'", t);
        f->type = T_STRUCT;
        f->sub = new_struct(ps->msg, t, 0);
        ps->stack[depth] = f->sub;
        ps->sp = depth + 1;
    }
    const char *a;
    if ((a = attr(tok, n, 3, "nullable")))
        f->nul = parse_vr(a);
    if ((a = attr(tok, n, 3, "tagged")))
        f->tagv = parse_vr(a);
    if ((a = attr(tok, n, 3, "tag")) && parse_int(a, 0, INT32_MAX, &f->tag))
        fail("bad tag '%s'", a);
    if ((a = attr(tok, n, 3, "default")))
        f->def = gstrdup(a);
    for (int i = 3; i < n; i++)
        if (!strcmp(tok[i], "noflex"))
            f->noflex = 1;
}

static void parse_file(const char *dir, const char *name)
{
    char *path = gprintf("%s/%s", dir, name);
    FILE *fp = cur_fp = fopen(path, "r");
    char line[4096];
    pstate_t ps;
    memset(&ps, 0, sizeof(ps));
    cur_file = name;
    cur_line = 0;
    if (!fp)
        fail("cannot open %s: %s", path, strerror(errno));
    while (fgets(line, sizeof(line), fp)) {
        char *tok[32];
        cur_line++;
        size_t len = strlen(line);
        if (len && line[len - 1] == '\n')
            line[--len] = 0;
        else if (!feof(fp))
            fail("line too long");
        char *hash = strchr(line, '#');
        if (hash)
            *hash = 0;
        int indent = 0;
        while (line[indent] == ' ')
            indent++;
        if (line[indent] == '\t')
            fail("indent with spaces, not tabs");
        int n = split(line, tok, 32);
        if (!n)
            continue;
        if (indent % 2)
            fail("indentation must be a multiple of two");
        if (indent == 0)
            parse_top(&ps, tok, n);
        else if (!ps.msg)
            fail("field outside a message");
        else
            parse_field(&ps, indent / 2, tok, n);
    }
    fclose(fp);
    cur_fp = NULL;
    cur_file = NULL;
}

/* ---- checks ---- */

static void check_default(const fdef_t *f)
{
    long v;
    static const long lim[][2] = {
        [T_INT8] = { -128, 127 }, [T_INT16] = { -32768, 32767 },
        [T_UINT16] = { 0, 65535 }, [T_INT32] = { INT32_MIN, INT32_MAX },
        [T_UINT32] = { 0, UINT32_MAX }, [T_INT64] = { LONG_MIN, LONG_MAX },
    };
    const char *d = f->def;
    if (!d)
        return;
    if (!strcmp(d, "null")) {
        if (vr_empty(f->nul))
            fail("field %s: default null but never nullable", f->name);
        return;
    }
    if (f->array || f->type == T_STRUCT || f->type == T_BYTES ||
        f->type == T_RECORDS || f->type == T_UUID)
        fail("field %s: only null is a default for this type", f->name);
    switch (f->type) {
    case T_BOOL:
        if (strcmp(d, "true") && strcmp(d, "false"))
            fail("field %s: bool default must be true or false", f->name);
        break;
    case T_FLOAT64: {
        char *end;
        strtod(d, &end);
        if (end == d || *end)
            fail("field %s: bad float64 default", f->name);
        break;
    }
    case T_STRING:
        for (const char *p = d; *p; p++)
            if (!isalnum((unsigned char)*p) && !strchr("._-:/", *p))
                fail("field %s: string default may hold only [A-Za-z0-9._-:/]",
                     f->name);
        break;
    default:
        if (parse_int(d, lim[f->type][0], lim[f->type][1], &v))
            fail("field %s: default '%s' out of range", f->name, d);
    }
}

/* A nullable struct (not an array of them): in C an array of 0 or 1. */
static int is_opt(const fdef_t *f)
{
    return f->type == T_STRUCT && !f->array && !vr_empty(f->nul);
}

static void check_field(const mdef_t *m, const sdef_t *s, const fdef_t *f)
{
    cur_file = f->file;
    cur_line = f->line;
    if (!vr_empty(f->nul) && !f->array && f->type != T_STRING &&
        f->type != T_BYTES && f->type != T_RECORDS && f->type != T_STRUCT)
        fail("field %s: only strings, bytes, records, structs and arrays are nullable",
             f->name);
    if (is_opt(f) && (f->nul.min != f->ver.min || f->nul.max != f->ver.max ||
                      !f->def || strcmp(f->def, "null")))
        fail("field %s: a nullable struct is nullable in all its versions, default=null",
             f->name);
    if ((f->tag >= 0) != !vr_empty(f->tagv))
        fail("field %s: tag= and tagged= go together", f->name);
    if (f->tag >= 0 && (m->flex_min < 0 || f->tagv.min < m->flex_min ||
                        f->tagv.min < f->ver.min || f->tagv.max > f->ver.max))
        fail("field %s: tagged versions must be flexible versions of the field",
             f->name);
    if (f->noflex && (f->array || (f->type != T_STRING && f->type != T_BYTES)))
        fail("field %s: noflex applies to strings and bytes only", f->name);
    for (const fdef_t *g = s->f; g < f; g++) {
        if (!strcmp(g->snake, f->snake))
            fail("field %s appears twice in %s", f->name, s->name);
        if (f->tag >= 0 && g->tag == f->tag)
            fail("tag %ld used twice in %s", f->tag, s->name);
    }
    check_default(f);
}

/* A struct-typed field without nested lines names a common struct (or a
 * struct defined inline elsewhere in the same message). */
static void resolve_msg(mdef_t *m)
{
    for (int i = -1; i < m->ns; i++) {
        sdef_t *s = i < 0 ? m->top : m->st[i];
        for (int k = 0; k < s->n; k++) {
            fdef_t *f = &s->f[k];
            check_field(m, s, f);
            if (f->type != T_STRUCT || f->sub->n > 0 || f->sub->common)
                continue;
            sdef_t *t = NULL;
            for (int j = 0; j < m->ns && !t; j++)
                if (m->st[j] != f->sub && m->st[j]->n > 0 &&
                    !strcmp(m->st[j]->name, f->sub->name))
                    t = m->st[j];
            if (!t)
                fail("struct %s has no fields and names no other struct",
                     f->sub->name);
            f->sub->dead = 1;
            f->sub = t;
        }
    }
    for (int i = 0; i < m->ns; i++)
        for (int j = 0; j < i; j++)
            if (!m->st[i]->dead && !m->st[j]->dead &&
                !strcmp(m->st[i]->name, m->st[j]->name))
                fail("%s: struct %s defined twice", m->name, m->st[i]->name);
}

/* ---- output ---- */

static char *vr_str(vr_t v)
{
    if (vr_empty(v))
        return gstrdup("none");
    if (v.max == VMAX)
        return gprintf("v%d+", v.min);
    if (v.min == v.max)
        return gprintf("v%d", v.min);
    return gprintf("v%d-%d", v.min, v.max);
}

static char *upper(const char *s)
{
    char *u = gstrdup(s);
    for (char *p = u; *p; p++)
        *p = (char)toupper((unsigned char)*p);
    return u;
}

static const char *elem_ctype(const fdef_t *f)
{
    return f->type == T_STRUCT ? gprintf("%s_t", f->sub->ctype)
                               : prims[f->type].ctype;
}

static void field_comment(FILE *o, const fdef_t *f)
{
    fprintf(o, " /* %s", vr_str(f->ver));
    if (!vr_empty(f->nul))
        fprintf(o, ", nullable %s", vr_str(f->nul));
    if (f->tag >= 0)
        fprintf(o, ", tag %ld in %s", f->tag, vr_str(f->tagv));
    if (f->def)
        fprintf(o, ", default %s", f->def);
    fprintf(o, " */\n");
}

/* mark: 1 = typedef written to the header, 2 = tables written to the .c;
 * 4 and 8 are the matching "in progress" bits that catch cycles. */
static void emit_typedef(FILE *o, sdef_t *s)
{
    if (s->emitted & 1)
        return;
    if (s->emitted & 4)
        fail("struct %s contains itself", s->name);
    s->emitted |= 4;
    for (int i = 0; i < s->n; i++)
        if (s->f[i].type == T_STRUCT)
            emit_typedef(o, s->f[i].sub);
    fprintf(o, "typedef struct %s_s {\n", s->ctype);
    if (!s->n)
        fprintf(o, "    char unused_; /* no fields in any version */\n");
    for (int i = 0; i < s->n; i++) {
        const fdef_t *f = &s->f[i];
        if (f->array || is_opt(f))
            fprintf(o, "    struct { int32_t n; %s *v; } %s;", elem_ctype(f), f->snake);
        else
            fprintf(o, "    %s %s;", elem_ctype(f), f->snake);
        field_comment(o, f);
    }
    fprintf(o, "} %s_t;\n\n", s->ctype);
    s->emitted = (s->emitted & ~4) | 1;
}

static void emit_protos(FILE *o, mdef_t *m)
{
    const char *p = m->prefix;
    for (int i = -1; i < m->ns; i++) {
        sdef_t *s = i < 0 ? m->top : m->st[i];
        if (!s->dead)
            fprintf(o, "void %s_init(%s_t *m);\n", s->ctype, s->ctype);
    }
    fprintf(o, "int %s_decode(%s_t *m, int16_t version, const uint8_t *buf,\n"
               "    size_t len, arena_t *arena);\n", p, p);
    fprintf(o, "void %s_encode(const %s_t *m, int16_t version, buf_t *out);\n\n",
            p, p);
}

static void emit_msg_h(FILE *o, mdef_t *m)
{
    fprintf(o, "/* %s: versions %d-%d", m->name, m->ver.min, m->ver.max);
    if (m->flex_min >= 0)
        fprintf(o, ", flexible from %d */\n", m->flex_min);
    else
        fprintf(o, ", never flexible */\n");
    emit_typedef(o, m->top);
    emit_protos(o, m);
}

static void emit_header(FILE *o)
{
    fprintf(o, "/* Generated by protocol/gen/protogen from protocol/NAME.def: do not edit.\n"
               " * Include proto/proto.h rather than this file. */\n"
               "#ifndef STRAND_PROTO_GEN_H\n#define STRAND_PROTO_GEN_H\n\n"
               "#include \"proto/proto_types.h\"\n\n");
    int maxkey = -1;
    for (int i = 0; i < napis; i++) {
        fprintf(o, "#define PROTO_API_%s %d\n", upper(apis[i]->snake), apis[i]->key);
        if (apis[i]->key > maxkey)
            maxkey = apis[i]->key;
    }
    fprintf(o, "#define PROTO_API_MAX_KEY %d\n\n", maxkey);
    for (int i = 0; i < nmsgs; i++)
        emit_msg_h(o, msgs[i]);
    fprintf(o, "#endif\n");
}

static void emit_def(FILE *o, const fdef_t *f)
{
    const char *d = f->def;
    if (!d)
        return;
    if (!strcmp(d, "null"))
        fprintf(o, ", .def_null = 1");
    else if (f->type == T_BOOL)
        fprintf(o, ", .def_i = %d", !strcmp(d, "true"));
    else if (f->type == T_FLOAT64)
        fprintf(o, ", .def_f = %s", d);
    else if (f->type == T_STRING)
        fprintf(o, ", .def_s = \"%s\"", d);
    else {
        long v;
        parse_int(d, LONG_MIN, LONG_MAX, &v);
        if (v == LONG_MIN)
            fprintf(o, ", .def_i = INT64_MIN");
        else
            fprintf(o, ", .def_i = INT64_C(%ld)", v);
    }
}

static void emit_field(FILE *o, const sdef_t *s, const fdef_t *f)
{
    fprintf(o, "    { .name = \"%s\", .off = offsetof(%s_t, %s), .type = %s",
            f->name, s->ctype, f->snake, prims[f->type].enumname);
    if (f->array || is_opt(f))
        fprintf(o, ", .array = %d, .elem_size = sizeof(%s)", f->array ? 1 : 2, elem_ctype(f));
    if (f->type == T_STRUCT)
        fprintf(o, ", .sub = &ps_%s", f->sub->ctype);
    if (f->noflex)
        fprintf(o, ", .noflex = 1");
    fprintf(o, ",\n      .vmin = %d, .vmax = %d, .nmin = %d, .nmax = %d,"
               " .tmin = %d, .tmax = %d, .tag = %ld",
            f->ver.min, f->ver.max, f->nul.min, f->nul.max, f->tagv.min,
            f->tagv.max, f->tag);
    emit_def(o, f);
    fprintf(o, " },\n");
}

/* Regular fields in wire order, then tagged ones by ascending tag. */
static void emit_tables(FILE *o, sdef_t *s)
{
    if (s->emitted & 2)
        return;
    for (int i = 0; i < s->n; i++)
        if (s->f[i].type == T_STRUCT)
            emit_tables(o, s->f[i].sub);
    if (s->n) {
        fprintf(o, "static const proto_field_t pf_%s[] = {\n", s->ctype);
        for (int i = 0; i < s->n; i++)
            if (s->f[i].tag < 0)
                emit_field(o, s, &s->f[i]);
        for (long last = -1;;) {
            const fdef_t *next = NULL;
            for (int i = 0; i < s->n; i++)
                if (s->f[i].tag > last && (!next || s->f[i].tag < next->tag))
                    next = &s->f[i];
            if (!next)
                break;
            emit_field(o, s, next);
            last = next->tag;
        }
        fprintf(o, "};\n");
    }
    fprintf(o, "static const proto_struct_t ps_%s = { \"%s\", sizeof(%s_t), %d, %s%s };\n\n",
            s->ctype, s->name, s->ctype, s->n, s->n ? "pf_" : "NULL", s->n ? s->ctype : "");
    s->emitted |= 2;
}

static void emit_msg_c(FILE *o, mdef_t *m)
{
    const char *p = m->prefix;
    emit_tables(o, m->top);
    /* headers are reachable by name, messages through proto_msg_lookup() */
    fprintf(o, "%sconst proto_msg_t proto_msg_%s = { \"%s\", &ps_%s, %d, %d, %d, %d };\n\n",
            m->key < 0 ? "" : "static ", p + 6, m->name, p, m->key, m->ver.min,
            m->ver.max, m->flex_min);
    for (int i = -1; i < m->ns; i++) {
        sdef_t *s = i < 0 ? m->top : m->st[i];
        if (!s->dead)
            fprintf(o, "void %s_init(%s_t *m)\n{\n    proto_struct_init(&ps_%s, m);\n}\n\n",
                    s->ctype, s->ctype, s->ctype);
    }
    fprintf(o, "int %s_decode(%s_t *m, int16_t version, const uint8_t *buf,\n"
               "    size_t len, arena_t *arena)\n{\n"
               "    return proto_msg_decode(&proto_msg_%s, m, version, buf, len, arena, NULL);\n}\n\n",
            p, p, p + 6);
    fprintf(o, "void %s_encode(const %s_t *m, int16_t version, buf_t *out)\n{\n"
               "    proto_msg_encode(&proto_msg_%s, m, version, out);\n}\n\n", p, p, p + 6);
}

static void emit_lookups(FILE *o)
{
    fprintf(o, "static const proto_api_info_t api_info[] = {\n");
    for (int i = 0; i < napis; i++)
        fprintf(o, "    { %d, \"%s\", %d, %d, %d },\n", apis[i]->key, apis[i]->name,
                apis[i]->ver.min, apis[i]->ver.max, apis[i]->flex_min);
    fprintf(o, "};\n\nconst proto_api_info_t *proto_api_info(int16_t api_key)\n{\n"
               "    switch (api_key) {\n");
    for (int i = 0; i < napis; i++)
        fprintf(o, "    case %d: return &api_info[%d];\n", apis[i]->key, i);
    fprintf(o, "    default: return NULL;\n    }\n}\n\n"
               "const proto_msg_t *proto_msg_lookup(int16_t api_key, int resp)\n{\n"
               "    switch (api_key) {\n");
    for (int i = 0; i < napis; i++) {
        adef_t *a = apis[i];
        if (!a->req || !a->resp)
            fail("api %s needs both a request and a response", a->name);
        fprintf(o, "    case %d: return resp ? &proto_msg_%s : &proto_msg_%s;\n", a->key,
                a->resp->prefix + 6, a->req->prefix + 6);
    }
    fprintf(o, "    default: return NULL;\n    }\n}\n\n"
               "const proto_msg_t *const proto_msg_all[] = {\n");
    for (int i = 0; i < nmsgs; i++)
        fprintf(o, "    &proto_msg_%s,\n", msgs[i]->prefix + 6);
    fprintf(o, "    NULL\n};\n");
}

static void emit_source(FILE *o)
{
    fprintf(o, "/* Generated by protocol/gen/protogen from protocol/NAME.def: do not edit. */\n"
               "#include <stddef.h>\n\n#include \"proto/proto.h\"\n"
               "#include \"proto/proto_desc.h\"\n\n");
    for (int i = 0; i < nmsgs; i++)
        emit_msg_c(o, msgs[i]);
    emit_lookups(o);
}

static void write_file(const char *path, void (*emit)(FILE *))
{
    char *tmp = gprintf("%s.tmp", path);
    FILE *o = cur_fp = fopen(tmp, "w");
    if (!o)
        fail("cannot write %s: %s", tmp, strerror(errno));
    emit(o);
    cur_fp = NULL;
    if (ferror(o) | fclose(o))
        fail("write error on %s", tmp);
    if (rename(tmp, path))
        fail("cannot rename %s: %s", tmp, strerror(errno));
}

int main(int argc, char **argv)
{
    const char *dir = ".", *out = NULL;
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i += 2) {
        if (i + 1 >= argc)
            fail("option %s needs a value", argv[i]);
        if (!strcmp(argv[i], "-I"))
            dir = argv[i + 1];
        else if (!strcmp(argv[i], "-o"))
            out = argv[i + 1];
        else
            fail("unknown option %s", argv[i]);
    }
    if (!out || i == argc)
        fail("usage: protogen -I srcdir -o outbase file.def...");
    for (; i < argc; i++)
        parse_file(dir, argv[i]);
    for (int k = 0; k < nmsgs; k++)
        resolve_msg(msgs[k]);
    cur_file = NULL;
    cur_line = 0;
    write_file(gprintf("%s.h", out), emit_header);
    write_file(gprintf("%s.c", out), emit_source);
    free_all();
    return 0;
}

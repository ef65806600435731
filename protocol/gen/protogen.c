/* protogen: compiles protocol/NAME.def and protocol/records/DIR/NAME.def
 * into proto_gen.h and proto_gen.c.
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
 *   record TopicRecord kind=metadata key=2 versions=0 flexible=0+
 *     Name string 0+
 *   common SomeStruct 0+          (a struct shared inside one message)
 *
 * A field line is `Name type versions [nullable=V] [tag=N tagged=V]
 * [default=X] [noflex]`. This file reads the definitions into the model
 * of protogen.h and checks them; protogen_emit.c writes the code. The
 * generator is a build tool: it reports the first error with file:line
 * and exits 1, and frees everything before exiting so that it runs clean
 * under LeakSanitizer in sanitizer builds.
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

#include "protogen.h"

#define MAXDEPTH 16

const prim_t prims[] = {
    [T_BOOL] = { "bool", "bool", "PROTO_T_BOOL", "proto_bool_array_t" },
    [T_INT8] = { "int8", "int8_t", "PROTO_T_INT8", "proto_int8_array_t" },
    [T_INT16] = { "int16", "int16_t", "PROTO_T_INT16", "proto_int16_array_t" },
    [T_UINT16] = { "uint16", "uint16_t", "PROTO_T_UINT16", "proto_uint16_array_t" },
    [T_INT32] = { "int32", "int32_t", "PROTO_T_INT32", "proto_int32_array_t" },
    [T_UINT32] = { "uint32", "uint32_t", "PROTO_T_UINT32", "proto_uint32_array_t" },
    [T_INT64] = { "int64", "int64_t", "PROTO_T_INT64", "proto_int64_array_t" },
    [T_FLOAT64] = { "float64", "double", "PROTO_T_FLOAT64", "proto_float64_array_t" },
    [T_UUID] = { "uuid", "proto_uuid_t", "PROTO_T_UUID", "proto_uuid_array_t" },
    [T_STRING] = { "string", "proto_str_t", "PROTO_T_STRING", "proto_str_array_t" },
    [T_BYTES] = { "bytes", "proto_bytes_t", "PROTO_T_BYTES", "proto_bytes_array_t" },
    [T_RECORDS] = { "records", "proto_records_t", "PROTO_T_RECORDS", "proto_records_array_t" },
    [T_STRUCT] = { NULL, NULL, "PROTO_T_STRUCT", NULL },
};

const kind_t kinds[] = {
    [K_NONE] = { NULL, NULL, "PROTO_REC_KIND_NONE", 0 },
    [K_METADATA] = { "metadata", "metadata", "PROTO_REC_KIND_METADATA", 1 },
    [K_CONTROL] = { "control", "control", "PROTO_REC_KIND_CONTROL", 1 },
    [K_DATA] = { "data", "data", "PROTO_REC_KIND_DATA", 0 },
    [K_GROUP_KEY] = { "group-key", "group_key", "PROTO_REC_KIND_GROUP_KEY", 1 },
    [K_GROUP_VALUE] = { "group-value", "group_value", "PROTO_REC_KIND_GROUP_VALUE", 1 },
    [K_TXN_KEY] = { "txn-key", "txn_key", "PROTO_REC_KIND_TXN_KEY", 1 },
    [K_TXN_VALUE] = { "txn-value", "txn_value", "PROTO_REC_KIND_TXN_VALUE", 1 },
};

/* Every allocation is remembered and released at exit. */
static void **allocs;
static size_t nallocs, capallocs;
static const char *cur_file;
static int cur_line;
static FILE *cur_fp; /* closed by fail() */

static void free_all(void)
{
    for (size_t i = 0; i < nallocs; i++)
        free(allocs[i]);
    free(allocs);
    allocs = NULL;
    nallocs = capallocs = 0;
}

void fail(const char *fmt, ...)
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

void *galloc(size_t n)
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

char *gstrdup(const char *s)
{
    size_t n = strlen(s);
    char *p = galloc(n + 1);
    memcpy(p, s, n + 1);
    return p;
}

char *gprintf(const char *fmt, ...)
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

int parse_int(const char *s, long lo, long hi, long *out)
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

int is_opt(const fdef_t *f)
{
    return f->type == T_STRUCT && !f->array && !vr_empty(f->nul);
}

int vr_empty(vr_t v)
{
    return v.min > v.max;
}

/* ---- the model ---- */

static mdef_t *new_msg(model_t *mod, const char *name, const char *prefix, int key,
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
    if (mod->nmsgs == mod->capmsgs) {
        mod->capmsgs = mod->capmsgs ? mod->capmsgs * 2 : 64;
        mod->msgs = ggrow(mod->msgs, (size_t)mod->nmsgs, (size_t)mod->capmsgs,
                          sizeof(*mod->msgs));
    }
    mod->msgs[mod->nmsgs++] = m;
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
    model_t *mod;
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
    model_t *mod = ps->mod;
    for (int i = 0; i < mod->napis; i++)
        if (mod->apis[i]->key == a->key || !strcmp(mod->apis[i]->name, a->name))
            fail("api %s defined twice", a->name);
    if (mod->napis == mod->capapis) {
        mod->capapis = mod->capapis ? mod->capapis * 2 : 32;
        mod->apis = ggrow(mod->apis, (size_t)mod->napis, (size_t)mod->capapis,
                          sizeof(*mod->apis));
    }
    mod->apis[mod->napis++] = a;
    ps->api = a;
    ps->msg = NULL;
    ps->sp = 0;
}

static int parse_kind(const char *s)
{
    for (int k = K_NONE + 1; s && k < K_COUNT; k++)
        if (!strcmp(kinds[k].dsl, s))
            return k;
    fail("record needs kind= (metadata, control, data, group-key, group-value, "
         "txn-key, txn-value)");
}

/* `record Name kind=K [key=N] versions=V flexible=F`: one internal record
 * schema; its fields follow at the first indent level. */
static void parse_record(pstate_t *ps, char **tok, int n)
{
    static const char *const ok[] = { "kind", "key", "versions", "flexible", NULL };
    check_attrs(tok, n, 2, ok);
    const char *vs = attr(tok, n, 2, "versions"), *ks = attr(tok, n, 2, "key");
    long key = -1;
    if (n < 2 || !vs)
        fail("record needs a name and versions=");
    int kind = parse_kind(attr(tok, n, 2, "kind"));
    if (kinds[kind].keyed != (ks != NULL))
        fail("key= is the record type: required for kind=%s records%s", kinds[kind].dsl,
             kinds[kind].keyed ? "" : ", and only for them");
    if (ks && parse_int(ks, 0, 32767, &key))
        fail("bad key '%s'", ks);
    char *sn = snake(tok[1]);
    ps->api = NULL;
    ps->msg = new_msg(ps->mod, tok[1], gprintf("proto_rec_%s", sn), (int)key, parse_vr(vs),
                      parse_flex(attr(tok, n, 2, "flexible")));
    ps->msg->kind = kind;
    ps->msg->snake = sn;
    if ((kind == K_GROUP_KEY || kind == K_TXN_KEY) && (ps->msg->ver.min || ps->msg->ver.max))
        fail("a coordinator key is written at version 0 only: versions=0");
    ps->stack[0] = ps->msg->top;
    ps->sp = 1;
}

static void parse_top(pstate_t *ps, char **tok, int n)
{
    if (!strcmp(tok[0], "api")) {
        parse_api(ps, tok, n);
    } else if (!strcmp(tok[0], "record")) {
        parse_record(ps, tok, n);
    } else if (!strcmp(tok[0], "request") || !strcmp(tok[0], "response")) {
        int resp = tok[0][2] == 's';
        adef_t *a = ps->api;
        if (!a || n != 1)
            fail("'%s' must follow an api line and stand alone", tok[0]);
        if (resp ? a->resp : a->req)
            fail("second %s for %s", tok[0], a->name);
        char *name = gprintf("%s%s", a->name, resp ? "Response" : "Request");
        char *prefix = gprintf("proto_%s_%s", a->snake, resp ? "resp" : "req");
        ps->msg = new_msg(ps->mod, name, prefix, a->key, a->ver, a->flex_min);
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
        ps->msg = new_msg(ps->mod, tok[1], gprintf("proto_%s", snake(tok[1])), -1,
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

static void parse_file(model_t *mod, const char *dir, const char *name)
{
    char *path = gprintf("%s/%s", dir, name);
    FILE *fp = cur_fp = fopen(path, "r");
    char line[4096];
    pstate_t ps;
    memset(&ps, 0, sizeof(ps));
    ps.mod = mod;
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

/* A control record's body starts with its own version (the reader takes
 * it from there): `Version int16 0+`, untagged. */
static void check_control(const mdef_t *m)
{
    const fdef_t *f = m->top->n ? &m->top->f[0] : NULL;
    if (!f || strcmp(f->name, "Version") || f->type != T_INT16 || f->array || f->tag >= 0 ||
        f->ver.min != 0 || f->ver.max != VMAX)
        fail("control record %s must begin with `Version int16 0+`", m->name);
}

/* Names are unique across all messages, and a record type within its
 * kind (a reader finds the schema by it). */
static void check_unique(const model_t *mod)
{
    for (int i = 0; i < mod->nmsgs; i++) {
        const mdef_t *m = mod->msgs[i];
        if (m->kind == K_CONTROL)
            check_control(m);
        for (int j = 0; j < i; j++) {
            const mdef_t *o = mod->msgs[j];
            if (!strcmp(m->name, o->name))
                fail("message %s defined twice", m->name);
            if (m->kind && kinds[m->kind].keyed && o->kind == m->kind && o->key == m->key)
                fail("records %s and %s: kind %s, type %d twice", o->name, m->name,
                     kinds[m->kind].dsl, m->key);
        }
    }
}

static void write_file(const char *path, const model_t *mod,
                       void (*emit)(FILE *, const model_t *))
{
    char *tmp = gprintf("%s.tmp", path);
    FILE *o = cur_fp = fopen(tmp, "w");
    if (!o)
        fail("cannot write %s: %s", tmp, strerror(errno));
    emit(o, mod);
    cur_fp = NULL;
    if (ferror(o) | fclose(o))
        fail("write error on %s", tmp);
    if (rename(tmp, path))
        fail("cannot rename %s: %s", tmp, strerror(errno));
}

int main(int argc, char **argv)
{
    const char *dir = ".", *out = NULL;
    model_t mod;
    int i = 1;
    memset(&mod, 0, sizeof(mod));
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
        parse_file(&mod, dir, argv[i]);
    for (int k = 0; k < mod.nmsgs; k++)
        resolve_msg(mod.msgs[k]);
    cur_file = NULL;
    cur_line = 0;
    check_unique(&mod);
    write_file(gprintf("%s.h", out), &mod, emit_header);
    write_file(gprintf("%s.c", out), &mod, emit_source);
    free_all();
    return 0;
}

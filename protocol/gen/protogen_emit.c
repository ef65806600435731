/* protogen's code writer: proto_gen.h (C structs, prototypes, the API
 * and record type constants) and proto_gen.c (one descriptor table per
 * struct, walked by src/proto/proto_codec.c; thin typed wrappers; the API
 * table; the record tables that src/proto/proto_rec.c looks schemas up
 * in). The model comes from protogen.c. */
#include <ctype.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "protogen.h"

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
        if (f->array && f->type != T_STRUCT)
            fprintf(o, "    %s %s;", prims[f->type].arrtype, f->snake);
        else if (f->array || is_opt(f))
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
    fprintf(o, "void %s_encode(const %s_t *m, int16_t version, buf_t *out);\n", p, p);
    if (m->kind) {
        fprintf(o, "/* Framed as a %s record (src/proto/proto_rec.h). */\n", kinds[m->kind].dsl);
        fprintf(o, "void %s_write(const %s_t *m, int16_t version, buf_t *out);\n", p, p);
        fprintf(o, "int %s_read(%s_t *m, int16_t *version, const uint8_t *buf,\n"
                   "    size_t len, arena_t *arena);\n", p, p);
        fprintf(o, "extern const struct proto_msg_s proto_msg_%s;\n", p + 6);
    }
    fputc('\n', o);
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

/* One union per kind that is found by type: a reader that learns the
 * type from the framing decodes into it. */
static void emit_unions(FILE *o, const model_t *mod)
{
    for (int k = K_NONE + 1; k < K_COUNT; k++) {
        int n = 0;
        for (int i = 0; i < mod->nmsgs; i++) {
            const mdef_t *m = mod->msgs[i];
            if (m->kind != k || !kinds[k].keyed)
                continue;
            if (!n++)
                fprintf(o, "/* Any %s record. */\ntypedef union proto_rec_%s_any_u {\n",
                        kinds[k].dsl, kinds[k].snake);
            fprintf(o, "    %s_t %s;\n", m->prefix, m->snake);
        }
        if (n)
            fprintf(o, "} proto_rec_%s_any_t;\n\n", kinds[k].snake);
    }
}

static void emit_constants(FILE *o, const model_t *mod)
{
    int maxkey = -1;
    for (int i = 0; i < mod->napis; i++) {
        const adef_t *a = mod->apis[i];
        fprintf(o, "#define PROTO_API_%s %d\n", upper(a->snake), a->key);
        if (a->key > maxkey)
            maxkey = a->key;
    }
    fprintf(o, "#define PROTO_API_MAX_KEY %d\n\n", maxkey);
    fprintf(o, "/* Record types: a metadata record's apiKey, a coordinator record's\n"
               " * key type, a control record's ControlRecordType. */\n");
    for (int i = 0; i < mod->nmsgs; i++) {
        const mdef_t *m = mod->msgs[i];
        if (m->kind && kinds[m->kind].keyed)
            fprintf(o, "#define PROTO_REC_%s %d\n", upper(m->snake), m->key);
    }
    fputc('\n', o);
}

void emit_header(FILE *o, const model_t *mod)
{
    fprintf(o, "/* Generated by protocol/gen/protogen from protocol/NAME.def and\n"
               " * protocol/records/DIR/NAME.def: do not edit.\n"
               " * Include proto/proto.h (and proto/proto_rec.h) rather than this file. */\n"
               "#ifndef STRAND_PROTO_GEN_H\n#define STRAND_PROTO_GEN_H\n\n"
               "#include \"proto/proto_types.h\"\n\nstruct proto_msg_s;\n\n");
    emit_constants(o, mod);
    for (int i = 0; i < mod->nmsgs; i++)
        emit_msg_h(o, mod->msgs[i]);
    emit_unions(o, mod);
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
    /* headers and records are reachable by name, API messages through
     * proto_msg_lookup() */
    fprintf(o, "%sconst proto_msg_t proto_msg_%s = { \"%s\", &ps_%s, %d, %d, %d, %d, %s };\n\n",
            m->key < 0 || m->kind ? "" : "static ", p + 6, m->name, p, m->key, m->ver.min,
            m->ver.max, m->flex_min, kinds[m->kind].enumname);
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
    if (!m->kind)
        return;
    fprintf(o, "void %s_write(const %s_t *m, int16_t version, buf_t *out)\n{\n"
               "    proto_rec_encode(&proto_msg_%s, m, version, out);\n}\n\n", p, p, p + 6);
    fprintf(o, "int %s_read(%s_t *m, int16_t *version, const uint8_t *buf,\n"
               "    size_t len, arena_t *arena)\n{\n"
               "    return proto_rec_read(&proto_msg_%s, m, version, buf, len, arena);\n}\n\n",
            p, p, p + 6);
}

static void emit_api_lookups(FILE *o, const model_t *mod)
{
    fprintf(o, "static const proto_api_info_t api_info[] = {\n");
    for (int i = 0; i < mod->napis; i++) {
        const adef_t *a = mod->apis[i];
        fprintf(o, "    { %d, \"%s\", %d, %d, %d },\n", a->key, a->name, a->ver.min,
                a->ver.max, a->flex_min);
    }
    fprintf(o, "};\n\nconst proto_api_info_t *proto_api_info(int16_t api_key)\n{\n"
               "    switch (api_key) {\n");
    for (int i = 0; i < mod->napis; i++)
        fprintf(o, "    case %d: return &api_info[%d];\n", mod->apis[i]->key, i);
    fprintf(o, "    default: return NULL;\n    }\n}\n\n"
               "const proto_msg_t *proto_msg_lookup(int16_t api_key, int resp)\n{\n"
               "    switch (api_key) {\n");
    for (int i = 0; i < mod->napis; i++) {
        const adef_t *a = mod->apis[i];
        if (!a->req || !a->resp)
            fail("api %s needs both a request and a response", a->name);
        fprintf(o, "    case %d: return resp ? &proto_msg_%s : &proto_msg_%s;\n", a->key,
                a->resp->prefix + 6, a->req->prefix + 6);
    }
    fprintf(o, "    default: return NULL;\n    }\n}\n\n");
}

/* proto_msg_all (API messages and headers), proto_rec_all (records), and
 * the schema of a record by kind and type. */
static void emit_rec_lookups(FILE *o, const model_t *mod)
{
    for (int rec = 0; rec < 2; rec++) {
        fprintf(o, "const proto_msg_t *const proto_%s_all[] = {\n", rec ? "rec" : "msg");
        for (int i = 0; i < mod->nmsgs; i++)
            if (!mod->msgs[i]->kind == !rec)
                fprintf(o, "    &proto_msg_%s,\n", mod->msgs[i]->prefix + 6);
        fprintf(o, "    NULL\n};\n\n");
    }
    fprintf(o, "const proto_msg_t *proto_rec_find(int kind, int16_t type)\n{\n"
               "    if (type < 0)\n        return NULL;\n"
               "    switch (kind * 0x10000 + type) {\n");
    for (int i = 0; i < mod->nmsgs; i++) {
        const mdef_t *m = mod->msgs[i];
        if (m->kind && kinds[m->kind].keyed)
            fprintf(o, "    case %s * 0x10000 + %d: return &proto_msg_%s;\n",
                    kinds[m->kind].enumname, m->key, m->prefix + 6);
    }
    fprintf(o, "    default: return NULL;\n    }\n}\n");
}

void emit_source(FILE *o, const model_t *mod)
{
    fprintf(o, "/* Generated by protocol/gen/protogen from protocol/NAME.def and\n"
               " * protocol/records/DIR/NAME.def: do not edit. */\n"
               "#include <stddef.h>\n\n#include \"proto/proto.h\"\n"
               "#include \"proto/proto_desc.h\"\n#include \"proto/proto_rec.h\"\n\n");
    for (int i = 0; i < mod->nmsgs; i++)
        emit_msg_c(o, mod->msgs[i]);
    emit_api_lookups(o, mod);
    emit_rec_lookups(o, mod);
}

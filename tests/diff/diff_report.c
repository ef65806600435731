/* Grouping differences, the allow list, and the report.
 *
 * A difference is (API, case, path, what); the versions that show it
 * are folded into one group, so "Produce valid .Responses[@topic]...
 * NONE/INVALID_REQUEST at v3-12" is one line. The allow list
 * (tests/diff/ALLOW) names the groups that are known and explained:
 *
 *   API  CASE  PATH  WHAT  | reason
 *
 * four patterns ('*' matches any run of characters, '?' one; nothing
 * else is special, so paths' brackets need no escaping) and a reason,
 * which may go on over indented lines that follow. */
#include "diff/diff.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/mem.h"

void diff_sink_init(diff_sink_t *s, const char *la, const char *lb)
{
    memset(s, 0, sizeof(*s));
    s->la = la;
    s->lb = lb;
    smap_init(&s->index);
}

void diff_sink_free(diff_sink_t *s)
{
    for (int i = 0; i < s->n; i++) {
        free(s->v[i].cas);
        free(s->v[i].path);
        free(s->v[i].what);
    }
    free(s->v);
    smap_free(&s->index);
}

void diff_sink_add(diff_sink_t *s, int16_t key, int16_t ver, const char *cas, const char *path,
                   const char *what)
{
    char k[1024];
    int kl = snprintf(k, sizeof(k), "%d\t%s\t%s\t%s", key, cas, path, what);
    size_t klen = kl < (int)sizeof(k) ? (size_t)kl : sizeof(k) - 1;
    intptr_t gi = (intptr_t)smap_get(&s->index, k, klen);
    if (!gi) {
        if (s->n == s->cap) {
            s->cap = s->cap ? s->cap * 2 : 256;
            s->v = xrealloc(s->v, (size_t)s->cap * sizeof(*s->v));
        }
        diff_group_t *g = &s->v[s->n++];
        memset(g, 0, sizeof(*g));
        g->key = key;
        g->cas = xstrdup(cas);
        g->path = xstrdup(path);
        g->what = xstrdup(what);
        gi = s->n;
        smap_put(&s->index, k, klen, (void *)gi);
    }
    diff_group_t *g = &s->v[gi - 1];
    g->versions |= 1ULL << (ver >= 0 && ver < 63 ? ver : 63);
    g->count++;
    s->total++;
}

/* ---- the allow list ---- */

/* '*' and '?' only. */
static int diff_glob(const char *p, const char *s)
{
    for (; *p; p++, s++) {
        if (*p == '*') {
            while (p[1] == '*')
                p++;
            for (const char *t = s;; t++) {
                if (diff_glob(p + 1, t))
                    return 1;
                if (!*t)
                    return 0;
            }
        }
        if (!*s || (*p != '?' && *p != *s))
            return 0;
    }
    return !*s;
}

static char *diff_trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = 0;
    return s;
}

/* One "API CASE PATH WHAT | reason" line into e; 0 or -1. */
static int diff_allow_parse(char *line, diff_allow_t *e)
{
    char *bar = strstr(line, " | ");
    char *tok[5];
    int n = 0;
    if (!bar)
        return -1;
    *bar = 0;
    for (char *t = strtok(line, " \t"); t && n < 5; t = strtok(NULL, " \t"))
        tok[n++] = t;
    char *reason = diff_trim(bar + 3);
    if (n != 4 || !*reason)
        return -1;
    e->api = xstrdup(tok[0]);
    e->cas = xstrdup(tok[1]);
    e->path = xstrdup(tok[2]);
    e->what = xstrdup(tok[3]);
    e->reason = xstrdup(reason);
    return 0;
}

static void diff_allow_more(diff_allow_t *e, const char *more)
{
    size_t a = strlen(e->reason), b = strlen(more);
    e->reason = xrealloc(e->reason, a + b + 2);
    e->reason[a] = ' ';
    memcpy(e->reason + a + 1, more, b + 1);
}

diff_allow_t *diff_allow_load(const char *path, int *n)
{
    diff_allow_t *al = NULL;
    int cap = 0, lineno = 0;
    char line[4096];
    *n = 0;
    if (!path)
        return xcalloc(1, sizeof(*al));
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "strand-diff: cannot read %s\n", path);
        return NULL;
    }
    while (fgets(line, sizeof(line), f)) {
        lineno++;
        char *t = diff_trim(line);
        if (!*t || *t == '#')
            continue;
        if (isspace((unsigned char)line[0]) && *n > 0) {
            diff_allow_more(&al[*n - 1], t);
            continue;
        }
        if (*n == cap) {
            cap = cap ? cap * 2 : 64;
            al = xrealloc(al, (size_t)cap * sizeof(*al));
        }
        memset(&al[*n], 0, sizeof(*al));
        if (diff_allow_parse(t, &al[*n]) < 0) {
            fprintf(stderr, "%s:%d: not \"API CASE PATH WHAT | reason\"\n", path, lineno);
            fclose(f);
            diff_allow_free(al, *n);
            return NULL;
        }
        al[(*n)++].line = lineno;
    }
    fclose(f);
    return al ? al : xcalloc(1, sizeof(*al));
}

void diff_allow_free(diff_allow_t *al, int n)
{
    for (int i = 0; i < n; i++) {
        free(al[i].api);
        free(al[i].cas);
        free(al[i].path);
        free(al[i].what);
        free(al[i].reason);
    }
    free(al);
}

static void diff_allow_match(diff_group_t *g, diff_allow_t *al, int nal)
{
    for (int i = 0; i < nal; i++)
        if (diff_glob(al[i].api, diff_api_name(g->key)) && diff_glob(al[i].cas, g->cas) &&
            diff_glob(al[i].path, g->path) && diff_glob(al[i].what, g->what)) {
            g->allowed = al[i].line;
            al[i].used++;
            return;
        }
}

/* ---- printing ---- */

/* "v3-5,7" from a version mask. */
static void diff_versions(char *out, size_t n, uint64_t mask)
{
    size_t k = 0;
    out[0] = 0;
    for (int v = 0; v < 63 && k + 24 < n; v++) {
        if (!(mask >> v & 1))
            continue;
        int e = v;
        while (e + 1 < 63 && (mask >> (e + 1) & 1))
            e++;
        if (e > v)
            k += (size_t)snprintf(out + k, n - k, "%s%d-%d", k ? "," : "v", v, e);
        else
            k += (size_t)snprintf(out + k, n - k, "%s%d", k ? "," : "v", v);
        v = e;
    }
    if (mask >> 63 & 1)
        snprintf(out + k, n - k, "%sother", k ? "," : "");
}

/* Prints group i and every later group of the same API, path, what and
 * allow line (marking them printed): one line per difference, with the
 * cases that show it. */
static void diff_print_group(diff_sink_t *s, int i, char *printed)
{
    const diff_group_t *g = &s->v[i];
    char vs[160];
    uint64_t versions = 0;
    int ncases = 0;
    for (int j = i; j < s->n; j++) {
        const diff_group_t *h = &s->v[j];
        if (printed[j] || h->key != g->key || h->allowed != g->allowed || strcmp(h->path, g->path) ||
            strcmp(h->what, g->what))
            continue;
        versions |= h->versions;
        ncases++;
    }
    diff_versions(vs, sizeof(vs), versions);
    if (g->allowed)
        printf("  allowed:%-4d %-9s %s  %s\n", g->allowed, vs, g->path, g->what);
    else
        printf("  NEW          %-9s %s  %s\n", vs, g->path, g->what);
    printf("               %d case%s:", ncases, ncases > 1 ? "s" : "");
    for (int j = i, shown = 0; j < s->n; j++) {
        const diff_group_t *h = &s->v[j];
        if (printed[j] || h->key != g->key || h->allowed != g->allowed || strcmp(h->path, g->path) ||
            strcmp(h->what, g->what))
            continue;
        printed[j] = 1;
        if (shown++ < 12)
            printf(" %s", h->cas);
        else if (shown == 13)
            printf(" ...");
    }
    printf("\n");
}

static void diff_write_tsv(const diff_sink_t *s, const diff_allow_t *al, int nal, const char *path)
{
    FILE *f = fopen(path, "w");
    char vs[160];
    if (!f)
        return;
    fprintf(f, "api\tversions\tcount\tcase\tpath\twhat(%s/%s)\tallowed\treason\n", s->la, s->lb);
    for (int i = 0; i < s->n; i++) {
        const diff_group_t *g = &s->v[i];
        const char *reason = "";
        for (int k = 0; k < nal; k++)
            if (al[k].line == g->allowed)
                reason = al[k].reason;
        diff_versions(vs, sizeof(vs), g->versions);
        fprintf(f, "%s\t%s\t%d\t%s\t%s\t%s\t%d\t%s\n", diff_api_name(g->key), vs, g->count,
                g->cas, g->path, g->what, g->allowed, reason);
    }
    fclose(f);
}

int diff_report(diff_sink_t *s, diff_allow_t *al, int nal, const char *tsv_path)
{
    int nnew = 0, nallowed = 0, key = -2;
    char *printed = xcalloc((size_t)s->n + 1, 1);
    for (int i = 0; i < s->n; i++) {
        diff_allow_match(&s->v[i], al, nal);
        if (s->v[i].allowed)
            nallowed++;
        else
            nnew++;
    }
    printf("differences (%s/%s) by API: status, versions, path, what (%s's/%s's), cases\n",
           s->la, s->lb, s->la, s->lb);
    for (int i = 0; i < s->n; i++) {
        if (printed[i])
            continue;
        if (s->v[i].key != key) {
            key = s->v[i].key;
            printf("%s\n", diff_api_name(key));
        }
        diff_print_group(s, i, printed);
    }
    free(printed);
    for (int i = 0; i < nal; i++)
        if (!al[i].used)
            printf("allow list line %d matched nothing: %s %s %s %s\n", al[i].line, al[i].api,
                   al[i].cas, al[i].path, al[i].what);
    if (tsv_path)
        diff_write_tsv(s, al, nal, tsv_path);
    printf("%d differences in %d groups (API, case, path, what): %d new, %d allowed\n", s->total,
           s->n, nnew, nallowed);
    return nnew;
}

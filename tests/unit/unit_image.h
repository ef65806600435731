/* Equality of two metadata images for the snapshot tests: the same
 * topics (ids, names, every partition field), configs and features, broker
 * and controller registrations, and the same next producer id. */
#ifndef STRAND_TESTS_UNIT_IMAGE_H
#define STRAND_TESTS_UNIT_IMAGE_H

#include <stdio.h>
#include <string.h>

#include "cluster/meta_image.h"

static int i32s_eq(const int32_t *a, int32_t na, const int32_t *b, int32_t nb)
{
    return na == nb && (na == 0 || !memcmp(a, b, (size_t)na * sizeof(int32_t)));
}

static int dirs_eq(const mi_part_t *a, const mi_part_t *b)
{
    static const uint8_t zero[16];
    for (int32_t i = 0; i < a->nreplicas; i++)
        if (memcmp(a->dirs ? a->dirs[i] : zero, b->dirs ? b->dirs[i] : zero, 16))
            return 0;
    return 1;
}

static int part_eq(const mi_part_t *a, const mi_part_t *b)
{
    return a->present == b->present && a->leader == b->leader &&
           a->leader_epoch == b->leader_epoch && a->partition_epoch == b->partition_epoch &&
           i32s_eq(a->replicas, a->nreplicas, b->replicas, b->nreplicas) &&
           i32s_eq(a->isr, a->nisr, b->isr, b->nisr) && dirs_eq(a, b);
}

static int topics_eq(const meta_image_t *a, const meta_image_t *b)
{
    size_t pos = 0, na = 0, nb = 0;
    mi_topic_t *t;
    while ((t = meta_image_topic_next(a, &pos)) != NULL) {
        mi_topic_t *u = meta_image_topic_by_id(b, t->id);
        if (!u || strcmp(u->name, t->name) || u->nparts != t->nparts)
            return 0;
        for (int32_t i = 0; i < t->nparts; i++)
            if (!part_eq(&t->parts[i], &u->parts[i]))
                return 0;
        na++;
    }
    pos = 0;
    while (meta_image_topic_next(b, &pos))
        nb++;
    return na == nb;
}

static int configs_in(const meta_image_t *a, const meta_image_t *b)
{
    size_t pos = 0;
    mi_config_t *c;
    while ((c = meta_image_config_next(a, &pos)) != NULL)
        for (int i = 0; i < c->n; i++) {
            const char *v =
                meta_image_config_get(b, c->type, c->name, strlen(c->name), c->v[i].key);
            if (!v || strcmp(v, c->v[i].value))
                return 0;
        }
    return 1;
}

static int features_in(const meta_image_t *a, const meta_image_t *b)
{
    size_t pos = 0;
    meta_str_t name;
    int16_t level;
    char n[64];
    while (meta_image_feature_next(a, &pos, &name, &level)) {
        snprintf(n, sizeof(n), "%.*s", (int)name.len, name.p);
        if (meta_image_feature(b, n) != level)
            return 0;
    }
    return 1;
}

static int strs_eq(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

static int regs_eq(const mi_endpoint_t *ea, int nea, const mi_endpoint_t *eb, int neb,
                   const mi_frange_t *fa, int nfa, const mi_frange_t *fb, int nfb)
{
    if (nea != neb || nfa != nfb)
        return 0;
    for (int i = 0; i < nea; i++)
        if (!strs_eq(ea[i].name, eb[i].name) || !strs_eq(ea[i].host, eb[i].host) ||
            ea[i].port != eb[i].port || ea[i].security_protocol != eb[i].security_protocol)
            return 0;
    for (int i = 0; i < nfa; i++)
        if (!strs_eq(fa[i].name, fb[i].name) || fa[i].min != fb[i].min || fa[i].max != fb[i].max)
            return 0;
    return 1;
}

static int broker_eq(const mi_broker_t *a, const mi_broker_t *b)
{
    return a->id == b->id && !memcmp(a->incarnation, b->incarnation, 16) &&
           a->epoch == b->epoch &&
           regs_eq(a->endpoints, a->nendpoints, b->endpoints, b->nendpoints, a->features,
                   a->nfeatures, b->features, b->nfeatures) &&
           strs_eq(a->rack, b->rack) && a->fenced == b->fenced &&
           a->in_controlled_shutdown == b->in_controlled_shutdown && a->ndirs == b->ndirs &&
           (a->ndirs == 0 || !memcmp(a->dirs, b->dirs, (size_t)a->ndirs * 16));
}

static int cluster_eq(const meta_image_t *a, const meta_image_t *b)
{
    if (a->nbrokers != b->nbrokers || a->ncontrollers != b->ncontrollers)
        return 0;
    for (int i = 0; i < a->nbrokers; i++)
        if (!broker_eq(a->brokers[i], b->brokers[i]))
            return 0;
    for (int i = 0; i < a->ncontrollers; i++) {
        const mi_controller_t *x = a->controllers[i], *y = b->controllers[i];
        if (x->id != y->id || memcmp(x->incarnation, y->incarnation, 16) ||
            !regs_eq(x->endpoints, x->nendpoints, y->endpoints, y->nendpoints, x->features,
                     x->nfeatures, y->features, y->nfeatures))
            return 0;
    }
    return 1;
}

static int image_eq(const meta_image_t *a, const meta_image_t *b)
{
    return topics_eq(a, b) && configs_in(a, b) && configs_in(b, a) && features_in(a, b) &&
           features_in(b, a) && a->next_producer_id == b->next_producer_id && cluster_eq(a, b);
}

#endif

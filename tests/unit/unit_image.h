/* Equality of two metadata images for the snapshot tests: the same
 * topics (ids, names, every partition field), configs and features, and
 * the same next producer id. */
#ifndef STRAND_TESTS_UNIT_IMAGE_H
#define STRAND_TESTS_UNIT_IMAGE_H

#include <stdio.h>
#include <string.h>

#include "cluster/meta_image.h"

static int i32s_eq(const int32_t *a, int32_t na, const int32_t *b, int32_t nb)
{
    return na == nb && (na == 0 || !memcmp(a, b, (size_t)na * sizeof(int32_t)));
}

static int part_eq(const mi_part_t *a, const mi_part_t *b)
{
    return a->present == b->present && a->leader == b->leader &&
           a->leader_epoch == b->leader_epoch && a->partition_epoch == b->partition_epoch &&
           i32s_eq(a->replicas, a->nreplicas, b->replicas, b->nreplicas) &&
           i32s_eq(a->isr, a->nisr, b->isr, b->nisr) && !memcmp(a->dir, b->dir, 16);
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

static int image_eq(const meta_image_t *a, const meta_image_t *b)
{
    return topics_eq(a, b) && configs_in(a, b) && configs_in(b, a) && features_in(a, b) &&
           features_in(b, a) && a->next_producer_id == b->next_producer_id;
}

#endif

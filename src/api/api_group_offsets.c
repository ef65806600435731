/* OffsetCommit (8), OffsetFetch (9) and OffsetDelete (47). Partitions of
 * topics this broker does not have are answered UNKNOWN_TOPIC_OR_PARTITION
 * before the coordinator sees the request, as Kafka's KafkaApis does for
 * commits and deletes; fetches are answered from the committed offsets
 * whatever the topic. From v10, commits and fetches name topics by id:
 * the id is turned into the topic's name here (offsets are kept by name,
 * as in Kafka's __consumer_offsets records), and an id this broker does
 * not know is UNKNOWN_TOPIC_ID for each of its partitions. */
#include <stdlib.h>
#include <string.h>

#include "api/api_group.h"
#include "api/api_util.h"
#include "cluster/meta_image.h"
#include "partition/part_read.h"
#include "util/kerr.h"

/* Kafka looks in its metadata only: a partition that is offline here,
 * or led by another broker, or not hosted here at all, still exists, and
 * commits for it are taken (the coordinator need not lead it). */
int16_t api_group_part_check(api_req_t *req, proto_str_t topic, int32_t partition)
{
    const mi_topic_t *mt =
        topic.len < 0 ? NULL
                      : meta_image_topic(&req->b->reg->meta->img, topic.p, (size_t)topic.len);
    if (!mt || partition < 0 || partition >= mt->nparts || !mt->parts[partition].present)
        return KERR_UNKNOWN_TOPIC_OR_PARTITION;
    return KERR_NONE;
}

/* The name of the topic of a v10 request (copied: the answer may come
 * after the topic is gone), or UNKNOWN_TOPIC_ID. */
int16_t api_group_topic_by_id(api_req_t *req, proto_uuid_t id, proto_str_t *name)
{
    topic_t *topic = part_topic_by_id(req->b->reg, id.b);
    *name = PROTO_STR("");
    if (!topic)
        return KERR_UNKNOWN_TOPIC_ID;
    name->p = arena_strndup(req->arena, topic->name, topic->name_len);
    name->len = (int32_t)topic->name_len;
    return KERR_NONE;
}

/* ---- OffsetCommit ---- */

/* The request's partitions, flattened topic by topic as the coordinator
 * takes them; those of unknown topics (or all, with no coordinator) carry
 * their error already. *n gets the count. */
static grp_commit_part_t *api_commit_parts(api_req_t *req, const proto_offset_commit_req_t *r,
                                           bool coord, int32_t *n)
{
    int16_t ver = req->hdr.api_version;
    int32_t k = 0;
    grp_commit_part_t *parts;

    *n = 0;
    for (int32_t i = 0; i < r->topics.n; i++)
        *n += r->topics.v[i].partitions.n > 0 ? r->topics.v[i].partitions.n : 0;
    parts = arena_calloc(req->arena, (size_t)*n + 1, sizeof(*parts));
    for (int32_t i = 0; i < r->topics.n; i++) {
        proto_str_t name = r->topics.v[i].name;
        int16_t terr = ver >= 10 ? api_group_topic_by_id(req, r->topics.v[i].topic_id, &name) : 0;
        for (int32_t j = 0; j < r->topics.v[i].partitions.n; j++, k++) {
            const proto_offset_commit_req_offset_commit_request_partition_t *p =
                &r->topics.v[i].partitions.v[j];
            parts[k].topic = name;
            parts[k].partition = p->partition_index;
            parts[k].offset = p->committed_offset;
            parts[k].leader_epoch = ver >= 6 ? p->committed_leader_epoch : -1;
            parts[k].metadata = p->committed_metadata;
            parts[k].error = !coord ? KERR_COORDINATOR_NOT_AVAILABLE
                             : terr ? terr
                                    : api_group_part_check(req, name, p->partition_index);
        }
    }
    return parts;
}

/* The answer: the request's topics in order, each partition with the
 * error its flattened entry got. */
static void api_commit_answer(api_req_t *req, const proto_offset_commit_req_t *r,
                              const grp_commit_part_t *parts, proto_offset_commit_resp_t *resp)
{
    int32_t k = 0;

    resp->topics.n = r->topics.n < 0 ? 0 : r->topics.n;
    resp->topics.v = arena_calloc(req->arena, (size_t)resp->topics.n + 1, sizeof(*resp->topics.v));
    for (int32_t i = 0; i < resp->topics.n; i++) {
        proto_offset_commit_resp_offset_commit_response_topic_t *t = &resp->topics.v[i];
        int32_t np = r->topics.v[i].partitions.n < 0 ? 0 : r->topics.v[i].partitions.n;
        proto_offset_commit_resp_offset_commit_response_topic_init(t);
        t->name = r->topics.v[i].name;
        t->topic_id = r->topics.v[i].topic_id;
        t->partitions.n = np;
        t->partitions.v = arena_calloc(req->arena, (size_t)np + 1, sizeof(*t->partitions.v));
        for (int32_t j = 0; j < np; j++, k++) {
            t->partitions.v[j].partition_index = parts[k].partition;
            t->partitions.v[j].error_code = parts[k].error;
        }
    }
}

/* What a commit answer needs again when its write fails. */
typedef struct api_commit_s {
    proto_offset_commit_req_t r;
    grp_commit_part_t *parts;
    int32_t n;
} api_commit_t;

/* The commit's write failed: its partitions get the error (those refused
 * before keep theirs). */
static void api_commit_fail(api_req_t *req, void *arg, int16_t err)
{
    api_commit_t *ac = arg;
    proto_offset_commit_resp_t resp;
    for (int32_t i = 0; i < ac->n; i++)
        if (!ac->parts[i].error)
            ac->parts[i].error = err;
    proto_offset_commit_resp_init(&resp);
    api_commit_answer(req, &ac->r, ac->parts, &resp);
    API_REPLY(req, offset_commit, &resp);
}

void api_offset_commit(api_req_t *req)
{
    api_commit_t *ac = arena_calloc(req->arena, 1, sizeof(*ac));
    proto_offset_commit_req_t r;
    proto_offset_commit_resp_t resp;
    int16_t ver = req->hdr.api_version;
    int32_t n;

    proto_offset_commit_req_init(&r);
    if (proto_offset_commit_req_decode(&r, ver, req->body, req->body_len, req->arena) < 0) {
        api_close(req, "malformed OffsetCommit request");
        return;
    }
    grp_coord_t *c = api_group_coord(req->b);
    grp_commit_part_t *parts = api_commit_parts(req, &r, c != NULL, &n);
    const char *group = api_cstr(req, r.group_id);
    if (c) {
        grp_commit_req_t cr = {
            .group_id = group,
            .generation = r.generation_id_or_member_epoch,
            .member_id = api_cstr(req, r.member_id),
            .instance_id = api_cstr(req, r.group_instance_id),
            .retention_ms = ver <= 4 ? r.retention_time_ms : -1,
            .api_version = ver,
            .nparts = n,
            .parts = parts,
        };
        if (!cr.member_id)
            cr.member_id = "";
        grp_commit(c, &cr);
    }
    proto_offset_commit_resp_init(&resp);
    api_commit_answer(req, &r, parts, &resp);
    buf_t out;
    API_ENCODE(req, offset_commit, &resp, &out);
    ac->r = r;
    ac->parts = parts;
    ac->n = n;
    api_group_send1(req, c, group, &out, api_commit_fail, ac, 1);
}

/* ---- OffsetFetch ---- */

/* The request and answer of one group, whatever the version's types. */
typedef struct api_of_topic_s {
    proto_str_t name;
    proto_uuid_t id; /* v10 */
    int16_t error;   /* v10: UNKNOWN_TOPIC_ID for each partition */
    int32_t n;
    const int32_t *parts;
} api_of_topic_t;

typedef struct api_of_part_s {
    int32_t partition;
    int64_t offset;
    int32_t epoch;
    proto_str_t metadata;
    int16_t error;
} api_of_part_t;

typedef struct api_of_result_s {
    proto_str_t name;
    proto_uuid_t id;
    int32_t n;
    api_of_part_t *v;
} api_of_result_t;

/* With RequireStable (v7+) an offset an undecided transaction holds is
 * UNSTABLE_OFFSET_COMMIT and -1, as Kafka answers it. */
static void api_of_fill(api_of_part_t *p, int32_t partition, const grp_offset_t *o,
                        bool unstable)
{
    if (unstable)
        o = NULL;
    p->partition = partition;
    p->offset = o ? o->offset : -1;
    p->epoch = o ? o->leader_epoch : -1;
    p->metadata = o ? (proto_str_t){o->metadata, o->metadata_len} : PROTO_STR("");
    p->error = unstable ? KERR_UNSTABLE_OFFSET_COMMIT : KERR_NONE;
}

static bool api_of_unstable(const grp_t *g, bool stable, const char *topic, size_t len,
                            int32_t partition)
{
    return stable && g && g->ntxn_offs && grp_txn_pending(g, topic, len, partition);
}

static int api_of_cmp(const void *a, const void *b)
{
    const grp_offset_t *x = *(const grp_offset_t *const *)a, *y = *(const grp_offset_t *const *)b;
    int c = strcmp(x->topic, y->topic);
    return c ? c : (x->partition > y->partition) - (x->partition < y->partition);
}

/* Every committed offset of g, by topic and partition, each topic with
 * its id. With by_id (v10) a topic without one is left out: the client
 * could not name it. Offsets of a deleted topic are dropped with it, so
 * that is only a topic deleted while the broker was down. */
static int32_t api_of_all(api_req_t *req, const grp_t *g, bool by_id, bool stable,
                          api_of_result_t **out)
{
    size_t pos = 0, n = 0;
    const grp_offset_t *o;
    const grp_offset_t **all;
    int32_t nt = 0;

    all = arena_calloc(req->arena, (g ? g->offsets.count : 0) + 1, sizeof(*all));
    while (g && (o = grp_offset_next(g, &pos)))
        all[n++] = o;
    qsort(all, n, sizeof(*all), api_of_cmp);
    *out = arena_calloc(req->arena, n + 1, sizeof(**out));
    for (size_t i = 0; i < n; i++) {
        if (!i || strcmp(all[i]->topic, all[i - 1]->topic)) {
            topic_t *topic = part_topic_get(req->b->reg, all[i]->topic, strlen(all[i]->topic));
            if (by_id && !topic) {
                while (i + 1 < n && !strcmp(all[i + 1]->topic, all[i]->topic))
                    i++;
                continue;
            }
            (*out)[nt].name = api_group_str(req, all[i]->topic);
            if (topic)
                memcpy((*out)[nt].id.b, topic->id, 16);
            (*out)[nt].v = arena_calloc(req->arena, n - i + 1, sizeof(api_of_part_t));
            nt++;
        }
        api_of_result_t *t = &(*out)[nt - 1];
        api_of_fill(&t->v[t->n++], all[i]->partition, all[i],
                    api_of_unstable(g, stable, all[i]->topic, strlen(all[i]->topic),
                                    all[i]->partition));
    }
    return nt;
}

/* Looks one group up. ntopics -1 asks for all its offsets. Returns the
 * group's error; *nout gets the topic count of *out. */
static int16_t api_of_group(api_req_t *req, grp_coord_t *c, proto_str_t group_id, int32_t ntopics,
                            const api_of_topic_t *topics, bool stable, api_of_result_t **out,
                            int32_t *nout)
{
    grp_t *g = NULL;
    int16_t err = c ? grp_offsets_group(c, api_cstr(req, group_id), &g)
                    : KERR_COORDINATOR_NOT_AVAILABLE;
    *out = NULL;
    *nout = 0;
    if (err)
        return err;
    if (ntopics < 0) {
        *nout = api_of_all(req, g, req->hdr.api_version >= 10, stable, out);
        return KERR_NONE;
    }
    *out = arena_calloc(req->arena, (size_t)ntopics + 1, sizeof(**out));
    for (int32_t i = 0; i < ntopics; i++) {
        api_of_result_t *t = &(*out)[i];
        t->name = topics[i].name;
        t->id = topics[i].id;
        t->n = topics[i].n < 0 ? 0 : topics[i].n;
        t->v = arena_calloc(req->arena, (size_t)t->n + 1, sizeof(*t->v));
        for (int32_t j = 0; j < t->n; j++) {
            const grp_offset_t *o =
                g && t->name.len >= 0 && !topics[i].error
                    ? grp_offset_get(g, t->name.p, (size_t)t->name.len, topics[i].parts[j])
                    : NULL;
            api_of_fill(&t->v[j], topics[i].parts[j], o,
                        !topics[i].error && t->name.len >= 0 &&
                            api_of_unstable(g, stable, t->name.p, (size_t)t->name.len,
                                            topics[i].parts[j]));
            if (topics[i].error)
                t->v[j].error = topics[i].error;
        }
    }
    *nout = ntopics;
    return KERR_NONE;
}

/* v1-7: one group. v1 has no group-level error: the partitions carry it. */
static void api_offset_fetch_v7(api_req_t *req, grp_coord_t *c, proto_offset_fetch_req_t *r,
                                proto_offset_fetch_resp_t *resp)
{
    int16_t ver = req->hdr.api_version;
    int32_t nt = r->topics.n;
    api_of_topic_t *tt = arena_calloc(req->arena, (size_t)(nt > 0 ? nt : 0) + 1, sizeof(*tt));
    api_of_result_t *res;
    int32_t nres;

    for (int32_t i = 0; i < nt; i++) {
        tt[i].name = r->topics.v[i].name;
        tt[i].n = r->topics.v[i].partition_indexes.n;
        tt[i].parts = r->topics.v[i].partition_indexes.v;
    }
    int16_t err = api_of_group(req, c, r->group_id, nt, tt, r->require_stable, &res, &nres);
    if (err && ver < 2 && nt >= 0) {
        res = arena_calloc(req->arena, (size_t)nt + 1, sizeof(*res));
        for (int32_t i = 0; i < nt; i++) {
            res[i].name = tt[i].name;
            res[i].n = tt[i].n < 0 ? 0 : tt[i].n;
            res[i].v = arena_calloc(req->arena, (size_t)res[i].n + 1, sizeof(*res[i].v));
            for (int32_t j = 0; j < res[i].n; j++) {
                api_of_fill(&res[i].v[j], tt[i].parts[j], NULL, false);
                res[i].v[j].error = err;
            }
        }
        nres = nt;
    }
    resp->error_code = err;
    resp->topics.n = nres;
    resp->topics.v = arena_calloc(req->arena, (size_t)nres + 1, sizeof(*resp->topics.v));
    for (int32_t i = 0; i < nres; i++) {
        proto_offset_fetch_resp_offset_fetch_response_topic_t *t = &resp->topics.v[i];
        proto_offset_fetch_resp_offset_fetch_response_topic_init(t);
        t->name = res[i].name;
        t->partitions.n = res[i].n;
        t->partitions.v = arena_calloc(req->arena, (size_t)res[i].n + 1, sizeof(*t->partitions.v));
        for (int32_t j = 0; j < res[i].n; j++) {
            proto_offset_fetch_resp_offset_fetch_response_partition_t *p = &t->partitions.v[j];
            proto_offset_fetch_resp_offset_fetch_response_partition_init(p);
            p->partition_index = res[i].v[j].partition;
            p->committed_offset = res[i].v[j].offset;
            p->committed_leader_epoch = res[i].v[j].epoch;
            p->metadata = res[i].v[j].metadata;
            p->error_code = res[i].v[j].error;
        }
    }
}

/* v8+: several groups, each with its own error. */
static void api_offset_fetch_v8(api_req_t *req, grp_coord_t *c, proto_offset_fetch_req_t *r,
                                proto_offset_fetch_resp_t *resp)
{
    int32_t ng = r->groups.n < 0 ? 0 : r->groups.n;
    resp->groups.n = ng;
    resp->groups.v = arena_calloc(req->arena, (size_t)ng + 1, sizeof(*resp->groups.v));
    for (int32_t gi = 0; gi < ng; gi++) {
        proto_offset_fetch_req_offset_fetch_request_group_t *rg = &r->groups.v[gi];
        proto_offset_fetch_resp_offset_fetch_response_group_t *og = &resp->groups.v[gi];
        int32_t nt = rg->topics.n;
        api_of_topic_t *tt = arena_calloc(req->arena, (size_t)(nt > 0 ? nt : 0) + 1, sizeof(*tt));
        api_of_result_t *res;
        int32_t nres;

        for (int32_t i = 0; i < nt; i++) {
            tt[i].name = rg->topics.v[i].name;
            tt[i].id = rg->topics.v[i].topic_id;
            if (req->hdr.api_version >= 10)
                tt[i].error = api_group_topic_by_id(req, tt[i].id, &tt[i].name);
            tt[i].n = rg->topics.v[i].partition_indexes.n;
            tt[i].parts = rg->topics.v[i].partition_indexes.v;
        }
        proto_offset_fetch_resp_offset_fetch_response_group_init(og);
        og->group_id = rg->group_id;
        og->error_code =
            api_of_group(req, c, rg->group_id, nt, tt, r->require_stable, &res, &nres);
        og->topics.n = nres;
        og->topics.v = arena_calloc(req->arena, (size_t)nres + 1, sizeof(*og->topics.v));
        for (int32_t i = 0; i < nres; i++) {
            proto_offset_fetch_resp_offset_fetch_response_topics_t *t = &og->topics.v[i];
            proto_offset_fetch_resp_offset_fetch_response_topics_init(t);
            t->name = res[i].name;
            t->topic_id = res[i].id;
            t->partitions.n = res[i].n;
            t->partitions.v =
                arena_calloc(req->arena, (size_t)res[i].n + 1, sizeof(*t->partitions.v));
            for (int32_t j = 0; j < res[i].n; j++) {
                proto_offset_fetch_resp_offset_fetch_response_partitions_t *p =
                    &t->partitions.v[j];
                proto_offset_fetch_resp_offset_fetch_response_partitions_init(p);
                p->partition_index = res[i].v[j].partition;
                p->committed_offset = res[i].v[j].offset;
                p->committed_leader_epoch = res[i].v[j].epoch;
                p->metadata = res[i].v[j].metadata;
                p->error_code = res[i].v[j].error;
            }
        }
    }
}

void api_offset_fetch(api_req_t *req)
{
    proto_offset_fetch_req_t r;
    proto_offset_fetch_resp_t resp;

    proto_offset_fetch_req_init(&r);
    if (proto_offset_fetch_req_decode(&r, req->hdr.api_version, req->body, req->body_len,
                                      req->arena) < 0) {
        api_close(req, "malformed OffsetFetch request");
        return;
    }
    grp_coord_t *c = api_group_coord(req->b);
    proto_offset_fetch_resp_init(&resp);
    if (req->hdr.api_version < 8)
        api_offset_fetch_v7(req, c, &r, &resp);
    else
        api_offset_fetch_v8(req, c, &r, &resp);
    /* What it read waits for commits still pending on its groups, so that
     * nobody reads an offset before it is committed. */
    int32_t ng = req->hdr.api_version < 8 ? 1 : r.groups.n < 0 ? 0 : r.groups.n;
    const char **groups = arena_calloc(req->arena, (size_t)ng + 1, sizeof(*groups));
    for (int32_t i = 0; i < ng; i++)
        groups[i] = api_cstr(req, req->hdr.api_version < 8 ? r.group_id : r.groups.v[i].group_id);
    buf_t out;
    API_ENCODE(req, offset_fetch, &resp, &out);
    api_group_send(req, c, groups, ng, &out, NULL, NULL, 1);
}

/* ---- OffsetDelete ---- */

static void api_odel_fail(api_req_t *req, void *arg, int16_t err)
{
    proto_offset_delete_resp_t resp;
    (void)arg;
    proto_offset_delete_resp_init(&resp);
    resp.error_code = err;
    API_REPLY(req, offset_delete, &resp);
}

/* The request's partitions, flattened topic by topic as the coordinator
 * takes them; those of unknown topics carry their error already. */
static grp_offset_del_t *api_odel_parts(api_req_t *req, const proto_offset_delete_req_t *r,
                                        int32_t *n)
{
    int32_t k = 0;
    grp_offset_del_t *parts;

    *n = 0;
    for (int32_t i = 0; i < r->topics.n; i++)
        *n += r->topics.v[i].partitions.n > 0 ? r->topics.v[i].partitions.n : 0;
    parts = arena_calloc(req->arena, (size_t)*n + 1, sizeof(*parts));
    for (int32_t i = 0; i < r->topics.n; i++)
        for (int32_t j = 0; j < r->topics.v[i].partitions.n; j++, k++) {
            parts[k].topic = r->topics.v[i].name;
            parts[k].partition = r->topics.v[i].partitions.v[j].partition_index;
            parts[k].error = api_group_part_check(req, parts[k].topic, parts[k].partition);
        }
    return parts;
}

/* The answer of a group without error: the request's topics in order,
 * each partition with the error its flattened entry got. */
static void api_odel_answer(api_req_t *req, const proto_offset_delete_req_t *r,
                            const grp_offset_del_t *parts, proto_offset_delete_resp_t *resp)
{
    int32_t k = 0;

    resp->topics.n = r->topics.n < 0 ? 0 : r->topics.n;
    resp->topics.v = arena_calloc(req->arena, (size_t)resp->topics.n + 1, sizeof(*resp->topics.v));
    for (int32_t i = 0; i < resp->topics.n; i++) {
        proto_offset_delete_resp_offset_delete_response_topic_t *t = &resp->topics.v[i];
        int32_t np = r->topics.v[i].partitions.n < 0 ? 0 : r->topics.v[i].partitions.n;
        proto_offset_delete_resp_offset_delete_response_topic_init(t);
        t->name = r->topics.v[i].name;
        t->partitions.n = np;
        t->partitions.v = arena_calloc(req->arena, (size_t)np + 1, sizeof(*t->partitions.v));
        for (int32_t j = 0; j < np; j++, k++) {
            t->partitions.v[j].partition_index = parts[k].partition;
            t->partitions.v[j].error_code = parts[k].error;
        }
    }
}

void api_offset_delete(api_req_t *req)
{
    proto_offset_delete_req_t r;
    proto_offset_delete_resp_t resp;
    int32_t n;

    proto_offset_delete_req_init(&r);
    if (proto_offset_delete_req_decode(&r, req->hdr.api_version, req->body, req->body_len,
                                       req->arena) < 0) {
        api_close(req, "malformed OffsetDelete request");
        return;
    }
    grp_coord_t *c = api_group_coord(req->b);
    grp_offset_del_t *parts = api_odel_parts(req, &r, &n);
    const char *group = api_cstr(req, r.group_id);
    proto_offset_delete_resp_init(&resp);
    resp.error_code = c ? grp_offset_delete(c, group, parts, n) : KERR_COORDINATOR_NOT_AVAILABLE;
    if (!resp.error_code)
        api_odel_answer(req, &r, parts, &resp);
    buf_t out;
    API_ENCODE(req, offset_delete, &resp, &out);
    api_group_send1(req, c, group, &out, api_odel_fail, NULL, 1);
}

/* Helpers of the admin integration tests (0200-0209): one call per admin
 * operation on librdkafka's admin API, returning Kafka's error code, and
 * raw requests for what librdkafka 2.0.2 cannot send
 * (IncrementalAlterConfigs, negative partition counts). */
#ifndef STRAND_TESTS_ADMIN_H
#define STRAND_TESTS_ADMIN_H

#include "testlib/testlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ADM_TIMEOUT_MS 30000

static inline rd_kafka_t *adm_client(const char *bs)
{
    rd_kafka_conf_t *conf = tl_conf(bs);
    tl_conf_set(conf, "allow.auto.create.topics", "false");
    return tl_new(RD_KAFKA_PRODUCER, conf);
}

static inline rd_kafka_AdminOptions_t *adm_opts(rd_kafka_t *rk, rd_kafka_admin_op_t op,
                                                int validate_only)
{
    char err[256];
    rd_kafka_AdminOptions_t *o = rd_kafka_AdminOptions_new(rk, op);
    rd_kafka_AdminOptions_set_request_timeout(o, ADM_TIMEOUT_MS, err, sizeof(err));
    if (validate_only && rd_kafka_AdminOptions_set_validate_only(o, 1, err, sizeof(err)))
        tl_fail("validate_only: %s", err);
    return o;
}

/* Waits for the one result event on q; the caller destroys it. */
static inline rd_kafka_event_t *adm_wait(rd_kafka_queue_t *q, const char *what)
{
    rd_kafka_event_t *ev = rd_kafka_queue_poll(q, ADM_TIMEOUT_MS + 5000);
    if (!ev)
        tl_fail("%s: no result", what);
    if (rd_kafka_event_error(ev))
        tl_fail("%s: %s", what, rd_kafka_event_error_string(ev));
    return ev;
}

/* CreateTopics of one topic; configs is NULL or "key", "value" pairs
 * ending with NULL. Returns the topic's error code (msg: its message). */
static inline int adm_create(rd_kafka_t *rk, const char *topic, int nparts, int rf,
                             const char *const *configs, int validate_only, char *msg,
                             size_t msglen)
{
    char err[256];
    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    rd_kafka_NewTopic_t *nt = rd_kafka_NewTopic_new(topic, nparts, rf, err, sizeof(err));
    rd_kafka_AdminOptions_t *o = adm_opts(rk, RD_KAFKA_ADMIN_OP_CREATETOPICS, validate_only);
    const rd_kafka_topic_result_t **res;
    size_t cnt;
    int code;

    if (!nt)
        tl_fail("NewTopic %s: %s", topic, err);
    for (; configs && configs[0]; configs += 2)
        rd_kafka_NewTopic_set_config(nt, configs[0], configs[1]);
    rd_kafka_CreateTopics(rk, &nt, 1, o, q);
    rd_kafka_event_t *ev = adm_wait(q, "CreateTopics");
    res = rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(ev), &cnt);
    TL_ASSERT(cnt == 1, "CreateTopics: %zu results", cnt);
    code = rd_kafka_topic_result_error(res[0]);
    if (msg)
        snprintf(msg, msglen, "%s", rd_kafka_topic_result_error_string(res[0])
                                         ? rd_kafka_topic_result_error_string(res[0]) : "");
    rd_kafka_event_destroy(ev);
    rd_kafka_AdminOptions_destroy(o);
    rd_kafka_NewTopic_destroy(nt);
    rd_kafka_queue_destroy(q);
    return code;
}

static inline int adm_delete(rd_kafka_t *rk, const char *topic)
{
    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    rd_kafka_DeleteTopic_t *dt = rd_kafka_DeleteTopic_new(topic);
    rd_kafka_AdminOptions_t *o = adm_opts(rk, RD_KAFKA_ADMIN_OP_DELETETOPICS, 0);
    const rd_kafka_topic_result_t **res;
    size_t cnt;

    rd_kafka_DeleteTopics(rk, &dt, 1, o, q);
    rd_kafka_event_t *ev = adm_wait(q, "DeleteTopics");
    res = rd_kafka_DeleteTopics_result_topics(rd_kafka_event_DeleteTopics_result(ev), &cnt);
    TL_ASSERT(cnt == 1, "DeleteTopics: %zu results", cnt);
    int code = rd_kafka_topic_result_error(res[0]);
    rd_kafka_event_destroy(ev);
    rd_kafka_AdminOptions_destroy(o);
    rd_kafka_DeleteTopic_destroy(dt);
    rd_kafka_queue_destroy(q);
    return code;
}

static inline int adm_partitions(rd_kafka_t *rk, const char *topic, int total, int validate_only)
{
    char err[256];
    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    rd_kafka_NewPartitions_t *np = rd_kafka_NewPartitions_new(topic, (size_t)total, err,
                                                              sizeof(err));
    rd_kafka_AdminOptions_t *o = adm_opts(rk, RD_KAFKA_ADMIN_OP_CREATEPARTITIONS, validate_only);
    const rd_kafka_topic_result_t **res;
    size_t cnt;

    if (!np)
        tl_fail("NewPartitions: %s", err);
    rd_kafka_CreatePartitions(rk, &np, 1, o, q);
    rd_kafka_event_t *ev = adm_wait(q, "CreatePartitions");
    res = rd_kafka_CreatePartitions_result_topics(rd_kafka_event_CreatePartitions_result(ev),
                                                  &cnt);
    TL_ASSERT(cnt == 1, "CreatePartitions: %zu results", cnt);
    int code = rd_kafka_topic_result_error(res[0]);
    rd_kafka_event_destroy(ev);
    rd_kafka_AdminOptions_destroy(o);
    rd_kafka_NewPartitions_destroy(np);
    rd_kafka_queue_destroy(q);
    return code;
}

/* A topic's configs as DescribeConfigs returns them. */
typedef struct adm_cfg {
    int err;
    int n;
    struct {
        char name[128];
        char value[256]; /* "<null>" for null */
        int source;
        int read_only, sensitive, nsyn;
        char syn0[128];  /* first synonym's name */
        int syn0_source;
    } e[400];
} adm_cfg;

static inline void adm_describe(rd_kafka_t *rk, rd_kafka_ResourceType_t type, const char *name,
                                adm_cfg *out)
{
    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    rd_kafka_ConfigResource_t *cr = rd_kafka_ConfigResource_new(type, name);
    rd_kafka_AdminOptions_t *o = adm_opts(rk, RD_KAFKA_ADMIN_OP_DESCRIBECONFIGS, 0);
    const rd_kafka_ConfigResource_t **rs;
    size_t cnt, n;

    rd_kafka_DescribeConfigs(rk, &cr, 1, o, q);
    rd_kafka_event_t *ev = adm_wait(q, "DescribeConfigs");
    rs = rd_kafka_DescribeConfigs_result_resources(rd_kafka_event_DescribeConfigs_result(ev),
                                                   &cnt);
    TL_ASSERT(cnt == 1, "DescribeConfigs: %zu results", cnt);
    memset(out, 0, sizeof(*out));
    out->err = rd_kafka_ConfigResource_error(rs[0]);
    const rd_kafka_ConfigEntry_t **es = rd_kafka_ConfigResource_configs(rs[0], &n);
    for (size_t i = 0; i < n && i < 400; i++) {
        const char *v = rd_kafka_ConfigEntry_value(es[i]);
        size_t ns;
        const rd_kafka_ConfigEntry_t **syn = rd_kafka_ConfigEntry_synonyms(es[i], &ns);
        snprintf(out->e[i].name, sizeof(out->e[i].name), "%s", rd_kafka_ConfigEntry_name(es[i]));
        snprintf(out->e[i].value, sizeof(out->e[i].value), "%s", v ? v : "<null>");
        out->e[i].source = rd_kafka_ConfigEntry_source(es[i]);
        out->e[i].read_only = rd_kafka_ConfigEntry_is_read_only(es[i]);
        out->e[i].sensitive = rd_kafka_ConfigEntry_is_sensitive(es[i]);
        out->e[i].nsyn = (int)ns;
        if (ns) {
            snprintf(out->e[i].syn0, sizeof(out->e[i].syn0), "%s",
                     rd_kafka_ConfigEntry_name(syn[0]));
            out->e[i].syn0_source = rd_kafka_ConfigEntry_source(syn[0]);
        }
        out->n++;
    }
    rd_kafka_event_destroy(ev);
    rd_kafka_AdminOptions_destroy(o);
    rd_kafka_ConfigResource_destroy(cr);
    rd_kafka_queue_destroy(q);
}

/* Index of a key in a description, or -1. */
static inline int adm_find(const adm_cfg *c, const char *name)
{
    for (int i = 0; i < c->n; i++)
        if (!strcmp(c->e[i].name, name))
            return i;
    return -1;
}

/* Asserts a topic key's value and source. */
static inline void adm_expect(const adm_cfg *c, const char *name, const char *value, int source)
{
    int i = adm_find(c, name);
    TL_ASSERT(i >= 0, "config %s missing", name);
    TL_ASSERT(!strcmp(c->e[i].value, value), "%s = %s, expected %s", name, c->e[i].value, value);
    if (source >= 0)
        TL_ASSERT_EQ(c->e[i].source, source);
}

/* Legacy AlterConfigs: pairs become the topic's whole dynamic set. */
static inline int adm_alter_legacy(rd_kafka_t *rk, const char *topic, const char *const *pairs,
                                   int validate_only)
{
    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    rd_kafka_ConfigResource_t *cr = rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, topic);
    rd_kafka_AdminOptions_t *o = adm_opts(rk, RD_KAFKA_ADMIN_OP_ALTERCONFIGS, validate_only);
    const rd_kafka_ConfigResource_t **rs;
    size_t cnt;

    for (; pairs && pairs[0]; pairs += 2)
        rd_kafka_ConfigResource_set_config(cr, pairs[0], pairs[1]);
    rd_kafka_AlterConfigs(rk, &cr, 1, o, q);
    rd_kafka_event_t *ev = adm_wait(q, "AlterConfigs");
    rs = rd_kafka_AlterConfigs_result_resources(rd_kafka_event_AlterConfigs_result(ev), &cnt);
    TL_ASSERT(cnt == 1, "AlterConfigs: %zu results", cnt);
    int code = rd_kafka_ConfigResource_error(rs[0]);
    rd_kafka_event_destroy(ev);
    rd_kafka_AdminOptions_destroy(o);
    rd_kafka_ConfigResource_destroy(cr);
    rd_kafka_queue_destroy(q);
    return code;
}

/* DeleteRecords of one partition; *low gets the new log start offset. */
static inline int adm_delete_records(rd_kafka_t *rk, const char *topic, int32_t p,
                                     int64_t before, int64_t *low)
{
    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
    rd_kafka_AdminOptions_t *o = adm_opts(rk, RD_KAFKA_ADMIN_OP_DELETERECORDS, 0);

    rd_kafka_topic_partition_list_add(l, topic, p)->offset = before;
    rd_kafka_DeleteRecords_t *dr = rd_kafka_DeleteRecords_new(l);
    rd_kafka_DeleteRecords(rk, &dr, 1, o, q);
    rd_kafka_event_t *ev = rd_kafka_queue_poll(q, ADM_TIMEOUT_MS + 5000);
    if (!ev)
        tl_fail("DeleteRecords: no result");
    const rd_kafka_topic_partition_list_t *res =
        rd_kafka_DeleteRecords_result_offsets(rd_kafka_event_DeleteRecords_result(ev));
    int code = res && res->cnt == 1 ? res->elems[0].err : rd_kafka_event_error(ev);
    if (low)
        *low = res && res->cnt == 1 ? res->elems[0].offset : -1;
    rd_kafka_event_destroy(ev);
    rd_kafka_AdminOptions_destroy(o);
    rd_kafka_DeleteRecords_destroy(dr);
    rd_kafka_topic_partition_list_destroy(l);
    rd_kafka_queue_destroy(q);
    return code;
}

/* Partition count from metadata, 0 when the topic does not exist. */
static inline int adm_nparts(rd_kafka_t *rk, const char *topic)
{
    const struct rd_kafka_metadata *md;
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, topic, NULL);
    rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 0, rkt, &md, 10000);
    int n = 0;
    TL_ASSERT(!err, "metadata: %s", rd_kafka_err2name(err));
    if (md->topic_cnt == 1 && !md->topics[0].err)
        n = md->topics[0].partition_cnt;
    rd_kafka_metadata_destroy(md);
    rd_kafka_topic_destroy(rkt);
    return n;
}

/* Appends a raw (non-flexible) string. */
static inline void adm_req_str(tl_req *r, const char *s)
{
    if (!s) {
        tl_req_i16(r, -1);
        return;
    }
    tl_req_i16(r, (int16_t)strlen(s));
    tl_req_bytes(r, s, strlen(s));
}

/* Sends a raw request and returns the response body after the
 * correlation id (caller frees *frame). */
static inline const uint8_t *adm_roundtrip(const char *bs, tl_req *r, uint8_t **frame)
{
    int fd = tl_connect(bs, 10000);
    TL_ASSERT(fd >= 0, "connect %s", bs);
    tl_req_finish(r);
    TL_ASSERT(tl_send_all(fd, r->data, r->len) == 0, "send");
    int n = tl_recv_frame(fd, frame, 10000);
    close(fd);
    TL_ASSERT(n >= 4, "no response (%d)", n);
    return *frame + 4;
}

/* IncrementalAlterConfigs v0 for one TOPIC resource; ops is a list of
 * "op", "key", "value" triples (op "set", "delete", "append",
 * "subtract"; value may be NULL) ending with NULL. Returns the error. */
static inline int adm_incremental(const char *bs, const char *topic, const char *const *ops,
                                  int validate_only)
{
    tl_req r;
    uint8_t *frame;
    int n = 0;
    for (const char *const *p = ops; p[0]; p += 3)
        n++;
    tl_req_header(&r, 44, 0, 4401, "adm");
    tl_req_i32(&r, 1);
    tl_req_i8(&r, 2);
    adm_req_str(&r, topic);
    tl_req_i32(&r, n);
    for (const char *const *p = ops; p[0]; p += 3) {
        int8_t op = !strcmp(p[0], "set") ? 0 : !strcmp(p[0], "delete") ? 1
                                            : !strcmp(p[0], "append") ? 2 : 3;
        adm_req_str(&r, p[1]);
        tl_req_i8(&r, op);
        adm_req_str(&r, p[2]);
    }
    tl_req_i8(&r, (int8_t)validate_only);
    const uint8_t *b = adm_roundtrip(bs, &r, &frame);
    /* throttle i32, responses: count i32, error_code i16, ... */
    TL_ASSERT_EQ(tl_get_i32(b + 4), 1);
    int code = tl_get_i16(b + 8);
    free(frame);
    return code;
}

/* CreateTopics v2 with a raw partition count (librdkafka refuses < -1). */
static inline int adm_create_raw(const char *bs, const char *topic, int32_t nparts, int16_t rf)
{
    tl_req r;
    uint8_t *frame;
    tl_req_header(&r, 19, 2, 1901, "adm");
    tl_req_i32(&r, 1);
    adm_req_str(&r, topic);
    tl_req_i32(&r, nparts);
    tl_req_i16(&r, rf);
    tl_req_i32(&r, 0); /* assignments */
    tl_req_i32(&r, 0); /* configs */
    tl_req_i32(&r, 10000);
    tl_req_i8(&r, 0);
    const uint8_t *b = adm_roundtrip(bs, &r, &frame);
    /* throttle i32, topics: count i32, name string, error_code i16 */
    TL_ASSERT_EQ(tl_get_i32(b + 4), 1);
    int16_t nlen = tl_get_i16(b + 8);
    int code = tl_get_i16(b + 10 + nlen);
    free(frame);
    return code;
}

#endif

/* Helpers of the broker config tests (0209-0211): raw DescribeConfigs v4,
 * AlterConfigs v2 and IncrementalAlterConfigs v1 of one resource through
 * testlib/wire.h, for the exact fields (error messages, sources,
 * synonyms, read-only flags) that librdkafka does not show or cannot
 * send. A Kafka broker applies a committed config change shortly after it
 * answers, so reads of a change poll until it shows (bc_wait). */
#ifndef STRAND_TESTS_BCFG_H
#define STRAND_TESTS_BCFG_H

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "testlib/wire.h"

enum { BC_TOPIC = 2, BC_BROKER = 4, BC_LOGGER = 8 };
enum { BC_SET = 0, BC_DELETE = 1, BC_APPEND = 2, BC_SUBTRACT = 3 };
enum { BC_SRC_TOPIC = 1, BC_SRC_BROKER = 2, BC_SRC_DEFAULT_BROKER = 3, BC_SRC_STATIC = 4,
       BC_SRC_DEFAULT = 5, BC_SRC_LOGGER = 6 };

typedef struct bc_op {
    int8_t op;
    const char *key;
    const char *value;
} bc_op;

typedef proto_describe_configs_resp_describe_configs_result_t bc_res;
typedef proto_describe_configs_resp_describe_configs_resource_result_t bc_entry;

/* A protocol string's text in a static buffer ("<null>" for null). */
static inline const char *bc_str(proto_str_t s)
{
    static char buf[4][1024];
    static int k;
    char *b = buf[k++ & 3];
    if (s.len < 0)
        return "<null>";
    snprintf(b, sizeof(buf[0]), "%.*s", (int)s.len, s.p);
    return b;
}

/* IncrementalAlterConfigs of one resource: its error code, the message in
 * msg ("" when null). */
static inline int bc_iac(int fd, arena_t *a, int8_t type, const char *name, const bc_op *ops,
                         int n, int validate_only, char *msg, size_t cap)
{
    proto_incremental_alter_configs_req_t r;
    proto_incremental_alter_configs_req_alter_configs_resource_t res;
    proto_incremental_alter_configs_req_alterable_config_t cfgs[16];
    proto_incremental_alter_configs_resp_t resp;

    proto_incremental_alter_configs_req_init(&r);
    proto_incremental_alter_configs_req_alter_configs_resource_init(&res);
    res.resource_type = type;
    res.resource_name = tl_wire_str(name);
    for (int i = 0; i < n; i++) {
        proto_incremental_alter_configs_req_alterable_config_init(&cfgs[i]);
        cfgs[i].name = tl_wire_str(ops[i].key);
        cfgs[i].config_operation = ops[i].op;
        cfgs[i].value = tl_wire_str(ops[i].value);
    }
    res.configs.n = n;
    res.configs.v = cfgs;
    r.resources.n = 1;
    r.resources.v = &res;
    r.validate_only = validate_only != 0;
    TL_WIRE_CALL(fd, a, incremental_alter_configs, 44, 1, &r, &resp);
    TL_ASSERT_EQ(resp.responses.n, 1);
    if (msg)
        snprintf(msg, cap, "%s", resp.responses.v[0].error_message.len < 0
                                     ? "" : bc_str(resp.responses.v[0].error_message));
    return resp.responses.v[0].error_code;
}

/* One SET (value non-NULL) or DELETE. */
static inline int bc_set(int fd, arena_t *a, int8_t type, const char *name, const char *key,
                         const char *value, char *msg, size_t cap)
{
    bc_op op = {value ? BC_SET : BC_DELETE, key, value};
    return bc_iac(fd, a, type, name, &op, 1, 0, msg, cap);
}

/* AlterConfigs of one resource: kv is key, value pairs ending with NULL
 * (the whole new set). */
static inline int bc_ac(int fd, arena_t *a, int8_t type, const char *name,
                        const char *const *kv, int validate_only, char *msg, size_t cap)
{
    proto_alter_configs_req_t r;
    proto_alter_configs_req_alter_configs_resource_t res;
    proto_alter_configs_req_alterable_config_t cfgs[16];
    proto_alter_configs_resp_t resp;
    int n = 0;

    proto_alter_configs_req_init(&r);
    proto_alter_configs_req_alter_configs_resource_init(&res);
    res.resource_type = type;
    res.resource_name = tl_wire_str(name);
    for (; kv && kv[0] && n < 16; kv += 2, n++) {
        proto_alter_configs_req_alterable_config_init(&cfgs[n]);
        cfgs[n].name = tl_wire_str(kv[0]);
        cfgs[n].value = tl_wire_str(kv[1]);
    }
    res.configs.n = n;
    res.configs.v = cfgs;
    r.resources.n = 1;
    r.resources.v = &res;
    r.validate_only = validate_only != 0;
    TL_WIRE_CALL(fd, a, alter_configs, 33, 2, &r, &resp);
    TL_ASSERT_EQ(resp.responses.n, 1);
    if (msg)
        snprintf(msg, cap, "%s", resp.responses.v[0].error_message.len < 0
                                     ? "" : bc_str(resp.responses.v[0].error_message));
    return resp.responses.v[0].error_code;
}

/* DescribeConfigs v4 of one resource with synonyms; keys NULL (all) or
 * NULL-terminated. The result lives in a. */
static inline bc_res *bc_describe(int fd, arena_t *a, int8_t type, const char *name,
                                  const char *const *keys)
{
    proto_describe_configs_req_t r;
    proto_describe_configs_req_describe_configs_resource_t res;
    proto_describe_configs_resp_t *resp = arena_alloc(a, sizeof(*resp));
    proto_str_t k[64];
    int n = 0;

    proto_describe_configs_req_init(&r);
    proto_describe_configs_req_describe_configs_resource_init(&res);
    res.resource_type = type;
    res.resource_name = tl_wire_str(name);
    for (; keys && keys[n] && n < 64; n++)
        k[n] = tl_wire_str(keys[n]);
    res.configuration_keys.n = keys ? n : -1;
    res.configuration_keys.v = k;
    r.resources.n = 1;
    r.resources.v = &res;
    r.include_synonyms = true;
    TL_WIRE_CALL(fd, a, describe_configs, 32, 4, &r, resp);
    TL_ASSERT_EQ(resp->results.n, 1);
    return &resp->results.v[0];
}

static inline const bc_entry *bc_find(const bc_res *res, const char *key)
{
    for (int32_t i = 0; i < res->configs.n; i++)
        if (!strcmp(bc_str(res->configs.v[i].name), key))
            return &res->configs.v[i];
    return NULL;
}

/* Whether e shows value (NULL: null) from source (-1: any). */
static inline int bc_is(const bc_entry *e, const char *value, int source)
{
    if (!e || (source >= 0 && e->config_source != source))
        return 0;
    return value ? e->value.len >= 0 && !strcmp(bc_str(e->value), value) : e->value.len < 0;
}

/* Describes key of the resource until it shows value from source (value
 * NULL and source -2: until the key is not listed), for 15 s at most. */
static inline const bc_entry *bc_wait(int fd, arena_t *a, int8_t type, const char *name,
                                      const char *key, const char *value, int source)
{
    const char *keys[] = {key, NULL};
    const bc_entry *e = NULL;
    double until = tl_now() + 15;

    for (;;) {
        bc_res *res = bc_describe(fd, a, type, name, keys);
        TL_ASSERT(res->error_code == 0, "describe %s: %d %s", name, res->error_code,
                  bc_str(res->error_message));
        e = bc_find(res, key);
        if (source == -2 ? !e : bc_is(e, value, source))
            return e;
        if (tl_now() > until)
            tl_fail("%s of resource '%s': %s from %d, expected %s from %d", key, name,
                    e ? bc_str(e->value) : "(none)", e ? e->config_source : -1,
                    value ? value : "<null>", source);
        usleep(100 * 1000);
    }
}

/* The synonym list of e, as "name=value/source,..." for comparisons. */
static inline const char *bc_syns(const bc_entry *e)
{
    static char buf[2048];
    size_t o = 0;
    buf[0] = '\0';
    for (int32_t i = 0; e && i < e->synonyms.n && o < sizeof(buf); i++)
        o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s%s=%s/%d", i ? "," : "",
                              bc_str(e->synonyms.v[i].name), bc_str(e->synonyms.v[i].value),
                              e->synonyms.v[i].source);
    return buf;
}

/* A call of the helpers above that fills bc_msg (a buffer of the test)
 * must answer code and, unless text is NULL, the message text. */
#define BC_EXPECT(call, code, text)                                                              \
    do {                                                                                         \
        int bc_c_ = (call);                                                                      \
        const char *bc_t_ = (text);                                                              \
        TL_ASSERT(bc_c_ == (code), "%s: error %d (%s), expected %d", #call, bc_c_, bc_msg,      \
                  (int)(code));                                                                  \
        TL_ASSERT(!bc_t_ || !strcmp(bc_msg, bc_t_), "%s: message '%s', expected '%s'", #call,   \
                  bc_msg, bc_t_ ? bc_t_ : "");                                                   \
    } while (0)

/* 1 when port answers an ApiVersions request (a listener being closed may
 * take the connection and drop it: 0). */
static inline int bc_answers(int port)
{
    char hp[64];
    tl_req r;
    uint8_t *frame = NULL;

    snprintf(hp, sizeof(hp), "127.0.0.1:%d", port);
    int s = tl_connect(hp, 2000);
    if (s < 0)
        return 0;
    tl_req_header(&r, 18, 0, 1, "strand-test"); /* ApiVersions v0 */
    tl_req_finish(&r);
    int n = tl_send_all(s, r.data, r.len) == 0 ? tl_recv_frame(s, &frame, 2000) : -1;
    free(frame);
    close(s);
    return n > 0;
}

#endif

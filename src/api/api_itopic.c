/* The internal topics the coordinators create on first use, as Kafka's
 * brokers do (__consumer_offsets by the group coordinator,
 * __transaction_state by the transaction coordinator): by this node's
 * controller on a single node, by the active controller on a quorum's
 * broker (a CreateTopics in an Envelope). Until the creation is committed
 * the coordinator's APIs answer COORDINATOR_NOT_AVAILABLE and clients
 * retry. */
#include "api/api.h"
#include "api/api_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/ctl.h"
#include "util/kerr.h"
#include "util/logging.h"

int64_t api_node_prop(api_node_t *b, const char *key, int64_t def)
{
    const char *v = props_get(&b->cfg.props, key);
    char *end;
    if (!v)
        return def;
    long long x = strtoll(v, &end, 10);
    while (*end == ' ' || *end == '\t')
        end++;
    if (end == v || *end) {
        lg_warn("%s=%s is not a number; using %lld", key, v, (long long)def);
        return def;
    }
    return x;
}

void api_node_coordinator_keys(api_node_t *b)
{
    static const char *const keys[] = {
        "group.max.session.timeout.ms",
        "group.max.size",
        "group.min.session.timeout.ms",
        "offset.metadata.max.bytes",
        "offsets.commit.timeout.ms",
        "offsets.retention.check.interval.ms",
        "offsets.retention.minutes",
        "offsets.topic.replication.factor",
        "offsets.topic.segment.bytes",
        "request.timeout.ms",
        "transaction.abort.timed.out.transaction.cleanup.interval.ms",
        "transaction.max.timeout.ms",
        "transaction.remove.expired.transaction.cleanup.interval.ms",
        "transaction.state.log.min.isr",
        "transaction.state.log.num.partitions",
        "transaction.state.log.replication.factor",
        "transaction.state.log.segment.bytes",
        "transactional.id.expiration.ms",
    };
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        (void)api_node_prop(b, keys[i], 0);
}

/* What the creation came to. Clients retry every few hundred
 * milliseconds while it fails (too few brokers for its replication
 * factor, say), so a failure is logged when it is new (the first, or
 * another error than the last), at WARN, and its repeats only at DEBUG:
 * Kafka's broker logs none of them above DEBUG (its controller logs the
 * refusal at INFO). A success ends the run. */
static void api_itopic_result(api_itopic_t *it, int16_t err, const char *msg)
{
    it->pending = 0;
    if (!err || err == KERR_TOPIC_ALREADY_EXISTS) {
        if (it->last_err)
            lg_info("%s created after %s", it->name, kerr_name(it->last_err));
        it->last_err = 0;
        return;
    }
    if (err == it->last_err) {
        lg_debug("cannot create %s: %s: %s", it->name, kerr_name(err), msg);
        return;
    }
    it->last_err = err;
    lg_warn("cannot create %s: %s: %s (its coordinator answers COORDINATOR_NOT_AVAILABLE until "
            "it can be; retries are logged only at DEBUG)",
            it->name, kerr_name(err), msg);
}

static void api_itopic_created(ctl_op_t *op)
{
    api_itopic_result(op->udata, op->err, op->msg);
    ctl_op_free(op);
}

/* The error of the active controller's CreateTopics answer in an
 * EnvelopeResponse body: its response header (v1: correlation id and an
 * empty tagged section) and CreateTopics v7. REQUEST_TIMED_OUT when none
 * came or it cannot be read. */
static int16_t api_itopic_created_err(const uint8_t *resp, size_t len, arena_t *arena, char *msg,
                                      size_t msglen)
{
    proto_envelope_resp_t env;
    proto_create_topics_resp_t ct;
    snprintf(msg, msglen, "no answer");
    proto_envelope_resp_init(&env);
    if (!resp || proto_envelope_resp_decode(&env, 0, resp, len, arena) < 0)
        return KERR_REQUEST_TIMED_OUT;
    if (env.error_code)
        return env.error_code;
    const uint8_t *p = env.response_data.p;
    int32_t n = env.response_data.len;
    proto_create_topics_resp_init(&ct);
    if (n < 5 || p[4] != 0 ||
        proto_create_topics_resp_decode(&ct, 7, p + 5, (size_t)n - 5, arena) < 0 ||
        ct.topics.n != 1)
        return KERR_REQUEST_TIMED_OUT;
    proto_str_t m = ct.topics.v[0].error_message;
    snprintf(msg, msglen, "%.*s", m.p ? (int)m.len : 0, m.p ? m.p : "");
    return ct.topics.v[0].error_code;
}

static void api_itopic_forward_done(void *arg, const uint8_t *resp, size_t len)
{
    arena_t arena;
    char msg[256];
    arena_init(&arena, 256);
    int16_t err = api_itopic_created_err(resp, len, &arena, msg, sizeof(msg));
    api_itopic_result(arg, err, msg);
    arena_destroy(&arena);
}

/* With fewer unfenced brokers than the factor the controller refuses it
 * (INVALID_REPLICATION_FACTOR), as Kafka's does. */
static void api_itopic_forward(api_node_t *b, api_itopic_t *it, int32_t nparts, int16_t rf,
                               const topic_cfg_t *tcfg)
{
    cfg_kv_t kv[32];
    proto_create_topics_req_creatable_topic_config_t cv[32];
    proto_create_topics_req_creatable_topic_t t;
    int n = cfg_topic_diff(&b->reg->defaults, tcfg, kv, 32);

    for (int i = 0; i < n; i++) {
        cv[i].name = (proto_str_t){kv[i].key, (int32_t)strlen(kv[i].key)};
        cv[i].value = (proto_str_t){kv[i].value, (int32_t)strlen(kv[i].value)};
    }
    proto_create_topics_req_creatable_topic_init(&t);
    t.name = (proto_str_t){it->name, (int32_t)strlen(it->name)};
    t.num_partitions = nparts;
    t.replication_factor = rf;
    t.configs.n = n;
    t.configs.v = cv;
    if (api_forward_create_topic(b, &t, api_itopic_forward_done, it) == 0)
        it->pending = 1;
}

void api_itopic_create(api_node_t *b, api_itopic_t *it, int32_t nparts, int16_t rf,
                       const topic_cfg_t *tcfg)
{
    if (it->pending)
        return;
    if (b->forward) {
        api_itopic_forward(b, it, nparts, rf, tcfg);
        return;
    }
    ctl_op_t *op = ctl_op_new_topic(b->ctl, it->name, strlen(it->name), nparts, tcfg,
                                    net_now_wall_ms());
    op->done = api_itopic_created;
    op->udata = it;
    it->pending = 1;
    ctl_submit(b->ctl, op);
}

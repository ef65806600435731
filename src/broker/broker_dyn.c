/* Dynamic broker configs, the broker's side: see broker_dyn.h. */
#include "broker/broker_dyn.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/cfg_broker.h"
#include "cluster/cfg_topic.h"
#include "cluster/cfg_val.h"
#include "cluster/ctl.h"
#include "net/net_pool.h"
#include "util/kerr.h"
#include "util/logging.h"

/* Kafka's wrapping of a reconfiguration's refusal. */
#define BROKER_DYN_WRAP "Invalid value org.apache.kafka.common.config.ConfigException: %s for " \
                        "configuration Invalid dynamic configuration"

/* The thread pools Kafka resizes at run time. */
static const char *const broker_dyn_pools[] = {"num.io.threads", "num.network.threads",
                                               "num.replica.fetchers",
                                               "num.recovery.threads.per.data.dir",
                                               "background.threads", NULL};

/* The config the broker runs with: server.properties with the dynamic
 * defaults and this node's dynamic configs over it. */
static void broker_dyn_merged(const broker_t *b, props_t *out)
{
    cfg_bview_t bv;

    cfg_bview_init(&bv, ctl_image(b->node.ctl), ctl_node_name(b->node.ctl), &b->node.cfg.props);
    cfg_bview_merge(&bv, out);
}

/* A number of the config a change would make, or of the running one
 * (Kafka's default when neither sets it); checked already. */
static int64_t broker_dyn_long(const props_t *p, const cfg_bview_t *now, const char *key)
{
    const char *v = p ? cfg_props_peek(p, key) : cfg_bview_set(now, key, NULL);
    char t[64];
    int64_t n = 0;

    if (!v)
        v = cfg_broker_default(key);
    if (v)
        cfg_val_long(cfg_val_trim(v, t, sizeof(t)), &n);
    return n;
}

static int16_t broker_dyn_wrap(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int16_t broker_dyn_wrap(char *err, size_t errlen, const char *fmt, ...)
{
    char why[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    snprintf(err, errlen, BROKER_DYN_WRAP, why);
    return KERR_INVALID_REQUEST;
}

/* Thread counts move to at least half and at most double their current
 * value in one change, as Kafka's thread pools and its cleaner allow. */
static int16_t broker_dyn_threads(const props_t *m, const cfg_bview_t *now, char *err,
                                  size_t errlen)
{
    int64_t n, cur;

    for (int i = 0; broker_dyn_pools[i]; i++) {
        const char *k = broker_dyn_pools[i];
        if ((n = broker_dyn_long(m, now, k)) == (cur = broker_dyn_long(NULL, now, k)))
            continue;
        if (n < cur / 2)
            return broker_dyn_wrap(err, errlen, "Dynamic thread count update validation "
                                   "failed for %s=%" PRId64 ", value should be at least half "
                                   "the current value %" PRId64, k, n, cur);
        if (n > cur * 2)
            return broker_dyn_wrap(err, errlen, "Dynamic thread count update validation "
                                   "failed for %s=%" PRId64 ", value should not be greater "
                                   "than double the current value %" PRId64, k, n, cur);
    }
    n = broker_dyn_long(m, now, "log.cleaner.threads");
    cur = broker_dyn_long(NULL, now, "log.cleaner.threads");
    if (n < cur / 2)
        return broker_dyn_wrap(err, errlen, "Log cleaner threads cannot be reduced to less "
                               "than half the current value %" PRId64, cur);
    if (n > cur * 2)
        return broker_dyn_wrap(err, errlen, "Log cleaner threads cannot be increased to more "
                               "than double the current value %" PRId64, cur);
    return KERR_NONE;
}

static int broker_dyn_jmx_only(const char *item, size_t len, void *arg)
{
    static const char jmx[] = "org.apache.kafka.common.metrics.JmxReporter";
    (void)arg;
    return len != sizeof(jmx) - 1 || memcmp(item, jmx, len);
}

/* What else Kafka checks of the new config against the running one:
 * connection limits above zero, metrics reporters it can load (Strand has
 * none but Kafka's default JMX one, which it stands for). */
static int16_t broker_dyn_others(const props_t *m, const cfg_bview_t *now, char *err,
                                 size_t errlen)
{
    const char *mr = cfg_props_peek(m, "metric.reporters");
    int64_t n;

    if ((n = broker_dyn_long(m, now, "max.connections")) <= 0)
        return broker_dyn_wrap(err, errlen, "Invalid max.connections %" PRId64, n);
    if ((n = broker_dyn_long(m, now, "max.connection.creation.rate")) <= 0)
        return broker_dyn_wrap(err, errlen, "Invalid max.connection.creation.rate %" PRId64, n);
    if (mr && cfg_val_items(mr, broker_dyn_jmx_only, NULL))
        return broker_dyn_wrap(err, errlen, "Validation of dynamic config update of "
                               "Set(metric.reporters) failed with class class "
                               "kafka.server.DynamicMetricsReporters");
    return KERR_NONE;
}

int16_t broker_dyn_check(void *arg, const props_t *merged, char *err, size_t errlen)
{
    broker_t *b = arg;
    broker_config_t next;
    cfg_bview_t now;
    int16_t e;

    if (broker_config_check(&next, merged, err, errlen) < 0)
        return KERR_INVALID_REQUEST;
    broker_config_free(&next);
    cfg_bview_init(&now, ctl_image(b->node.ctl), ctl_node_name(b->node.ctl), &b->node.cfg.props);
    if ((e = broker_dyn_threads(merged, &now, err, errlen)))
        return e;
    return broker_dyn_others(merged, &now, err, errlen);
}

/* ---- applying ---- */

/* The effective config, or -1 (logged) when the stored dynamic configs no
 * longer make a config Strand can run with this server.properties. */
static int broker_dyn_effective(broker_t *b, broker_config_t *eff)
{
    props_t merged;
    char err[512];
    int rc;

    broker_dyn_merged(b, &merged);
    rc = broker_config_check(eff, &merged, err, sizeof(err));
    props_free(&merged);
    if (rc < 0)
        lg_error("dynamic broker configs not applied (server.properties values kept for the "
                 "broker's own keys): %s", err);
    return rc;
}

/* Takes the values of the keys the broker acts on from eff (the
 * listeners are moved: eff keeps none). */
static void broker_dyn_take(broker_t *b, broker_config_t *eff)
{
    b->node.cfg.num_io_threads = eff->num_io_threads;
    b->node.cfg.max_connections = eff->max_connections;
    b->node.cfg.log_flush_interval_ms = eff->log_flush_interval_ms;
    broker_config_free_listeners(b->node.cfg.listeners, b->node.cfg.nlisteners);
    b->node.cfg.listeners = eff->listeners;
    b->node.cfg.nlisteners = eff->nlisteners;
    eff->listeners = NULL;
    eff->nlisteners = 0;
}

void broker_dyn_load(broker_t *b)
{
    broker_config_t eff;

    if (broker_dyn_effective(b, &eff) < 0)
        return;
    broker_dyn_take(b, &eff);
    broker_config_free(&eff);
}

void broker_dyn_apply(void *arg)
{
    broker_t *b = arg;
    broker_config_t eff;
    int threads = b->node.cfg.num_io_threads;

    if (b->node.stopping || broker_dyn_effective(b, &eff) < 0)
        return;
    broker_dyn_take(b, &eff);
    broker_config_free(&eff);
    if (b->node.cfg.num_io_threads != threads && b->pool) {
        int n = broker_pool_size(b);
        if (n >= 1 && net_pool_resize(b->pool, n) < 0)
            lg_error("num.io.threads=%d: cannot start more io threads: %s", n, strerror(errno));
        else
            lg_info("num.io.threads=%d: %d io threads", b->node.cfg.num_io_threads,
                    net_pool_threads(b->pool));
    }
    if (broker_listeners_sync(b) > 0)
        lg_error("listeners: some of the new listeners could not be opened (see above)");
    broker_advertise(b);
}

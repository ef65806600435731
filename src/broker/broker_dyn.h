/* Dynamic broker configs, the broker's side. The controller stores them
 * (cluster/ctl_configs.c: ConfigRecords of the BROKER resources "" and
 * "<node id>"), the partition layer turns the topic-default keys into
 * every topic's config (partition/part_delta.c), and this file does the
 * rest:
 *   - broker_dyn_check, the controller's hook: the config a change would
 *     make is loaded as server.properties is (every value, the rules
 *     between keys, listeners, the security keys Strand refuses), then
 *     checked against the running broker as Kafka checks a
 *     reconfiguration (thread counts within half and double of their
 *     current value, connection limits above zero, ...), with Kafka's
 *     messages;
 *   - broker_dyn_apply, the partition registry's hook after each
 *     committed change, and broker_dyn_load at start-up (before the pool,
 *     the topics and the listeners start): the keys the broker acts on
 *     take their new values: num.io.threads resizes the worker pool,
 *     max.connections limits accepts, listeners are opened and closed,
 *     log.flush.interval.ms paces the flush check. */
#ifndef STRAND_BROKER_DYN_H
#define STRAND_BROKER_DYN_H

#include <stddef.h>
#include <stdint.h>

#include "broker/broker.h"
#include "util/props.h"

/* ctl_broker_check_fn for broker b (arg). */
int16_t broker_dyn_check(void *arg, const props_t *merged, char *err, size_t errlen);
/* The part_reg_config_t hook for broker b (arg). */
void broker_dyn_apply(void *arg);
/* At start-up, once the controller has replayed the metadata log: the
 * values the dynamic configs give the keys the broker acts on, into
 * b->cfg (b->cfg.props stays server.properties). */
void broker_dyn_load(broker_t *b);

#endif

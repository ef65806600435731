/* The broker's configuration: Kafka's server.properties keys with Kafka's
 * defaults and meanings. Every key of the file is either honoured here or
 * reported once at start-up as ignored, so a Kafka user's file just works
 * and nothing is dropped silently. */
#ifndef STRAND_BROKER_CONFIG_H
#define STRAND_BROKER_CONFIG_H

#include "cluster/cfg_server.h"

/* Loads path (may be NULL for all defaults), applies overrides
 * ("key=value" strings) and validates. Returns 0, or -1 after logging
 * what is wrong. On success cfg owns all its memory (broker_config_free). */
int broker_config_load(broker_config_t *cfg, const char *path, char *const *overrides,
                       int noverrides);
/* Loads the config props make (copied) as broker_config_load does, with
 * the same checks, logging nothing: for the check of a dynamic change,
 * given the config it would make (server.properties with the dynamic
 * configs over it). Returns 0 with *cfg the config (broker_config_free),
 * or -1 with the first reason in err (Kafka's message) and nothing to
 * free. */
int broker_config_check(broker_config_t *cfg, const props_t *props, char *err, size_t errlen);
/* The first controller listener, advertised where it is (where the other
 * nodes reach this one, as Kafka's --standalone takes it), or NULL. */
const bcfg_listener_t *broker_config_controller_listener(const broker_config_t *cfg);
/* Whether node id is one of controller.quorum.voters. */
bool broker_config_is_voter(const broker_config_t *cfg, int32_t id);
/* Logs, once, every key of the file that Strand does not act on. */
void broker_config_report_ignored(broker_config_t *cfg);
void broker_config_free(broker_config_t *cfg);
/* Frees n listeners and the array. */
void broker_config_free_listeners(bcfg_listener_t *l, int n);

#endif

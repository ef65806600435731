/* Shared by the files of the broker's configuration only: broker_config.c
 * (the keys and their values), broker_config_listen.c (listeners and
 * their security protocols), broker_config_rules.c (the rules between
 * keys, and the shapes Strand cannot run yet), broker_config_quorum.c (the
 * metadata quorum's voters and bootstrap servers) and broker_config_sec.c
 * (security settings Strand does not implement yet). */
#ifndef STRAND_BROKER_CONFIG_INT_H
#define STRAND_BROKER_CONFIG_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "broker/broker_config.h"

/* Checks a value of key as Kafka checks it (the key table's type and
 * check) and logs Kafka's message when it fails. 0 or -1. */
int bcfg_check(const broker_config_t *cfg, const char *key, const char *val);
/* Logs "config: <message>" as the reason the broker does not start (or,
 * while cfg->err is set, keeps the first such message there); returns
 * -1. */
int bcfg_refuse(const broker_config_t *cfg, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The same for a rule Kafka states as a requirement: a dynamic change's
 * refusal says "requirement failed: <message>", as Kafka's does. */
int bcfg_require(const broker_config_t *cfg, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Whether name[0..len) is an element of the comma list (in any case, as
 * Kafka compares listener names). */
bool bcfg_list_has(const char *list, const char *name, size_t len);
/* listeners and advertised.listeners with their protocols (from
 * listener.security.protocol.map), checked as Kafka checks them. Needs
 * controller_listener_names. 0 or -1 (logged). */
int bcfg_load_listeners(broker_config_t *cfg);
/* Whether listener name (upper case) has a security protocol in the map in
 * effect. */
bool bcfg_map_has(broker_config_t *cfg, const char *name);
/* controller.quorum.voters and controller.quorum.bootstrap.servers into
 * cfg->quorum (their values checked already). */
void bcfg_load_quorum(broker_config_t *cfg);
void bcfg_free_quorum(bcfg_quorum_t *q);
/* Refuses a TLS, SASL, authorization or other security setting Strand
 * does not implement yet, unless it has Kafka's default (see
 * broker_config_sec.c for which keys). 0 or -1 (logged). */
int bcfg_check_security(broker_config_t *cfg);
/* The rules between keys (quorum, node and broker ids, controller and
 * inter-broker listeners), then the shapes Strand cannot run yet. 0 or -1
 * (logged). */
int bcfg_check_rules(broker_config_t *cfg);

#endif

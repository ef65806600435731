/* Whether a node's log dirs are fit to start on: the formatted-or-not rule
 * of a cluster node (Kafka's), and Strand's single-node exception to it. */
#ifndef STRAND_BROKER_STORAGE_H
#define STRAND_BROKER_STORAGE_H

#include <stdbool.h>

#include "broker/broker_config.h"

/* Whether cfg is a single node that is its own quorum, which Strand
 * starts on unformatted dirs (formatting them itself, a new cluster id):
 * process.roles=broker,controller, and either controller.quorum.voters
 * naming this node alone, or no voters and one bootstrap server that is
 * this node's controller listener (its port, and its host or a loopback
 * name, or any host when the listener binds every interface). Every other
 * node is part of a cluster and must be formatted (`strand format`). */
bool broker_storage_single_node(const broker_config_t *cfg);
/* Refuses (logged, -1) to start a cluster node none of whose log dirs is
 * formatted, with Kafka's message; a dir that cannot be read is refused
 * too. 0 otherwise (the log manager checks node.id and cluster.id). */
int broker_storage_check(const broker_config_t *cfg);

#endif

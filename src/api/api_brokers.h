/* The brokers Metadata, DescribeCluster and FindCoordinator name: the
 * metadata image's registrations, at their endpoints of the listener a
 * request came in on (api_brokers.c). */
#ifndef STRAND_API_BROKERS_H
#define STRAND_API_BROKERS_H

#include <stdbool.h>
#include <stdint.h>

#include "api/api.h"
#include "cluster/meta_image.h"

typedef struct api_broker_s {
    int32_t id;
    const char *host;
    int32_t port;
    const char *rack;      /* NULL: none */
    bool fenced;
} api_broker_t;

/* This node's advertised endpoint of the listener named listener, or
 * NULL (none, or listener NULL). Valid within the handler's call. */
const api_endpoint_t *api_node_endpoint(const api_node_t *b, const char *listener);
/* Registered broker mb's endpoint of that listener, or NULL: no other
 * listener stands in for it, as in Kafka. */
const mi_endpoint_t *api_broker_endpoint(const mi_broker_t *mb, const char *listener);
/* The registered brokers in id order (the fenced ones only with
 * with_fenced, as Kafka's answers), each at its endpoint of the listener
 * req came in on, those without one left out; this node at the endpoint
 * of that listener it advertises now, a single node's listed also when
 * fenced or without a registration. The array lives in req's arena, the
 * strings in the image or this node's endpoints (valid within the
 * handler's call). Returns the count. */
int api_brokers(api_req_t *req, bool with_fenced, api_broker_t **out);
/* Broker id as Kafka's metadata cache gives an alive broker: registered
 * and unfenced, at its endpoint of req's listener (this node: the
 * endpoint of it it advertises now). Strings as api_brokers'. 0, or -1
 * when it is not alive or has no endpoint of that listener. */
int api_broker_alive(api_req_t *req, int32_t id, api_broker_t *out);

#endif

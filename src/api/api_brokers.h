/* The brokers Metadata and DescribeCluster list: the metadata image's
 * registrations (api_brokers.c). */
#ifndef STRAND_API_BROKERS_H
#define STRAND_API_BROKERS_H

#include <stdbool.h>
#include <stdint.h>

#include "api/api.h"

typedef struct api_broker_s {
    int32_t id;
    const char *host;
    int32_t port;
    const char *rack;      /* NULL: none */
    bool fenced;
} api_broker_t;

/* The registered brokers in id order (the fenced ones only with
 * with_fenced, as Kafka's answers), each at its endpoint of the listener
 * this node advertises (else its first); this node at the endpoint it
 * advertises now, listed also when fenced or without a registration. The array
 * and strings live in req's arena or the image. Returns the count. */
int api_brokers(api_req_t *req, bool with_fenced, api_broker_t **out);
/* Broker id as Kafka's metadata cache gives an alive broker: registered
 * and unfenced, at its endpoint of the listener this node advertises
 * (this node: the endpoint it advertises now). Strings as api_brokers'.
 * 0, or -1 when it is not alive or has no endpoint. */
int api_broker_alive(api_req_t *req, int32_t id, api_broker_t *out);

#endif

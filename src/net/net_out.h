/* Outbound connections: this node as a Kafka client of another node, for
 * the follower fetchers and the Raft quorum. A net_out is one logical
 * connection to host:port that the loop keeps up on its own: it connects
 * without blocking when there is something to send, reconnects after a
 * failure with exponential backoff and jitter (Kafka's
 * reconnect.backoff.ms / reconnect.backoff.max.ms), frames requests with
 * the request header of their version (v1, or v2 when flexible) and the
 * client id, assigns the correlation ids, keeps up to
 * max.in.flight.requests.per.connection requests on the wire and hands
 * each response to the callback of its request. Its users see requests
 * and responses only, never a socket.
 *
 * Guarantees:
 *   - Every request gets its callback exactly once, on the loop, never
 *     from inside net_out_send: its response body, or an error.
 *   - Responses come in request order, as Kafka answers on one
 *     connection; a response whose correlation id is not the oldest
 *     outstanding one's is a protocol error that drops the connection.
 *   - A request waits while the connection is down and is sent once it is
 *     up, until its timeout (request.timeout.ms, counted from
 *     net_out_send); a request that times out on the wire drops the
 *     connection too, since its answer would otherwise arrive late and be
 *     taken for the next one's.
 *   - When the connection is lost, the requests on the wire fail
 *     (NETWORK_EXCEPTION) and those not yet sent wait for the next one.
 *   - net_out_close() and net_out_free() call back every request still
 *     pending before they return, and nothing is called back after.
 * One owning thread, the loop's: nothing here takes a lock.
 *
 * Names are resolved with getaddrinfo() once per attempt, on the loop:
 * numeric addresses cost nothing, a name in /etc/hosts little, and a
 * name that needs DNS blocks the loop while it resolves (as the Java
 * client's network thread does). Each address of the answer is tried in
 * turn before the attempt counts as failed. Every request must have an
 * answer: Produce with acks=0 cannot be sent through here. */
#ifndef STRAND_NET_OUT_H
#define STRAND_NET_OUT_H

#include <stddef.h>
#include <stdint.h>

#include "net/net_loop.h"
#include "util/buf.h"

typedef struct net_out_s net_out_t;

typedef enum net_out_state_e {
    NET_OUT_IDLE,       /* disconnected, nothing waiting */
    NET_OUT_BACKOFF,    /* disconnected, waiting before the next attempt */
    NET_OUT_CONNECTING, /* a connect is under way */
    NET_OUT_READY,      /* connected: requests go out */
} net_out_state_t;

typedef struct net_out_resp_s {
    /* KERR_NONE: body holds the response (after its header).
     * KERR_REQUEST_TIMED_OUT: the request's timeout passed.
     * KERR_NETWORK_EXCEPTION: the connection was lost with the request on
     * the wire, or the request was cancelled (net_out_close/free). */
    int16_t err;
    /* With an error, the cause as an errno: ECONNRESET (peer closed),
     * EPROTO (bad response), EMSGSIZE (response over the size limit),
     * ECONNABORTED (dropped for another request's timeout), ECANCELED,
     * ETIMEDOUT, or a socket error. A request that timed out while the
     * connection was down has the last failed attempt's errno
     * (ECONNREFUSED, ...) if there was one. */
    int sys_errno;
    int16_t api_key, api_version;
    int32_t correlation_id; /* -1 if it was never sent */
    const uint8_t *body;    /* valid during the callback only */
    size_t len;
} net_out_resp_t;

typedef void net_out_cb(net_out_t *out, const net_out_resp_t *resp, void *arg);
/* The connection's state changed; err is the errno of a failed attempt
 * or of a lost connection when entering NET_OUT_BACKOFF, else 0. */
typedef void net_out_state_cb(net_out_t *out, net_out_state_t state, int err, void *arg);

typedef struct net_out_config_s {
    const char *host;      /* name or numeric address (copied) */
    int port;
    const char *client_id; /* copied; NULL sends the null client id */
    int64_t reconnect_backoff_ms;     /* reconnect.backoff.ms: 50 */
    int64_t reconnect_backoff_max_ms; /* reconnect.backoff.max.ms: 1000 */
    int64_t request_timeout_ms;       /* request.timeout.ms: 30000 */
    int64_t connect_timeout_ms; /* socket.connection.setup.timeout.ms: 10000,
                                   per address */
    int max_in_flight; /* max.in.flight.requests.per.connection: 5 */
    int32_t max_response_bytes; /* larger frames drop the connection: 100 MiB */
    int send_buffer_bytes;      /* SO_SNDBUF; 0: the system's */
    int receive_buffer_bytes;   /* SO_RCVBUF; 0: the system's */
    uint64_t seed;              /* of the backoff jitter; 0: from the clock */
    net_out_state_cb *on_state; /* may be NULL */
    void *state_arg;
} net_out_config_t;

/* Kafka's client defaults (above); host, port and client id unset. */
void net_out_config_init(net_out_config_t *cfg);

/* Returns a connection owned by the caller (net_out_free), not yet
 * connected: it connects when the first request is sent. */
net_out_t *net_out_new(net_loop_t *loop, const net_out_config_t *cfg);

/* Queues a request: body is the encoded request body of api_key at
 * api_version (memory only, no file regions); takes ownership of its
 * contents (body is reinitialised). timeout_ms <= 0 means the configured
 * request timeout. cb(out, resp, arg) runs later on the loop. Returns 0,
 * or -1 with errno (EINVAL: a body with file regions; ESHUTDOWN: called
 * while the connection is being freed), and then cb is never called. */
int net_out_send(net_out_t *out, int16_t api_key, int16_t api_version, buf_t *body,
                 int64_t timeout_ms, net_out_cb *cb, void *arg);

/* Drops the connection and calls back every pending request with
 * KERR_NETWORK_EXCEPTION / ECANCELED before it returns. The connection
 * stays usable: the next request connects again. */
void net_out_close(net_out_t *out);
/* net_out_close, then frees. Safe from inside any of its callbacks; no
 * callback runs after it returns. NULL is ignored. */
void net_out_free(net_out_t *out);

net_out_state_t net_out_state(const net_out_t *out);
/* Requests on the wire, and waiting to be sent. */
int net_out_in_flight(const net_out_t *out);
int net_out_waiting(const net_out_t *out);
/* Consecutive failed attempts (or lost connections) since the last
 * successful connect: the backoff's exponent. */
int net_out_failures(const net_out_t *out);
/* The backoff before the next attempt after `failures` failures, without
 * jitter (for tests and logs): reconnect_backoff_ms doubled per failure,
 * at most reconnect_backoff_max_ms. */
int64_t net_out_backoff_base(const net_out_config_t *cfg, int failures);

#endif

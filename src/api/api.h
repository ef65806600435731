/* Request dispatch: one table of the APIs we serve, their handlers and the
 * version ranges we advertise. The table is the single truth for
 * ApiVersions: an API is in it only when every advertised version is
 * implemented. Handlers decode their request, act through the lower
 * layers, and answer with api_reply(); they never touch a socket. */
#ifndef STRAND_API_H
#define STRAND_API_H

#include <stdint.h>

#include "cluster/cfg_server.h"
#include "net/net_conn.h"
#include "net/net_loop.h"
#include "partition/part.h"
#include "proto/proto.h"

/* One endpoint this node advertises to clients: an advertised broker
 * listener's name, its host (this machine's name when none is written)
 * and its port (the bound one for port 0). */
typedef struct api_endpoint_s {
    char *name; /* owned, as host */
    char *host;
    int port;
} api_endpoint_t;

/* An internal topic a coordinator creates on first use (api_itopic.c):
 * __consumer_offsets, __transaction_state. */
typedef struct api_itopic_s {
    const char *name;
    int pending;      /* its creation is under way */
    int16_t last_err; /* why its last creation failed (logged), 0 */
} api_itopic_t;

/* What the handlers reach: the node's services below the api layer, and
 * the api layer's own state, wired by the broker layer (which embeds it
 * in its context). Handlers never call up into the broker. */
typedef struct api_node_s {
    broker_config_t cfg;         /* server.properties */
    net_loop_t *loop;
    struct ctl_s *ctl;           /* the controller: metadata changes, producer ids */
    struct raft_node_s *raft;    /* the metadata quorum's Raft node, or NULL (a
                                    single node is its own quorum) */
    /* A dynamic quorum's voter sets (cluster/raft_voters.h), or NULL for
     * a static one (cfg.quorum.voters) */
    const struct raft_voters_hist_s *voters;
    struct raft_reconf_s *reconf; /* its voter changes (raft_reconf.h), or NULL */
    part_reg_t *reg;             /* the partition layer */
    struct fsess_cache_s *fsess; /* incremental fetch sessions (api_fsess.h) */
    struct grp_coord_s *grp;     /* the group coordinator (api_group.h) */
    api_itopic_t grp_topic;      /* __consumer_offsets */
    struct txn_coord_s *txn;     /* the transaction coordinator (api_txn.h) */
    struct part_peers_s *txn_peers; /* to other brokers' coordinators (api_txn.c) */
    api_itopic_t txn_topic;      /* __transaction_state */
    char cluster_id[23];
    /* The endpoints advertised to clients, one per advertised broker
     * listener in the config's order: the broker layer owns them and
     * makes them anew when the listeners change (broker_advertise), so
     * a handler uses them within its call. */
    api_endpoint_t *adv;
    int nadv;
    const char *hostname;        /* this machine's, for listeners without a host */
    int stopping;                /* shutting down: no new requests */
    /* A quorum's broker: sends an Envelope request body to the active
     * controller (takes body's memory); cb(arg, resp, len) later with
     * the EnvelopeResponse body, or resp NULL when none came. NULL: the
     * node decides itself (api_forward.c). */
    int (*forward)(void *ctx, buf_t *body,
                   void (*cb)(void *arg, const uint8_t *resp, size_t len), void *arg);
    void *forward_ctx;
} api_node_t;

typedef struct api_req_s {
    api_node_t *b;
    net_conn_t *conn;
    proto_req_header_t hdr;
    uint8_t *body; /* points into the frame; writable (produce patches batches) */
    size_t body_len;
    arena_t *arena;
    int64_t now_ms; /* wall clock at arrival */
    /* A request that came in an Envelope: its answer goes to env (with
     * its size prefix) instead of the connection (api_envelope.c). */
    void (*env_reply)(void *env, buf_t *out);
    void *env;
    int kind;       /* enum api_listener: the listener it came in on */
    const char *listener; /* that listener's name (the connection's), or NULL */
    /* A forwarded request that found no active controller in time: the
     * error its local run answers the change with (api_forward.c), 0 for
     * any other request. */
    int16_t refuse_err;
} api_req_t;

typedef void api_handler_t(api_req_t *req);

/* The kinds of listener an API is served on (Kafka's "listeners" of each
 * message definition): a broker listener, or a controller listener (one
 * of controller.listener.names). A connection is of the kind of the
 * listener it came in on; an API outside its kind is not advertised there
 * and is refused as an unknown API, as Kafka refuses it. */
enum api_listener {
    API_L_BROKER = 1,
    API_L_CONTROLLER = 2,
    API_L_BOTH = API_L_BROKER | API_L_CONTROLLER,
    /* The metadata quorum's own APIs: on a controller listener of a node
     * that runs a Raft node (a connection there is of kind
     * API_L_CONTROLLER | API_L_QUORUM). */
    API_L_QUORUM = 4,
};

typedef struct api_entry_s {
    int16_t key;
    int16_t min_ver;     /* lowest version we accept */
    int16_t max_ver;
    int16_t adv_min_ver; /* lowest advertised (Produce advertises 0, as Kafka) */
    api_handler_t *handler;
    uint8_t listeners;   /* enum api_listener: where it is served */
} api_entry_t;

/* The table, ordered by key; *n gets its length. */
const api_entry_t *api_table(int *n);
/* The entry of an API key, or NULL. */
const api_entry_t *api_entry_find(int16_t key);
/* Whether e is served on a listener of kind (enum api_listener). */
int api_entry_served(const api_entry_t *e, int kind);

/* net_conn_ops_t callbacks. */
void api_on_request(net_conn_t *conn, uint8_t *frame, size_t len);
void api_on_close(net_conn_t *conn);
/* Answers the connection's parked request at once (shutdown). */
void api_finish_pending(net_conn_t *conn);

/* Reply framing around a generated encoder. */
void api_reply_begin(api_req_t *req, buf_t *out);
void api_reply_end(api_req_t *req, buf_t *out);
#define API_REPLY(req, api, resp)                                                                  \
    do {                                                                                           \
        buf_t api_out_;                                                                            \
        api_reply_begin((req), &api_out_);                                                         \
        proto_##api##_resp_encode((resp), (req)->hdr.api_version, &api_out_);                      \
        api_reply_end((req), &api_out_);                                                           \
    } while (0)

/* The same, encoded into *out (framed, ready for net_conn_reply) for an
 * answer that is sent later. */
void api_reply_frame(buf_t *out);
#define API_ENCODE(req, api, resp, out)                                                            \
    do {                                                                                           \
        api_reply_begin((req), (out));                                                             \
        proto_##api##_resp_encode((resp), (req)->hdr.api_version, (out));                          \
        api_reply_frame(out);                                                                      \
    } while (0)

/* Closes the connection of a request that cannot be answered (as Kafka
 * does for an unparsable request), after logging why. */
void api_close(api_req_t *req, const char *why);

/* Copies a protocol string into the arena as a C string, a NUL byte
 * written as C0 80 (util/cstr.h) so that none is lost; NULL for null. */
char *api_cstr(api_req_t *req, proto_str_t s);

/* Per-connection state kept by the api layer. */
typedef struct api_conn_s {
    api_node_t *b;
    int kind;                    /* enum api_listener of its listener */
    const char *listener;        /* its listener's name (the broker's), or NULL */
    void *pending;               /* a parked request (delayed fetch), or NULL */
    void (*cancel)(void *pending);  /* the connection is closing: drop it */
    void (*finish)(void *pending);  /* shutting down: answer it now */
    int hb_seen;                 /* BrokerHeartbeats came here: of broker */
    int32_t hb_broker;           /* hb_broker at hb_epoch (the latest), */
    int64_t hb_epoch;            /* its session told when this closes */
} api_conn_t;

/* Handlers, one per file. */
void api_versions(api_req_t *req);
void api_metadata(api_req_t *req);
void api_produce(api_req_t *req);
void api_fetch(api_req_t *req);
void api_list_offsets(api_req_t *req);
void api_offset_for_leader_epoch(api_req_t *req);
void api_describe_cluster(api_req_t *req);
void api_init_producer_id(api_req_t *req);
/* api_raft.c: Vote, BeginQuorumEpoch, EndQuorumEpoch and Fetch of the
 * metadata log, for the Raft node. */
void api_raft(api_req_t *req);
/* api_raft_voters.c: AddRaftVoter and RemoveRaftVoter. */
void api_raft_voters(api_req_t *req);
/* api_forward.c: on a quorum's broker, the changes Kafka's brokers
 * forward to the active controller go there in an Envelope; the
 * controller's Envelope handler answers them. */
int api_forwarded(const api_req_t *req);
void api_forward(api_req_t *req, const uint8_t *frame, size_t len);
int api_forward_create(api_req_t *req, proto_str_t name);
int api_forward_create_topic(api_node_t *b, const proto_create_topics_req_creatable_topic_t *t,
                             void (*done)(void *arg, const uint8_t *resp, size_t len), void *arg);
void api_envelope(api_req_t *req);
/* api_itopic.c: starts the creation of internal topic it (nparts
 * partitions; on a quorum's broker replication factor rf, by the active
 * controller) unless one is under way; the coordinator's APIs answer
 * COORDINATOR_NOT_AVAILABLE until it exists, and clients retry. */
void api_itopic_create(api_node_t *b, api_itopic_t *it, int32_t nparts, int16_t rf,
                       const topic_cfg_t *tcfg);
/* A numeric server.properties key the broker config does not know. */
int64_t api_node_prop(api_node_t *b, const char *key, int64_t def);
/* Marks the keys the coordinators read on first use as known, so that
 * the start-up report of ignored keys leaves them out. */
void api_node_coordinator_keys(api_node_t *b);
/* api_broker_reg.c: a broker's registration and heartbeats, a
 * controller's registration, on a quorum's controller listener. */
void api_broker_registration(api_req_t *req);
void api_broker_heartbeat(api_req_t *req);
void api_allocate_producer_ids(api_req_t *req);
void api_alter_partition(api_req_t *req);
void api_unregister_broker(api_req_t *req);
/* api_elect.c: ElectLeaders, on both kinds of listener. */
void api_elect_leaders(api_req_t *req);
/* api_reassign.c: AlterPartitionReassignments and
 * ListPartitionReassignments. */
void api_alter_partition_reassignments(api_req_t *req);
void api_list_partition_reassignments(api_req_t *req);
void api_controller_registration(api_req_t *req);

#endif

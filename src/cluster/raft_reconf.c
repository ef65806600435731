/* A dynamic quorum's voter changes on its leader (raft_reconf.h). The
 * checks are KRaft's, in its order, with its words: the leader; kraft.version
 * 1; no change in flight; the leader's epoch and the voter set in force
 * committed; then, to add, the id not a voter already and the replica a
 * caught-up observer with that directory id; to remove, the (id,
 * directory id) a voter. */
#include "cluster/raft_reconf.h"

#include <stdio.h>
#include <string.h>

#include "proto/proto_gen.h"
#include "util/kerr.h"
#include "util/uuid.h"

/* "ReplicaKey(id=2, directoryId=H24nn99sti0K0lHiJmYpfQ)", as Kafka
 * prints a key. */
static void rc_key(char *out, size_t cap, int32_t id, const uint8_t dir[16])
{
    char d[UUID_STR_LEN + 1];

    uuid_to_base64(dir, d);
    snprintf(out, cap, "ReplicaKey(id=%d, directoryId=%s)", id, d);
}

/* The voters' keys as Kafka prints the set: "[ReplicaKey(...), ...]". */
static void rc_keys(char *out, size_t cap, const raft_voters_t *vs)
{
    size_t n = 0;
    char k[128];

    n += (size_t)snprintf(out + n, cap - n, "[");
    for (int i = 0; i < vs->n && n < cap; i++) {
        rc_key(k, sizeof(k), vs->v[i].id, vs->v[i].dir_id);
        n += (size_t)snprintf(out + n, cap - n, "%s%s", i ? ", " : "", k);
    }
    if (n < cap)
        snprintf(out + n, cap - n, "]");
}

/* The checks before any change; the entry in force in *e. */
static int16_t rc_precheck(raft_reconf_t *rc, const raft_voters_entry_t **e, const char *what,
                           char *buf, size_t cap, const char **msg)
{
    raft_t *raft = raft_node_core(rc->node);

    *e = raft_voters_hist_last(rc->hist);
    if (raft_role(raft) != RAFT_LEADER)
        return KERR_NOT_LEADER_OR_FOLLOWER;
    if (!*e || (*e)->kraft_version < 1 || !(*e)->has_set) {
        snprintf(buf, cap, "Cluster doesn't support %s voter because the kraft.version feature "
                 "is 0", what);
        return *msg = buf, KERR_UNSUPPORTED_VERSION;
    }
    if (rc->pending) {
        snprintf(buf, cap, "Request timed out waiting for leader to handle previous voter change "
                 "request");
        return *msg = buf, KERR_REQUEST_TIMED_OUT;
    }
    if (raft_hw(raft) <= raft_epoch_start(raft) || raft_hw(raft) <= (*e)->offset) {
        snprintf(buf, cap, "Request timed out waiting for leader to commit the epoch and the "
                 "voter set at offset %lld", (long long)(*e)->offset);
        return *msg = buf, KERR_REQUEST_TIMED_OUT;
    }
    return 0;
}

/* Appends the set vs (takes effect here at once) and waits for it. */
static int16_t rc_append(raft_reconf_t *rc, const raft_voters_entry_t *e, raft_voters_t *vs,
                         int64_t deadline, raft_reconf_done_fn *done, void *arg)
{
    int32_t ids[RAFT_MAX_VOTERS];
    buf_t val;

    buf_init(&val);
    raft_voters_encode(vs, &val);
    int64_t off = raft_node_propose_control(rc->node, PROTO_REC_VOTERS_RECORD, val.p, val.len);
    buf_free(&val);
    if (off < 0)
        return KERR_NOT_LEADER_OR_FOLLOWER;
    raft_voters_hist_put(rc->hist, off, e->kraft_version, vs);
    for (int i = 0; i < vs->n && i < RAFT_MAX_VOTERS; i++)
        ids[i] = vs->v[i].id;
    raft_node_set_voters(rc->node, ids, vs->n < RAFT_MAX_VOTERS ? vs->n : RAFT_MAX_VOTERS);
    rc->pending = 1;
    rc->offset = off;
    rc->deadline_ms = deadline;
    rc->done = done;
    rc->arg = arg;
    if (rc->on_set)
        rc->on_set(rc->ctx);
    return 0;
}

/* Whether id is an observer caught up with the leader, fetching with dir. */
static int rc_caught_up(raft_reconf_t *rc, int32_t id, const uint8_t dir[16], int64_t now_ms)
{
    raft_t *raft = raft_node_core(rc->node);
    int64_t end, fetch, caught;
    uint8_t d[16];

    if (raft_replica_state(raft, id, &end, &fetch, &caught) < 0 ||
        raft_replica_dir(raft, id, d) < 0 || memcmp(d, dir, 16))
        return 0;
    return caught >= 0 && now_ms - caught <= rc->fetch_timeout_ms;
}

int16_t raft_reconf_add(raft_reconf_t *rc, const raft_voter_t *v, int64_t now_ms,
                        int32_t timeout_ms, raft_reconf_done_fn *done, void *arg, char *buf,
                        size_t cap, const char **msg)
{
    const raft_voters_entry_t *e;
    raft_voters_t vs;
    char key[128], keys[400];
    int16_t err;

    *msg = NULL;
    if ((err = rc_precheck(rc, &e, "adding", buf, cap, msg)))
        return err;
    rc_key(key, sizeof(key), v->id, v->dir_id);
    if (raft_voters_find(&e->set, v->id)) {
        rc_keys(keys, sizeof(keys), &e->set);
        snprintf(buf, cap, "The voter id for %s is already part of the set of voters %s.", key,
                 keys);
        return *msg = buf, KERR_DUPLICATE_VOTER;
    }
    if (e->set.n >= RAFT_MAX_VOTERS || !rc_caught_up(rc, v->id, v->dir_id, now_ms)) {
        snprintf(buf, cap, "Aborted add voter operation for %s since it is lagging behind", key);
        return *msg = buf, KERR_REQUEST_TIMED_OUT;
    }
    raft_voters_init(&vs);
    raft_voters_copy(&vs, &e->set);
    raft_voters_add(&vs, v);
    err = rc_append(rc, e, &vs, now_ms + timeout_ms, done, arg);
    raft_voters_free(&vs);
    return err;
}

int16_t raft_reconf_remove(raft_reconf_t *rc, int32_t id, const uint8_t dir[16], int64_t now_ms,
                           int32_t timeout_ms, raft_reconf_done_fn *done, void *arg, char *buf,
                           size_t cap, const char **msg)
{
    const raft_voters_entry_t *e;
    const raft_voter_t *v;
    raft_voters_t vs;
    char key[128], keys[400];
    int16_t err;

    *msg = NULL;
    if ((err = rc_precheck(rc, &e, "removing", buf, cap, msg)))
        return err;
    v = raft_voters_find(&e->set, id);
    if (!v || memcmp(v->dir_id, dir, 16) || e->set.n == 1) {
        rc_key(key, sizeof(key), id, dir);
        rc_keys(keys, sizeof(keys), &e->set);
        snprintf(buf, cap, "Cannot remove voter %s from the set of voters %s", key, keys);
        return *msg = buf, KERR_VOTER_NOT_FOUND;
    }
    raft_voters_init(&vs);
    for (int i = 0; i < e->set.n; i++)
        if (e->set.v[i].id != id)
            raft_voters_add(&vs, &e->set.v[i]);
    rc->resign = id == rc->self_id;
    err = rc_append(rc, e, &vs, now_ms + timeout_ms, done, arg);
    raft_voters_free(&vs);
    return err;
}

int16_t raft_reconf_update(raft_reconf_t *rc, const raft_voter_t *v, int32_t epoch,
                           int64_t now_ms, int32_t timeout_ms, char *buf, size_t cap,
                           const char **msg)
{
    const raft_voters_entry_t *e;
    const raft_voter_t *cur;
    raft_voters_t vs;
    char key[128], keys[400];
    int16_t err;

    *msg = NULL;
    if (epoch != raft_epoch(raft_node_core(rc->node)))
        return epoch < raft_epoch(raft_node_core(rc->node)) ? KERR_FENCED_LEADER_EPOCH
                                                            : KERR_UNKNOWN_LEADER_EPOCH;
    if ((err = rc_precheck(rc, &e, "updating", buf, cap, msg)))
        return err;
    cur = raft_voters_find(&e->set, v->id);
    if (!cur || memcmp(cur->dir_id, v->dir_id, 16)) {
        rc_key(key, sizeof(key), v->id, v->dir_id);
        rc_keys(keys, sizeof(keys), &e->set);
        snprintf(buf, cap, "Voter key %s not found in the voter set %s", key, keys);
        return *msg = buf, KERR_VOTER_NOT_FOUND;
    }
    if (v->kv_min > e->kraft_version || v->kv_max < e->kraft_version) {
        snprintf(buf, cap, "Voter's supported kraft.version range does not include the "
                 "finalized %d", e->kraft_version);
        return *msg = buf, KERR_INVALID_REQUEST;
    }
    raft_voters_init(&vs);
    for (int i = 0; i < e->set.n; i++)
        raft_voters_add(&vs, e->set.v[i].id == v->id ? v : &e->set.v[i]);
    err = rc_append(rc, e, &vs, now_ms + timeout_ms, NULL, NULL);
    raft_voters_free(&vs);
    return err;
}

static void rc_finish(raft_reconf_t *rc, int16_t err, const char *msg)
{
    raft_reconf_done_fn *done = rc->done;
    void *arg = rc->arg;

    rc->pending = 0;
    rc->done = NULL;
    rc->arg = NULL;
    if (done)
        done(arg, err, msg);
}

void raft_reconf_committed(raft_reconf_t *rc, int64_t hw)
{
    int resign = rc->resign;

    if (!rc->pending || hw <= rc->offset)
        return;
    rc->resign = 0;
    rc_finish(rc, 0, NULL);
    if (resign && raft_role(raft_node_core(rc->node)) == RAFT_LEADER)
        raft_node_resign(rc->node); /* removed: the voters elect among themselves */
}

void raft_reconf_tick(raft_reconf_t *rc, int64_t now_ms)
{
    if (!rc->pending)
        return;
    if (raft_role(raft_node_core(rc->node)) != RAFT_LEADER) {
        rc_finish(rc, KERR_NOT_LEADER_OR_FOLLOWER, NULL);
        return;
    }
    if (now_ms >= rc->deadline_ms)
        rc_finish(rc, KERR_REQUEST_TIMED_OUT, "Request timed out waiting for the voter change to "
                  "commit");
}

void raft_reconf_cancel(raft_reconf_t *rc, void *arg)
{
    if (rc->pending && rc->arg == arg) {
        rc->done = NULL;
        rc->arg = NULL;
    }
}

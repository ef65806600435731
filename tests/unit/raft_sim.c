/* The simulated world of raft_sim.h. Nodes are numbered 1..n: the voters
 * first, then the observers. One step is one millisecond: messages due
 * are delivered, disk writes due complete, every live node ticks, and
 * faults happen as the options say; each input's outputs are taken at
 * once (as the real driver does) and checked. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/raft_sim.h"

#define CONTROL_VAL (1ULL << 63)
#define VOTERS_VAL (1ULL << 62) /* | the set's bitmask of node ids */
#define MAX_FETCH_ENTRIES 16

typedef struct sim_ent_s {
    int32_t epoch;
    uint64_t val;
} sim_ent_t;

/* A committed entry, and the first epoch whose leader (or a follower of
 * it) had it below its high watermark. */
typedef struct sim_commit_s {
    sim_ent_t ent;
    int32_t epoch;
} sim_commit_t;

typedef struct sim_persist_s {
    uint64_t seq;
    int32_t epoch, leader, voted;
    int64_t at;
} sim_persist_t;

typedef struct sim_node_s {
    int id;
    int up;
    raft_t *raft;
    sim_ent_t *log;
    int64_t len, cap, durable, flush_at;
    int32_t qs_epoch, qs_leader, qs_voted; /* quorum-state on disk */
    sim_persist_t pend[64];
    int npend;
    int64_t applied, restart_at, paused_until;
    int64_t crash_at;          /* a crash aimed at a moment, or 0 */
    /* the latest snapshot (durable at once): the log starts at its end;
     * the entries below it stay in log[] (they are committed) */
    int64_t snap_end;
    int32_t snap_epoch;
    int64_t latest_end;        /* the latest snapshot (>= snap_end) */
    int32_t latest_epoch;
    /* a snapshot being fetched from fs_from (FetchSnapshot), done at fs_at */
    int64_t fs_at, fs_end;
    int32_t fs_epoch, fs_from;
    uint32_t vset;             /* the voter set in force here (bit i: node i) */
} sim_node_t;

typedef struct sim_msg_s {
    int64_t at;
    raft_msg_t m;
    raft_batch_t batches[MAX_FETCH_ENTRIES];
    uint64_t vals[MAX_FETCH_ENTRIES];
    struct sim_msg_s *next;
} sim_msg_t;

typedef struct sim_s {
    const sim_opts_t *o;
    sim_result_t *res;
    uint64_t rng;
    int64_t now;
    int n;
    sim_node_t nodes[SIM_MAX_NODES + 1];
    int cut[SIM_MAX_NODES + 1][SIM_MAX_NODES + 1];
    int loss_pct, dup_pct;
    int in_chaos;
    sim_msg_t *msgs;           /* by delivery time */
    const sim_msg_t *cur;      /* the message being delivered */
    sim_commit_t *committed;
    int64_t ncommitted, capcommitted;
    int32_t *leaders;          /* by epoch: the leader, or 0 */
    int32_t (*votes)[SIM_MAX_NODES + 1]; /* by epoch and voter: the candidate */
    int64_t nepochs;
    uint64_t next_val;
    uint32_t proposing;        /* the voter set being proposed, or 0 */
} sim_t;

static uint64_t rnd(void *arg)
{
    uint64_t *s = arg;
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static int64_t rnd_in(sim_t *sim, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(rnd(&sim->rng) % (uint64_t)(hi - lo + 1));
}

static int chance(sim_t *sim, int per, int of)
{
    return per > 0 && (int)(rnd(&sim->rng) % (uint64_t)of) < per;
}

static void fail(sim_t *sim, const char *fmt, ...)
{
    va_list ap;
    if (!sim->res->ok)
        return;
    sim->res->ok = 0;
    va_start(ap, fmt);
    int k = snprintf(sim->res->why, sizeof(sim->res->why), "t=%lld: ", (long long)sim->now);
    vsnprintf(sim->res->why + k, sizeof(sim->res->why) - (size_t)k, fmt, ap);
    va_end(ap);
}

static void *grow(void *p, int64_t *cap, int64_t need, size_t size)
{
    if (need <= *cap)
        return p;
    int64_t c = *cap ? *cap : 64;
    while (c < need)
        c *= 2;
    p = realloc(p, (size_t)c * size);
    if (!p)
        abort();
    memset((char *)p + (size_t)*cap * size, 0, (size_t)(c - *cap) * size);
    *cap = c;
    return p;
}

static void epochs_grow(sim_t *sim, int32_t epoch)
{
    if (epoch < sim->nepochs)
        return;
    int64_t cap = sim->nepochs, need = epoch + 1;
    int64_t cap2 = cap;
    sim->leaders = grow(sim->leaders, &cap, need, sizeof(*sim->leaders));
    sim->votes = grow(sim->votes, &cap2, need, sizeof(*sim->votes));
    sim->nepochs = cap;
}

static void log_push(sim_node_t *nd, int32_t epoch, uint64_t val)
{
    nd->log = grow(nd->log, &nd->cap, nd->len + 1, sizeof(*nd->log));
    nd->log[nd->len].epoch = epoch;
    nd->log[nd->len].val = val;
    nd->len++;
}

/* The network. */

static void enqueue(sim_t *sim, sim_msg_t *m)
{
    sim_msg_t **pp = &sim->msgs;
    while (*pp && (*pp)->at <= m->at)
        pp = &(*pp)->next;
    m->next = *pp;
    *pp = m;
}

/* A fetch response carries up to a random 1..MAX_FETCH_ENTRIES entries
 * of the sender's log (as max_bytes cuts a real one), in batches of one
 * epoch, up to 4 entries each. */
static void fill_records(sim_t *sim, sim_node_t *nd, sim_msg_t *m)
{
    int64_t to = m->m.rec_to < nd->len ? m->m.rec_to : nd->len;
    int nb = 0, k = 0, max = (int)rnd_in(sim, 1, MAX_FETCH_ENTRIES);
    if (m->m.rec_from < nd->snap_end && to > m->m.rec_from)
        fail(sim, "node %d sends records from %lld, below its log start %lld", nd->id,
             (long long)m->m.rec_from, (long long)nd->snap_end);
    for (int64_t off = m->m.rec_from; off < to && k < max; off++, k++) {
        m->vals[k] = nd->log[off].val;
        raft_batch_t *b = nb ? &m->batches[nb - 1] : NULL;
        if (b && b->epoch == nd->log[off].epoch && b->last - b->base < 3) {
            b->last = off;
            continue;
        }
        m->batches[nb].base = m->batches[nb].last = off;
        m->batches[nb].epoch = nd->log[off].epoch;
        nb++;
    }
    m->m.batches = m->batches;
    m->m.nbatches = nb;
}

static void send_msg(sim_t *sim, sim_node_t *from, const raft_msg_t *msg)
{
    sim->res->msgs++;
    raft_msg_t mm = *msg;
    if (mm.dst < 0)
        mm.dst = (int32_t)rnd_in(sim, 1, sim->o->nvoters);
    if (mm.dst == from->id) {
        /* a bootstrap pick may be itself; anything else is a bug (a
         * resigned leader that follows itself) */
        if (msg->dst >= 0)
            fail(sim, "node %d sends a %d to itself", from->id, mm.type);
        return;
    }
    if (sim->cut[from->id][mm.dst] || chance(sim, sim->loss_pct, 100))
        return;
    int copies = chance(sim, sim->dup_pct, 100) ? 2 : 1;
    for (int c = 0; c < copies; c++) {
        sim_msg_t *m = calloc(1, sizeof(*m));
        if (!m)
            abort();
        m->m = mm;
        m->at = sim->now + rnd_in(sim, 1, sim->o->delay_max_ms);
        if (mm.type == RAFT_FETCH_RESP)
            fill_records(sim, from, m);
        enqueue(sim, m);
    }
}

/* The checks on outputs. */

static void check_vote(sim_t *sim, sim_node_t *nd, const raft_msg_t *m)
{
    if (m->type != RAFT_VOTE_RESP || !m->granted || m->prevote)
        return;
    epochs_grow(sim, m->epoch);
    int32_t *v = &sim->votes[m->epoch][nd->id];
    if (*v && *v != m->dst)
        fail(sim, "node %d voted for %d and %d in epoch %d", nd->id, *v, m->dst, m->epoch);
    *v = m->dst;
}

static void check_leader(sim_t *sim, sim_node_t *nd)
{
    int32_t epoch = raft_epoch(nd->raft);
    epochs_grow(sim, epoch);
    if (sim->leaders[epoch] && sim->leaders[epoch] != nd->id)
        fail(sim, "two leaders in epoch %d: %d and %d", epoch, sim->leaders[epoch], nd->id);
    if (sim->leaders[epoch] == nd->id)
        return;
    sim->leaders[epoch] = nd->id;
    sim->res->elections++;
    if (sim->res->first_leader_ms < 0)
        sim->res->first_leader_ms = sim->now;
    /* Raft's leader completeness: what was committed in an older epoch */
    for (int64_t off = 0; off < sim->ncommitted; off++)
        if (sim->committed[off].epoch < epoch &&
            (off >= nd->len || nd->log[off].val != sim->committed[off].ent.val)) {
            fail(sim, "leader %d of epoch %d lacks committed offset %lld", nd->id, epoch,
                 (long long)off);
            return;
        }
}

/* ---- a dynamic quorum's voter set ---- */

static int is_voters(uint64_t val)
{
    return (val & VOTERS_VAL) && !(val & CONTROL_VAL);
}

/* The set of the last voters entry of nd's log below end, or the
 * initial set. */
static uint32_t vset_below(const sim_t *sim, const sim_node_t *nd, int64_t end)
{
    for (int64_t off = (end < nd->len ? end : nd->len) - 1; off >= 0; off--)
        if (is_voters(nd->log[off].val))
            return (uint32_t)(nd->log[off].val & 0xffffffffu);
    return ((1u << sim->o->nvoters) - 1) << 1;
}

static void vset_apply(sim_node_t *nd, uint32_t set, int64_t now)
{
    int32_t ids[RAFT_MAX_VOTERS];
    int n = 0;

    if (set == nd->vset)
        return;
    nd->vset = set;
    for (int i = 1; i <= SIM_MAX_NODES; i++)
        if (set & (1u << i))
            ids[n++] = i;
    raft_set_voters(nd->raft, ids, n, now);
}

/* A follower takes the committed set (a leader took its own when it
 * appended it). */
static void sim_voters_committed(sim_t *sim, sim_node_t *nd)
{
    if (!sim->o->reconf_every_ms || raft_role(nd->raft) == RAFT_LEADER)
        return;
    vset_apply(nd, vset_below(sim, nd, nd->applied), sim->now);
}

static void apply_to(sim_t *sim, sim_node_t *nd, int64_t hw)
{
    int32_t epoch = raft_epoch(nd->raft);
    for (int64_t off = nd->applied; off < hw; off++) {
        if (off >= nd->len) {
            fail(sim, "node %d: high watermark %lld past its log end %lld", nd->id,
                 (long long)hw, (long long)nd->len);
            return;
        }
        if (off < sim->ncommitted) {
            sim_commit_t *c = &sim->committed[off];
            if (memcmp(&c->ent, &nd->log[off], sizeof(sim_ent_t)) != 0)
                fail(sim, "node %d: committed offset %lld differs", nd->id, (long long)off);
            if (epoch < c->epoch)
                c->epoch = epoch;
            continue;
        }
        sim->committed = grow(sim->committed, &sim->capcommitted, off + 1, sizeof(sim_commit_t));
        sim->committed[off].ent = nd->log[off];
        sim->committed[off].epoch = epoch;
        sim->ncommitted = off + 1;
        if (nd->log[off].val & VOTERS_VAL && !(nd->log[off].val & CONTROL_VAL))
            sim->res->reconfs++;
    }
    if (hw > nd->applied)
        nd->applied = hw;
    sim_voters_committed(sim, nd);
}

static void do_append(sim_t *sim, sim_node_t *nd, const raft_out_t *out)
{
    if (out->append_n > 0) {
        if (out->append_base != nd->len)
            fail(sim, "node %d: append at %lld, log end %lld", nd->id,
                 (long long)out->append_base, (long long)nd->len);
        for (int32_t i = 0; i < out->append_n; i++)
            log_push(nd, out->append_epoch,
                     out->control  ? CONTROL_VAL | (uint64_t)out->append_epoch
                     : sim->proposing ? VOTERS_VAL | sim->proposing
                                      : ++sim->next_val);
    } else {
        for (int i = 0; i < out->msg.nbatches; i++) {
            const raft_batch_t *b = &out->msg.batches[i];
            for (int64_t off = b->base; off <= b->last; off++) {
                if (off != nd->len)
                    fail(sim, "node %d: received offset %lld, log end %lld", nd->id,
                         (long long)off, (long long)nd->len);
                log_push(nd, b->epoch, sim->cur->vals[off - sim->cur->m.rec_from]);
            }
        }
    }
    if (nd->flush_at < 0)
        nd->flush_at = sim->now + rnd_in(sim, 1, 5);
}

static void do_truncate(sim_t *sim, sim_node_t *nd, int64_t offset)
{
    if (sim->o->verbose)
        printf("t=%lld node %d truncates %lld -> %lld\n", (long long)sim->now, nd->id,
               (long long)nd->len, (long long)offset);
    if (offset < nd->applied)
        fail(sim, "node %d truncates to %lld below applied %lld", nd->id, (long long)offset,
             (long long)nd->applied);
    if (offset < nd->len)
        nd->len = offset;
    if (nd->durable > offset)
        nd->durable = offset;
    if (sim->o->reconf_every_ms)
        vset_apply(nd, vset_below(sim, nd, nd->applied), sim->now); /* a removed set */
}

static void drain(sim_t *sim, sim_node_t *nd);

/* Snapshots. A node snapshots what it applied (the committed prefix)
 * and its log starts there; a node told to fetch one gets it from the
 * node that named it, after a while, if that node still has it (else, as
 * on SNAPSHOT_NOT_FOUND, it fetches again and is told again). */
static void take_snapshot(sim_t *sim, sim_node_t *nd)
{
    int64_t end = nd->applied;
    if (end <= nd->latest_end)
        return;
    /* as Kafka's retention with two snapshots: the log starts at the one
     * before the latest, so a node a little behind catches up from it */
    if (nd->latest_end > nd->snap_end) {
        nd->snap_end = nd->latest_end;
        nd->snap_epoch = nd->latest_epoch;
        raft_log_start_moved(nd->raft, nd->snap_end, nd->snap_epoch);
    }
    nd->latest_end = end;
    nd->latest_epoch = nd->log[end - 1].epoch;
    raft_snapshot_latest(nd->raft, end, nd->latest_epoch);
    sim->res->snapshots++;
    if (sim->o->verbose)
        printf("t=%lld node %d snapshot at %lld epoch %d, log start %lld\n", (long long)sim->now,
               nd->id, (long long)end, nd->latest_epoch, (long long)nd->snap_end);
}

static void want_snapshot(sim_t *sim, sim_node_t *nd, const raft_out_t *out)
{
    if (nd->fs_at && nd->fs_end == out->offset && nd->fs_epoch == out->append_epoch)
        return; /* under way */
    nd->fs_end = out->offset;
    nd->fs_epoch = out->append_epoch;
    nd->fs_from = out->msg.src;
    if (sim->o->verbose)
        printf("t=%lld node %d wants snapshot %lld-%d from %d\n", (long long)sim->now, nd->id,
               (long long)nd->fs_end, nd->fs_epoch, nd->fs_from);
    /* some take longer than the fetch timeout (a big snapshot) */
    nd->fs_at = sim->now + (chance(sim, 1, 5) ? rnd_in(sim, 1000, 2500) : rnd_in(sim, 5, 300));
}

/* A long fetch hears from the leader on the way. */
static void snapshot_progress(sim_t *sim, sim_node_t *nd)
{
    sim_node_t *src = &sim->nodes[nd->fs_from];
    if (!nd->fs_at || sim->now % 200 != 0 || !src->up || src->paused_until > sim->now ||
        sim->cut[src->id][nd->id] || sim->cut[nd->id][src->id])
        return;
    raft_snapshot_served(src->raft, nd->id, sim->now);
    drain(sim, src);
    raft_snapshot_progress(nd->raft, sim->now);
}

static void install_snapshot(sim_t *sim, sim_node_t *nd)
{
    const sim_node_t *src = &sim->nodes[nd->fs_from];
    int64_t end = nd->fs_end;
    nd->fs_at = 0;
    if (!raft_snapshot_wanted(nd->raft, end, nd->fs_epoch))
        return; /* a new epoch or role gave it up */
    /* older snapshots are kept (as Kafka keeps them until retention),
     * but not always */
    if (!src->up || src->latest_end < end || src->log[end - 1].epoch != nd->fs_epoch ||
        (src->snap_end > end && chance(sim, 1, 4))) {
        if (sim->o->verbose)
            printf("t=%lld node %d: snapshot not found at %d\n", (long long)sim->now, nd->id,
                   src->id);
        raft_snapshot_failed(nd->raft, sim->now);
        return;
    }
    if (end < nd->applied || end > sim->ncommitted) {
        fail(sim, "node %d installs snapshot %lld: applied %lld, committed %lld", nd->id,
             (long long)end, (long long)nd->applied, (long long)sim->ncommitted);
        return;
    }
    nd->log = grow(nd->log, &nd->cap, end, sizeof(*nd->log));
    memcpy(nd->log, src->log, (size_t)end * sizeof(*nd->log));
    for (int64_t off = 0; off < end; off++)
        if (memcmp(&sim->committed[off].ent, &nd->log[off], sizeof(sim_ent_t)) != 0)
            fail(sim, "snapshot of node %d differs at %lld", src->id, (long long)off);
    nd->len = nd->durable = nd->applied = nd->snap_end = nd->latest_end = end;
    nd->snap_epoch = nd->latest_epoch = nd->fs_epoch;
    sim->res->installs++;
    if (sim->o->verbose)
        printf("t=%lld node %d installs snapshot %lld from %d\n", (long long)sim->now, nd->id,
               (long long)end, src->id);
    raft_snapshot_installed(nd->raft, end, nd->fs_epoch, sim->now);
}

/* The interesting moments to die: with a quorum-state write in flight,
 * just after a leader commits. */
static void aim_crash(sim_t *sim, sim_node_t *nd)
{
    if (sim->in_chaos && !nd->crash_at && chance(sim, sim->o->crash_per_mille, 100))
        nd->crash_at = sim->now + rnd_in(sim, 0, 12);
}

static void take(sim_t *sim, sim_node_t *nd, const raft_out_t *out)
{
    switch (out->kind) {
    case RAFT_OUT_SEND:
        check_vote(sim, nd, &out->msg);
        send_msg(sim, nd, &out->msg);
        break;
    case RAFT_OUT_PERSIST: {
        if (nd->npend == 64)
            abort();
        sim_persist_t *p = &nd->pend[nd->npend++];
        p->seq = out->seq;
        p->epoch = out->epoch;
        p->leader = out->leader_id;
        p->voted = out->voted_id;
        p->at = sim->now + rnd_in(sim, 0, 10);
        aim_crash(sim, nd);
        break;
    }
    case RAFT_OUT_APPEND:
        do_append(sim, nd, out);
        break;
    case RAFT_OUT_TRUNCATE:
        do_truncate(sim, nd, out->offset);
        break;
    case RAFT_OUT_HW:
        apply_to(sim, nd, out->offset);
        if (raft_role(nd->raft) == RAFT_LEADER && chance(sim, 1, 50))
            aim_crash(sim, nd);
        break;
    case RAFT_OUT_SNAPSHOT:
        want_snapshot(sim, nd, out);
        break;
    case RAFT_OUT_ROLE:
        if (sim->o->verbose)
            printf("t=%lld node %d %s epoch %d leader %d voted %d end %lld hw %lld\n",
                   (long long)sim->now, nd->id, raft_role_name(raft_role(nd->raft)),
                   raft_epoch(nd->raft), raft_leader(nd->raft), raft_voted(nd->raft),
                   (long long)nd->len, (long long)raft_hw(nd->raft));
        if (raft_role(nd->raft) == RAFT_LEADER)
            check_leader(sim, nd);
        break;
    default:
        fail(sim, "node %d: unexpected output %d", nd->id, out->kind);
        break;
    }
}

static void drain(sim_t *sim, sim_node_t *nd)
{
    raft_out_t out;
    while (nd->up && raft_poll(nd->raft, &out))
        take(sim, nd, &out);
}

/* Nodes: start, crash, restart. */

static raft_config_t node_config(const sim_t *sim, int id)
{
    raft_config_t cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.node_id = id;
    cfg.nvoters = sim->o->nvoters;
    for (int i = 0; i < cfg.nvoters; i++)
        cfg.voters[i] = i + 1;
    cfg.election_timeout_ms = 1000;
    cfg.fetch_timeout_ms = 2000;
    cfg.election_backoff_max_ms = 1000;
    cfg.request_timeout_ms = 2000;
    cfg.fetch_max_wait_ms = 500;
    return cfg;
}

static void start_node(sim_t *sim, sim_node_t *nd)
{
    raft_batch_t epochs[1024];
    raft_disk_t disk;
    memset(&disk, 0, sizeof(disk));
    disk.epoch = nd->qs_epoch;
    disk.leader_id = nd->qs_leader;
    disk.voted_id = nd->qs_voted;
    disk.log_end = nd->len;
    disk.log_start = nd->snap_end;
    disk.snap_epoch = nd->snap_epoch;
    disk.latest_end = nd->latest_end;
    disk.latest_epoch = nd->latest_epoch;
    for (int64_t off = nd->snap_end; off < nd->len; off++) {
        if (off > nd->snap_end && nd->log[off].epoch == nd->log[off - 1].epoch)
            continue;
        if (disk.nepochs == 1024)
            abort();
        epochs[disk.nepochs].base = epochs[disk.nepochs].last = off;
        epochs[disk.nepochs++].epoch = nd->log[off].epoch;
    }
    disk.epochs = epochs;
    raft_config_t cfg = node_config(sim, nd->id);
    if (sim->o->reconf_every_ms) {
        /* as broker_quorum.c at a start: the log's latest set */
        nd->vset = vset_below(sim, nd, nd->len);
        cfg.nvoters = 0;
        for (int i = 1; i <= SIM_MAX_NODES; i++)
            if (nd->vset & (1u << i))
                cfg.voters[cfg.nvoters++] = i;
    }
    nd->raft = raft_new(&cfg, &disk, rnd, &sim->rng, sim->now);
    if (!nd->raft)
        abort();
    nd->up = 1;
    nd->applied = nd->snap_end; /* the image starts from the snapshot */
    nd->durable = nd->len;
    nd->flush_at = -1;
    nd->npend = 0;
    drain(sim, nd);
}

/* kill -9: what was not flushed is lost from a random entry on (a torn
 * write), a quorum-state write not completed never happened. */
static void crash(sim_t *sim, sim_node_t *nd)
{
    raft_free(nd->raft);
    nd->raft = NULL;
    nd->up = 0;
    nd->len = nd->durable + rnd_in(sim, 0, nd->len - nd->durable);
    if (nd->len < nd->snap_end) /* the log restarts at the snapshot */
        nd->len = nd->snap_end;
    nd->durable = nd->len;
    nd->fs_at = 0;
    nd->npend = 0;
    nd->crash_at = 0;
    nd->restart_at = sim->now + rnd_in(sim, 200, 3000);
    sim->res->crashes++;
    if (sim->o->verbose)
        printf("t=%lld crash %d\n", (long long)sim->now, nd->id);
}

/* One millisecond. */

static void deliver(sim_t *sim)
{
    while (sim->msgs && sim->msgs->at <= sim->now) {
        sim_msg_t *m = sim->msgs;
        sim->msgs = m->next;
        sim_node_t *nd = &sim->nodes[m->m.dst];
        if (nd->up && nd->paused_until > sim->now) {
            m->at = nd->paused_until;
            enqueue(sim, m);
            continue;
        }
        if (nd->up && !sim->cut[m->m.src][m->m.dst]) {
            sim->cur = m;
            raft_recv(nd->raft, &m->m, sim->now);
            drain(sim, nd);
            sim->cur = NULL;
        }
        free(m);
    }
}

static void complete_disk(sim_t *sim, sim_node_t *nd)
{
    while (nd->npend > 0 && nd->pend[0].at <= sim->now) {
        sim_persist_t p = nd->pend[0];
        memmove(&nd->pend[0], &nd->pend[1], (size_t)(nd->npend - 1) * sizeof(p));
        nd->npend--;
        nd->qs_epoch = p.epoch;
        nd->qs_leader = p.leader;
        nd->qs_voted = p.voted;
        raft_persisted(nd->raft, p.seq, sim->now);
        drain(sim, nd);
    }
    if (nd->flush_at >= 0 && nd->flush_at <= sim->now) {
        nd->flush_at = -1;
        nd->durable = nd->len;
        raft_flushed(nd->raft, nd->len, sim->now);
        drain(sim, nd);
    }
}

static void faults(sim_t *sim)
{
    const sim_opts_t *o = sim->o;
    for (int i = 1; i <= sim->n; i++) {
        sim_node_t *nd = &sim->nodes[i];
        if (nd->up && chance(sim, o->crash_per_mille, 1000))
            crash(sim, nd);
        else if (nd->up && chance(sim, o->crash_per_mille, 2000))
            nd->paused_until = sim->now + rnd_in(sim, 100, 4000); /* SIGSTOP */
    }
    for (int i = 1; i <= sim->n; i++)
        for (int j = 1; j <= sim->n; j++)
            if (i != j && chance(sim, o->cut_per_mille, 1000))
                sim->cut[i][j] = !sim->cut[i][j];
}

/* The leader changes the set by one node, when its own epoch and the set
 * in force are committed, adding only an observer caught up within the
 * fetch timeout (the leader itself stays), as raft_reconf.c does. */
static void reconf(sim_t *sim, sim_node_t *nd)
{
    int64_t hw = raft_hw(nd->raft), end, fetch, caught = -1;
    uint32_t set = nd->vset;
    int pick = (int)rnd_in(sim, 1, sim->n), nset = __builtin_popcount(set);

    if (!(set & (1u << pick)) &&
        (raft_replica_state(nd->raft, pick, &end, &fetch, &caught) < 0 || caught < 0 ||
         sim->now - caught > 2000))
        return;

    if (hw <= raft_epoch_start(nd->raft) || vset_below(sim, nd, nd->len) != vset_below(sim, nd, hw))
        return;
    if (pick == nd->id || (!(set & (1u << pick)) && nset >= RAFT_MAX_VOTERS) ||
        ((set & (1u << pick)) && nset <= 2))
        return;
    set ^= 1u << pick;
    sim->proposing = set;
    if (raft_propose(nd->raft, 1, sim->now) >= 0)
        vset_apply(nd, set, sim->now);
    drain(sim, nd);
    sim->proposing = 0;
}

static void step(sim_t *sim, int chaos)
{
    deliver(sim);
    for (int i = 1; i <= sim->n && sim->res->ok; i++) {
        sim_node_t *nd = &sim->nodes[i];
        if (!nd->up) {
            if (sim->now >= nd->restart_at)
                start_node(sim, nd);
            continue;
        }
        if (nd->crash_at && sim->now >= nd->crash_at) {
            crash(sim, nd);
            continue;
        }
        if (nd->paused_until > sim->now)
            continue;
        complete_disk(sim, nd);
        if (nd->fs_at && sim->now >= nd->fs_at) {
            install_snapshot(sim, nd);
            drain(sim, nd);
        }
        snapshot_progress(sim, nd);
        if (sim->now % 100 == 0 && chance(sim, sim->o->snap_pct, 100))
            take_snapshot(sim, nd);
        raft_tick(nd->raft, sim->now);
        drain(sim, nd);
    }
    if (sim->o->propose_every_ms > 0 && sim->now % sim->o->propose_every_ms == 0)
        for (int i = 1; i <= sim->n; i++)
            if (sim->nodes[i].up && raft_role(sim->nodes[i].raft) == RAFT_LEADER &&
                sim->nodes[i].paused_until <= sim->now) {
                raft_propose(sim->nodes[i].raft, (int32_t)rnd_in(sim, 1, 3), sim->now);
                drain(sim, &sim->nodes[i]);
            }
    if (sim->o->reconf_every_ms > 0 && sim->now % sim->o->reconf_every_ms == 0)
        for (int i = 1; i <= sim->n; i++)
            if (sim->nodes[i].up && raft_role(sim->nodes[i].raft) == RAFT_LEADER &&
                sim->nodes[i].paused_until <= sim->now)
                reconf(sim, &sim->nodes[i]);
    if (chaos && sim->now % 100 == 0)
        faults(sim);
}

static void calm_down(sim_t *sim)
{
    memset(sim->cut, 0, sizeof(sim->cut));
    sim->loss_pct = sim->dup_pct = 0;
    for (int i = 1; i <= sim->n; i++) {
        sim->nodes[i].paused_until = 0;
        sim->nodes[i].crash_at = 0;
        if (!sim->nodes[i].up)
            sim->nodes[i].restart_at = sim->now;
    }
}

/* Once calm, the quorum must commit again and every node catch up. */
static void check_progress(sim_t *sim, int64_t at_calm, int64_t near_end)
{
    sim->res->calm_commits = sim->ncommitted - at_calm;
    if (sim->ncommitted <= at_calm)
        fail(sim, "no progress in the calm (committed %lld)", (long long)sim->ncommitted);
    for (int i = 1; i <= sim->n; i++)
        if (sim->nodes[i].applied < near_end)
            fail(sim, "node %d applied %lld, committed %lld 3 s before the end", i,
                 (long long)sim->nodes[i].applied, (long long)near_end);
}

static void teardown(sim_t *sim)
{
    for (int i = 1; i <= sim->n; i++) {
        raft_free(sim->nodes[i].raft);
        free(sim->nodes[i].log);
    }
    while (sim->msgs) {
        sim_msg_t *m = sim->msgs;
        sim->msgs = m->next;
        free(m);
    }
    free(sim->committed);
    free(sim->leaders);
    free(sim->votes);
}

void sim_opts_default(sim_opts_t *o)
{
    memset(o, 0, sizeof(*o));
    o->nvoters = 3;
    o->nobservers = 1;
    o->loss_pct = 5;
    o->dup_pct = 2;
    o->delay_max_ms = 30;
    o->crash_per_mille = 20;
    o->cut_per_mille = 15;
    o->propose_every_ms = 50;
    o->chaos_ms = 20000;
    o->calm_ms = 20000;
    o->snap_pct = 5;
}

void sim_run(uint64_t seed, const sim_opts_t *o, sim_result_t *res)
{
    sim_t *sim = calloc(1, sizeof(*sim));
    if (!sim)
        abort();
    memset(res, 0, sizeof(*res));
    res->ok = 1;
    res->first_leader_ms = -1;
    sim->o = o;
    sim->res = res;
    sim->rng = seed;
    sim->n = o->nvoters + o->nobservers;
    sim->loss_pct = o->loss_pct;
    sim->dup_pct = o->dup_pct;
    for (int i = 1; i <= sim->n; i++) {
        sim->nodes[i].id = i;
        sim->nodes[i].qs_leader = sim->nodes[i].qs_voted = -1;
        start_node(sim, &sim->nodes[i]);
    }
    int64_t at_calm = 0, near_end = 0;
    for (sim->now = 1; res->ok && sim->now <= o->chaos_ms + o->calm_ms; sim->now++) {
        if (sim->now == o->chaos_ms) {
            calm_down(sim);
            at_calm = sim->ncommitted;
        }
        if (sim->now == o->chaos_ms + o->calm_ms - 3000)
            near_end = sim->ncommitted;
        sim->in_chaos = sim->now < o->chaos_ms;
        step(sim, sim->in_chaos);
    }
    if (res->ok)
        check_progress(sim, at_calm, near_end);
    res->committed = sim->ncommitted;
    teardown(sim);
    free(sim);
}

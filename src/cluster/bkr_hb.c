/* Broker sessions and heartbeats, as Kafka 4.4's BrokerHeartbeatManager
 * and ReplicationControlManager.processBrokerHeartbeat decide them. A
 * broker is in one of four states: fenced (registered, not serving),
 * unfenced, in controlled shutdown (still unfenced, its leaderships
 * moving away), or shut down now (fenced for good, told to exit). A
 * heartbeat moves it:
 *
 *   fenced        -> shut down now  when it wants to shut down
 *                 -> unfenced       when it does not want to be fenced and
 *                                   has caught up with its registration
 *   unfenced      -> fenced / shut down now  when it wants to be fenced
 *                                   (and to shut down)
 *                 -> controlled shutdown  when it wants to shut down and
 *                                   leads a partition (else shut down now)
 *   controlled shutdown -> shut down now  once every active broker's
 *                                   metadata offset has reached the end of
 *                                   the records that moved its leaderships
 *
 * and a session that expires (no heartbeat for broker.session.timeout.ms,
 * or for the link grace after its link closed: bkr_link_lost) fences an
 * unfenced broker. Sessions live only here, on the active
 * controller; the fenced and shutdown flags are the image's. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/bkr_int.h"
#include "util/kerr.h"
#include "util/mem.h"

enum bkr_state { BKR_FENCED, BKR_UNFENCED, BKR_CONTROLLED_SHUTDOWN, BKR_SHUTDOWN_NOW };

void bkr_ctl_init(bkr_ctl_t *bc, const char *cluster_id, int64_t session_timeout_ms,
                  int64_t heartbeat_interval_ms)
{
    memset(bc, 0, sizeof(*bc));
    snprintf(bc->cluster_id, sizeof(bc->cluster_id), "%s", cluster_id ? cluster_id : "");
    bc->session_timeout_ms = session_timeout_ms;
    bc->min_isr_default = 1;
    bc->link_grace_ms = heartbeat_interval_ms + heartbeat_interval_ms / 2;
    if (bc->link_grace_ms <= 0 || bc->link_grace_ms > session_timeout_ms)
        bc->link_grace_ms = session_timeout_ms;
}

void bkr_ctl_free(bkr_ctl_t *bc)
{
    free(bc->sessions);
    bc->sessions = NULL;
    bc->nsessions = 0;
}

void bkr_ctl_activate(bkr_ctl_t *bc, const meta_image_t *img, int64_t now_ms)
{
    size_t pos = 0;
    const mi_broker_t *b;
    bc->nsessions = 0;
    while ((b = meta_image_broker_next(img, &pos)))
        bkr_session_start(bc, b->id, now_ms);
}

/* ---- the session table, sorted by id ---- */

static int bkr_session_index(const bkr_ctl_t *bc, int32_t id)
{
    int lo = 0, hi = bc->nsessions - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        if (bc->sessions[mid].id == id)
            return mid;
        if (bc->sessions[mid].id < id)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -lo - 1;
}

bkr_session_t *bkr_session_get(const bkr_ctl_t *bc, int32_t id)
{
    int i = bkr_session_index(bc, id);
    return i >= 0 ? &bc->sessions[i] : NULL;
}

bkr_session_t *bkr_session_start(bkr_ctl_t *bc, int32_t id, int64_t now_ms)
{
    int i = bkr_session_index(bc, id);
    if (i < 0) {
        i = -i - 1;
        bc->sessions = xrealloc(bc->sessions, (size_t)(bc->nsessions + 1) * sizeof(*bc->sessions));
        memmove(&bc->sessions[i + 1], &bc->sessions[i],
                (size_t)(bc->nsessions - i) * sizeof(*bc->sessions));
        bc->nsessions++;
    }
    bkr_session_t *s = &bc->sessions[i];
    s->id = id;
    s->last_contact_ms = now_ms;
    s->metadata_offset = -1;
    s->shutdown_offset = -1;
    s->lost_by_ms = INT64_MAX;
    return s;
}

void bkr_session_end(bkr_ctl_t *bc, int32_t id)
{
    int i = bkr_session_index(bc, id);
    if (i < 0)
        return;
    memmove(&bc->sessions[i], &bc->sessions[i + 1],
            (size_t)(bc->nsessions - i - 1) * sizeof(*bc->sessions));
    bc->nsessions--;
}

static bool bkr_fenced(const meta_image_t *img, int32_t id)
{
    const mi_broker_t *b = meta_image_broker(img, id);
    return !b || b->fenced;
}

/* The last moment the session is valid. */
static int64_t bkr_expiry(const bkr_ctl_t *bc, const bkr_session_t *s)
{
    int64_t at = s->last_contact_ms + bc->session_timeout_ms;
    return s->lost_by_ms < at ? s->lost_by_ms : at;
}

bool bkr_session_valid(const bkr_ctl_t *bc, const meta_image_t *img, int32_t id,
                       int64_t now_ms)
{
    const bkr_session_t *s = bkr_session_get(bc, id);
    return s && !bkr_fenced(img, id) && bkr_expiry(bc, s) >= now_ms;
}

void bkr_link_lost(bkr_ctl_t *bc, const meta_image_t *img, int32_t id, int64_t epoch,
                   int64_t now_ms)
{
    const mi_broker_t *b = meta_image_broker(img, id);
    bkr_session_t *s = bkr_session_get(bc, id);
    if (b && s && b->epoch == epoch && now_ms + bc->link_grace_ms < s->lost_by_ms)
        s->lost_by_ms = now_ms + bc->link_grace_ms;
}

/* The lowest metadata offset an active broker (unfenced, not shutting
 * down) reported, or INT64_MAX when there is none. */
static int64_t bkr_lowest_active_offset(const bkr_ctl_t *bc, const meta_image_t *img)
{
    int64_t low = INT64_MAX;
    for (int i = 0; i < bc->nsessions; i++) {
        const bkr_session_t *s = &bc->sessions[i];
        if (!bkr_fenced(img, s->id) && s->shutdown_offset < 0 && s->metadata_offset < low)
            low = s->metadata_offset;
    }
    return low;
}

/* ---- records ---- */

static meta_rec_t *bkr_change_rec(bkr_out_t *out, const mi_broker_t *b, int16_t version)
{
    meta_rec_t *r = bkr_out_add(out, META_REC_BROKER_REGISTRATION_CHANGE, version);
    r->u.broker_change.broker_id = b->id;
    r->u.broker_change.broker_epoch = b->epoch;
    return r;
}

void bkr_fence_records(const bkr_ctl_t *bc, const meta_image_t *img, const mi_broker_t *b,
                       bkr_out_t *out)
{
    bkr_isr_remove(bc, img, b->id, out);
    bkr_change_rec(out, b, BKR_CHANGE_REC_VERSION_FENCE)->u.broker_change.fenced =
        BKR_CHANGE_FENCE;
}

static void bkr_unfence_records(const bkr_ctl_t *bc, const meta_image_t *img,
                                const mi_broker_t *b, bkr_out_t *out)
{
    bkr_change_rec(out, b, BKR_CHANGE_REC_VERSION_FENCE)->u.broker_change.fenced =
        BKR_CHANGE_UNFENCE;
    bkr_isr_elect_with(bc, img, b->id, out);
}

static void bkr_shutdown_records(const bkr_ctl_t *bc, const meta_image_t *img,
                                 const mi_broker_t *b, bkr_out_t *out)
{
    if (!b->in_controlled_shutdown)
        bkr_change_rec(out, b, BKR_CHANGE_REC_VERSION_SHUTDOWN)
            ->u.broker_change.in_controlled_shutdown = BKR_CHANGE_IN_SHUTDOWN;
    bkr_isr_remove(bc, img, b->id, out);
}

/* ---- heartbeats ---- */

static enum bkr_state bkr_current(const bkr_session_t *s, const mi_broker_t *b)
{
    if (s->shutdown_offset >= 0)
        return BKR_CONTROLLED_SHUTDOWN;
    return b->fenced ? BKR_FENCED : BKR_UNFENCED;
}

static enum bkr_state bkr_next(const bkr_ctl_t *bc, const meta_image_t *img,
                               const bkr_session_t *s, const mi_broker_t *b,
                               const bkr_heartbeat_req_t *req)
{
    switch (bkr_current(s, b)) {
    case BKR_FENCED:
        if (req->want_shutdown)
            return BKR_SHUTDOWN_NOW;
        if (!req->want_fence && req->current_metadata_offset >= b->epoch)
            return BKR_UNFENCED;
        return BKR_FENCED;
    case BKR_UNFENCED:
        if (req->want_fence)
            return req->want_shutdown ? BKR_SHUTDOWN_NOW : BKR_FENCED;
        if (req->want_shutdown)
            return bkr_isr_leads_any(img, b->id) ? BKR_CONTROLLED_SHUTDOWN : BKR_SHUTDOWN_NOW;
        return BKR_UNFENCED;
    default:
        return s->shutdown_offset <= bkr_lowest_active_offset(bc, img)
                   ? BKR_SHUTDOWN_NOW
                   : BKR_CONTROLLED_SHUTDOWN;
    }
}

static void bkr_transition(const bkr_ctl_t *bc, const meta_image_t *img, const mi_broker_t *b,
                           enum bkr_state next, bkr_out_t *out)
{
    switch (next) {
    case BKR_FENCED:
    case BKR_SHUTDOWN_NOW: bkr_fence_records(bc, img, b, out); break;
    case BKR_UNFENCED: bkr_unfence_records(bc, img, b, out); break;
    case BKR_CONTROLLED_SHUTDOWN: bkr_shutdown_records(bc, img, b, out); break;
    }
}

static void bkr_answer_state(bkr_answer_t *ans, enum bkr_state next)
{
    ans->fenced = next == BKR_FENCED || next == BKR_SHUTDOWN_NOW;
    ans->in_controlled_shutdown = next == BKR_CONTROLLED_SHUTDOWN;
    ans->should_shutdown = next == BKR_SHUTDOWN_NOW;
}

void bkr_heartbeat(bkr_ctl_t *bc, const meta_image_t *img, const bkr_heartbeat_req_t *req,
                   int64_t next_offset, int64_t now_ms, bkr_out_t *out, bkr_answer_t *ans)
{
    const mi_broker_t *b = meta_image_broker(img, req->broker_id);
    memset(ans, 0, sizeof(*ans));
    if (!b) {
        bkr_fail(ans, KERR_STALE_BROKER_EPOCH, "Receive a heartbeat from broker %d before "
                 "registration", (int)req->broker_id);
        return;
    }
    if (b->epoch != req->broker_epoch) {
        bkr_fail(ans, KERR_STALE_BROKER_EPOCH, "Expected broker epoch %lld, but got broker "
                 "epoch %lld", (long long)b->epoch, (long long)req->broker_epoch);
        return;
    }
    bkr_session_t *s = bkr_session_get(bc, b->id);
    if (!s)
        s = bkr_session_start(bc, b->id, now_ms);
    enum bkr_state cur = bkr_current(s, b), next = bkr_next(bc, img, s, b, req);
    int first = out->n;
    if (cur != next)
        bkr_transition(bc, img, b, next, out);
    s->last_contact_ms = now_ms;
    s->lost_by_ms = INT64_MAX;
    s->metadata_offset = req->current_metadata_offset;
    if (next == BKR_CONTROLLED_SHUTDOWN && s->shutdown_offset < 0)
        s->shutdown_offset = next_offset + (out->n - first) - 1;
    else if (next != BKR_CONTROLLED_SHUTDOWN)
        s->shutdown_offset = -1;
    ans->caught_up = req->current_metadata_offset >= b->epoch;
    bkr_answer_state(ans, next);
}

/* ---- session expiry ---- */

/* The unfenced broker whose session expired longest ago, or NULL. */
static const bkr_session_t *bkr_stalest(const bkr_ctl_t *bc, const meta_image_t *img,
                                        int64_t now_ms)
{
    const bkr_session_t *best = NULL;
    for (int i = 0; i < bc->nsessions; i++) {
        const bkr_session_t *s = &bc->sessions[i];
        if (bkr_fenced(img, s->id) || bkr_expiry(bc, s) >= now_ms)
            continue;
        if (!best || bkr_expiry(bc, s) < bkr_expiry(bc, best))
            best = s;
    }
    return best;
}

int32_t bkr_fence_stale(bkr_ctl_t *bc, const meta_image_t *img, int64_t now_ms,
                        bkr_out_t *out)
{
    const bkr_session_t *s = bkr_stalest(bc, img, now_ms);
    if (!s)
        return -1;
    bkr_fence_records(bc, img, meta_image_broker(img, s->id), out);
    bkr_session_get(bc, s->id)->shutdown_offset = -1;
    return s->id;
}

int64_t bkr_next_deadline(const bkr_ctl_t *bc, const meta_image_t *img)
{
    int64_t next = INT64_MAX;
    for (int i = 0; i < bc->nsessions; i++) {
        const bkr_session_t *s = &bc->sessions[i];
        int64_t at = bkr_expiry(bc, s) + 1;
        if (!bkr_fenced(img, s->id) && at < next)
            next = at;
    }
    return next;
}

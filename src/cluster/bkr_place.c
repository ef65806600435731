/* Replica placement, as Kafka 4.4's StripedReplicaPlacer places it, and
 * the checks of an explicit assignment. The usable brokers are grouped
 * by rack (no rack is a rack of its own), each rack's unfenced and
 * fenced brokers in a shuffled list. Each partition's first replica is
 * the next unfenced broker of the rack at the current offset (or of the
 * next rack that has one); its other replicas come one per rack, going
 * round the racks from that offset, an unfenced broker of a rack before
 * a fenced one. Each partition moves the offset to the next rack, and
 * each rack's lists rotate by one per partition, so leaders and
 * followers stripe evenly over racks and brokers; once as many
 * partitions as there are unfenced brokers are placed, racks and lists
 * are shuffled again so that larger topics do not repeat the same
 * pattern. The shuffles use a generator seeded by the caller (Kafka
 * uses java.util.Random; the same seed does not give Kafka's choices,
 * the properties are the same). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/bkr.h"
#include "util/kerr.h"
#include "util/mem.h"

typedef struct bkr_blist_s {
    int32_t *v;
    int n;
    int epoch, index, offset;
} bkr_blist_t;

typedef struct bkr_rack_s {
    const char *name;      /* NULL: the brokers without a rack */
    bkr_blist_t unfenced, fenced;
} bkr_rack_t;

typedef struct bkr_racks_s {
    uint64_t rng;
    bkr_rack_t *racks;     /* owned */
    int32_t *order;        /* owned: rack indexes, shuffled */
    int nracks;
    int total, unfenced;
    int epoch, offset;
} bkr_racks_t;

/* splitmix64: small, and the same sequence on every platform. */
static uint64_t bkr_rand(bkr_racks_t *rl)
{
    uint64_t z = (rl->rng += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static int bkr_rand_below(bkr_racks_t *rl, int n)
{
    return (int)(bkr_rand(rl) % (uint64_t)n);
}

/* Fisher-Yates, as Collections.shuffle. */
static void bkr_shuffle_ints(bkr_racks_t *rl, int32_t *v, int n)
{
    for (int i = n - 1; i > 0; i--) {
        int j = bkr_rand_below(rl, i + 1);
        int32_t t = v[i];
        v[i] = v[j];
        v[j] = t;
    }
}

/* The next broker of the list in this epoch, or -1 when the epoch has
 * had them all; a new epoch starts one further along. */
static int32_t bkr_blist_next(bkr_blist_t *l, int epoch)
{
    if (l->n == 0)
        return -1;
    if (l->epoch != epoch) {
        l->epoch = epoch;
        l->index = 0;
        l->offset = (l->offset + 1) % l->n;
    }
    if (l->index >= l->n)
        return -1;
    return l->v[(l->index++ + l->offset) % l->n];
}

static int32_t bkr_rack_next(bkr_rack_t *r, int epoch)
{
    int32_t b = bkr_blist_next(&r->unfenced, epoch);
    return b >= 0 ? b : bkr_blist_next(&r->fenced, epoch);
}

static bool bkr_same_rack(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

static bkr_rack_t *bkr_rack_of(bkr_racks_t *rl, const char *name)
{
    for (int i = 0; i < rl->nracks; i++)
        if (bkr_same_rack(rl->racks[i].name, name))
            return &rl->racks[i];
    bkr_rack_t *r = &rl->racks[rl->nracks];
    r->name = name;
    rl->order[rl->nracks] = rl->nracks;
    rl->nracks++;
    return r;
}

static void bkr_racks_shuffle_lists(bkr_racks_t *rl)
{
    for (int i = 0; i < rl->nracks; i++) {
        bkr_shuffle_ints(rl, rl->racks[i].fenced.v, rl->racks[i].fenced.n);
        bkr_shuffle_ints(rl, rl->racks[i].unfenced.v, rl->racks[i].unfenced.n);
    }
}

static void bkr_racks_init(bkr_racks_t *rl, const bkr_usable_t *brokers, int n, uint64_t seed)
{
    memset(rl, 0, sizeof(*rl));
    rl->rng = seed;
    rl->racks = xcalloc((size_t)n + 1, sizeof(*rl->racks));
    rl->order = xcalloc((size_t)n + 1, sizeof(int32_t));
    for (int i = 0; i < n; i++) {
        bkr_rack_t *r = bkr_rack_of(rl, brokers[i].rack);
        bkr_blist_t *l = brokers[i].fenced ? &r->fenced : &r->unfenced;
        if (!l->v)
            l->v = xcalloc((size_t)n, sizeof(int32_t));
        l->v[l->n++] = brokers[i].id;
        rl->unfenced += !brokers[i].fenced;
        rl->total++;
    }
    bkr_racks_shuffle_lists(rl);
    rl->offset = rl->nracks ? bkr_rand_below(rl, rl->nracks) : 0;
}

static void bkr_racks_free(bkr_racks_t *rl)
{
    for (int i = 0; i < rl->nracks; i++) {
        free(rl->racks[i].fenced.v);
        free(rl->racks[i].unfenced.v);
    }
    free(rl->racks);
    free(rl->order);
}

static bkr_rack_t *bkr_rack_at(bkr_racks_t *rl, int i)
{
    return &rl->racks[rl->order[i]];
}

/* The first replica: an unfenced broker, from the rack at the offset or
 * the next one that has one. Returns the rack index it came from. */
static int bkr_place_first(bkr_racks_t *rl, int32_t *out)
{
    for (int i = rl->offset;; i = (i + 1) % rl->nracks) {
        int32_t b = bkr_blist_next(&bkr_rack_at(rl, i)->unfenced, rl->epoch);
        if (b >= 0) {
            *out = b;
            return i;
        }
    }
}

/* One partition's rf replicas into out (there are enough brokers, and an
 * unfenced one). */
static void bkr_place_one(bkr_racks_t *rl, int rf, int32_t *out)
{
    if (rl->epoch == rl->unfenced && rl->unfenced > 1) {
        bkr_shuffle_ints(rl, rl->order, rl->nracks);
        bkr_racks_shuffle_lists(rl);
        rl->epoch = 0;
    }
    if (rl->offset == rl->nracks)
        rl->offset = 0;
    int first = bkr_place_first(rl, &out[0]);
    int at = rl->offset;
    for (int k = 1; k < rf; k++) {
        int32_t b = -1;
        do {
            if (at == first)
                first = -1; /* its rack gave the first replica this round */
            else
                b = bkr_rack_next(bkr_rack_at(rl, at), rl->epoch);
            at = (at + 1) % rl->nracks;
        } while (b < 0);
        out[k] = b;
    }
    rl->epoch++;
    rl->offset++;
}

int16_t bkr_place(const bkr_usable_t *brokers, int nbrokers, int32_t nparts, int16_t rf,
                  uint64_t seed, int32_t *assign, char *msg, size_t msglen)
{
    bkr_racks_t rl;
    int16_t err = KERR_NONE;

    bkr_racks_init(&rl, brokers, nbrokers, seed);
    if (rf <= 0) {
        snprintf(msg, msglen, "Invalid replication factor %d: the replication factor must be "
                 "positive.", rf);
        err = KERR_INVALID_REPLICATION_FACTOR;
    } else if (rl.unfenced == 0) {
        snprintf(msg, msglen, "All brokers are currently fenced.");
        err = KERR_INVALID_REPLICATION_FACTOR;
    } else if (rf > rl.total) {
        snprintf(msg, msglen, "The target replication factor of %d cannot be reached because "
                 "only %d broker(s) are registered or some brokers have all their log "
                 "directories cordoned.", rf, rl.total);
        err = KERR_INVALID_REPLICATION_FACTOR;
    }
    for (int32_t p = 0; !err && p < nparts; p++)
        bkr_place_one(&rl, rf, &assign[(size_t)p * (size_t)rf]);
    bkr_racks_free(&rl);
    return err;
}

int bkr_usable(const meta_image_t *img, bkr_usable_t **out)
{
    size_t pos = 0;
    const mi_broker_t *b;
    int n = 0;
    *out = xcalloc((size_t)img->nbrokers + 1, sizeof(**out));
    while ((b = meta_image_broker_next(img, &pos))) {
        if (b->in_controlled_shutdown)
            continue;
        (*out)[n].id = b->id;
        (*out)[n].rack = b->rack;
        (*out)[n].fenced = b->fenced;
        n++;
    }
    return n;
}

/* ---- explicit assignments ---- */

static int bkr_cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

int16_t bkr_check_assignment(const meta_image_t *img, const int32_t *replicas, int n, int rf,
                             char *msg, size_t msglen)
{
    if (n == 0) {
        snprintf(msg, msglen, "The manual partition assignment includes an empty replica list.");
        return KERR_INVALID_REPLICA_ASSIGNMENT;
    }
    int32_t *sorted = xmalloc((size_t)n * sizeof(int32_t));
    int16_t err = KERR_NONE;
    memcpy(sorted, replicas, (size_t)n * sizeof(int32_t));
    qsort(sorted, (size_t)n, sizeof(int32_t), bkr_cmp_i32);
    for (int i = 0; !err && i < n; i++) {
        if (!meta_image_broker(img, sorted[i])) {
            snprintf(msg, msglen, "The manual partition assignment includes broker %d, but no "
                     "such broker is registered.", (int)sorted[i]);
            err = KERR_INVALID_REPLICA_ASSIGNMENT;
        } else if (i > 0 && sorted[i] == sorted[i - 1]) {
            snprintf(msg, msglen, "The manual partition assignment includes the broker %d more "
                     "than once.", (int)sorted[i]);
            err = KERR_INVALID_REPLICA_ASSIGNMENT;
        }
    }
    free(sorted);
    if (!err && rf > 0 && n != rf) {
        snprintf(msg, msglen, "The manual partition assignment includes a partition with %d "
                 "replica(s), but this is not consistent with previous partitions, which have "
                 "%d replica(s).", n, rf);
        err = KERR_INVALID_REPLICA_ASSIGNMENT;
    }
    return err;
}

int bkr_assignment_isr(const meta_image_t *img, const int32_t *replicas, int n, int32_t part,
                       int32_t *isr, char *msg, size_t msglen)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        if (meta_image_broker_active(img, replicas[i]))
            isr[k++] = replicas[i];
    if (k == 0)
        snprintf(msg, msglen, "All brokers specified in the manual partition assignment for "
                 "partition %d are fenced or in controlled shutdown.", (int)part);
    return k;
}

/* The write queue: copies produced batches into the page cache on the
 * pool while the loop goes on. Validated requests wait here in arrival
 * order. The loop places the batches of the waiting requests (offsets,
 * producer state, rolls: log_append_place) and hands their writes to the
 * pool as one job; up to one job per worker is out at once, and what
 * arrives meanwhile gathers into the next, so the hop costs less the more
 * the load grows. Jobs may come back in any order (each writes its own
 * byte ranges, placed in advance), but are committed in the order they
 * were built, so a log's batches join it in placing order and the answers
 * leave in arrival order. A request whose log needs a roll behind pending
 * writes stops there and goes on once they are committed. */
#include <stdlib.h>

#include "api/api_produce.h"
#include "util/kerr.h"
#include "util/logging.h"
#include "util/mem.h"

/* A job stops taking requests past this many bytes, so that answers are
 * not held back behind one very large job. */
#define API_WQ_JOB_BYTES ((size_t)16 << 20)

typedef struct api_wq_op_s {
    api_produce_t *ap;
    api_produce_ent_t *ent;
} api_wq_op_t;

typedef struct api_wq_job_s {
    net_job_t job; /* first */
    broker_t *b;
    struct api_wq_job_s *next; /* jobs out, in building order */
    int written;               /* back from the pool */
    api_wq_op_t *ops; /* writes, in placing order */
    int nops, capops;
    api_produce_t **reqs; /* requests complete once these writes are in */
    int nreqs, capreqs;
} api_wq_job_t;

typedef struct api_wq_s {
    api_produce_t *head, *tail; /* waiting to be placed */
    api_wq_job_t *out, *out_tail; /* jobs built and not yet committed */
    int nout;
} api_wq_t;

static api_wq_t *api_wq_state(broker_t *b)
{
    if (!b->wq)
        b->wq = xcalloc(1, sizeof(api_wq_t));
    return b->wq;
}

static void api_wq_push_op(api_wq_job_t *job, api_produce_t *ap, api_produce_ent_t *ent)
{
    if (job->nops == job->capops) {
        job->capops = job->capops ? job->capops * 2 : 16;
        job->ops = xrealloc(job->ops, (size_t)job->capops * sizeof(*job->ops));
    }
    job->ops[job->nops].ap = ap;
    job->ops[job->nops++].ent = ent;
}

static void api_wq_push_req(api_wq_job_t *job, api_produce_t *ap)
{
    if (job->nreqs == job->capreqs) {
        job->capreqs = job->capreqs ? job->capreqs * 2 : 16;
        job->reqs = xrealloc(job->reqs, (size_t)job->capreqs * sizeof(*job->reqs));
    }
    job->reqs[job->nreqs++] = ap;
}

/* Places the batches of ap from where it stopped; 0 when they all are,
 * -1 when one must wait for this job's writes. */
static int api_wq_place_req(api_wq_job_t *job, api_produce_t *ap, size_t *bytes, int nout)
{
    while (ap->nplaced < ap->nents) {
        api_produce_ent_t *ent = &ap->ents[ap->nplaced];
        if (api_produce_place(ap, ent) == LOG_APPEND_AGAIN) {
            if (job->nops || nout)
                return -1;
            /* Pending writes with no job out: cannot happen (every job
             * commits all it placed); refuse rather than wait forever. */
            lg_error("produce: a log has writes pending outside the write queue");
            ent->err = KERR_KAFKA_STORAGE_ERROR;
        }
        if (ent->wr.fd >= 0) {
            api_wq_push_op(job, ap, ent);
            *bytes += ent->wr.len;
        }
        ap->nplaced++;
    }
    return 0;
}

static api_wq_job_t *api_wq_build(broker_t *b, api_wq_t *wq)
{
    api_wq_job_t *job = xcalloc(1, sizeof(*job));
    size_t bytes = 0;

    job->b = b;
    while (wq->head && bytes < API_WQ_JOB_BYTES) {
        api_produce_t *ap = wq->head;
        if (api_wq_place_req(job, ap, &bytes, wq->nout) < 0)
            break;
        wq->head = ap->wq_next;
        if (!wq->head)
            wq->tail = NULL;
        api_wq_push_req(job, ap);
    }
    return job;
}

static void api_wq_work(net_job_t *j)
{
    api_wq_job_t *job = (api_wq_job_t *)j;
    for (int i = 0; i < job->nops; i++)
        log_write_run(&job->ops[i].ent->wr);
}

/* Commits every write of the job, then answers the requests it
 * completed (an answer ends its request: nothing of it is touched
 * after). */
static void api_wq_finish(api_wq_job_t *job)
{
    for (int i = 0; i < job->nops; i++)
        api_produce_commit(job->ops[i].ap, job->ops[i].ent);
    for (int i = 0; i < job->nreqs; i++)
        api_produce_answer(job->reqs[i]);
    free(job->ops);
    free(job->reqs);
    free(job);
}

/* Commits the jobs that are back, oldest first, up to the first that is
 * still out. */
static void api_wq_commit_ready(api_wq_t *wq)
{
    while (wq->out && wq->out->written) {
        api_wq_job_t *job = wq->out;
        wq->out = job->next;
        if (!wq->out)
            wq->out_tail = NULL;
        wq->nout--;
        api_wq_finish(job);
    }
}

static void api_wq_kick(broker_t *b);

static void api_wq_done(net_job_t *j)
{
    api_wq_job_t *job = (api_wq_job_t *)j;
    broker_t *b = job->b;
    job->written = 1;
    api_wq_commit_ready(b->wq);
    api_wq_kick(b);
}

/* Sends jobs out while workers are free. Without a pool (one CPU, or
 * shutting down) the writes run here, job after job. */
static void api_wq_kick(broker_t *b)
{
    api_wq_t *wq = api_wq_state(b);
    int max_out = b->pool && !b->stopping ? net_pool_threads(b->pool) : 1;
    while (wq->head && wq->nout < max_out) {
        api_wq_job_t *job = api_wq_build(b, wq);
        if (!job->nops && !job->nreqs) {
            free(job); /* the head waits for the writes out */
            return;
        }
        job->job.work = api_wq_work;
        job->job.done = api_wq_done;
        if (wq->out_tail)
            wq->out_tail->next = job;
        else
            wq->out = job;
        wq->out_tail = job;
        wq->nout++;
        if (b->pool && !b->stopping) {
            net_pool_submit_first(b->pool, &job->job);
            continue;
        }
        api_wq_work(&job->job);
        job->written = 1;
        api_wq_commit_ready(wq);
    }
}

void api_wq_add(broker_t *b, api_produce_t *ap)
{
    api_wq_t *wq = api_wq_state(b);
    ap->wq_next = NULL;
    if (wq->tail)
        wq->tail->wq_next = ap;
    else
        wq->head = ap;
    wq->tail = ap;
    api_wq_kick(b);
}

int api_wq_idle(broker_t *b)
{
    api_wq_t *wq = b->wq;
    return !wq || (!wq->nout && !wq->head);
}

void api_wq_free(broker_t *b)
{
    if (!b->wq)
        return;
    api_wq_kick(b); /* what is left is written here */
    free(b->wq);
    b->wq = NULL;
}

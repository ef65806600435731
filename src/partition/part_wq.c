/* The write queue: copies appended batches into the page cache on the
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

#include "partition/part_append.h"
#include "partition/part_int.h"
#include "util/kerr.h"
#include "util/logging.h"
#include "util/mem.h"

/* A job stops taking requests past this many bytes, so that answers are
 * not held back behind one very large job. */
#define PART_WQ_JOB_BYTES ((size_t)16 << 20)

typedef struct part_wq_op_s {
    part_append_t *op;
    part_append_ent_t *ent;
} part_wq_op_t;

typedef struct part_wq_job_s {
    net_job_t job; /* first */
    part_reg_t *reg;
    struct part_wq_job_s *next; /* jobs out, in building order */
    int written;               /* back from the pool */
    part_wq_op_t *ops; /* writes, in placing order */
    int nops, capops;
    part_append_t **reqs; /* requests complete once these writes are in */
    int nreqs, capreqs;
} part_wq_job_t;

typedef struct part_wq_s {
    part_append_t *head, *tail; /* waiting to be placed */
    part_wq_job_t *out, *out_tail; /* jobs built and not yet committed */
    int nout;
} part_wq_t;

static part_wq_t *part_wq_state(part_reg_t *reg)
{
    if (!reg->wq)
        reg->wq = xcalloc(1, sizeof(part_wq_t));
    return reg->wq;
}

static void part_wq_push_op(part_wq_job_t *job, part_append_t *op, part_append_ent_t *ent)
{
    if (job->nops == job->capops) {
        job->capops = job->capops ? job->capops * 2 : 16;
        job->ops = xrealloc(job->ops, (size_t)job->capops * sizeof(*job->ops));
    }
    job->ops[job->nops].op = op;
    job->ops[job->nops++].ent = ent;
}

static void part_wq_push_req(part_wq_job_t *job, part_append_t *op)
{
    if (job->nreqs == job->capreqs) {
        job->capreqs = job->capreqs ? job->capreqs * 2 : 16;
        job->reqs = xrealloc(job->reqs, (size_t)job->capreqs * sizeof(*job->reqs));
    }
    job->reqs[job->nreqs++] = op;
}

/* Places the batches of op from where it stopped; 0 when they all are,
 * -1 when one must wait for this job's writes. */
static int part_wq_place_req(part_wq_job_t *job, part_append_t *op, size_t *bytes, int nout)
{
    while (op->nplaced < op->nents) {
        part_append_ent_t *ent = &op->ents[op->nplaced];
        if (part_append_place(op, ent) == LOG_APPEND_AGAIN) {
            if (job->nops || nout)
                return -1;
            /* Pending writes with no job out: cannot happen (every job
             * commits all it placed); refuse rather than wait forever. */
            lg_error("produce: a log has writes pending outside the write queue");
            ent->err = KERR_KAFKA_STORAGE_ERROR;
        }
        if (ent->wr.fd >= 0) {
            part_wq_push_op(job, op, ent);
            *bytes += ent->wr.len;
        }
        op->nplaced++;
    }
    return 0;
}

static part_wq_job_t *part_wq_build(part_reg_t *reg, part_wq_t *wq)
{
    part_wq_job_t *job = xcalloc(1, sizeof(*job));
    size_t bytes = 0;

    job->reg = reg;
    while (wq->head && bytes < PART_WQ_JOB_BYTES) {
        part_append_t *op = wq->head;
        if (part_wq_place_req(job, op, &bytes, wq->nout) < 0)
            break;
        wq->head = op->wq_next;
        if (!wq->head)
            wq->tail = NULL;
        part_wq_push_req(job, op);
    }
    return job;
}

static void part_wq_work(net_job_t *j)
{
    part_wq_job_t *job = (part_wq_job_t *)j;
    for (int i = 0; i < job->nops; i++)
        log_write_run(&job->ops[i].ent->wr);
}

/* Commits every write of the job, then answers the requests it
 * completed (an answer ends its request: nothing of it is touched
 * after). */
static void part_wq_finish(part_wq_job_t *job)
{
    for (int i = 0; i < job->nops; i++)
        part_append_commit(job->ops[i].op, job->ops[i].ent);
    for (int i = 0; i < job->nreqs; i++)
        part_append_settle(job->reqs[i]);
    free(job->ops);
    free(job->reqs);
    free(job);
}

/* Commits the jobs that are back, oldest first, up to the first that is
 * still out. */
static void part_wq_commit_ready(part_wq_t *wq)
{
    while (wq->out && wq->out->written) {
        part_wq_job_t *job = wq->out;
        wq->out = job->next;
        if (!wq->out)
            wq->out_tail = NULL;
        wq->nout--;
        part_wq_finish(job);
    }
}

static void part_wq_kick(part_reg_t *reg);

static void part_wq_done(net_job_t *j)
{
    part_wq_job_t *job = (part_wq_job_t *)j;
    part_reg_t *reg = job->reg;
    job->written = 1;
    part_wq_commit_ready(reg->wq);
    part_wq_kick(reg);
}

/* Sends jobs out while workers are free. Without a pool (one CPU, or
 * shutting down) the writes run here, job after job. */
static void part_wq_kick(part_reg_t *reg)
{
    part_wq_t *wq = part_wq_state(reg);
    int max_out = reg->pool && !reg->stopping ? net_pool_threads(reg->pool) : 1;
    while (wq->head && wq->nout < max_out) {
        part_wq_job_t *job = part_wq_build(reg, wq);
        if (!job->nops && !job->nreqs) {
            free(job); /* the head waits for the writes out */
            return;
        }
        job->job.work = part_wq_work;
        job->job.done = part_wq_done;
        if (wq->out_tail)
            wq->out_tail->next = job;
        else
            wq->out = job;
        wq->out_tail = job;
        wq->nout++;
        if (reg->pool && !reg->stopping) {
            net_pool_submit_first(reg->pool, &job->job);
            continue;
        }
        part_wq_work(&job->job);
        job->written = 1;
        part_wq_commit_ready(wq);
    }
}

void part_wq_add(part_reg_t *reg, part_append_t *op)
{
    part_wq_t *wq = part_wq_state(reg);
    op->wq_next = NULL;
    if (wq->tail)
        wq->tail->wq_next = op;
    else
        wq->head = op;
    wq->tail = op;
    part_wq_kick(reg);
}

int part_wq_idle(part_reg_t *reg)
{
    part_wq_t *wq = reg->wq;
    return !wq || (!wq->nout && !wq->head);
}

void part_wq_free(part_reg_t *reg)
{
    if (!reg->wq)
        return;
    part_wq_kick(reg); /* what is left is written here */
    free(reg->wq);
    reg->wq = NULL;
}

/* The worker pool: every job runs its work off the loop's thread and its
 * done callback on it, nothing is lost when many jobs race for the done
 * list, and freeing the pool finishes what was queued. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "net/net_pool.h"
#include "tests/unit/unit.h"

#define NJOBS 2000

typedef struct tjob_s {
    net_job_t job; /* first */
    pthread_t worker;
    int input, output;
    unsigned hash;
    int done;
} tjob_t;

static pthread_t main_thread;
static net_loop_t *loop;
static int ndone, bad_thread;
static int thread_exits;
static pthread_mutex_t exit_mu = PTHREAD_MUTEX_INITIALIZER;

static void tjob_work(net_job_t *job)
{
    tjob_t *t = (tjob_t *)job;
    t->worker = pthread_self();
    /* Enough work that workers overlap. */
    unsigned h = (unsigned)t->input;
    for (int i = 0; i < 2000; i++)
        h = h * 2654435761u + 1;
    t->hash = h;
    t->output = t->input * 3;
}

static void tjob_done(net_job_t *job)
{
    tjob_t *t = (tjob_t *)job;
    if (!pthread_equal(pthread_self(), main_thread) || pthread_equal(t->worker, main_thread))
        bad_thread++;
    t->done++;
    if (++ndone == NJOBS && loop)
        net_loop_stop(loop);
}

static void on_thread_exit(void)
{
    pthread_mutex_lock(&exit_mu);
    thread_exits++;
    pthread_mutex_unlock(&exit_mu);
}

static tjob_t *make_jobs(void)
{
    tjob_t *jobs = calloc(NJOBS, sizeof(*jobs));
    for (int i = 0; i < NJOBS; i++) {
        jobs[i].job.work = tjob_work;
        jobs[i].job.done = tjob_done;
        jobs[i].input = i;
    }
    return jobs;
}

static void check_jobs(tjob_t *jobs)
{
    int wrong = 0;
    for (int i = 0; i < NJOBS; i++)
        wrong += jobs[i].done != 1 || jobs[i].output != i * 3;
    CU_ASSERT_EQUAL(wrong, 0);
    CU_ASSERT_EQUAL(ndone, NJOBS);
    CU_ASSERT_EQUAL(bad_thread, 0);
}

static void test_round_trip(void)
{
    main_thread = pthread_self();
    ndone = bad_thread = thread_exits = 0;
    loop = net_loop_new();
    net_pool_t *pool = net_pool_new(loop, 3, on_thread_exit);
    CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
    tjob_t *jobs = make_jobs();
    for (int i = 0; i < NJOBS; i++)
        net_pool_submit(pool, &jobs[i].job);
    CU_ASSERT_EQUAL(net_pool_pending(pool), NJOBS);
    net_loop_run(loop);
    CU_ASSERT_EQUAL(net_pool_pending(pool), 0);
    check_jobs(jobs);
    net_pool_free(pool);
    CU_ASSERT_EQUAL(thread_exits, 3);
    net_loop_free(loop);
    loop = NULL;
    free(jobs);
}

/* Shutdown with work queued: the free runs every done callback. */
static void test_free_drains(void)
{
    main_thread = pthread_self();
    ndone = bad_thread = thread_exits = 0;
    net_loop_t *l = net_loop_new();
    net_pool_t *pool = net_pool_new(l, 2, on_thread_exit);
    CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
    tjob_t *jobs = make_jobs();
    for (int i = 0; i < NJOBS; i++)
        net_pool_submit(pool, &jobs[i].job);
    net_pool_free(pool);
    check_jobs(jobs);
    CU_ASSERT_EQUAL(thread_exits, 2);
    net_loop_free(l);
    free(jobs);
}

/* Resizing while jobs run: more workers at once, fewer after their
 * current job; nothing is lost, and the retired workers exit (joined at
 * the free). */
static void test_resize(void)
{
    main_thread = pthread_self();
    ndone = bad_thread = thread_exits = 0;
    loop = net_loop_new();
    net_pool_t *pool = net_pool_new(loop, 2, on_thread_exit);
    CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
    tjob_t *jobs = make_jobs();
    for (int i = 0; i < NJOBS / 2; i++)
        net_pool_submit(pool, &jobs[i].job);
    CU_ASSERT_EQUAL(net_pool_resize(pool, 4), 0);
    CU_ASSERT_EQUAL(net_pool_threads(pool), 4);
    CU_ASSERT_EQUAL(net_pool_resize(pool, 1), 0);
    CU_ASSERT_EQUAL(net_pool_threads(pool), 1);
    for (int i = NJOBS / 2; i < NJOBS; i++)
        net_pool_submit(pool, &jobs[i].job);
    CU_ASSERT_EQUAL(net_pool_resize(pool, 3), 0);
    CU_ASSERT_EQUAL(net_pool_threads(pool), 3);
    net_loop_run(loop);
    check_jobs(jobs);
    net_pool_free(pool);
    CU_ASSERT_EQUAL(thread_exits, 6); /* 2, 2 more, then 2 more after 3 retired */
    net_loop_free(loop);
    loop = NULL;
    free(jobs);
}

static int exits(void)
{
    pthread_mutex_lock(&exit_mu);
    int n = thread_exits;
    pthread_mutex_unlock(&exit_mu);
    return n;
}

/* Retired workers are joined by the next resize: shrinking and growing
 * again and again holds no more threads than are active. */
static void test_resize_joins(void)
{
    thread_exits = 0;
    loop = net_loop_new();
    net_pool_t *pool = net_pool_new(loop, 1, on_thread_exit);
    CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
    for (int round = 1; round <= 20; round++) {
        CU_ASSERT_EQUAL(net_pool_resize(pool, 4), 0);
        CU_ASSERT_EQUAL(net_pool_resize(pool, 1), 0);
        for (int ms = 0; ms < 5000 && exits() < 3 * round; ms++)
            usleep(1000);
        CU_ASSERT_EQUAL(net_pool_resize(pool, 1), 0);
        CU_ASSERT_EQUAL(net_pool_held(pool), 1);
    }
    net_pool_free(pool);
    net_loop_free(loop);
    loop = NULL;
}

int main(void)
{
    CU_initialize_registry();
    CU_pSuite s = CU_add_suite("net_pool", NULL, NULL);
    CU_add_test(s, "jobs go out and come back on the loop", test_round_trip);
    CU_add_test(s, "resized while jobs run", test_resize);
    CU_add_test(s, "retired workers joined", test_resize_joins);
    CU_add_test(s, "free finishes queued jobs", test_free_drains);
    return unit_run();
}

/* The Raft core (src/cluster/raft*.c) in the simulated world of
 * raft_sim.h: first small worlds without faults (one voter, three voters
 * electing a leader and committing), then many seeded worlds of 3 and 5
 * voters with an observer under message loss, duplication, delay and
 * reordering, cut links, pauses and crashes with torn writes, each
 * followed by a calm in which the quorum must make progress again.
 *
 * RAFT_SIM_SEEDS=N runs N seeds per shape (the default is the short
 * budget of `make check`; `make raft-sim` runs the long one).
 * RAFT_SIM_SEED=S replays one seed, printing its crashes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/raft_sim.h"
#include "tests/unit/unit.h"

static int env_int(const char *name, int dflt)
{
    const char *v = getenv(name);
    return v && *v ? atoi(v) : dflt;
}

static void calm_world(sim_opts_t *o, int nvoters)
{
    sim_opts_default(o);
    o->nvoters = nvoters;
    o->nobservers = 1;
    o->loss_pct = o->dup_pct = 0;
    o->crash_per_mille = o->cut_per_mille = 0;
    o->chaos_ms = 100;
    o->calm_ms = 10000;
}

static void test_one_voter(void)
{
    sim_opts_t o;
    sim_result_t r;
    calm_world(&o, 1);
    sim_run(1, &o, &r);
    CU_ASSERT(r.ok);
    if (!r.ok)
        printf("%s\n", r.why);
    CU_ASSERT_EQUAL(r.elections, 1);
    CU_ASSERT(r.first_leader_ms >= 0 && r.first_leader_ms < 10);
    /* a proposal every 50 ms for 10 s, 1-3 records each */
    CU_ASSERT(r.committed > 200);
}

static void test_three_voters(void)
{
    sim_opts_t o;
    sim_result_t r;
    calm_world(&o, 3);
    for (uint64_t seed = 1; seed <= 20; seed++) {
        sim_run(seed, &o, &r);
        CU_ASSERT(r.ok);
        if (!r.ok)
            printf("seed %llu: %s\n", (unsigned long long)seed, r.why);
        /* no faults: one election, after one to two election timeouts
         * (1000 ms, randomized) plus a pre-vote and a vote round */
        CU_ASSERT_EQUAL(r.elections, 1);
        CU_ASSERT(r.first_leader_ms >= 1000 && r.first_leader_ms < 2200);
        CU_ASSERT(r.committed > 100);
    }
}

static int run_seeds(int nvoters, int nseeds, uint64_t base, int reconf_ms)
{
    sim_opts_t o;
    sim_result_t r;
    int failed = 0, reconfs = 0;
    int64_t commits = 0, crashes = 0, elections = 0, snaps = 0, installs = 0;
    sim_opts_default(&o);
    o.nvoters = nvoters;
    o.reconf_every_ms = reconf_ms;
    if (reconf_ms)
        o.nobservers = 2; /* room to grow the set */
    for (int i = 0; i < nseeds; i++) {
        uint64_t seed = base + (uint64_t)i;
        sim_run(seed, &o, &r);
        commits += r.committed;
        crashes += r.crashes;
        elections += r.elections;
        snaps += r.snapshots;
        installs += r.installs;
        reconfs += r.reconfs;
        if (r.ok)
            continue;
        failed++;
        printf("FAILED: %d voters, seed %llu (replay: RAFT_SIM_SEED=%llu RAFT_SIM_VOTERS=%d "
               "RAFT_SIM_RECONF_MS=%d): %s\n", nvoters, (unsigned long long)seed,
               (unsigned long long)seed, nvoters, reconf_ms, r.why);
    }
    printf("%d voters%s: %d seeds, %d failed; %lld commits, %lld crashes, %lld elections, "
           "%lld snapshots, %lld installed, %d voter changes\n", nvoters,
           reconf_ms ? " changing" : "", nseeds, failed, (long long)commits, (long long)crashes,
           (long long)elections, (long long)snaps, (long long)installs, reconfs);
    /* the snapshot paths are run, not only compiled */
    if (nseeds >= 20 && installs == 0)
        failed++;
    return failed;
}

static void test_seeds_3(void)
{
    CU_ASSERT_EQUAL(run_seeds(3, env_int("RAFT_SIM_SEEDS", 300), 1000, 0), 0);
}

static void test_seeds_5(void)
{
    CU_ASSERT_EQUAL(run_seeds(5, env_int("RAFT_SIM_SEEDS", 300) / 2, 500000, 0), 0);
}

/* A dynamic quorum: the voter set changes by one node every 700 ms of
 * the run, under the same faults; the same checks hold (one leader per
 * epoch, committed entries kept) and the quorum progresses in the calm. */
static void test_seeds_reconf(void)
{
    CU_ASSERT_EQUAL(run_seeds(3, env_int("RAFT_SIM_SEEDS", 300) / 5, 900000, 700), 0);
}

static int replay(uint64_t seed)
{
    sim_opts_t o;
    sim_result_t r;
    sim_opts_default(&o);
    o.nvoters = env_int("RAFT_SIM_VOTERS", 3);
    o.reconf_every_ms = env_int("RAFT_SIM_RECONF_MS", 0);
    if (o.reconf_every_ms)
        o.nobservers = 2;
    o.verbose = 1;
    sim_run(seed, &o, &r);
    printf("seed %llu: %s; %lld committed, %d elections, %lld crashes\n",
           (unsigned long long)seed, r.ok ? "ok" : r.why, (long long)r.committed, r.elections,
           (long long)r.crashes);
    printf("%d passed, %d failed\n", r.ok, !r.ok);
    return r.ok ? 0 : 1;
}

int main(void)
{
    const char *one = getenv("RAFT_SIM_SEED");
    if (one && *one)
        return replay(strtoull(one, NULL, 10));
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("raft_sim", NULL, NULL);
    CU_add_test(s, "one voter", test_one_voter);
    CU_add_test(s, "three voters, no faults", test_three_voters);
    CU_add_test(s, "seeded faults, 3 voters", test_seeds_3);
    CU_add_test(s, "seeded faults, 5 voters", test_seeds_5);
    CU_add_test(s, "seeded faults, a changing voter set", test_seeds_reconf);
    return unit_run();
}

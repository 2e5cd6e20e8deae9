/* The express path of the job (launcher/express.h; under mpirun -n 2 and
 * 3, on the default transports, where agents on this host take runs from
 * their rings, and on tcp,self, where frames carry everything): runs and
 * copies interleaved on one device keep their order under load, runs that
 * outrun the ring, two proxies of one machine used in parallel; and a
 * ring's slot forged by another process of the user (the test writes the
 * shared ring itself) fails the job, never reaches memory. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "base/clock.h"
#include "base/env.h"
#include "express.h"
#include "express_messages.h"
#include "job_state.h"
#include "proxy.h"
#include "rig/rig_program.h"
#include "rig_mpi_test.h"
#include "route/route.h"
#include "wait.h"

void rig_test_agent_setup(int rank) {
  (void)rank;
}

/* A host program: word 0 of input 0 += Int(0) + 1, one launch of add_u64. */
static rig_desc *adding(void) {
  rig_desc *d = rig_desc_create();
  rig_desc_add_device(d, rig_host_isa());
  rig_test_add_kernels(d, 0);
  rig_desc_add_input(d, 0, 64);
  d->ints = 1;
  uint64_t params[2] = {0, 0};
  rig_desc_submit *s = rig_desc_add_submit(d, NULL, 0);
  rig_desc_submit_add_slot(d, s, rig_desc_slot_input(0));
  rig_desc_part *p = rig_desc_submit_add_launch(d, s, 0, "add_u64", params, 16, rig_desc_fixed(1),
                                                rig_desc_fixed(1));
  rig_desc_part_add_ref(d, p, 0, 0, RIG_USE_WRITE);
  rig_desc_hole *h = rig_desc_data_add_hole(d, &p->u.launch.params, 8, RIG_W64, 1, 0);
  rig_desc_terms_add(d, &h->terms, rig_desc_int(0), 1);
  rig_error err;
  if (rig_desc_check(d, &err) != RIG_OK) fprintf(stderr, "the program: %s\n", err.message);
  return d;
}

/* A host program of one launch of the no-op kernel, no inputs or ints. */
static rig_desc *empty(void) {
  rig_desc *d = rig_desc_create();
  rig_desc_add_device(d, rig_host_isa());
  rig_test_add_kernels(d, 0);
  rig_desc_submit *s = rig_desc_add_submit(d, NULL, 0);
  rig_desc_submit_add_launch(d, s, 0, "noop", NULL, 0, rig_desc_fixed(1), rig_desc_fixed(1));
  return d;
}

static rig_program *load(rig_device *host, const rig_desc *d) {
  rig_program *p = NULL;
  rig_error err;
  rig_status st = rig_program_load(d, &host, 1, NULL, &p, &err);
  if (st != RIG_OK) fprintf(stderr, "load: %s\n", err.message);
  CU_ASSERT_EQUAL_FATAL(st, RIG_OK);
  return p;
}

/* n rounds on machine m's host: copy 3k into word 0 of the input, run
 * adding k, copy word 0 out to slot k; nothing waited till the last.
 * Every slot must read 4k + 1. */
static void interleave(rig_job *job, size_t m, uint64_t n) {
  rig_device *host = rig_job_device(job, m, 0);
  rig_desc *d = adding();
  rig_program *p = load(host, d);
  rig_buffer *input = NULL, *src = rig_test_host_buffer(n * 8), *dst = rig_test_host_buffer(n * 8);
  rig_error err;
  CU_ASSERT_EQUAL_FATAL(rig_buffer_create(host, RIG_KIND_PINNED, 64, &input, &err), RIG_OK);
  uint64_t *s = rig_buffer_host(src), *out = rig_buffer_host(dst);
  size_t npoints;
  rig_point *points = rig_program_step_points(p, &npoints);
  rig_point last = RIG_POINT_REACHED;
  rig_status st = RIG_OK;
  for (uint64_t k = 0; k < n && st == RIG_OK; k++) {
    s[k] = 3 * k;
    rig_point pt, ends[4];
    size_t nends;
    int64_t ints[1] = {(int64_t)k};
    rig_frame f = {&input, 1, ints, 1, points, npoints};
    if ((st = rig_buffer_copy_submit(src, k * 8, input, 0, 8, NULL, 0, &pt, &err)) == RIG_OK &&
        (st = rig_program_run(p, &f, NULL, 0, ends, &nends, &err)) == RIG_OK)
      st = rig_buffer_copy_submit(input, 0, dst, k * 8, 8, NULL, 0, &last, &err);
  }
  if (st == RIG_OK) st = rig_point_wait(last, &err);
  if (st != RIG_OK) fprintf(stderr, "machine %zu: %s\n", m, err.message);
  CU_ASSERT_EQUAL(st, RIG_OK);
  uint64_t bad = 0;
  for (uint64_t k = 0; k < n; k++)
    if (out[k] != 4 * k + 1 && bad++ < 5)
      fprintf(stderr, "machine %zu: slot %llu reads %llu, not %llu\n", m, (unsigned long long)k,
              (unsigned long long)out[k], (unsigned long long)(4 * k + 1));
  CU_ASSERT_EQUAL(bad, 0);
  free(points);
  rig_buffer_release(input);
  rig_buffer_release(src);
  rig_buffer_release(dst);
  rig_program_release(p);
  rig_desc_free(d);
}

static void test_runs_and_copies_interleaved_on_one_device_stay_ordered(void) {
  rig_job *job = rig_test_job_start_ok();
  for (size_t m = 1; m < rig_job_machines(job); m++) interleave(job, m, m == 1 ? 10000 : 1000);
  rig_test_job_close_ok(job);
}

/* More runs in flight than a ring has slots: the rest go by frame, and the
 * agent takes both in order. */
static void test_runs_that_outrun_the_ring_all_end(void) {
  rig_job *job = rig_test_job_start_ok();
  rig_desc *d = empty();
  rig_program *p = load(rig_job_device(job, 1, 0), d);
  size_t npoints;
  rig_point *points = rig_program_step_points(p, &npoints);
  rig_frame f = {NULL, 0, NULL, 0, points, npoints};
  rig_point ends[4 * 2000], last[4];
  size_t nends = 0, nlast = 0;
  rig_error err;
  rig_status st = RIG_OK;
  for (int k = 0; k < 2000 && st == RIG_OK; k++) {
    st = rig_program_run(p, &f, NULL, 0, last, &nlast, &err);
    for (size_t e = 0; e < nlast; e++) ends[nends++] = last[e];
  }
  CU_ASSERT_EQUAL(st, RIG_OK);
  for (size_t e = 0; e < nends && st == RIG_OK; e++)
    if ((st = rig_point_wait(ends[e], &err)) != RIG_OK) fprintf(stderr, "%s\n", err.message);
  CU_ASSERT_EQUAL(st, RIG_OK);
  free(points);
  rig_program_release(p);
  rig_desc_free(d);
  rig_test_job_close_ok(job);
}

/* One run of p on its machine, waited. */
static void run_waited(rig_program *p) {
  size_t npoints, nends = 0;
  rig_point *points = rig_program_step_points(p, &npoints), ends[4];
  rig_frame f = {NULL, 0, NULL, 0, points, npoints};
  rig_error err;
  rig_status st = rig_program_run(p, &f, NULL, 0, ends, &nends, &err);
  for (size_t e = 0; e < nends && st == RIG_OK; e++) st = rig_point_wait(ends[e], &err);
  if (st != RIG_OK) fprintf(stderr, "a run: %s\n", err.message);
  CU_ASSERT_EQUAL(st, RIG_OK);
  free(points);
}

/* After a run and a quiet, machine 1's host executor sleeps on its ring's
 * bell; with RIG_JOB_POLL=1 (the suite's express-2-poll run) it polls for
 * as long as the job lasts instead. The next run ends either way. */
static void test_an_executor_sleeps_after_a_quiet_unless_it_polls(void) {
  rig_job *job = rig_test_job_start_ok();
  ex_ring *ring = rig_express_ring(job->as_controller->link->express, 1, 0);
  if (!ring) {
    rig_test_skip(__func__, "no ring: frames carry every run here");
    rig_test_job_close_ok(job);
    return;
  }
  rig_desc *d = empty();
  rig_program *p = load(rig_job_device(job, 1, 0), d);
  run_waited(p);
  if (rig_env_get()->job_poll) {
    /* A quiet 4000 times the 50 us an executor polls before it sleeps. */
    bool slept = false;
    for (double t0 = rig_now_s(); rig_now_s() - t0 < 0.2;) slept |= atomic_load(&ring->sleeping);
    CU_ASSERT_FALSE(slept);
  } else {
    rig_wait w = rig_wait_begin(RIG_HANG_S);
    while (!atomic_load(&ring->sleeping) && rig_wait_more(&w)) {
    }
    CU_ASSERT_TRUE(atomic_load(&ring->sleeping));
  }
  run_waited(p);
  rig_program_release(p);
  rig_desc_free(d);
  rig_test_job_close_ok(job);
}

/* A machine reached by messages knocks before each frame it sends (a
 * load's reply among them), so that a quiet controller's control thread
 * takes it at once; one that every agent knocks naps long, no other. */
static void test_frames_of_machines_reached_by_messages_come_knocked(void) {
  rig_job *job = rig_test_job_start_ok();
  bool all = rig_job_machines(job) > 1;
  rig_desc *d = empty();
  for (size_t m = 1; m < rig_job_machines(job); m++) {
    bool knocks = job->knocks && rig_express_msg_knocks(job->knocks, (int)m);
    all &= knocks;
    if (!knocks) continue;
    uint64_t before = atomic_load(&job->c.knocks);
    rig_program *p = load(rig_job_device(job, m, 0), d);
    /* The knock goes beside the reply by another channel: it may come
     * after it. The bound only ends a failing test. */
    rig_wait w = rig_wait_begin(RIG_HANG_S);
    while (atomic_load(&job->c.knocks) == before && rig_wait_more(&w)) {
    }
    CU_ASSERT(atomic_load(&job->c.knocks) > before);
    rig_program_release(p);
  }
  CU_ASSERT_EQUAL(job->c.knocked_by_all, all);
  rig_desc_free(d);
  rig_test_job_close_ok(job);
}

/* Large copies in and out of memory of machine 1's host (which the
 * controller maps and copies itself) between runs that write it: each
 * copy follows the run before it, each run the copy before it. */
static void test_large_copies_follow_the_runs_of_their_device(void) {
  rig_job *job = rig_test_job_start_ok();
  enum { N = 2 << 20, ROUNDS = 50 };
  rig_device *host = rig_job_device(job, 1, 0);
  rig_desc *d = adding();
  rig_program *p = load(host, d);
  rig_buffer *input = NULL, *src = rig_test_host_buffer(N), *dst = rig_test_host_buffer(N);
  rig_error err;
  CU_ASSERT_EQUAL_FATAL(rig_buffer_create(host, RIG_KIND_PINNED, N, &input, &err), RIG_OK);
  size_t npoints;
  rig_point *points = rig_program_step_points(p, &npoints);
  unsigned char *s = rig_buffer_host(src), *o = rig_buffer_host(dst);
  int bad = 0;
  rig_status st = RIG_OK;
  for (uint64_t k = 0; k < ROUNDS && st == RIG_OK; k++) {
    for (size_t i = 8; i < N; i++) s[i] = (unsigned char)(i * 7 + k);
    uint64_t w = 3 * k;
    memcpy(s, &w, 8);
    rig_point pt, ends[4];
    size_t nends;
    int64_t ints[1] = {(int64_t)k};
    rig_frame f = {&input, 1, ints, 1, points, npoints};
    if ((st = rig_buffer_copy_submit(src, 0, input, 0, N, NULL, 0, &pt, &err)) == RIG_OK &&
        (st = rig_program_run(p, &f, NULL, 0, ends, &nends, &err)) == RIG_OK &&
        (st = rig_buffer_copy_submit(input, 0, dst, 0, N, NULL, 0, &pt, &err)) == RIG_OK &&
        (st = rig_point_wait(pt, &err)) == RIG_OK) {
      memcpy(&w, o, 8);
      bad += w != 4 * k + 1 || memcmp(o + 8, s + 8, N - 8) != 0;
    }
  }
  if (st != RIG_OK) fprintf(stderr, "%s\n", err.message);
  CU_ASSERT_EQUAL(st, RIG_OK);
  CU_ASSERT_EQUAL(bad, 0);
  free(points);
  rig_buffer_release(input);
  rig_buffer_release(src);
  rig_buffer_release(dst);
  rig_program_release(p);
  rig_desc_free(d);
  rig_test_job_close_ok(job);
}

typedef struct copier {
  rig_device *dev;
  int rounds;
  int bad;
  rig_status st;
} copier;

/* Rounds of copy in, copy out on one device, each checked. */
static void *copies(void *arg) {
  copier *c = arg;
  enum { N = 4096 };
  rig_buffer *remote = NULL, *in = NULL, *out = NULL;
  rig_error err;
  c->st = rig_buffer_create(c->dev, RIG_KIND_DEVICE, N, &remote, &err);
  if (c->st == RIG_OK) c->st = rig_buffer_create(rig_host(), RIG_KIND_PINNED, N, &in, &err);
  if (c->st == RIG_OK) c->st = rig_buffer_create(rig_host(), RIG_KIND_PINNED, N, &out, &err);
  for (int r = 0; r < c->rounds && c->st == RIG_OK; r++) {
    unsigned char *s = rig_buffer_host(in), *o = rig_buffer_host(out);
    for (size_t i = 0; i < N; i++) s[i] = (unsigned char)(i * 13 + (size_t)r);
    rig_point p;
    if ((c->st = rig_buffer_copy_submit(in, 0, remote, 0, N, NULL, 0, &p, &err)) == RIG_OK &&
        (c->st = rig_buffer_copy_submit(remote, 0, out, 0, N, NULL, 0, &p, &err)) == RIG_OK &&
        (c->st = rig_point_wait(p, &err)) == RIG_OK)
      c->bad += memcmp(s, o, N) != 0;
  }
  if (c->st != RIG_OK) fprintf(stderr, "%s: %s\n", rig_device_name(c->dev), err.message);
  rig_buffer_release(remote);
  rig_buffer_release(in);
  rig_buffer_release(out);
  return NULL;
}

static void test_two_proxies_of_one_machine_in_parallel(void) {
  rig_job *job = rig_test_job_start_ok();
  copier c[2] = {{rig_job_device_named(job, 1, "cpu:0"), 300, 0, RIG_OK},
                 {rig_job_device_named(job, 1, "cpu:1"), 300, 0, RIG_OK}};
  CU_ASSERT_PTR_NOT_NULL_FATAL(c[0].dev);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c[1].dev);
  pthread_t t[2];
  for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, copies, &c[i]);
  /* And runs on the host of the same machine meanwhile. */
  interleave(job, 1, 2000);
  for (int i = 0; i < 2; i++) {
    pthread_join(t[i], NULL);
    CU_ASSERT_EQUAL(c[i].st, RIG_OK);
    CU_ASSERT_EQUAL(c[i].bad, 0);
  }
  rig_test_job_close_ok(job);
}

/* Forges hand-over 1 of machine 1's host in its ring, as any process that
 * maps the ring could (kind, length, bytes), and waits, bounded, for the
 * job to fail with want (a printf format of the slot's copy address). */
static void forge(const char *test, uint32_t kind, uint32_t len, const ex_copy *copy,
                  const char *want) {
  rig_job *job = rig_test_job_start_ok();
  ex_ring *ring = rig_express_ring(job->as_controller->link->express, 1, 0);
  if (!ring) {
    rig_test_skip(test, "no ring: frames carry every run here");
    rig_test_job_close_ok(job);
    return;
  }
  /* Memory 1 of machine 1, which a forged copy names. */
  rig_buffer *b = NULL;
  rig_error err;
  CU_ASSERT_EQUAL_FATAL(
      rig_buffer_create(rig_job_device(job, 1, 0), RIG_KIND_DEVICE, 4096, &b, &err), RIG_OK);
  ex_slot *s = &ring->slots[1];
  if (copy) memcpy(s->bytes, copy, sizeof *copy);
  s->len = len;
  s->kind = kind;
  atomic_store_explicit(&s->value, 1, memory_order_release);
  rig_express_ring_wake(ring);
  rig_wait w = rig_wait_begin(RIG_HANG_S);
  while (!rig_job_failed(job, NULL) && rig_wait_more(&w)) {
  }
  CU_ASSERT_TRUE(rig_job_failed(job, &err));
  CU_ASSERT_STRING_EQUAL(err.message, want);
  rig_buffer_release(b);
  RIG_ASSERT_ERROR(rig_job_close(job, &err), err, RIG_EJOB, want);
}

static void test_a_forged_slot_longer_than_a_slot_fails_the_job(void) {
  forge(__func__, EX_WORDS, 5000, NULL,
        "machine 1: device 0: hand-over 1 from the ring: 5000 bytes, more than a slot holds");
}

static void test_a_forged_copy_longer_than_its_slot_fails_the_job(void) {
  ex_copy c = {1, 0, 2000, 0};
  forge(__func__, EX_IN, sizeof c + 8, &c,
        "machine 1: device 0: hand-over 1 from the ring: a copy of 2000 bytes in a slot of 40");
}

static void test_a_forged_far_copy_outside_the_open_windows_fails_the_job(void) {
  static uint64_t secret[8];
  ex_copy c = {1, 0, sizeof secret, (uint64_t)(uintptr_t)secret};
  char want[200];
  snprintf(want, sizeof want,
           "machine 1: a far copy of 64 bytes at 0x%llx, outside the controller's memory open to "
           "this machine",
           (unsigned long long)c.address);
  forge(__func__, EX_OUT_FAR, sizeof c, &c, want);
  for (int i = 0; i < 8; i++) CU_ASSERT_EQUAL(secret[i], 0);
  forge(__func__, EX_IN_FAR, sizeof c, &c, want);
}

static void test_a_forged_far_copy_of_another_length_fails_the_job(void) {
  ex_copy c = {1, 0, 8, 0};
  forge(__func__, EX_OUT_FAR, 10, &c,
        "machine 1: device 0: hand-over 1 from the ring: 10 bytes, not a far copy's");
}

static void test_a_forged_mark_with_bytes_fails_the_job(void) {
  forge(__func__, EX_DONE, 8, NULL,
        "machine 1: device 0: hand-over 1 from the ring: 8 bytes, a mark carries none");
}

static void test_a_forged_slot_of_no_kind_fails_the_job(void) {
  forge(__func__, 999, 0, NULL, "machine 1: device 0: hand-over 1 from the ring: kind 999");
}

/* A job's proxies made and freed, on a job of this process's own making
 * (no MPI): machine 1 of 3 devices, reached by frames (its express's
 * routes as the start makes them before they are agreed). */
static bool proxies_come_and_go(void) {
  rig_job job = {.rank = 0, .size = 2, .express = rig_express_new(2, 3)};
  if (!job.express || !rig_route_init(job.express)) {
    rig_express_free(job.express);
    return false;
  }
  rig_machine machines[2] = {0};
  rig_machine_device devices[3] = {{"host", "x86_64", 1 << 20, "", -1},
                                   {"cpu:0", "cpu-x86_64", 1 << 20, "", -1},
                                   {"cpu:1", "cpu-x86_64", 1 << 20, "", -1}};
  machines[1] = (rig_machine){.rank = 1, .ndevices = 3, .devices = devices};
  rig_device **devs[2] = {NULL, NULL};
  proxy **pxs[2] = {NULL, NULL};
  job.machines = machines;
  job.devices = devs;
  struct job_controller ctrl = {.proxies = pxs}; /* the role: the controller */
  job.as_controller = &ctrl;
  rig_error err;
  bool ok = rig_proxies_make(&job, 1, &err) == RIG_OK;
  if (!ok) fprintf(stderr, "rig_proxies_make: %s\n", err.message);
  rig_proxies_free(&job);
  free(devs[1]);
  free(pxs[1]);
  return ok;
}

/* The devices in the table now. */
static size_t devices_live(void) {
  size_t n = 0;
  for (size_t place = 0; place < rig_device_count(); place++)
    n += rig_device_in_place(place) != NULL;
  return n;
}

/* 100 000 jobs' worth of proxies in one process (300 000 devices, past
 * the 65 536 places of the table): each job's devices leave the table and
 * their places are taken again (their indices never), so every job's
 * proxies are made and the table holds what it held. */
static void test_a_hundred_thousand_jobs_of_proxies_leave_the_table_as_it_was(void) {
  size_t before = devices_live();
  int failed = 0;
  for (int k = 0; k < 100000; k++) failed += !proxies_come_and_go();
  CU_ASSERT_EQUAL(failed, 0);
  CU_ASSERT_EQUAL(devices_live(), before);
}

void rig_test_register(void) {
  static CU_TestInfo tests[] = {
      {"runs and copies interleaved on one device stay ordered",
       test_runs_and_copies_interleaved_on_one_device_stay_ordered},
      {"runs that outrun the ring all end", test_runs_that_outrun_the_ring_all_end},
      {"an executor sleeps after a quiet unless it polls",
       test_an_executor_sleeps_after_a_quiet_unless_it_polls},
      {"two proxies of one machine in parallel", test_two_proxies_of_one_machine_in_parallel},
      {"large copies follow the runs of their device",
       test_large_copies_follow_the_runs_of_their_device},
      {"frames of machines reached by messages come knocked",
       test_frames_of_machines_reached_by_messages_come_knocked},
      {"a forged slot longer than a slot fails the job",
       test_a_forged_slot_longer_than_a_slot_fails_the_job},
      {"a forged copy longer than its slot fails the job",
       test_a_forged_copy_longer_than_its_slot_fails_the_job},
      {"a forged far copy outside the open windows fails the job",
       test_a_forged_far_copy_outside_the_open_windows_fails_the_job},
      {"a forged far copy of another length fails the job",
       test_a_forged_far_copy_of_another_length_fails_the_job},
      {"a forged mark with bytes fails the job", test_a_forged_mark_with_bytes_fails_the_job},
      {"a forged slot of no kind fails the job", test_a_forged_slot_of_no_kind_fails_the_job},
      {"a hundred thousand jobs of proxies leave the table as it was",
       test_a_hundred_thousand_jobs_of_proxies_leave_the_table_as_it_was},
      CU_TEST_INFO_NULL};
  rig_test_add_suite("express", tests);
}

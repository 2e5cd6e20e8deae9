/* pyjob_floor: the C side of the python/job-run row (docs/bench.md,
 * bench/python_job.py), a module the Python bench loads with ctypes, so
 * that the row and its floor run in the same processes, on the same job
 * and the same loaded program, batches alternating.
 *
 * The floor is what rig.job.JobProgram.run does, written against the C
 * API: the series planned, each run begun by the job's tree, the program
 * run over the frame and its ends waited, its time taken, the run ended;
 * the run still in flight done; the times gathered to machine 0. The
 * report (bench_report) is bench.c's, linked in, so that the row's line is
 * every other row's. */
#include <stdlib.h>

#include "bench.h"
#include "rig/rig_job.h"
#include "rig/rig_program.h"

/* `runs` runs of prog over frame, numbered from `first` (the runs since
 * the load: a rail's counts go on from the series before); ints[run_slot]
 * (run_slot >= 0) is the run's number, as a "run" int is. Returns the series' time on this
 * machine in ns, or 0 with err set. (Called through ctypes alone: the
 * declaration is for the warnings.) */
uint64_t pyjob_floor_runs(rig_job *job, rig_program *prog, const rig_frame *frame, int64_t *ints,
                          int run_slot, uint64_t first, uint64_t runs, rig_error *err);
uint64_t pyjob_floor_runs(rig_job *job, rig_program *prog, const rig_frame *frame, int64_t *ints,
                          int run_slot, uint64_t first, uint64_t runs, rig_error *err) {
  size_t room = rig_program_devices(prog);
  rig_point *ends = calloc(room ? room : 1, sizeof *ends);
  uint64_t *times = calloc(runs ? runs : 1, sizeof *times);
  size_t n = rig_job_machines(job), nends = 0;
  void **parts = rig_job_rank(job) == 0 ? calloc(n, sizeof *parts) : NULL;
  size_t *lens = rig_job_rank(job) == 0 ? calloc(n, sizeof *lens) : NULL;
  uint64_t t0 = bench_now_ns(), wall = 0;
  if (!ends || !times || (rig_job_rank(job) == 0 && (!parts || !lens))) {
    rig_job_fail(job, "pyjob_floor: out of memory");
    goto out;
  }
  rig_job_runs_plan(job, runs);
  for (uint64_t i = 0; i < runs; i++) {
    uint64_t r = first + i;
    if (rig_job_run_begin(job, r, err) != RIG_OK) goto out;
    if (run_slot >= 0) ints[run_slot] = (int64_t)r;
    uint64_t t = bench_now_ns();
    if (rig_program_run(prog, frame, NULL, 0, ends, &nends, err) != RIG_OK ||
        rig_points_wait(ends, nends, err) != RIG_OK) {
      rig_job_fail(job, "%s: %s", rig_job_label(job, rig_job_rank(job)), err->message);
      goto out;
    }
    times[i] = bench_now_ns() - t;
    if (rig_job_run_end(job, r, times[i], NULL, err) != RIG_OK) goto out;
  }
  if (rig_job_runs_done(job, NULL, err) != RIG_OK) goto out;
  if (rig_job_gather(job, times, runs * sizeof *times, parts, lens, err) != RIG_OK) goto out;
  wall = bench_now_ns() - t0;
out:
  for (size_t m = 0; parts && m < n; m++) free(parts[m]);
  free(parts);
  free(lens);
  free(times);
  free(ends);
  return wall;
}

/* The program on this machine (run_internal.h): loaded on its devices,
 * its inputs made and filled, each run handed over with its ints and its
 * ends waited for as the core waits (a device lost fails the run at once),
 * and its inputs read back. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "run_internal.h"

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Input i made on its device: zeros (a driver need not clear new memory),
 * then its bytes when given. */
static rig_status make_input(run_machine *m, const rig_desc *d, rig_device *const *devs, size_t i,
                             const uint8_t *bytes, rig_error *err) {
  const rig_desc_input *in = &d->inputs[i];
  size_t n = (size_t)in->bytes;
  rig_status st =
      rig_buffer_create(devs[in->device], RIG_KIND_PINNED, (uint64_t)in->bytes, &m->inputs[i], err);
  if (st != RIG_OK) {
    m->inputs[i] = NULL;
    return rig_error_prefix(err, "input %zu", i);
  }
  void *host = rig_buffer_host(m->inputs[i]);
  if (host && !bytes) {
    memset(host, 0, n);
    return RIG_OK;
  }
  void *zeros = !bytes && n ? calloc(1, n) : NULL;
  if (!bytes && n && !zeros) return rig_error_set(err, RIG_ENOMEM, "input %zu: out of memory", i);
  st = n ? rig_buffer_write(m->inputs[i], 0, bytes ? bytes : zeros, n, err) : RIG_OK;
  free(zeros);
  return st == RIG_OK ? st : rig_error_prefix(err, "input %zu", i);
}

rig_status run_machine_open(run_machine *m, const rig_desc *d, rig_device *const *devs,
                            uint8_t *const *bytes, rig_error *err) {
  memset(m, 0, sizeof *m);
  m->ninputs = d->ninputs;
  m->nints = (size_t)d->ints;
  /* calloc(0) may give NULL: ask for one element at least. */
  m->inputs = calloc(d->ninputs + 1, sizeof *m->inputs);
  m->ints = calloc(m->nints + 1, sizeof *m->ints);
  m->ends = calloc(d->ndevices + 1, sizeof *m->ends);
  if (!m->inputs || !m->ints || !m->ends) {
    run_machine_close(m);
    return rig_error_set(err, RIG_ENOMEM, "out of memory");
  }
  rig_status st = rig_program_load(d, devs, d->ndevices, NULL, &m->program, err);
  if (st != RIG_OK) {
    m->program = NULL;
    run_machine_close(m);
    return st;
  }
  m->step_points = rig_program_step_points(m->program, &m->nstep_points);
  if (!m->step_points && m->nstep_points) {
    run_machine_close(m);
    return rig_error_set(err, RIG_ENOMEM, "out of memory");
  }
  for (size_t i = 0; i < d->ninputs; i++)
    if ((st = make_input(m, d, devs, i, bytes[i], err)) != RIG_OK) {
      run_machine_close(m);
      return st;
    }
  return RIG_OK;
}

rig_status run_machine_run(run_machine *m, uint64_t r, const rig_run_int *ints, size_t nints,
                           uint64_t *ns, rig_error *err) {
  /* Every word of the program's ints is the frame's: those not given are 0
   * in every run, whatever a loop stored there in an earlier one. */
  for (size_t k = 0; k < m->nints; k++)
    m->ints[k] = k >= nints ? 0 : ints[k].run_index ? (int64_t)r : ints[k].number;
  rig_frame f = {m->inputs, m->ninputs, m->ints, m->nints, m->step_points, m->nstep_points};
  m->nends = 0;
  uint64_t t0 = now_ns();
  rig_status st = rig_program_run(m->program, &f, NULL, 0, m->ends, &m->nends, err);
  if (st == RIG_OK) st = rig_points_wait(m->ends, m->nends, err);
  if (st != RIG_OK) return st;
  *ns = now_ns() - t0;
  /* A trace the embedder set ends this run's steps by now. */
  rig_trace_reached(m->ends, m->nends);
  return RIG_OK;
}

rig_status run_machine_read(run_machine *m, size_t i, uint8_t **bytes, size_t *len,
                            rig_error *err) {
  rig_buffer *b = m->inputs[i];
  uint64_t n = rig_buffer_length(b);
  *bytes = NULL;
  *len = 0;
  uint8_t *out = n ? malloc((size_t)n) : NULL;
  if (n && !out) return rig_error_set(err, RIG_ENOMEM, "input %zu: out of memory", i);
  if (rig_buffer_read(b, 0, out, (size_t)n, err) != RIG_OK) {
    free(out);
    return rig_error_prefix(err, "input %zu", i);
  }
  *bytes = out;
  *len = (size_t)n;
  return RIG_OK;
}

void run_machine_close(run_machine *m) {
  if (m->program) rig_program_release(m->program);
  for (size_t i = 0; m->inputs && i < m->ninputs; i++)
    if (m->inputs[i]) rig_buffer_release(m->inputs[i]);
  free(m->inputs);
  free(m->step_points);
  free(m->ints);
  free(m->ends);
  memset(m, 0, sizeof *m);
}

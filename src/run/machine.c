/* A description's program on this machine (rig_run_machine, rig_run.h):
 * loaded on its devices, its inputs made as zeros and filled, each run
 * handed over with its ints, and its inputs read back. rig_run_file and
 * progrun's machines run through it. */
#include <stdlib.h>
#include <string.h>

#include "run_internal.h"

struct rig_run_machine {
  rig_program *program;
  rig_buffer **inputs; /* one per input of the description, on its device */
  size_t ninputs;
  int64_t *ints; /* every word of the program's ints: the frame's */
  size_t nints;
  rig_point *step_points; /* made once, shared by every run */
  size_t nstep_points;
  rig_point *ends; /* of the run handed over last */
  size_t nends;
};

/* Input i made on its device, as zeros: a driver need not clear new
 * memory, and an input not given is zeros. */
static rig_status make_input(rig_run_machine *m, const rig_desc *d, rig_device *const *devs,
                             size_t i, rig_error *err) {
  const rig_desc_input *in = &d->inputs[i];
  size_t n = (size_t)in->bytes;
  rig_status st =
      rig_buffer_create(devs[in->device], RIG_KIND_PINNED, (uint64_t)in->bytes, &m->inputs[i], err);
  if (st != RIG_OK) {
    m->inputs[i] = NULL;
    return rig_error_prefix(err, "input %zu", i);
  }
  void *host = rig_buffer_host(m->inputs[i]);
  if (host) {
    memset(host, 0, n);
    return RIG_OK;
  }
  void *zeros = n ? calloc(1, n) : NULL;
  if (n && !zeros) return rig_error_set(err, RIG_ENOMEM, "input %zu: out of memory", i);
  st = n ? rig_buffer_write(m->inputs[i], 0, zeros, n, err) : RIG_OK;
  free(zeros);
  return st == RIG_OK ? st : rig_error_prefix(err, "input %zu", i);
}

rig_status rig_run_machine_open(const rig_desc *d, rig_device *const *devs, const rig_rails *rails,
                                rig_run_machine **out, rig_error *err) {
  *out = NULL;
  rig_run_machine *m = calloc(1, sizeof *m);
  if (!m) return rig_error_set(err, RIG_ENOMEM, "out of memory");
  m->ninputs = d->ninputs;
  m->nints = (size_t)d->ints;
  /* calloc(0) may give NULL: ask for one element at least. */
  m->inputs = calloc(d->ninputs + 1, sizeof *m->inputs);
  m->ints = calloc(m->nints + 1, sizeof *m->ints);
  m->ends = calloc(d->ndevices + 1, sizeof *m->ends);
  if (!m->inputs || !m->ints || !m->ends) {
    rig_run_machine_close(m);
    return rig_error_set(err, RIG_ENOMEM, "out of memory");
  }
  rig_status st = rig_program_load(d, devs, d->ndevices, rails, &m->program, err);
  if (st != RIG_OK) {
    m->program = NULL;
    rig_run_machine_close(m);
    return st;
  }
  m->step_points = rig_program_step_points(m->program, &m->nstep_points);
  if (!m->step_points && m->nstep_points) {
    rig_run_machine_close(m);
    return rig_error_set(err, RIG_ENOMEM, "out of memory");
  }
  for (size_t i = 0; i < d->ninputs; i++)
    if ((st = make_input(m, d, devs, i, err)) != RIG_OK) {
      rig_run_machine_close(m);
      return st;
    }
  *out = m;
  return RIG_OK;
}

rig_status rig_run_machine_fill(rig_run_machine *m, size_t i, const void *bytes, size_t len,
                                rig_error *err) {
  if (i >= m->ninputs)
    return rig_error_set(err, RIG_EINVAL, "input %zu: no such input (the program has %zu)", i,
                         m->ninputs);
  if (rig_buffer_write(m->inputs[i], 0, bytes, len, err) != RIG_OK)
    return rig_error_prefix(err, "input %zu", i);
  return RIG_OK;
}

rig_status rig_run_machine_start(rig_run_machine *m, const int64_t *ints, size_t nints,
                                 const rig_point **ends, size_t *nends, rig_error *err) {
  /* Every word of the program's ints is the frame's: those not given are 0
   * in every run, whatever a loop stored there in an earlier one. */
  for (size_t k = 0; k < m->nints; k++) m->ints[k] = k < nints ? ints[k] : 0;
  rig_frame f = {m->inputs, m->ninputs, m->ints, m->nints, m->step_points, m->nstep_points};
  m->nends = 0;
  rig_status st = rig_program_run(m->program, &f, NULL, 0, m->ends, &m->nends, err);
  *ends = m->ends;
  *nends = m->nends;
  return st;
}

rig_status rig_run_machine_read(rig_run_machine *m, size_t i, uint8_t **bytes, size_t *len,
                                rig_error *err) {
  *bytes = NULL;
  *len = 0;
  if (i >= m->ninputs)
    return rig_error_set(err, RIG_EINVAL, "input %zu: no such input (the program has %zu)", i,
                         m->ninputs);
  rig_buffer *b = m->inputs[i];
  uint64_t n = rig_buffer_length(b);
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

void rig_run_machine_close(rig_run_machine *m) {
  if (!m) return;
  if (m->program) rig_program_release(m->program);
  for (size_t i = 0; m->inputs && i < m->ninputs; i++)
    if (m->inputs[i]) rig_buffer_release(m->inputs[i]);
  free(m->inputs);
  free(m->step_points);
  free(m->ints);
  free(m->ends);
  free(m);
}

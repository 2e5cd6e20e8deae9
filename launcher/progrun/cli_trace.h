/* The --trace file's pieces (cli_trace.c writes it): another machine's
 * clock, as the controller's hand-overs to it bound it. */
#ifndef RIG_CLI_TRACE_H
#define RIG_CLI_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rig/rig_program.h"

/* A hand-over of machine 0 to another machine: its run, when it was handed
 * over and when its end was seen there (0: never), machine 0's clock. */
typedef struct cli_handover {
  uint64_t run, begin, end;
} cli_handover;
/* (A job of machine-local runs has no hand-overs: each run's window on
 * machine 0, from its start there to its end everywhere, stands for them.) */

/* Machine m's hand-overs in machine 0's trace t0, by run; a run handed
 * over more than once (two programs) is left out, as nothing says which
 * of its events are whose. *out NULL (and 0) when none; false when out
 * of memory. */
bool cli_trace_handovers(const rig_trace *t0, size_t m, cli_handover **out, size_t *n);
/* Run `run`'s hand-over among h (by run), or NULL. */
const cli_handover *cli_handover_of(const cli_handover *h, size_t n, uint64_t run);

/* Narrows machine m's clock (offset: its clock less machine 0's, within
 * error) by its runs, each an exchange as a ping is: a hand-over's begin
 * comes before anything of its run on m, and its end after every step of
 * it there ended, so that offset <= t - begin for each time t of the run
 * on m, and offset >= reach - end for each step's reach. The offset is
 * set to the middle of what the pings and the runs leave (of what the
 * runs leave, where the pings' lies apart from it), its error half of
 * that. False (offset unchanged) when the runs contradict each other (a
 * clock that drifted during them): then each slice must be clamped into
 * its hand-over. */
bool cli_trace_narrow(const cli_handover *h, size_t nh, const rig_trace *tm, int64_t *offset,
                      uint64_t *error);

#endif

/* Private to src/run: what rig_run_file (run_file.c) strings together.
 * Each piece fills the caller's rig_error with a message that names the
 * field it came from ("input 0=x.bin: ..."), and prints nothing. */
#ifndef RIG_RUN_INTERNAL_H
#define RIG_RUN_INTERNAL_H

#include <stdint.h>

#include "rig/rig_run.h"

/* How much of a path a message shows: a longer one keeps its head and
 * tail around "...", so that the reason after it is never cut off. */
#define RUN_PATH_SHOWN 256
/* path, or its head and tail in buf (size bytes). */
const char *run_short_path(const char *path, char *buf, size_t size);

struct stat;
/* path opened for reading (*fd, *st its fstat), never waiting for a FIFO's
 * writer (a FIFO no process writes reads as empty); a directory refused
 * (EISDIR). Reads block from here. An errno, or 0 (*fd -1 on failure). */
int run_open_read(const char *path, int *fd, struct stat *st);

/* ---- an input's file (in_file.c) ------------------------------------------ */

/* The first bytes of an input of `bytes` bytes from the file at path: *out
 * is `bytes` long (malloc'd; NULL for 0 bytes), zero past the file's end.
 * A file longer than the input is refused (RIG_EINVAL), unread when its
 * size says so; one that cannot be read is RIG_ESYS; each message after
 * `label` ("input 0=x.bin"). */
rig_status run_read_input(const char *label, const char *path, uint64_t bytes, uint8_t **out,
                          rig_error *err);

/* ---- the program on this machine (machine.c) ----------------------------- */

typedef struct run_machine {
  rig_program *program;
  rig_buffer **inputs; /* one per input of the description, on its device */
  size_t ninputs;
  int64_t *ints; /* every word of the program's ints */
  size_t nints;
  rig_point *step_points; /* made once, shared by every run */
  size_t nstep_points;
  rig_point *ends;
  size_t nends;
} run_machine;

/* d loaded on devs, its inputs made (zeros) and filled with bytes[i] where
 * given (each the input's length). The load's failure as it gives it;
 * an input's, after "input <i>: ". On failure m holds nothing. */
rig_status run_machine_open(run_machine *m, const rig_desc *d, rig_device *const *devs,
                            uint8_t *const *bytes, rig_error *err);
/* Run r (0-based) handed over, ints[k] for word k (the rest 0), and its
 * ends waited for; *ns its time. The run's or the wait's failure. */
rig_status run_machine_run(run_machine *m, uint64_t r, const rig_run_int *ints, size_t nints,
                           uint64_t *ns, rig_error *err);
/* Input i's bytes once the work writing them is done (malloc'd, *len of
 * them; NULL for 0 bytes). */
rig_status run_machine_read(run_machine *m, size_t i, uint8_t **bytes, size_t *len, rig_error *err);
void run_machine_close(run_machine *m);

#endif

/* What the MPI programs of the loss tests (rail_lost, express_lost) share:
 * a clock, and the start every rank makes: MPI with threads, the ranks'
 * process ids gathered (the controller signals machine 1 by its pid), the
 * signal the command line asks for, the job started. */
#ifndef RIG_LOST_H
#define RIG_LOST_H

#include <sys/types.h>

#include "rig/rig_job.h"

double lost_now_s(void);

/* A whole file, malloc'd (NULL if it cannot be read). */
void *lost_read_file(const char *path, size_t *len);

/* argv[1] "stop" is SIGSTOP, else SIGKILL (*sig); *rank this rank; pids[0..1]
 * the two ranks' pids. NULL (after printing why) when the job did not start. */
rig_job *lost_start(int *argc, char ***argv, int *rank, int *sig, int pids[2]);

#endif

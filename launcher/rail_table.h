/* The job's rails (docs/rails.md), by id: the controller's (each with its
 * two machines) or an agent's ends; each machine finds its ends here when
 * it loads a program. */
#ifndef RIG_RAIL_TABLE_H
#define RIG_RAIL_TABLE_H

#include <pthread.h>

#include "base/array.h"
#include "request.h"
#include "rig/rig_rail.h"

typedef struct rig_job rig_job;

/* A rail of the job, as the controller made it (ends: its two machines),
 * or an agent's end of one. */
typedef struct job_rail {
  rig_job *job;
  rig_rail *rail;
  int ends[2];
  request *releasing[2]; /* RAIL_RELEASE requests posted to the agents' ends */
} job_rail;

typedef struct job_rails {
  pthread_mutex_t lock;
  rig_array items;  /* job_rail * */
  rig_rails lookup; /* this machine's ends by id, for its loads */
} job_rails;

void rig_job_rails_init(rig_job *job);
/* Releases every rail still made (the controller's, or an agent's ends)
 * and frees the table. */
void rig_job_rails_close(rig_job *job);
rig_status rig_rail_table_add(job_rails *t, job_rail *jr, rig_error *err);
/* The rail of id, still in the table (NULL). */
job_rail *rig_rail_table_find(job_rails *t, int64_t id);
/* Takes the rail out of the table: its id is free again. */
job_rail *rig_rail_table_take(job_rails *t, int64_t id);
/* The next id above every rail made. */
int64_t rig_rail_table_next_id(job_rails *t);
/* The rail hook every end takes: a lost peer fails the job, naming the
 * peer's machine. */
void rig_rail_table_failed(void *ctx, rig_rail *r, const char *why);

#endif

/* The agent (agent.c): on every rank but the controller, it hosts its
 * machine's devices for the controller. */
#ifndef RIG_AGENT_H
#define RIG_AGENT_H

#include "protocol.h"
#include "rig/rig_base.h"

typedef struct rig_job rig_job;
typedef struct agent agent;
typedef struct executor executor;

rig_status rig_agent_create(rig_job *job, agent **out, rig_error *err);
void rig_agent_free(agent *a);
/* Device `device`'s executor, started on its first hand-over (or by the
 * route, at the agent's start). */
rig_status rig_agent_executor(agent *a, uint32_t device, executor **out, rig_error *err);
/* Once the job failed: as rig_agent_free, its threads waited for `grace`
 * seconds at most; false when one is still inside work (a kernel that
 * does not end), and then nothing they use is freed. */
bool rig_agent_free_within(agent *a, double grace);
/* A frame from the controller (on the control thread: never blocks). */
void rig_agent_frame(agent *a, const frame *f, const unsigned char *payload);

#endif

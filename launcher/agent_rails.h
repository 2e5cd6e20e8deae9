/* An agent's rail ends, on the controller's requests (agent_rails.c). */
#ifndef RIG_AGENT_RAILS_H
#define RIG_AGENT_RAILS_H

#include "protocol.h"
#include "rig/rig_base.h"

typedef struct rig_job rig_job;

/* A rail request (RAIL_MAKE, RAIL_ATTACH, RAIL_RELEASE) on the agent's
 * request thread, answered through `answer`. */
void rig_agent_rail(rig_job *job, const frame *f, const unsigned char *payload,
                    void (*answer)(rig_job *job, const frame *req, rig_status st,
                                   const void *payload, size_t n));

#endif

/* This machine as the job sees it (machine.c). */
#ifndef RIG_MACHINE_H
#define RIG_MACHINE_H

#include "rig/rig_job.h"

/* This machine as it describes itself: host name, devices (opened here),
 * hwloc's summary. */
rig_status rig_machine_describe(rig_machine *m, int rank, rig_device ***devices, rig_error *err);

#endif

/* Random descriptions for property tests: any value the types hold,
 * ill-formed ones included (negative indices, sizes past their memory,
 * extreme integers, empty arrays, loops nested to the limit). */
#ifndef RIG_DESC_GEN_H
#define RIG_DESC_GEN_H

#include "rig/rig_desc.h"
#include "rig_test.h"

/* An integer the format holds: small ones mostly, and the extremes. */
int64_t rig_gen_int(rig_rng *r);

/* A random description; NULL only when out of memory. `max_depth` bounds
 * loop nesting (at most RIG_DESC_MAX_DEPTH for one that encodes). */
rig_desc *rig_gen_desc(rig_rng *r, int max_depth);

#endif

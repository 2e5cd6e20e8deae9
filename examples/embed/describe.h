/* describe.h: examples/saxpy.json's program, built in C (describe.c). */
#ifndef EMBED_DESCRIBE_H
#define EMBED_DESCRIBE_H

#include <stddef.h>

#include <rig/rig_desc.h>

/* The saxpy program with `so` (len bytes: kernels/saxpy.so) as the image of
 * both its devices, or NULL out of memory. Free it with rig_desc_free. */
rig_desc *saxpy_description(const void *so, size_t len);

#endif

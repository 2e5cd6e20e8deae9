/* Far copies (far_copy.c): an agent moves bytes between its memory and the
 * controller's itself, in order with its device's work: by
 * process_vm_readv/writev on one host, by UCX RMA (its peer, express_messages.h)
 * across hosts. It reaches only windows of the controller's memory the
 * controller opened to it (F_FAR_OPEN when a proxy maps a host buffer,
 * F_FAR_CLOSE when it is freed): the address of a far copy comes from a
 * ring slot, memory another process writes. */
#ifndef RIG_FAR_COPY_H
#define RIG_FAR_COPY_H

#include <stdbool.h>
#include <stdint.h>

#include "express.h"

/* The agent: the controller's memory at [address, address + length) may
 * be reached by far copies from now on (key, keylen: its registration's
 * key, across hosts) / no longer. */
rig_status rig_far_open(express *ex, uint64_t address, uint64_t length, const void *key,
                        size_t keylen, rig_error *err);
void rig_far_close(express *ex, uint64_t address, uint64_t length);
void rig_far_free(express *ex);
/* The agent's side of a far copy: between b at offset and the controller's
 * memory at address (inside an open window), in order with b's work. */
rig_status rig_far_copy(express *ex, bool in, rig_buffer *b, uint64_t offset, uint64_t address,
                        uint64_t length, rig_error *err);
/* The agent's route moves the bytes of a far copy (route/route.h): by UCX
 * RMA with the window's key across hosts, or by process_vm_readv/writev
 * on one host, this. */
rig_status rig_far_by_cma(express *ex, bool in, unsigned char *here, uint64_t there, size_t n,
                          rig_error *err);
/* The word an agent reads in the controller to learn whether it may reach
 * its memory on this host (process_vm_readv), and that check. */
const void *rig_far_probe_word(void);
bool rig_far_reaches(int pid, uint64_t probe_at);

#endif

/* The express path by messages (express_messages.c; docs/internals.md "Across
 * hosts"): where the controller and an agent cannot map each other's
 * memory (another host; transports that map nothing), a hand-over goes as
 * a UCX message that the agent's progressing thread writes into the
 * device's ring in the agent's own memory, and a done report as a message
 * the controller's writes into the proxy's timeline, in its own memory.
 * The rest of the express path is unchanged: the executor reads its ring,
 * a waiter its timeline. */
#ifndef RIG_EXPRESS_MESSAGES_H
#define RIG_EXPRESS_MESSAGES_H

#include <stdbool.h>
#include <stdint.h>

#include "express.h"

/* This process's messages reach ex from now on (its job's id in them);
 * the address peers connect to in *address. */
rig_status rig_express_msg_listen(express *ex, const void **address, size_t *len, rig_error *err);
/* The controller: machine m reached by messages at its address. An agent
 * (m 0): the controller. A peer lost fails the job naming the machine. */
rig_status rig_express_msg_connect(express *ex, int m, const void *address, size_t len,
                                   rig_error *err);
/* Messages of the job no longer reach ex; its peers are released. After
 * it no handler uses ex. */
void rig_express_msg_forget(express *ex);

/* The controller: hand-over `value` of machine m's device as a message
 * into its ring (its slot free: the caller waited). */
rig_status rig_express_msg_handover(express *ex, int m, uint32_t device, uint64_t value,
                                    uint32_t kind, const void *head, size_t hlen, const void *bytes,
                                    size_t len, rig_error *err);
/* An agent: device's work up to value is done. */
rig_status rig_express_msg_report(express *ex, uint32_t device, uint64_t value, rig_error *err);

/* Whether machine m (the controller: 0) is reached by messages, and so
 * knocked: a message telling its control thread that a frame of the job
 * is on its way (rig_ctl_knock), so that a quiet one need not wake often
 * to look. The peers are fixed from the start to the job's end. */
bool rig_express_msg_knocks(const express *ex, int m);
void rig_express_msg_knock(express *ex, int m);

#endif

/* cli_info.h: what `progrun info` (cli_info.c) shares with its warnings
 * (cli_info_warn.c). */
#ifndef RIG_CLI_INFO_H
#define RIG_CLI_INFO_H

#include <jansson.h>
#include <stddef.h>

/* A list of indices back as ranges ("0-3,8" with sep ","), for the text. */
void cli_info_ranges(json_t *list, const char *sep, char *out, size_t size);

/* Adds this process's CPUs to its machine's object: "bound_cpus", those it
 * may run on (sched_getaffinity; -1 unknown), and "online_cpus", the
 * node's. */
void cli_info_cpus(json_t *o);

/* Rank 0, on stderr: a placement or a binding of the machines that likely
 * defeats a job (docs/cli.md, "info"): machines sharing a host, a machine
 * bound to fewer CPUs than its threads. */
void cli_info_warn(json_t *machines);

#endif

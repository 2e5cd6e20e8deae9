/* Private to src/run: what rig_run_file (run_file.c) strings together.
 * Each piece fills the caller's rig_error with a message that names the
 * field it came from ("input 0=x.bin: ..."), and prints nothing. */
#ifndef RIG_RUN_INTERNAL_H
#define RIG_RUN_INTERNAL_H

#include <stdint.h>

#include "rig/rig_run.h"

struct stat;
/* path opened for reading (*fd, *st its fstat), never waiting for a FIFO's
 * writer (a FIFO no process writes reads as empty); a directory refused
 * (EISDIR). Reads block from here. An errno, or 0 (*fd -1 on failure). */
int run_open_read(const char *path, int *fd, struct stat *st);
/* fd's bytes into *buf (room bytes to start with, grown up to one byte
 * past RIG_RUN_MAX_DESC); an errno (EFBIG: past the bound), or 0. */
int run_read_fd(int fd, size_t room, uint8_t **buf, size_t *len);

/* ---- an input's file (in_file.c) ------------------------------------------ */

/* The first bytes of an input of `bytes` bytes from the file at path: *out
 * is `bytes` long (malloc'd; NULL for 0 bytes), zero past the file's end.
 * A file longer than the input is refused (RIG_EINVAL), unread when its
 * size says so; one that cannot be read is RIG_ESYS; each message after
 * `label` ("input 0=x.bin"). */
rig_status run_read_input(const char *label, const char *path, uint64_t bytes, uint8_t **out,
                          rig_error *err);

#endif

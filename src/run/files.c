/* Files as this layer opens them, and paths as its messages show them. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run_internal.h"

const char *rig_run_path_shown(const char *path, char *buf, size_t size) {
  size_t n = strlen(path);
  if (n < size) return path;
  /* The head and the tail say most about a path; the middle goes. */
  size_t keep = size - 4, head = keep / 2, tail = keep - head;
  memcpy(buf, path, head);
  memcpy(buf + head, "...", 3);
  memcpy(buf + head + 3, path + n - tail, tail);
  buf[size - 1] = '\0';
  return buf;
}

int run_open_read(const char *path, int *fd, struct stat *st) {
  /* Without O_NONBLOCK, open() of a FIFO waits for a writer, unbounded. */
  *fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (*fd < 0) return errno;
  int flags = 0;
  int e = fstat(*fd, st) != 0                             ? errno
          : S_ISDIR(st->st_mode)                          ? EISDIR
          : (flags = fcntl(*fd, F_GETFL)) < 0             ? errno
          : fcntl(*fd, F_SETFL, flags & ~O_NONBLOCK) != 0 ? errno
                                                          : 0;
  if (e) {
    close(*fd);
    *fd = -1;
  }
  return e;
}

/* Files as progrun reads them: opened without waiting on a FIFO no process
 * writes, and read whole within a bound (docs/cli.md, "Files"). What it
 * writes is cli_outset.c's. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

const char *cli_short_path(const char *path, char *buf, size_t size) {
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

int cli_cannot(rig_error *err, const char *verb, const char *path, const char *why) {
  char shown[CLI_PATH_SHOWN];
  rig_error_set(err, RIG_ESYS, "cannot %s %s: %s", verb, cli_short_path(path, shown, sizeof shown),
                why);
  return CLI_EXIT_USAGE;
}

static int cannot(rig_error *err, const char *verb, const char *path, int e) {
  if (e == ENOMEM) return rig_error_set(err, RIG_ENOMEM, "out of memory"), CLI_EXIT_FAIL;
  return cli_cannot(err, verb, path, strerror(e));
}

/* A FIFO's first bytes (or its end) within CLI_FIFO_WAIT_MS: a FIFO that
 * no process writes gives none, and waiting for it would be for ever. */
static int fifo_wait(int fd, const char *path, rig_error *err) {
  struct pollfd p = {fd, POLLIN, 0};
  int n;
  while ((n = poll(&p, 1, CLI_FIFO_WAIT_MS)) < 0 && errno == EINTR) {
  }
  if (n < 0) return cannot(err, "read", path, errno);
  if (n == 0) return cli_cannot(err, "read", path, "a FIFO no process wrote to in 10 s");
  return CLI_EXIT_OK;
}

int cli_open_read(const char *path, int *fd, struct stat *st, rig_error *err) {
  bool is_stdin = strcmp(path, "-") == 0;
  /* Without O_NONBLOCK, open() of a FIFO waits for a writer, unbounded. */
  *fd = is_stdin ? dup(STDIN_FILENO) : open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (*fd < 0) return cannot(err, "read", path, errno);
  int e = fstat(*fd, st) != 0 ? errno : S_ISDIR(st->st_mode) ? EISDIR : 0;
  int rc = e ? cannot(err, "read", path, e) : CLI_EXIT_OK;
  if (rc == CLI_EXIT_OK && !is_stdin && S_ISFIFO(st->st_mode)) rc = fifo_wait(*fd, path, err);
  /* Reads may block from here: a writer is there, or the file is no FIFO. */
  int flags = rc == CLI_EXIT_OK && !is_stdin ? fcntl(*fd, F_GETFL) : 0;
  if (flags < 0 || ((flags & O_NONBLOCK) && fcntl(*fd, F_SETFL, flags & ~O_NONBLOCK) != 0))
    rc = cannot(err, "read", path, errno);
  if (rc != CLI_EXIT_OK) {
    close(*fd);
    *fd = -1;
  }
  return rc;
}

static int too_big(rig_error *err, const char *path, const struct stat *st) {
  char shown[CLI_PATH_SHOWN];
  if (S_ISREG(st->st_mode))
    rig_error_set(err, RIG_EINVAL, "%s: %jd bytes, more than the %s progrun reads of a file",
                  cli_short_path(path, shown, sizeof shown), (intmax_t)st->st_size,
                  CLI_MAX_READ_TEXT);
  else
    rig_error_set(err, RIG_EINVAL, "%s: more than the %s progrun reads of a file",
                  cli_short_path(path, shown, sizeof shown), CLI_MAX_READ_TEXT);
  return CLI_EXIT_USAGE;
}

/* fd's bytes into *buf (room bytes of it to start with, grown up to the
 * bound), NUL-terminated; an errno (EFBIG: past the bound), or 0. */
static int read_fd(int fd, size_t room, char **buf, size_t *len) {
  size_t n = 0;
  char *b = malloc(room);
  int e = b ? 0 : ENOMEM;
  while (b) {
    if (n + 1 >= room) {
      size_t grown = room * 2 > CLI_MAX_READ + 2 ? CLI_MAX_READ + 2 : room * 2;
      char *g = grown > room ? realloc(b, grown) : NULL;
      if (!g) {
        e = grown > room ? ENOMEM : EFBIG;
        break;
      }
      b = g;
      room = grown;
    }
    ssize_t got = read(fd, b + n, room - n - 1);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) e = errno;
    if (got <= 0) break;
    if ((n += (size_t)got) > CLI_MAX_READ) {
      e = EFBIG;
      break;
    }
  }
  if (e) {
    free(b);
    return e;
  }
  b[n] = '\0';
  *buf = b;
  *len = n;
  return 0;
}

int cli_read_whole(const char *path, char **text, size_t *len, rig_error *err) {
  *text = NULL;
  *len = 0;
  int fd;
  struct stat st;
  int rc = cli_open_read(path, &fd, &st, err);
  if (rc != CLI_EXIT_OK) return rc;
  /* A regular file's size refuses it before a byte is read; anything else
   * (a pipe, /dev/zero) is read until the bound, and one byte past it says
   * it is longer. Room for a regular file's size, its NUL and one byte
   * more finds its end without growing. */
  if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > CLI_MAX_READ) {
    close(fd);
    return too_big(err, path, &st);
  }
  size_t room = S_ISREG(st.st_mode) && st.st_size > 0 ? (size_t)st.st_size + 2 : 4096;
  int e = read_fd(fd, room, text, len);
  close(fd);
  if (e == EFBIG) return too_big(err, path, &st);
  return e ? cannot(err, "read", path, e) : CLI_EXIT_OK;
}

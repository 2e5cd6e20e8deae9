/* Files as progrun reads them: opened without waiting on a FIFO no process
 * writes, and read whole within a bound (docs/cli.md, "Files"). What it
 * writes is cli_outset.c's. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

int cli_cannot(rig_error *err, const char *verb, const char *path, const char *why) {
  char shown[RIG_RUN_PATH_SHOWN];
  rig_error_set(err, RIG_ESYS, "cannot %s %s: %s", verb,
                rig_run_path_shown(path, shown, sizeof shown), why);
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
  char shown[RIG_RUN_PATH_SHOWN];
  if (S_ISREG(st->st_mode))
    rig_error_set(err, RIG_EINVAL, "%s: %jd bytes, more than the %s progrun reads of a file",
                  rig_run_path_shown(path, shown, sizeof shown), (intmax_t)st->st_size,
                  CLI_MAX_READ_TEXT);
  else
    rig_error_set(err, RIG_EINVAL, "%s: more than the %s progrun reads of a file",
                  rig_run_path_shown(path, shown, sizeof shown), CLI_MAX_READ_TEXT);
  return CLI_EXIT_USAGE;
}

/* fd's bytes into *buf, read with room bytes (a regular file's size, its
 * NUL and one byte more), NUL-terminated; an errno (EFBIG: past the
 * bound), or 0. A file that grew while read goes on as a stream, from the
 * bytes read so far. */
static int read_stream(int fd, const char *head, size_t nhead, char **buf, size_t *len);

static int read_sized(int fd, size_t room, char **buf, size_t *len) {
  size_t n = 0;
  char *b = malloc(room);
  if (!b) return ENOMEM;
  for (;;) {
    ssize_t got = read(fd, b + n, room - n - 1);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      free(b);
      return errno;
    }
    if (got == 0) break;
    if ((n += (size_t)got) + 1 >= room) {
      int e = read_stream(fd, b, n, buf, len);
      free(b);
      return e;
    }
  }
  b[n] = '\0';
  *buf = b;
  *len = n;
  return 0;
}

/* A stream (a pipe, /dev/zero) has no size: it is read into space
 * reserved up to the bound and committed page by page as bytes come (huge
 * pages where the kernel gives them), then copied out once at its length.
 * Grown by doubling instead, an endless stream cost a copy of each size on
 * the way to the bound. */
static int read_stream(int fd, const char *head, size_t nhead, char **buf, size_t *len) {
  size_t room = CLI_MAX_READ + 2;
  if (nhead > CLI_MAX_READ) return EFBIG;
  char *b =
      mmap(NULL, room, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (b == MAP_FAILED) return ENOMEM;
  (void)madvise(b, room, MADV_HUGEPAGE); /* a hint: refused, pages stay small */
  if (nhead) memcpy(b, head, nhead);
  size_t n = nhead;
  int e = 0;
  while (n <= CLI_MAX_READ) {
    ssize_t got = read(fd, b + n, room - n - 1);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) e = errno;
    if (got <= 0) break;
    n += (size_t)got;
  }
  if (!e && n > CLI_MAX_READ) e = EFBIG;
  char *out = e ? NULL : malloc(n + 1);
  if (!e && !out) e = ENOMEM;
  if (out) {
    memcpy(out, b, n);
    out[n] = '\0';
    *buf = out;
    *len = n;
  }
  munmap(b, room);
  return e;
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
  int e = S_ISREG(st.st_mode) && st.st_size > 0 ? read_sized(fd, (size_t)st.st_size + 2, text, len)
                                                : read_stream(fd, NULL, 0, text, len);
  close(fd);
  if (e == EFBIG) return too_big(err, path, &st);
  return e ? cannot(err, "read", path, e) : CLI_EXIT_OK;
}

/* Files as progrun reads and writes them: whole reads within a bound, and
 * outputs (pack's OUT, run's --output) checked before any work and then
 * written whole or not at all (docs/cli.md, "Files"). */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
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

static int cannot(rig_error *err, const char *verb, const char *path, int e) {
  char shown[CLI_PATH_SHOWN];
  rig_error_set(err, e == ENOMEM ? RIG_ENOMEM : RIG_ESYS, "cannot %s %s: %s", verb,
                cli_short_path(path, shown, sizeof shown), strerror(e));
  return e == ENOMEM ? CLI_EXIT_FAIL : CLI_EXIT_USAGE;
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

int cli_read_whole(const char *path, char **text, size_t *len, rig_error *err) {
  *text = NULL;
  *len = 0;
  bool is_stdin = strcmp(path, "-") == 0;
  int fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return cannot(err, "read", path, errno);
  struct stat st;
  if (fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
    int e = S_ISDIR(st.st_mode) ? EISDIR : errno;
    if (!is_stdin) close(fd);
    return cannot(err, "read", path, e);
  }
  /* A regular file's size refuses it before a byte is read; anything else
   * (a pipe, /dev/zero) is read until the bound, and one byte past it says
   * it is longer. Room for a regular file's size, its NUL and one byte
   * more finds its end without growing. */
  if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > CLI_MAX_READ) {
    if (!is_stdin) close(fd);
    return too_big(err, path, &st);
  }
  size_t room = S_ISREG(st.st_mode) && st.st_size > 0 ? (size_t)st.st_size + 2 : 4096;
  char *buf = malloc(room);
  size_t n = 0;
  int e = buf ? 0 : ENOMEM;
  while (buf) {
    if (n + 1 >= room) {
      size_t grown = room * 2 > CLI_MAX_READ + 2 ? CLI_MAX_READ + 2 : room * 2;
      char *b = grown > room ? realloc(buf, grown) : NULL;
      if (!b) {
        e = grown > room ? ENOMEM : EFBIG;
        break;
      }
      buf = b;
      room = grown;
    }
    ssize_t got = read(fd, buf + n, room - n - 1);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      e = errno;
      break;
    }
    if (got == 0) break;
    n += (size_t)got;
    if (n > CLI_MAX_READ) {
      e = EFBIG;
      break;
    }
  }
  if (!is_stdin) close(fd);
  if (e) {
    free(buf);
    return e == EFBIG ? too_big(err, path, &st) : cannot(err, "read", path, e);
  }
  buf[n] = '\0';
  *text = buf;
  *len = n;
  return CLI_EXIT_OK;
}

/* ---- outputs ------------------------------------------------------------------ */

/* Where the bytes of `path` go: *target, the end of its chain of symbolic
 * links (replaced by a temporary file renamed over it), or, when that is
 * no regular file (a device, a FIFO, /dev/stdout), `path` itself, written
 * in place (*in_place). A link in /proc (/dev/stdout, /dev/fd/N) names an
 * open file rather than a path: it is written in place too, so that
 * `> file` and `>> file` behave as for any program. An errno, or 0. */
static int out_target(const char *path, char **target, bool *in_place) {
  *target = NULL;
  *in_place = false;
  char *p = strdup(path);
  if (!p) return ENOMEM;
  for (int hops = 0;; hops++) {
    struct stat st;
    if (lstat(p, &st) != 0) {
      if (errno != ENOENT) {
        int e = errno;
        free(p);
        return e;
      }
      break; /* a new file: made in its directory */
    }
    if (!S_ISLNK(st.st_mode)) {
      if (S_ISDIR(st.st_mode)) {
        free(p);
        return EISDIR;
      }
      *in_place = !S_ISREG(st.st_mode);
      break;
    }
    char *dcopy = strdup(p), *real = dcopy ? realpath(dirname(dcopy), NULL) : NULL;
    bool proc = real && strncmp(real, "/proc/", 6) == 0;
    char link[4096];
    ssize_t n = readlink(p, link, sizeof link - 1);
    int e = !dcopy ? ENOMEM : !real ? errno : n < 0 ? errno : hops == 40 ? ELOOP : 0;
    char *next = NULL;
    if (!e && !proc) {
      link[n] = '\0';
      size_t room = strlen(real) + (size_t)n + 2;
      if ((next = malloc(room))) {
        if (link[0] == '/')
          snprintf(next, room, "%s", link);
        else
          snprintf(next, room, "%s/%s", real, link);
      } else {
        e = ENOMEM;
      }
    }
    free(dcopy);
    free(real);
    if (e || proc) {
      free(p);
      p = NULL;
      if (e) return e;
      *in_place = true;
      break;
    }
    free(p);
    p = next;
  }
  if (*in_place) {
    free(p);
    p = strdup(path);
    if (!p) return ENOMEM;
  }
  *target = p;
  return 0;
}

int cli_output_check(const char *path, rig_error *err) {
  char *target = NULL;
  bool in_place = false;
  int e = out_target(path, &target, &in_place);
  if (!e && in_place && access(target, W_OK) != 0) e = errno;
  if (!e && !in_place) {
    /* The temporary file and the rename need a directory we may write. */
    char *dcopy = strdup(target);
    if (!dcopy)
      e = ENOMEM;
    else if (access(dirname(dcopy), W_OK | X_OK) != 0)
      e = errno;
    free(dcopy);
  }
  free(target);
  return e ? cannot(err, "write", path, e) : CLI_EXIT_OK;
}

static bool write_all(int fd, const uint8_t *b, size_t n) {
  while (n > 0) {
    ssize_t put = write(fd, b, n);
    if (put < 0 && errno == EINTR) continue;
    if (put < 0) return false;
    b += put;
    n -= (size_t)put;
  }
  return true;
}

static int write_in_place(const char *path, const uint8_t *b, size_t n) {
  int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) return errno;
  int e = write_all(fd, b, n) ? 0 : errno;
  if (close(fd) != 0 && !e) e = errno;
  return e;
}

/* A temporary file beside target (so that the rename stays within one
 * file system), synced, then renamed over it: target is its old contents
 * or the new bytes whole, and a failed write leaves no temporary behind. */
static int write_replacing(const char *target, const uint8_t *b, size_t n) {
  char *dcopy = strdup(target), *bcopy = strdup(target), *tmp = NULL;
  int fd = -1, e = ENOMEM;
  if (!dcopy || !bcopy) goto out;
  const char *dir = dirname(dcopy), *base = basename(bcopy);
  size_t room = strlen(dir) + strlen(base) + 16;
  if (!(tmp = malloc(room))) goto out;
  snprintf(tmp, room, "%s/.%s.XXXXXX", dir, base);
  if ((fd = mkstemp(tmp)) < 0) {
    e = errno;
    free(tmp);
    tmp = NULL;
    goto out;
  }
  /* mkstemp makes the file 0600; give it the mode a plain create would. */
  mode_t mask = umask(0);
  umask(mask);
  if (fchmod(fd, 0666 & ~mask) != 0 || !write_all(fd, b, n) || fsync(fd) != 0) {
    e = errno;
    goto out;
  }
  int c = close(fd);
  fd = -1;
  e = c != 0 || rename(tmp, target) != 0 ? errno : 0;
out:
  if (fd >= 0) close(fd);
  if (tmp && e) unlink(tmp);
  free(tmp);
  free(dcopy);
  free(bcopy);
  return e;
}

int cli_write_file(const char *path, const uint8_t *b, size_t n, rig_error *err) {
  char *target = NULL;
  bool in_place = false;
  int e = out_target(path, &target, &in_place);
  if (!e) e = in_place ? write_in_place(target, b, n) : write_replacing(target, b, n);
  free(target);
  return e ? cannot(err, "write", path, e) : CLI_EXIT_OK;
}

/* The files a run writes, all or none: each added before any work, which
 * checks it can be written and that no other file of the run is the same
 * file; its bytes go to a temporary file beside it (or, for a file that is
 * no regular file, such as /dev/null, are kept); the commit writes those
 * in place, then renames every temporary over its file. A failure before
 * the renames leaves every file as it was. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "run_internal.h"

struct run_out {
  char *label;  /* as messages name it: "output 1=y.bin" */
  char *path;   /* as given */
  char *target; /* replaced: the file the rename replaces (a link's target) */
  char *key;    /* replaced: target with its folder resolved, to find the same file twice */
  int fd;       /* in place: open for writing, else -1 */
  bool exists;  /* dev and ino are the file's */
  dev_t dev;
  ino_t ino;
  bool chr;       /* in place, a character device: any number of files may name it */
  bool fifo;      /* a FIFO: opening it with no reader is ENXIO */
  char *tmp;      /* replaced: the temporary holding its bytes, once put */
  uint8_t *bytes; /* in place: its bytes, once put, until the commit */
  size_t n;
  bool put;
};

static rig_status cannot(rig_error *err, const run_out *o, const char *why) {
  char shown[RUN_PATH_SHOWN];
  return rig_error_set(err, RIG_ESYS, "%s: cannot write %s: %s", o->label,
                       run_short_path(o->path, shown, sizeof shown), why);
}

static rig_status failed(rig_error *err, const run_out *o, int e) {
  if (e == ENOMEM) return rig_error_set(err, RIG_ENOMEM, "%s: out of memory", o->label);
  return cannot(err, o, strerror(e));
}

/* ---- where a path's bytes go ---------------------------------------------------- */

/* An existing file that is no regular file, opened to be written in place.
 * Opening never waits: a FIFO no process reads is ENXIO. An errno, or 0. */
static int open_in_place(run_out *o, const char *file) {
  o->fd = open(file, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (o->fd < 0) return errno;
  struct stat st;
  int flags = fcntl(o->fd, F_GETFL);
  /* A reader is there: its writes may block, as any program's output. */
  if (fstat(o->fd, &st) != 0 || flags < 0 || fcntl(o->fd, F_SETFL, flags & ~O_NONBLOCK) != 0)
    return errno;
  o->exists = true, o->dev = st.st_dev, o->ino = st.st_ino;
  o->chr = S_ISCHR(st.st_mode);
  return 0;
}

/* A replaced file's folder must take the temporary file and the rename;
 * its key is the file's path with that folder resolved. An errno, or 0. */
static int replace_ready(run_out *o) {
  char *dcopy = strdup(o->target), *bcopy = strdup(o->target);
  char *dir = dcopy ? realpath(dirname(dcopy), NULL) : NULL;
  int e = !dcopy || !bcopy ? ENOMEM : !dir ? errno : access(dir, W_OK | X_OK) != 0 ? errno : 0;
  if (!e && asprintf(&o->key, "%s/%s", dir, basename(bcopy)) < 0) e = ENOMEM, o->key = NULL;
  free(dcopy);
  free(bcopy);
  free(dir);
  return e;
}

/* Where o->path's bytes go: o->target, replaced by a rename (a symbolic
 * link's target, or the link itself when it leads nowhere; a new file is
 * made in its folder), or o->fd, written in place. An errno, or 0. */
static int resolve(run_out *o) {
  struct stat st;
  char *file;
  bool present = true;
  if (lstat(o->path, &st) != 0) {
    if (errno != ENOENT) return errno;
    present = false;
    file = strdup(o->path); /* a new file */
  } else if (!S_ISLNK(st.st_mode)) {
    file = strdup(o->path);
  } else if ((file = realpath(o->path, NULL))) {
    if (stat(file, &st) != 0) {
      int e = errno;
      free(file);
      return e;
    }
  } else {
    if (errno != ENOENT) return errno;
    present = false;
    file = strdup(o->path); /* a link to nothing: replaced itself */
  }
  if (!file) return ENOMEM;
  int e = 0;
  if (present && S_ISDIR(st.st_mode))
    e = EISDIR;
  else if (present && !S_ISREG(st.st_mode))
    o->fifo = S_ISFIFO(st.st_mode), e = open_in_place(o, file);
  else if (present)
    o->exists = true, o->dev = st.st_dev, o->ino = st.st_ino;
  if (!e && o->fd < 0) {
    o->target = file;
    return replace_ready(o);
  }
  free(file);
  return e;
}

/* ---- the set ------------------------------------------------------------------- */

static bool same_file(const run_out *a, const run_out *b) {
  if (a->key && b->key) return strcmp(a->key, b->key) == 0;
  /* One in place at least: the same file when the same inode, but for a
   * device such as /dev/null, which takes any number of writers. */
  return a->exists && b->exists && a->dev == b->dev && a->ino == b->ino && !a->chr && !b->chr;
}

static void out_clear(run_out *o) {
  if (o->tmp) unlink(o->tmp);
  if (o->fd >= 0) close(o->fd);
  free(o->label);
  free(o->path);
  free(o->target);
  free(o->key);
  free(o->tmp);
  free(o->bytes);
  memset(o, 0, sizeof *o);
  o->fd = -1;
}

rig_status run_outs_make(run_outs *s, size_t n, rig_error *err) {
  s->n = 0;
  s->v = calloc(n + 1, sizeof *s->v);
  if (!s->v) return rig_error_set(err, RIG_ENOMEM, "out of memory");
  return RIG_OK;
}

/* "its folder DIR does not exist" when path's folder is missing, the
 * likely slip (out/ not made). */
static bool missing_folder(const char *path, char *why, size_t size) {
  /* Half the room a path has: the message names the file too. */
  char *copy = strdup(path), shown[RUN_PATH_SHOWN / 2];
  struct stat st;
  bool missing = copy && stat(dirname(copy), &st) != 0 && errno == ENOENT;
  if (missing)
    snprintf(why, size, "its folder %s does not exist", run_short_path(copy, shown, sizeof shown));
  free(copy);
  return missing;
}

rig_status run_outs_add(run_outs *s, const char *path, const char *label, rig_error *err) {
  run_out *o = &s->v[s->n];
  memset(o, 0, sizeof *o);
  o->fd = -1;
  o->label = strdup(label);
  o->path = strdup(path);
  if (!o->label || !o->path) {
    out_clear(o);
    return rig_error_set(err, RIG_ENOMEM, "out of memory");
  }
  int e = resolve(o);
  if (e) {
    char why[RUN_PATH_SHOWN / 2 + 64];
    rig_status st = e == ENOENT && missing_folder(path, why, sizeof why) ? cannot(err, o, why)
                    : e == ENXIO && o->fifo ? cannot(err, o, "a FIFO no process reads")
                                            : failed(err, o, e);
    out_clear(o);
    return st;
  }
  for (size_t k = 0; k < s->n; k++)
    if (same_file(o, &s->v[k])) {
      rig_error_set(err, RIG_EINVAL, "%s: the same file as %s", o->label, s->v[k].label);
      out_clear(o);
      return RIG_EINVAL;
    }
  s->n++;
  return RIG_OK;
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

/* A new file beside the target, made as a plain create makes it (mode
 * 0666 less the umask, which a library must not change to read: another
 * thread may be creating files), its name not taken. An fd, or -1 with
 * errno. */
static int make_temporary(run_out *o) {
  static atomic_uint made;
  char *dcopy = strdup(o->target), *bcopy = strdup(o->target);
  const char *dir = dcopy ? dirname(dcopy) : NULL, *base = bcopy ? basename(bcopy) : NULL;
  int fd = -1;
  errno = ENOMEM;
  for (int tries = 0; dir && base && tries < 100; tries++) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    unsigned tag = (unsigned)t.tv_nsec ^ ((unsigned)getpid() << 12) ^ atomic_fetch_add(&made, 1);
    free(o->tmp);
    if (asprintf(&o->tmp, "%s/.%s.%08x", dir, base, tag) < 0) {
      o->tmp = NULL;
      errno = ENOMEM;
      break;
    }
    fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0 || errno != EEXIST) break;
  }
  int e = errno;
  if (fd < 0) {
    free(o->tmp);
    o->tmp = NULL;
  }
  free(dcopy);
  free(bcopy);
  errno = e;
  return fd;
}

/* The bytes into a temporary file beside the target (so that the rename
 * stays within one file system), synced. An errno, or 0; none left on
 * failure. */
static int write_temporary(run_out *o, const uint8_t *b, size_t n) {
  int fd = make_temporary(o);
  if (fd < 0) return errno;
  int e = !write_all(fd, b, n) || fsync(fd) != 0 ? errno : 0;
  if (close(fd) != 0 && !e) e = errno;
  if (e) {
    unlink(o->tmp);
    free(o->tmp);
    o->tmp = NULL;
  }
  return e;
}

rig_status run_outs_put(run_outs *s, size_t k, const void *b, size_t n, rig_error *err) {
  run_out *o = &s->v[k];
  int e = 0;
  if (o->fd >= 0) {
    /* Kept: bytes written in place cannot be taken back, so they go last. */
    o->bytes = n ? malloc(n) : NULL;
    if (n && !o->bytes)
      e = ENOMEM;
    else if (n)
      memcpy(o->bytes, b, n);
    o->n = n;
  } else {
    e = write_temporary(o, b, n);
  }
  o->put = !e;
  return e ? failed(err, o, e) : RIG_OK;
}

/* Writes fd in place with SIGPIPE held on this thread, so that a reader
 * gone is EPIPE (a message), not the end of the process. */
static int write_in_place(const run_out *o) {
  sigset_t pipe, old;
  sigemptyset(&pipe);
  sigaddset(&pipe, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe, &old);
  int e = write_all(o->fd, o->bytes, o->n) ? 0 : errno;
  if (e == EPIPE) {
    struct timespec none = {0, 0};
    sigtimedwait(&pipe, NULL, &none);
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return e;
}

rig_status run_outs_commit(run_outs *s, rig_error *err) {
  for (size_t k = 0; k < s->n; k++) {
    run_out *o = &s->v[k];
    int e = o->put && o->fd >= 0 ? write_in_place(o) : 0;
    if (e) return failed(err, o, e);
  }
  for (size_t k = 0; k < s->n; k++) {
    run_out *o = &s->v[k];
    if (!o->tmp) continue;
    if (rename(o->tmp, o->target) != 0) return failed(err, o, errno);
    free(o->tmp);
    o->tmp = NULL;
  }
  return RIG_OK;
}

void run_outs_free(run_outs *s) {
  for (size_t k = 0; k < s->n; k++) out_clear(&s->v[k]);
  free(s->v);
  memset(s, 0, sizeof *s);
}

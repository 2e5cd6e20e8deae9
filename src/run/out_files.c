/* Files written all or none (rig_outputs, rig_run.h): each added before
 * any work, which checks it can be written and that no other file of the
 * set is the same file; its bytes go to a temporary file beside it (or,
 * for a file that is no regular file, such as /dev/null or /dev/stdout,
 * are kept); the commit writes those in place, then renames every
 * temporary over its file. A failure before the renames leaves every file
 * as it was. rig_run_file and progrun write their files through it. */
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

#include "rig/rig_array.h"
#include "run_internal.h"

typedef struct out {
  char *label;  /* as messages name it: "output 1=y.bin" */
  char *path;   /* as given */
  char *target; /* replaced: the end of its links, which the rename replaces */
  char *key;    /* replaced: target with its folder resolved, to find the same file twice */
  int fd;       /* in place: open for writing, else -1 */
  bool exists;  /* dev and ino are the file's (an in-place one's, or an existing target's) */
  dev_t dev;
  ino_t ino;
  bool chr;       /* in place, a character device: any number of files may name it */
  bool fifo;      /* a FIFO: opening it with no reader is ENXIO */
  char *tmp;      /* replaced: the temporary holding its bytes, once put */
  uint8_t *bytes; /* in place: its bytes, once put, until the commit */
  size_t n;
  bool put;     /* its bytes given (an in-place one's until written) */
  bool written; /* in place: written */
  size_t also;  /* the file that takes the same bytes (one input, two outputs), or SIZE_MAX */
} out;

typedef RIG_ARRAY_OF(out) outs;

struct rig_outputs {
  outs outs;
};

/* ---- messages --------------------------------------------------------------------- */

/* A file is named by its path: a label names a file only beside another
 * that is the same file. */
static rig_status cannot(rig_error *err, const out *o, const char *why) {
  char shown[RIG_RUN_PATH_SHOWN];
  return rig_error_set(err, RIG_ESYS, "cannot write %s: %s",
                       rig_run_path_shown(o->path, shown, sizeof shown), why);
}

static rig_status failed(rig_error *err, const out *o, int e) {
  return e == ENOMEM ? rig_error_set(err, RIG_ENOMEM, "out of memory")
                     : cannot(err, o, strerror(e));
}

/* ---- where a path's bytes go ------------------------------------------------------ */

/* The number N when `link` (a symbolic link in the folder `dir`,
 * resolved) is /proc/<this process>/fd/N: then `/dev/stdout` is this
 * process's fd 1 itself, written at its offset as any program writes it
 * (`>> file` appends), not the file reopened. -1 otherwise. */
static int own_fd(const char *dir, const char *link) {
  char mine[64];
  snprintf(mine, sizeof mine, "/proc/%d/fd", (int)getpid());
  const char *base = strrchr(link, '/');
  base = base ? base + 1 : link;
  char *end;
  long n = strtol(base, &end, 10);
  return strcmp(dir, mine) == 0 && *base && !*end && n >= 0 && n < 1 << 20 ? (int)n : -1;
}

/* One step along a chain of links: *p (a link) becomes its target, or,
 * for a link into /proc (which names an open file rather than a path),
 * *fd the file it names, opened. An errno, or 0. */
static int follow(char **p, int *fd, bool *in_proc) {
  char *dcopy = strdup(*p), *dir = dcopy ? realpath(dirname(dcopy), NULL) : NULL;
  char link[4096];
  ssize_t n = readlink(*p, link, sizeof link - 1);
  int e = !dcopy ? ENOMEM : !dir ? errno : n < 0 ? errno : 0;
  *in_proc = !e && strncmp(dir, "/proc/", 6) == 0;
  char *next = NULL;
  if (!e && *in_proc) {
    int own = own_fd(dir, *p);
    *fd = own >= 0 ? fcntl(own, F_DUPFD_CLOEXEC, 3) : open(*p, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (*fd < 0) e = errno;
  } else if (!e) {
    link[n] = '\0';
    if (link[0] == '/' ? !(next = strdup(link)) : asprintf(&next, "%s/%s", dir, link) < 0)
      e = ENOMEM, next = NULL;
  }
  free(dcopy);
  free(dir);
  if (next) {
    free(*p);
    *p = next;
  }
  return e;
}

/* Where o->path's bytes go: o->target, the end of its chain of links
 * (replaced by a temporary file renamed over it; a new file is made in
 * its folder), or, when that is no regular file (a device, a FIFO,
 * /dev/stdout), o->fd, open for writing in place. Opening never waits: a
 * FIFO no process reads is refused (ENXIO) rather than waited for. An
 * errno, or 0. */
static int resolve(out *o) {
  char *p = strdup(o->path);
  if (!p) return ENOMEM;
  int e = 0;
  for (int hops = 0; !e; hops++) {
    struct stat st;
    if (lstat(p, &st) != 0) {
      e = errno == ENOENT ? 0 : errno;
      break; /* ENOENT: a new file, made in its folder */
    }
    if (S_ISDIR(st.st_mode)) {
      e = EISDIR;
    } else if (S_ISREG(st.st_mode)) {
      o->exists = true, o->dev = st.st_dev, o->ino = st.st_ino;
      break;
    } else if (!S_ISLNK(st.st_mode)) {
      o->fifo = S_ISFIFO(st.st_mode);
      o->fd = open(p, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
      e = o->fd < 0 ? errno : 0;
      break;
    } else if (hops == 40) {
      e = ELOOP;
    } else {
      bool in_proc = false;
      e = follow(&p, &o->fd, &in_proc);
      if (in_proc) break;
    }
  }
  if (!e && o->fd < 0)
    o->target = p;
  else
    free(p);
  return e;
}

/* An in-place file's identity, its writes then blocking (a reader is
 * there: it may take its time, as for any program's output). */
static int in_place_ready(out *o) {
  struct stat st;
  int flags = fcntl(o->fd, F_GETFL);
  if (fstat(o->fd, &st) != 0 || flags < 0 || fcntl(o->fd, F_SETFL, flags & ~O_NONBLOCK) != 0)
    return errno;
  o->exists = true, o->dev = st.st_dev, o->ino = st.st_ino;
  o->chr = S_ISCHR(st.st_mode);
  return 0;
}

/* A replaced file's folder must take the temporary file and the rename;
 * its key is the file's path with that folder resolved. */
static int replace_ready(out *o) {
  char *dcopy = strdup(o->target), *bcopy = strdup(o->target);
  char *dir = dcopy ? realpath(dirname(dcopy), NULL) : NULL;
  int e = !dcopy || !bcopy ? ENOMEM : !dir ? errno : access(dir, W_OK | X_OK) != 0 ? errno : 0;
  if (!e && asprintf(&o->key, "%s/%s", dir, basename(bcopy)) < 0) e = ENOMEM, o->key = NULL;
  free(dcopy);
  free(bcopy);
  free(dir);
  return e;
}

/* ---- the set ------------------------------------------------------------------------ */

static bool same_file(const out *a, const out *b) {
  if (a->key && b->key) return strcmp(a->key, b->key) == 0;
  /* One in place at least: the same file when the same inode, but for a
   * device such as /dev/null, which takes any number of writers. */
  return a->exists && b->exists && a->dev == b->dev && a->ino == b->ino && !a->chr && !b->chr;
}

static void out_clear(out *o) {
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

/* "its folder DIR does not exist" when path's folder is missing, the
 * likely slip (out/ not made, {rank} in a folder's name). */
static bool missing_folder(const char *path, char *why, size_t size) {
  /* Half the room a path has: the message names the file too. */
  char *copy = strdup(path), shown[RIG_RUN_PATH_SHOWN / 2];
  struct stat st;
  bool missing = copy && stat(dirname(copy), &st) != 0 && errno == ENOENT;
  if (missing)
    snprintf(why, size, "its folder %s does not exist",
             rig_run_path_shown(copy, shown, sizeof shown));
  free(copy);
  return missing;
}

rig_status rig_outputs_make(rig_outputs **out_set, rig_error *err) {
  rig_outputs *s = calloc(1, sizeof *s);
  if (!s) return rig_error_set(err, RIG_ENOMEM, "out of memory");
  s->outs = (outs)RIG_ARRAY_OF_INIT(out, 0);
  *out_set = s;
  return RIG_OK;
}

rig_status rig_outputs_add(rig_outputs *s, const char *path, const char *label, size_t *index,
                           rig_error *err) {
  if (!rig_array_reserve(&s->outs.a, 1)) return rig_error_set(err, RIG_ENOMEM, "out of memory");
  out *o = &s->outs.t.items[s->outs.t.n];
  memset(o, 0, sizeof *o);
  o->fd = -1;
  o->also = SIZE_MAX;
  o->label = strdup(label);
  o->path = strdup(path);
  int e = !o->label || !o->path ? ENOMEM : resolve(o);
  if (!e) e = o->fd >= 0 ? in_place_ready(o) : replace_ready(o);
  if (e) {
    char why[RIG_RUN_PATH_SHOWN / 2 + 64];
    rig_status st = e == ENOENT && missing_folder(path, why, sizeof why) ? cannot(err, o, why)
                    : e == ENXIO && o->fifo ? cannot(err, o, "a FIFO no process reads")
                                            : failed(err, o, e);
    out_clear(o);
    return st;
  }
  for (size_t k = 0; k < s->outs.t.n; k++)
    if (same_file(o, &s->outs.t.items[k])) {
      rig_error_set(err, RIG_EINVAL, "%s: the same file as %s", o->label, s->outs.t.items[k].label);
      out_clear(o);
      return RIG_EINVAL;
    }
  *index = s->outs.t.n++;
  return RIG_OK;
}

bool rig_outputs_writes_fd(const rig_outputs *s, int fd) {
  struct stat st;
  if (!s || fstat(fd, &st) != 0) return false;
  for (size_t k = 0; k < s->outs.t.n; k++) {
    const out *o = &s->outs.t.items[k];
    if (o->fd >= 0 && st.st_dev == o->dev && st.st_ino == o->ino) return true;
  }
  return false;
}

void rig_outputs_also(rig_outputs *s, size_t index, size_t first) {
  /* Put at the chain's end, so that every file of the chain is written. */
  rig_array_index(&s->outs.a, index);
  while (RIG_ARRAY_AT(&s->outs, first).also != SIZE_MAX) first = RIG_ARRAY_AT(&s->outs, first).also;
  if (first != index) RIG_ARRAY_AT(&s->outs, first).also = index;
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
static int make_temporary(out *o) {
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
static int write_temporary(out *o, const uint8_t *b, size_t n) {
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

static rig_status put_one(out *o, const void *b, size_t n, rig_error *err) {
  int e = 0;
  if (o->fd >= 0) {
    /* Kept: bytes written in place cannot be taken back, so they go last. */
    free(o->bytes);
    o->bytes = n ? malloc(n) : NULL;
    if (n && !o->bytes)
      e = ENOMEM;
    else if (n)
      memcpy(o->bytes, b, n);
    o->n = n;
  } else {
    if (o->tmp) { /* put again: the last bytes count */
      unlink(o->tmp);
      free(o->tmp);
      o->tmp = NULL;
    }
    e = write_temporary(o, b, n);
  }
  o->put = !e;
  return e ? failed(err, o, e) : RIG_OK;
}

rig_status rig_outputs_put(rig_outputs *s, size_t index, const void *b, size_t n, rig_error *err) {
  rig_status st = RIG_OK;
  for (size_t k = index; st == RIG_OK && k != SIZE_MAX; k = RIG_ARRAY_AT(&s->outs, k).also)
    st = put_one(&RIG_ARRAY_AT(&s->outs, k), b, n, err);
  return st;
}

/* Writes fd in place with SIGPIPE held on this thread, so that a reader
 * gone is EPIPE (a message), not the end of the process. */
static int write_in_place(const out *o) {
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

rig_status rig_outputs_in_place(rig_outputs *s, rig_error *err) {
  if (!s) return RIG_OK;
  /* A file added was promised: one that never got its bytes fails the
   * set, rather than be skipped while the others go. */
  for (size_t k = 0; k < s->outs.t.n; k++) {
    out *o = &s->outs.t.items[k];
    if (!o->put && !o->written) {
      rig_outputs_abort(s);
      cannot(err, o, "its bytes never came");
      err->code = RIG_EREFUSED; /* the caller's fault, not the file's */
      return RIG_EREFUSED;
    }
  }
  for (size_t k = 0; k < s->outs.t.n; k++) {
    out *o = &s->outs.t.items[k];
    int e = o->fd >= 0 && !o->written ? write_in_place(o) : 0;
    if (e) {
      rig_outputs_abort(s);
      return failed(err, o, e);
    }
    if (o->fd >= 0) o->written = true;
  }
  return RIG_OK;
}

rig_status rig_outputs_commit(rig_outputs *s, rig_error *err) {
  rig_status st = rig_outputs_in_place(s, err);
  if (st != RIG_OK || !s) return st;
  for (size_t k = 0; k < s->outs.t.n; k++) {
    out *o = &s->outs.t.items[k];
    if (!o->tmp) continue;
    if (rename(o->tmp, o->target) != 0) {
      int e = errno;
      rig_outputs_abort(s);
      return failed(err, o, e);
    }
    free(o->tmp);
    o->tmp = NULL;
  }
  return RIG_OK;
}

void rig_outputs_abort(rig_outputs *s) {
  for (size_t k = 0; s && k < s->outs.t.n; k++) {
    out *o = &s->outs.t.items[k];
    if (o->tmp) {
      unlink(o->tmp);
      free(o->tmp);
      o->tmp = NULL;
    }
  }
}

void rig_outputs_free(rig_outputs *s) {
  if (!s) return;
  for (size_t k = 0; k < s->outs.t.n; k++) out_clear(&s->outs.t.items[k]);
  rig_array_free(&s->outs.a);
  free(s);
}

/* The files a command writes, all or none (docs/cli.md, "Files"): each is
 * added before any work, which checks it can be written and that no other
 * file of the command is the same file; its bytes go to a temporary file
 * beside it (or, for a file written in place, are kept); the commit
 * writes the files in place, then renames every temporary over its file.
 * A failure anywhere before the renames leaves every file as it was. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

struct cli_out {
  char *label;  /* as messages name it: "--output 1=y.bin" */
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
};

/* ---- where a path's bytes go -------------------------------------------------- */

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
static int resolve(cli_out *o) {
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
static int in_place_ready(cli_out *o) {
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
static int replace_ready(cli_out *o) {
  char *dcopy = strdup(o->target), *bcopy = strdup(o->target);
  char *dir = dcopy ? realpath(dirname(dcopy), NULL) : NULL;
  int e = !dcopy || !bcopy ? ENOMEM : !dir ? errno : access(dir, W_OK | X_OK) != 0 ? errno : 0;
  if (!e && asprintf(&o->key, "%s/%s", dir, basename(bcopy)) < 0) e = ENOMEM, o->key = NULL;
  free(dcopy);
  free(bcopy);
  free(dir);
  return e;
}

/* ---- the set ------------------------------------------------------------------ */

static bool same_file(const cli_out *a, const cli_out *b) {
  if (a->key && b->key) return strcmp(a->key, b->key) == 0;
  /* One in place at least: the same file when the same inode, but for a
   * device such as /dev/null, which takes any number of writers. */
  return a->exists && b->exists && a->dev == b->dev && a->ino == b->ino && !a->chr && !b->chr;
}

static bool is_std(const cli_out *o, int fd) {
  struct stat st;
  return o->fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == o->dev && st.st_ino == o->ino;
}

static void out_clear(cli_out *o) {
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
  char *copy = strdup(path), shown[CLI_PATH_SHOWN / 2];
  struct stat st;
  bool missing = copy && stat(dirname(copy), &st) != 0 && errno == ENOENT;
  if (missing)
    snprintf(why, size, "its folder %s does not exist", cli_short_path(copy, shown, sizeof shown));
  free(copy);
  return missing;
}

int cli_outset_add(cli_outset *s, const char *path, const char *label, size_t *index,
                   rig_error *err) {
  if (s->n == s->room) {
    size_t room = s->room ? 2 * s->room : 8;
    cli_out *g = realloc(s->outs, room * sizeof *g);
    if (!g) return rig_error_set(err, RIG_ENOMEM, "out of memory"), CLI_EXIT_FAIL;
    s->outs = g;
    s->room = room;
  }
  cli_out *o = &s->outs[s->n];
  memset(o, 0, sizeof *o);
  o->fd = -1;
  o->also = SIZE_MAX;
  o->label = strdup(label);
  o->path = strdup(path);
  int e = !o->label || !o->path ? ENOMEM : resolve(o);
  if (!e) e = o->fd >= 0 ? in_place_ready(o) : replace_ready(o);
  if (e) {
    bool unread = e == ENXIO && o->fifo;
    out_clear(o);
    if (e == ENOMEM) return rig_error_set(err, RIG_ENOMEM, "out of memory"), CLI_EXIT_FAIL;
    char why[CLI_PATH_SHOWN / 2 + 64];
    if (e == ENOENT && missing_folder(path, why, sizeof why))
      return cli_cannot(err, "write", path, why);
    return cli_cannot(err, "write", path, unread ? "a FIFO no process reads" : strerror(e));
  }
  for (size_t k = 0; k < s->n; k++)
    if (same_file(o, &s->outs[k])) {
      rig_error_set(err, RIG_EINVAL, "%s: the same file as %s", o->label, s->outs[k].label);
      out_clear(o);
      return CLI_EXIT_USAGE;
    }
  s->has_stdout |= is_std(o, STDOUT_FILENO);
  s->has_stderr |= is_std(o, STDERR_FILENO);
  *index = s->n++;
  return CLI_EXIT_OK;
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

/* The bytes into a temporary file beside the target (so that the rename
 * stays within one file system), synced, of the mode a plain create
 * gives (mkstemp makes it 0600). An errno, or 0; none left on failure. */
static int write_temporary(cli_out *o, const uint8_t *b, size_t n) {
  char *dcopy = strdup(o->target), *bcopy = strdup(o->target);
  int fd = -1, e = ENOMEM;
  if (dcopy && bcopy && asprintf(&o->tmp, "%s/.%s.XXXXXX", dirname(dcopy), basename(bcopy)) < 0)
    o->tmp = NULL;
  if (o->tmp) e = (fd = mkstemp(o->tmp)) < 0 ? errno : 0;
  if (fd < 0) {
    free(o->tmp);
    o->tmp = NULL;
  }
  mode_t mask = umask(0);
  umask(mask);
  if (!e && (fchmod(fd, 0666 & ~mask) != 0 || !write_all(fd, b, n) || fsync(fd) != 0)) e = errno;
  if (fd >= 0 && close(fd) != 0 && !e) e = errno;
  if (e && o->tmp) {
    unlink(o->tmp);
    free(o->tmp);
    o->tmp = NULL;
  }
  free(dcopy);
  free(bcopy);
  return e;
}

void cli_outset_also(cli_outset *s, size_t index, size_t first) {
  /* Put at the chain's end, so that every file of the chain is written. */
  while (s->outs[first].also != SIZE_MAX) first = s->outs[first].also;
  if (first != index) s->outs[first].also = index;
}

static int put_one(cli_out *o, const void *b, size_t n, rig_error *err) {
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
  if (e == ENOMEM) return rig_error_set(err, RIG_ENOMEM, "out of memory"), CLI_EXIT_FAIL;
  return e ? cli_cannot(err, "write", o->path, strerror(e)) : CLI_EXIT_OK;
}

int cli_outset_put(cli_outset *s, size_t index, const void *b, size_t n, rig_error *err) {
  int rc = CLI_EXIT_OK;
  for (size_t k = index; rc == CLI_EXIT_OK && k != SIZE_MAX; k = s->outs[k].also)
    rc = put_one(&s->outs[k], b, n, err);
  return rc;
}

/* Writes fd in place with SIGPIPE held, so that a reader gone is EPIPE
 * (a message), not the end of the process. */
static int write_in_place(const cli_out *o) {
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

int cli_outset_in_place(cli_outset *s, rig_error *err) {
  /* A file added was promised: one that never got its bytes fails the
   * set, rather than be skipped while the others go. */
  for (size_t k = 0; k < s->n; k++)
    if (!s->outs[k].put && !s->outs[k].written) {
      cli_outset_abort(s);
      cli_cannot(err, "write", s->outs[k].path, "its bytes never came");
      return CLI_EXIT_FAIL; /* progrun's fault, not the input's */
    }
  for (size_t k = 0; k < s->n; k++) {
    cli_out *o = &s->outs[k];
    int e = o->fd >= 0 && !o->written ? write_in_place(o) : 0;
    if (e) {
      cli_outset_abort(s);
      return cli_cannot(err, "write", o->path, strerror(e));
    }
    if (o->fd >= 0) o->written = true;
  }
  return CLI_EXIT_OK;
}

int cli_outset_commit(cli_outset *s, rig_error *err) {
  int rc = cli_outset_in_place(s, err);
  if (rc != CLI_EXIT_OK) return rc;
  for (size_t k = 0; k < s->n; k++) {
    cli_out *o = &s->outs[k];
    if (!o->tmp) continue;
    if (rename(o->tmp, o->target) != 0) {
      int e = errno;
      cli_outset_abort(s);
      return cli_cannot(err, "write", o->path, strerror(e));
    }
    free(o->tmp);
    o->tmp = NULL;
  }
  return CLI_EXIT_OK;
}

void cli_outset_abort(cli_outset *s) {
  for (size_t k = 0; k < s->n; k++)
    if (s->outs[k].tmp) {
      unlink(s->outs[k].tmp);
      free(s->outs[k].tmp);
      s->outs[k].tmp = NULL;
    }
}

void cli_outset_free(cli_outset *s) {
  for (size_t k = 0; k < s->n; k++) out_clear(&s->outs[k]);
  free(s->outs);
  memset(s, 0, sizeof *s);
}

int cli_write_file(const char *path, const uint8_t *b, size_t n, rig_error *err) {
  cli_outset s = {0};
  size_t k = 0;
  int rc = cli_outset_add(&s, path, path, &k, err);
  if (rc == CLI_EXIT_OK) rc = cli_outset_put(&s, k, b, n, err);
  if (rc == CLI_EXIT_OK) rc = cli_outset_commit(&s, err);
  cli_outset_free(&s);
  return rc;
}

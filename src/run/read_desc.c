/* A description from its file (rig_run.h): its bytes, or its JSON text
 * whose {"file": ...} paths are relative to the file's folder, read whole
 * within RIG_RUN_MAX_DESC. */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run_internal.h"

static rig_status cannot(rig_error *err, const char *path, int e) {
  char shown[RIG_RUN_PATH_SHOWN];
  if (e == ENOMEM) return rig_error_set(err, RIG_ENOMEM, "out of memory");
  return rig_error_set(err, RIG_ESYS, "cannot read %s: %s",
                       rig_run_path_shown(path, shown, sizeof shown), strerror(e));
}

static rig_status too_big(rig_error *err, const char *path, const struct stat *st) {
  char shown[RIG_RUN_PATH_SHOWN];
  if (S_ISREG(st->st_mode))
    return rig_error_set(err, RIG_EINVAL,
                         "%s: %jd bytes, more than the 1 GiB librig reads of a description",
                         rig_run_path_shown(path, shown, sizeof shown), (intmax_t)st->st_size);
  return rig_error_set(err, RIG_EINVAL, "%s: more than the 1 GiB librig reads of a description",
                       rig_run_path_shown(path, shown, sizeof shown));
}

int run_read_fd(int fd, size_t room, uint8_t **buf, size_t *len) {
  size_t n = 0;
  uint8_t *b = malloc(room);
  int e = b ? 0 : ENOMEM;
  while (b) {
    if (n == room) {
      size_t grown = room * 2 > RIG_RUN_MAX_DESC + 1 ? RIG_RUN_MAX_DESC + 1 : room * 2;
      uint8_t *g = grown > room ? realloc(b, grown) : NULL;
      if (!g) {
        e = grown > room ? ENOMEM : EFBIG;
        break;
      }
      b = g;
      room = grown;
    }
    ssize_t got = read(fd, b + n, room - n);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) e = errno;
    if (got <= 0) break;
    if ((n += (size_t)got) > RIG_RUN_MAX_DESC) {
      e = EFBIG;
      break;
    }
  }
  if (e) {
    free(b);
    return e;
  }
  *buf = b;
  *len = n;
  return 0;
}

/* The JSON reader's "JSON line L column C: why" of text that is no JSON
 * at all: no description either, said first, and where the reader
 * stopped as compilers say it (PATH:LINE:COLUMN), as progrun says it.
 * Whether the message was such. */
static bool no_json(const char *path, rig_error *err) {
  int line = 0, column = 0, at = 0;
  if (sscanf(err->message, "JSON line %d column %d: %n", &line, &column, &at) != 2 || at == 0)
    return false;
  char why[RIG_ERROR_MESSAGE_MAX], shown[RIG_RUN_PATH_SHOWN];
  snprintf(why, sizeof why, "%s", err->message + at);
  rig_error_set(err, RIG_EMALFORMED,
                "%s:%d:%d: not a program description: neither the bytes' magic nor JSON: %s",
                rig_run_path_shown(path, shown, sizeof shown), line, column, why);
  return true;
}

/* The description in text; a failure's message after "PATH: ". */
static rig_status decode(const char *path, const uint8_t *text, size_t len, rig_desc **out,
                         rig_error *err) {
  char shown[RIG_RUN_PATH_SHOWN];
  rig_status st;
  if (rig_desc_is_bytes(text, len)) {
    st = rig_desc_of_bytes(text, len, out, err);
  } else {
    /* dirname may modify its argument. */
    char *copy = strdup(path);
    if (!copy) return rig_error_set(err, RIG_ENOMEM, "out of memory");
    st = rig_desc_of_json((const char *)text, len, dirname(copy), out, err);
    free(copy);
    if (st == RIG_EMALFORMED && no_json(path, err)) return st;
  }
  if (st != RIG_OK) rig_error_prefix(err, "%s", rig_run_path_shown(path, shown, sizeof shown));
  return st;
}

rig_status rig_run_read_desc(const char *path, rig_desc **out, rig_error *err) {
  rig_error scratch; /* the decoder's message is read back */
  if (!err) err = &scratch;
  *out = NULL;
  int fd;
  struct stat st;
  int e = run_open_read(path, &fd, &st);
  if (e) return cannot(err, path, e);
  /* A regular file's size refuses it before a byte is read; anything else
   * is read until the bound, and one byte past it says it is longer. */
  if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > RIG_RUN_MAX_DESC) {
    close(fd);
    return too_big(err, path, &st);
  }
  size_t room = S_ISREG(st.st_mode) && st.st_size > 0 ? (size_t)st.st_size + 1 : 4096;
  uint8_t *text = NULL;
  size_t len = 0;
  e = run_read_fd(fd, room, &text, &len);
  close(fd);
  if (e == EFBIG) return too_big(err, path, &st);
  if (e) return cannot(err, path, e);
  rig_status s = decode(path, text, len, out, err);
  free(text);
  if (s != RIG_OK) *out = NULL;
  return s;
}

/* A description from its file (rig_run.h): its bytes, or its JSON text
 * whose {"file": ...} paths are relative to the file's folder, read whole
 * within RIG_RUN_MAX_DESC. */
#include <errno.h>
#include <jansson.h>
#include <libgen.h>
#include <stdbool.h>
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

/* Whether text that the description's reader refused is JSON at all:
 * when not, it is no description either, said first, and where the JSON
 * reader stopped as compilers say it (PATH:LINE:COLUMN), so that an editor
 * can go there. Repeated keys and \u0000 are JSON that the reader refuses
 * in its own words, which then stand. */
static bool no_json(const void *text, size_t len, const char *path_shown, rig_error *err) {
  json_error_t je;
  json_t *any = json_loadb(text, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
  json_decref(any);
  if (any || json_error_code(&je) == json_error_out_of_memory) return false;
  rig_error_set(err, RIG_EMALFORMED,
                "%s:%d:%d: not a program description: neither the bytes' magic nor JSON: %s",
                path_shown, je.line, je.column, je.text);
  return true;
}

rig_status rig_run_desc_of_text(const void *text, size_t len, const char *path_shown,
                                const char *folder, rig_desc **out, rig_error *err) {
  *out = NULL;
  rig_status st;
  if (rig_desc_is_bytes(text, len)) {
    st = rig_desc_of_bytes(text, len, out, err);
  } else {
    st = rig_desc_of_json(text, len, folder ? folder : ".", out, err);
    if (st == RIG_EMALFORMED && no_json(text, len, path_shown, err)) return st;
  }
  if (st != RIG_OK) rig_error_prefix(err, "%s", path_shown);
  return st;
}

/* The description in the file's text, its JSON's files beside it. */
static rig_status decode(const char *path, const uint8_t *text, size_t len, rig_desc **out,
                         rig_error *err) {
  char shown[RIG_RUN_PATH_SHOWN];
  /* dirname may modify its argument. */
  char *copy = strdup(path);
  if (!copy) return rig_error_set(err, RIG_ENOMEM, "out of memory");
  rig_status st = rig_run_desc_of_text(text, len, rig_run_path_shown(path, shown, sizeof shown),
                                       dirname(copy), out, err);
  free(copy);
  return st;
}

rig_status rig_run_read_desc(const char *path, rig_desc **out, rig_error *err) {
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
  return s;
}

/* The description subcommands: check, dump and pack, and reading a
 * description from a file (bytes or JSON). */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/* ---- arguments ------------------------------------------------------------ */

typedef struct cli_args {
  const char *file;
  bool json;       /* --json (dump) */
  const char *out; /* -o OUT (pack) */
  bool help;
} cli_args;

/* Which options a subcommand takes. */
enum { TAKES_JSON = 1, TAKES_OUT = 2 };

/* One FILE and the options `takes` allows, in any order; "--" ends the
 * options so that a FILE may start with '-'. */
static int parse_args(int argc, char **argv, int takes, cli_args *a) {
  const char *cmd = argv[0];
  bool options = true;
  memset(a, 0, sizeof *a);
  for (int i = 1; i < argc; i++) {
    const char *s = argv[i];
    if (options && strcmp(s, "--") == 0) {
      options = false;
    } else if (options && (strcmp(s, "-h") == 0 || strcmp(s, "--help") == 0)) {
      a->help = true;
    } else if (options && (takes & TAKES_JSON) && strcmp(s, "--json") == 0) {
      a->json = true;
    } else if (options && (takes & TAKES_OUT) && strcmp(s, "-o") == 0) {
      if (i + 1 >= argc) return cli_usage_error("%s: -o needs a path", cmd);
      a->out = argv[++i];
    } else if (options && s[0] == '-' && s[1] != '\0') {
      return cli_usage_error("%s: unknown option '%s'", cmd, s);
    } else if (a->file) {
      return cli_usage_error("%s: one FILE only, not '%s' too", cmd, s);
    } else {
      a->file = s;
    }
  }
  if (a->help) return CLI_EXIT_OK;
  if (!a->file) return cli_usage_error("%s: no FILE given", cmd);
  if ((takes & TAKES_OUT) && !a->out) return cli_usage_error("%s: no -o OUT given", cmd);
  return CLI_EXIT_OK;
}

/* ---- reading -------------------------------------------------------------- */

/* The whole file ("-": stdin), NUL-terminated for the JSON reader's sake;
 * errno set on failure. Reads until end of file rather than trusting
 * st_size, so pipes and /proc files work too; the room for a regular file's
 * size and its NUL, plus one byte, finds the end without growing. */
static char *read_whole(const char *path, size_t *len) {
  bool is_stdin = strcmp(path, "-") == 0;
  int fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return NULL;
  struct stat st;
  size_t room = 4096;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) room = (size_t)st.st_size + 2;
  char *buf = malloc(room);
  size_t n = 0;
  while (buf) {
    if (n + 1 >= room) {
      char *b = room > SIZE_MAX / 2 ? NULL : realloc(buf, room * 2);
      if (!b) {
        free(buf);
        buf = NULL;
        errno = ENOMEM;
        break;
      }
      buf = b;
      room *= 2;
    }
    ssize_t got = read(fd, buf + n, room - n - 1);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      int e = errno;
      free(buf);
      buf = NULL;
      errno = e;
      break;
    }
    if (got == 0) break;
    n += (size_t)got;
  }
  int e = errno;
  if (!is_stdin) close(fd);
  errno = e;
  if (buf) {
    buf[n] = '\0';
    *len = n;
  }
  return buf;
}

/* Out of memory is the machine's failure; anything else is the file's. */
static int status_exit(rig_status st) {
  return st == RIG_ENOMEM ? CLI_EXIT_FAIL : CLI_EXIT_USAGE;
}

int cli_read_desc(const char *path, rig_desc **d) {
  size_t len = 0;
  char *text = read_whole(path, &len);
  if (!text)
    return cli_fail(errno == ENOMEM ? CLI_EXIT_FAIL : CLI_EXIT_USAGE, "cannot read %s: %s", path,
                    strerror(errno));
  rig_error err = {0};
  rig_status st;
  if (rig_desc_is_bytes(text, len)) {
    st = rig_desc_of_bytes(text, len, d, &err);
  } else {
    /* dirname may modify its argument. */
    char *copy = strdup(path);
    if (!copy) {
      free(text);
      return cli_fail(CLI_EXIT_FAIL, "out of memory");
    }
    st = rig_desc_of_json(text, len, dirname(copy), d, &err);
    free(copy);
  }
  free(text);
  if (st != RIG_OK) {
    *d = NULL;
    return cli_fail(status_exit(st), "%s: %s", path, err.message);
  }
  return CLI_EXIT_OK;
}

/* ---- writing -------------------------------------------------------------- */

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

/* Writes `path` whole or not at all: a temporary file beside it (so the
 * rename stays within one file system), then rename over it. */
static int write_atomic(const char *path, const uint8_t *b, size_t n) {
  char *dcopy = strdup(path), *bcopy = strdup(path), *tmp = NULL;
  int fd = -1, e = ENOMEM;
  if (!dcopy || !bcopy) goto fail;
  const char *dir = dirname(dcopy), *base = basename(bcopy);
  size_t room = strlen(dir) + strlen(base) + 16;
  tmp = malloc(room);
  if (!tmp) goto fail;
  snprintf(tmp, room, "%s/.%s.XXXXXX", dir, base);
  fd = mkstemp(tmp);
  if (fd < 0) {
    e = errno;
    free(tmp);
    tmp = NULL;
    goto fail;
  }
  /* mkstemp makes the file 0600; give it the mode a plain create would. */
  mode_t mask = umask(0);
  umask(mask);
  if (fchmod(fd, 0666 & ~mask) != 0 || !write_all(fd, b, n) || fsync(fd) != 0) {
    e = errno;
    goto fail;
  }
  int c = close(fd);
  fd = -1;
  if (c != 0 || rename(tmp, path) != 0) {
    e = errno;
    goto fail;
  }
  free(tmp);
  free(dcopy);
  free(bcopy);
  return CLI_EXIT_OK;
fail:
  if (fd >= 0) close(fd);
  if (tmp) unlink(tmp);
  free(tmp);
  free(dcopy);
  free(bcopy);
  return cli_fail(CLI_EXIT_USAGE, "cannot write %s: %s", path, strerror(e));
}

/* stdout's buffered output reaches its file, or the command fails. */
static int flush_stdout(int code) {
  if (fflush(stdout) != 0 || ferror(stdout))
    return cli_fail(CLI_EXIT_USAGE, "cannot write the output: %s", strerror(errno));
  return code;
}

/* ---- the subcommands ------------------------------------------------------ */

int cli_check(int argc, char **argv) {
  cli_args a;
  int rc = parse_args(argc, argv, 0, &a);
  if (rc != CLI_EXIT_OK || a.help) {
    if (a.help) cli_print_usage(stdout);
    return rc;
  }
  rig_desc *d = NULL;
  rc = cli_read_desc(a.file, &d);
  if (rc != CLI_EXIT_OK) return rc;
  rig_error err = {0};
  rig_status st = rig_desc_check(d, &err);
  rig_desc_free(d);
  if (st != RIG_OK) return cli_fail(status_exit(st), "%s: %s", a.file, err.message);
  puts("ok");
  return flush_stdout(CLI_EXIT_OK);
}

/* Dumps even a description that breaks a rule: finding why is what it is
 * for. */
int cli_dump(int argc, char **argv) {
  cli_args a;
  int rc = parse_args(argc, argv, TAKES_JSON, &a);
  if (rc != CLI_EXIT_OK || a.help) {
    if (a.help) cli_print_usage(stdout);
    return rc;
  }
  rig_desc *d = NULL;
  rc = cli_read_desc(a.file, &d);
  if (rc != CLI_EXIT_OK) return rc;
  if (!a.json) {
    cli_dump_desc(stdout, d);
    rig_desc_free(d);
    return flush_stdout(CLI_EXIT_OK);
  }
  char *text = NULL;
  rig_error err = {0};
  rig_status st = rig_desc_to_json(d, &text, &err);
  rig_desc_free(d);
  if (st != RIG_OK) return cli_fail(status_exit(st), "%s: %s", a.file, err.message);
  size_t n = strlen(text);
  fputs(text, stdout);
  if (n == 0 || text[n - 1] != '\n') putchar('\n');
  free(text);
  return flush_stdout(CLI_EXIT_OK);
}

/* Converts without checking, so that tests can make files that break
 * rules; `check` judges. */
int cli_pack(int argc, char **argv) {
  cli_args a;
  int rc = parse_args(argc, argv, TAKES_OUT, &a);
  if (rc != CLI_EXIT_OK || a.help) {
    if (a.help) cli_print_usage(stdout);
    return rc;
  }
  rig_desc *d = NULL;
  rc = cli_read_desc(a.file, &d);
  if (rc != CLI_EXIT_OK) return rc;
  uint8_t *bytes = NULL;
  size_t len = 0;
  rig_error err = {0};
  rig_status st = rig_desc_to_bytes(d, &bytes, &len, &err);
  rig_desc_free(d);
  if (st != RIG_OK) return cli_fail(status_exit(st), "%s: %s", a.file, err.message);
  rc = write_atomic(a.out, bytes, len);
  free(bytes);
  return rc;
}

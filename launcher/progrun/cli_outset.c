/* The files a command writes, all or none (docs/cli.md, "Files"): librig's
 * set (rig_outputs), its statuses mapped to the command's exit codes. */
#include <unistd.h>

#include "cli.h"

/* A file that cannot be written, or two that are one, is the input's
 * fault; out of memory, or a file never given its bytes, is progrun's. */
static int exit_of(rig_status st) {
  return st == RIG_OK                         ? CLI_EXIT_OK
         : st == RIG_ESYS || st == RIG_EINVAL ? CLI_EXIT_USAGE
                                              : CLI_EXIT_FAIL;
}

int cli_outset_add(cli_outset *s, const char *path, const char *label, size_t *index,
                   rig_error *err) {
  rig_status st = s->set ? RIG_OK : rig_outputs_make(&s->set, err);
  if (st == RIG_OK) st = rig_outputs_add(s->set, path, label, index, err);
  if (st != RIG_OK) return exit_of(st);
  s->has_stdout = rig_outputs_writes_fd(s->set, STDOUT_FILENO);
  s->has_stderr = rig_outputs_writes_fd(s->set, STDERR_FILENO);
  return CLI_EXIT_OK;
}

void cli_outset_also(cli_outset *s, size_t index, size_t first) {
  rig_outputs_also(s->set, index, first);
}

int cli_outset_put(cli_outset *s, size_t index, const void *b, size_t n, rig_error *err) {
  return exit_of(rig_outputs_put(s->set, index, b, n, err));
}

int cli_outset_in_place(cli_outset *s, rig_error *err) {
  return exit_of(rig_outputs_in_place(s->set, err));
}

int cli_outset_commit(cli_outset *s, rig_error *err) {
  return exit_of(rig_outputs_commit(s->set, err));
}

void cli_outset_abort(cli_outset *s) {
  rig_outputs_abort(s->set);
}

void cli_outset_free(cli_outset *s) {
  rig_outputs_free(s->set);
  *s = (cli_outset){0};
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

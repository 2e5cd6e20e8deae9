/* The reports of a run (--json, --trace, --csv, --markdown) into their
 * temporary files, for the session to commit or abort with the outputs. */
#include <stdint.h>
#include <stdlib.h>

#include "cli_job.h"

/* --trace's text: every machine's times less its offset. */
static int trace_text(cli_session *s, char **text, size_t *len, rig_error *err) {
  cli_trace_machine *tm = calloc(s->n, sizeof *tm);
  if (!tm) return rig_error_set(err, RIG_ENOMEM, "out of memory"), CLI_EXIT_FAIL;
  for (size_t m = 0; m < s->n; m++)
    tm[m] =
        (cli_trace_machine){s->hosts[m],           s->traces[m],          s->clocks[m].offset_ns,
                            s->clocks[m].error_ns, m ? NULL : s->windows, m ? 0 : s->nwindows};
  int rc = cli_trace_text(tm, s->n, s->opts->warmup, text, len, err);
  free(tm);
  return rc;
}

/* The reports into their temporary files. */
int cli_put_reports(cli_session *s, rig_error *err) {
  typedef int (*text_fn)(cli_session *, char **, size_t *, rig_error *);
  const text_fn fns[4] = {cli_report_json, trace_text, cli_table_csv, cli_table_markdown};
  const size_t at[4] = {s->json, s->trace, s->csv, s->markdown};
  int rc = CLI_EXIT_OK;
  for (size_t k = 0; rc == CLI_EXIT_OK && k < 4; k++) {
    if (at[k] == SIZE_MAX) continue;
    char *text = NULL;
    size_t len = 0;
    rc = fns[k](s, &text, &len, err);
    cli_hold();
    if (rc == CLI_EXIT_OK) rc = cli_outset_put(&s->files, at[k], text, len, err);
    cli_release();
    free(text);
  }
  return rc;
}

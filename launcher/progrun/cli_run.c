/* `progrun run FILE` on this machine alone: FILE a description, or a job
 * file of one machine (a job of more needs a launcher). The session
 * (cli_job.h) reads the plans, runs, and writes the files and the
 * summary; here they are only strung together. */
#include <string.h>

#include "cli_job.h"

int cli_run(int argc, char **argv) {
  cli_run_opts o;
  int rc = cli_run_parse(argc, argv, &o);
  if (rc != CLI_EXIT_OK || o.help) {
    if (rc == CLI_EXIT_OK) cli_print_usage(stdout);
    cli_run_opts_free(&o);
    return rc;
  }
  cli_session s;
  rc = cli_session_plan(&s, &o, 1);
  if (rc == CLI_EXIT_OK) {
    rig_error err = {0};
    cli_interrupt_arm(cli_session_interrupted, NULL, &s);
    cli_fault_arm(-1);
    rc = cli_session_control(&s, &err);
    rc = rc == CLI_EXIT_OK ? cli_session_finish(&s) : cli_session_fail(&s, rc, &err);
    cli_interrupt_disarm();
  }
  cli_session_free(&s);
  cli_run_opts_free(&o);
  return rc;
}

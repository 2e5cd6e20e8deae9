/* A run's plans (cli_job.h): what is read before any device is touched.
 * FILE (a description, or a job file naming each machine's), each
 * machine's inputs, and every file the run will write, added to the
 * session's set before any work: one that cannot be written, or that is
 * another of them, is refused here (exit 2), so that no run's work is
 * lost to it. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli_job.h"

/* path with every {rank} replaced by the machine's index. */
static char *with_rank(const char *path, size_t rank) {
  size_t n = 1;
  for (const char *at = path; (at = strstr(at, "{rank}")); at += 6) n++;
  size_t room = strlen(path) + n * 24;
  char *s = malloc(room), *w = s;
  if (!s) return NULL;
  for (const char *at; (at = strstr(path, "{rank}")); path = at + 6)
    w += snprintf(w, room - (size_t)(w - s), "%.*s%zu", (int)(at - path), path, rank);
  snprintf(w, room - (size_t)(w - s), "%s", path);
  return s;
}

/* A machine's part, as the plan takes it from the options or a job file. */
typedef struct part {
  const char *file;
  char *const *devices;
  size_t ndevices;
  const cli_int *ints;
  size_t nints;
  const cli_io *inputs, *outputs;
  size_t ninputs, noutputs;
  const char *where; /* a job file's part ("machines[1]", "every"), or NULL: the options */
} part;

/* Machine m's output k, which m writes itself (a machine-local job): kept
 * in its plan for it, checked there. */
static int plan_out_elsewhere(cli_plan *p, const cli_io *io, char *path, const char *label) {
  cli_plan_out *o = realloc(p->outs, (p->nouts + 1) * sizeof *o);
  if (!o) return free(path), cli_fail(CLI_EXIT_FAIL, "out of memory");
  p->outs = o;
  o[p->nouts] = (cli_plan_out){io->index, path, strdup(label)};
  if (!o[p->nouts].label) return cli_fail(CLI_EXIT_FAIL, "out of memory");
  p->nouts++;
  return CLI_EXIT_OK;
}

/* Adds machine m's outputs to the session's files (or, in a job whose
 * machines write their own, to machine m's plan). */
static int plan_outputs(cli_session *s, cli_plan *p, size_t m, const part *t) {
  rig_error err = {0};
  for (size_t k = 0; k < t->noutputs; k++) {
    const cli_io *io = &t->outputs[k];
    if ((uint64_t)io->index >= p->ninputs)
      return cli_fail(CLI_EXIT_USAGE, "%s: output %" PRId64 ": no such input", t->file, io->index);
    char label[4200], *path = with_rank(io->path, m);
    if (!path) return cli_fail(CLI_EXIT_FAIL, "out of memory");
    if (t->where)
      snprintf(label, sizeof label, "%s.outputs %" PRId64 " (%s)", t->where, io->index, path);
    else
      snprintf(label, sizeof label, "--output %" PRId64 "=%s", io->index, io->path);
    if (s->local && m > 0 && !s->opts->gather_outputs) {
      int rc = plan_out_elsewhere(p, io, path, label);
      if (rc != CLI_EXIT_OK) return rc;
      continue;
    }
    size_t at = SIZE_MAX, *first = &p->outputs[io->index];
    int rc = cli_outset_add(&s->files, path, label, &at, &err);
    free(path);
    /* One input, several files: each gets its bytes. */
    if (rc == CLI_EXIT_OK && *first != SIZE_MAX) cli_outset_also(&s->files, at, *first);
    if (rc == CLI_EXIT_OK && *first == SIZE_MAX) *first = at;
    /* A job file's outputs that are one file: its fault, named by its name. */
    if (rc == CLI_EXIT_USAGE && t->where && err.code == RIG_EINVAL)
      rig_error_prefix(&err, "%s", s->opts->file);
    if (rc != CLI_EXIT_OK) return cli_fail(rc, "%s", err.message);
  }
  return CLI_EXIT_OK;
}

/* Machine m's inputs, {rank} in their paths replaced by m; a file that
 * gives fewer bytes than its input is warned of (the rest is zeros). */
static int plan_inputs(cli_session *s, cli_plan *p, size_t m, const part *t) {
  rig_error err = {0};
  for (size_t k = 0; k < t->ninputs; k++) {
    const cli_io *io = &t->inputs[k];
    if ((uint64_t)io->index >= p->ninputs)
      return cli_fail(CLI_EXIT_USAGE, "%s: input %" PRId64 ": no such input", t->file, io->index);
    /* The label's path in half the room: the message names the file too. */
    char *path = with_rank(io->path, m), label[4200], shown[RIG_RUN_PATH_SHOWN / 2];
    if (!path) return cli_fail(CLI_EXIT_FAIL, "out of memory");
    free(p->in_paths[io->index]);
    p->in_paths[io->index] = path;
    const char *short_path = rig_run_path_shown(path, shown, sizeof shown);
    if (t->where)
      snprintf(label, sizeof label, "%s: %s.inputs %" PRId64 " (%s)", s->opts->file, t->where,
               io->index, short_path);
    else
      snprintf(label, sizeof label, "--input %" PRId64 "=%s", io->index, short_path);
    uint64_t bytes = (uint64_t)p->desc->inputs[io->index].bytes, got = 0;
    int rc = cli_read_input(label, path, io->index, bytes, &p->bytes[io->index], &got, &err);
    if (rc != CLI_EXIT_OK) return cli_fail(rc, "%s", err.message);
    /* Once per file: a path without {rank} is every machine's of its part. */
    size_t first = t->where && strcmp(t->where, "every") == 0 ? s->jf.n : t->where ? m : 0;
    if (got < bytes && (m == first || strstr(io->path, "{rank}")))
      cli_warn("%s: %" PRIu64 " bytes for an input of %" PRIu64 "; the rest is zeros", label, got,
               bytes);
  }
  return CLI_EXIT_OK;
}

/* Machine m's plan: its description (`shared`, or read from t->file and
 * checked), its outputs, then its inputs read. */
static int plan_machine(cli_session *s, size_t m, rig_desc *shared, const part *t) {
  cli_plan *p = &s->plans[m];
  rig_error err = {0};
  p->file = t->file;
  snprintf(p->where, sizeof p->where, "%s", t->where ? t->where : "");
  if (shared) {
    p->desc = shared;
  } else {
    /* A job file's program is told where check tells it: the job file's
     * field first ("job.json: machines[2].program: ./bad.json: ..."). */
    int rc = cli_read_desc_quiet(t->file, &p->desc, &err);
    if (rc == CLI_EXIT_OK && rig_desc_check(p->desc, &err) != RIG_OK) {
      rig_error_prefix(&err, "%s", t->file);
      rc = CLI_EXIT_USAGE;
    }
    if (p->desc) p->owns_desc = true;
    if (rc != CLI_EXIT_OK) {
      char shown[RIG_RUN_PATH_SHOWN];
      if (t->where)
        rig_error_prefix(&err, "%s: %s.program",
                         rig_run_path_shown(s->opts->file, shown, sizeof shown), t->where);
      return cli_fail(rc, "%s", err.message);
    }
  }
  const rig_desc *d = p->desc;
  p->devices = t->devices;
  p->ndevices = t->ndevices;
  p->ints = t->ints;
  p->nints = t->nints;
  if (t->nints > (uint64_t)d->ints)
    return cli_fail(CLI_EXIT_USAGE, "%s: %zu ints for a program of %" PRId64, t->file, t->nints,
                    d->ints);
  p->bytes = calloc(d->ninputs + 1, sizeof *p->bytes);
  p->in_paths = calloc(d->ninputs + 1, sizeof *p->in_paths);
  p->outputs = malloc((d->ninputs + 1) * sizeof *p->outputs);
  if (!p->bytes || !p->in_paths || !p->outputs) return cli_fail(CLI_EXIT_FAIL, "out of memory");
  for (size_t i = 0; i <= d->ninputs; i++) p->outputs[i] = SIZE_MAX;
  p->ninputs = d->ninputs;
  int rc = plan_outputs(s, p, m, t);
  return rc == CLI_EXIT_OK ? plan_inputs(s, p, m, t) : rc;
}

/* A job file's part as the plan takes it (its paths resolved already). */
static int part_of_job(const cli_job_machine *jm, const char *where, part *t, cli_io **ios) {
  *ios = calloc(jm->ninputs + jm->noutputs + 1, sizeof **ios);
  if (!*ios) return cli_fail(CLI_EXIT_FAIL, "out of memory");
  for (size_t k = 0; k < jm->ninputs + jm->noutputs; k++) {
    const cli_job_io *io = k < jm->ninputs ? &jm->inputs[k] : &jm->outputs[k - jm->ninputs];
    (*ios)[k] = (cli_io){io->index, io->path};
  }
  *t = (part){jm->program,        jm->ndevices ? jm->devices : NULL,
              jm->ndevices,       jm->ints,
              jm->nints,          *ios,
              *ios + jm->ninputs, jm->ninputs,
              jm->noutputs,       where};
  return CLI_EXIT_OK;
}

/* The plans of a job file's machines: every one of them in the job. */
static int plan_jobfile(cli_session *s) {
  const char *file = s->opts->file;
  rig_error err = {0};
  int rc = cli_jobfile_read(file, &s->jf, &err);
  if (rc != CLI_EXIT_OK) return cli_fail(rc, "%s", err.message);
  if (s->jf.runs && s->opts->runs == 1) s->runs = s->jf.runs; /* --runs, when given, wins */
  s->named = true;
  /* A machine left out would be work silently not done. */
  char shown[RIG_RUN_PATH_SHOWN];
  if (s->jf.n > s->n)
    return cli_fail(
        CLI_EXIT_USAGE,
        "%s: this job has %zu machines: start it with mpirun -n %zu (or mpiexec -n %zu, "
        "srun -n %zu)",
        rig_run_path_shown(file, shown, sizeof shown), s->jf.n, s->jf.n, s->jf.n, s->jf.n);
  if ((rc = cli_jobfile_rails_fit(&s->jf, s->n, file, &err)) != CLI_EXIT_OK)
    return cli_fail(rc, "%s", err.message);
  for (size_t m = 0; m < s->n && rc == CLI_EXIT_OK; m++) {
    const cli_job_machine *jm = cli_jobfile_machine(&s->jf, m);
    if (!jm)
      return cli_fail(CLI_EXIT_USAGE, "%s: no program for machine %zu (give \"every\")", file, m);
    char where[64];
    if (m < s->jf.n)
      snprintf(where, sizeof where, "machines[%zu]", m);
    else
      snprintf(where, sizeof where, "every");
    part t;
    cli_io *ios = NULL;
    rc = part_of_job(jm, where, &t, &ios);
    if (rc == CLI_EXIT_OK) rc = plan_machine(s, m, NULL, &t);
    /* Its rails through its part's map on this machine, as `check` judges
     * them, and `every`'s too: its machine is known here. */
    cli_plan *p = &s->plans[m];
    if (rc == CLI_EXIT_OK &&
        ((rc = cli_jobfile_rail_map(&s->jf, jm, where, (int64_t)m, s->n, &p->rails, &err)) !=
             CLI_EXIT_OK ||
         (rc = cli_jobfile_fit_rails(&s->jf, (int64_t)m, &p->rails, p->desc, jm->program, where,
                                     &err)) != CLI_EXIT_OK))
      rc = cli_fail(rc, "%s: %s", rig_run_path_shown(file, shown, sizeof shown), err.message);
    free(ios);
  }
  return rc;
}

/* The plans of one description on every machine, as the options say. */
static int plan_desc(cli_session *s) {
  const cli_run_opts *o = s->opts;
  rig_desc *d = NULL;
  int rc = cli_read_desc(o->file, &d);
  if (rc != CLI_EXIT_OK) return rc;
  s->plans[0].owns_desc = true; /* machine 0 frees the one description */
  s->plans[0].desc = d;
  rig_error err = {0};
  if (rig_desc_check(d, &err) != RIG_OK)
    return cli_fail(CLI_EXIT_USAGE, "%s: %s", o->file, err.message);
  if ((rc = cli_run_fit(o, d, &err)) != CLI_EXIT_OK)
    return cli_fail(rc, "%s: %s", o->file, err.message);
  for (size_t k = 0; k < o->noutputs; k++)
    if (s->n > 1 && !strstr(o->outputs[k].path, "{rank}"))
      return cli_usage_error("--output %" PRId64 "=%s: with %zu machines the path needs {rank}",
                             o->outputs[k].index, o->outputs[k].path, s->n);
  part t = {o->file,   o->devices, o->ndevices, o->ints,     o->nints,
            o->inputs, o->outputs, o->ninputs,  o->noutputs, NULL};
  for (size_t m = 0; m < s->n && rc == CLI_EXIT_OK; m++) rc = plan_machine(s, m, d, &t);
  return rc;
}

/* --json, --trace, --csv and --markdown, after the outputs. */
static int plan_reports(cli_session *s) {
  const cli_run_opts *o = s->opts;
  const char *paths[4] = {o->json, o->trace, o->csv, o->markdown};
  const char *names[4] = {"--json", "--trace", "--csv", "--markdown"};
  size_t *at[4] = {&s->json, &s->trace, &s->csv, &s->markdown};
  rig_error err = {0};
  for (size_t k = 0; k < 4; k++) {
    *at[k] = SIZE_MAX;
    if (!paths[k]) continue;
    char label[4200];
    snprintf(label, sizeof label, "%s %s", names[k], paths[k]);
    int rc = cli_outset_add(&s->files, paths[k], label, at[k], &err);
    if (rc != CLI_EXIT_OK) return cli_fail(rc, "%s", err.message);
  }
  return CLI_EXIT_OK;
}

int cli_session_plan(cli_session *s, const cli_run_opts *o, size_t n) {
  memset(s, 0, sizeof *s);
  s->opts = o;
  s->n = n;
  s->runs = o->runs;
  s->run = -1;
  s->failed_run = -1;
  s->json = s->trace = s->csv = s->markdown = SIZE_MAX;
  s->plans = calloc(n, sizeof *s->plans);
  if (!s->plans) return cli_fail(CLI_EXIT_FAIL, "out of memory");
  /* A job runs every machine's program on its own machine. */
  s->local = n > 1;
  int rc = rig_run_is_jobfile(o->file, NULL) ? plan_jobfile(s) : plan_desc(s);
  if (rc == CLI_EXIT_OK) rc = cli_run_count_fit(o, s->runs, n);
  if (rc == CLI_EXIT_OK) rc = plan_reports(s);
  return rc;
}

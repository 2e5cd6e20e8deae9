/* `progrun check JOBFILE` and `progrun dump JOBFILE`: a job file wherever a
 * description goes (docs/cli.md, "Job files"). check reads the job file
 * (jobfile.c, its rails checked by jobfile_rails.c), then each machine's
 * program as `check` does one description, against the machine's part: its
 * devices' names, ints, inputs and outputs, and the rails it is an end of.
 * dump lists each machine's part and program, then the rails. Every message
 * names the job file and the JSON path. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_job.h"

/* The machines a job file has parts for: `machines`, then `every`
 * (index n). */
static size_t nparts(const cli_jobfile *j) {
  return j->n + (j->has_every ? 1 : 0);
}

static const cli_job_machine *part_of(const cli_jobfile *j, size_t i, char *where, size_t size) {
  if (i < j->n) {
    snprintf(where, size, "machines[%zu]", i);
    return &j->machines[i];
  }
  snprintf(where, size, "every");
  return &j->every;
}

/* ---- check ------------------------------------------------------------------ */

/* The areas machine `machine` has of a rail, as its load will find them
 * (rails/rail.c: two copies of each direction's bytes): between[0] sends
 * `send` and receives `receive`, between[1] the other way round. */
typedef struct rail_view {
  const cli_jobfile *jf;
  int64_t machine;         /* -1: `every`, whose machines are not known */
  const cli_rail_map *map; /* the part's on that machine, or NULL */
} rail_view;

static const cli_job_rail *rail_of(const cli_jobfile *j, int64_t id) {
  for (size_t i = 0; i < j->nrails; i++)
    if (j->rails[i].id == id) return &j->rails[i];
  return NULL;
}

static int64_t area_bytes(void *ctx, int64_t rail, rig_desc_area area) {
  const rail_view *v = ctx;
  const cli_job_rail *r = rail_of(v->jf, cli_rail_map_id(v->map, rail));
  if (!r || v->machine < 0 || (r->between[0] != v->machine && r->between[1] != v->machine))
    return -1;
  if (area == RIG_AREA_COUNTS) return RIG_RAIL_COUNTS_BYTES;
  bool first = r->between[0] == v->machine;
  const rig_rail_transfer *out = first ? r->send : r->receive, *in = first ? r->receive : r->send;
  size_t nout = first ? r->nsend : r->nreceive, nin = first ? r->nreceive : r->nsend;
  return area == RIG_AREA_OUTBOUND ? (int64_t)(2 * rig_rail_copy_bytes(out, nout, false))
                                   : (int64_t)(2 * rig_rail_copy_bytes(in, nin, true));
}

/* The family of a description's arch, by the provider table as the run
 * maps it (cli_run.c): cpu-<ISA> a cpu:N, sm_XY a cuda:N, an ISA the host.
 * Only its start can name a family, so a long arch is cut. */
static int arch_family(rig_desc_string arch) {
  char text[72];
  size_t n = arch.len < sizeof text - 1 ? arch.len : sizeof text - 1;
  memcpy(text, arch.bytes, n);
  text[n] = 0;
  return rig_family_of_arch(text);
}

/* The forms of this build's device names, for a refusal: "host, cpu:N,
 * cuda:N". */
static const char *name_forms(char *out, size_t size) {
  size_t at = 0;
  out[0] = 0;
  for (size_t f = 0; f < rig_family_count() && at < size; f++) {
    char first[64];
    const char *family = rig_family_name(f);
    rig_family_device_name(f, 0, first, sizeof first);
    int n = snprintf(out + at, size - at, "%s%s%s", f ? ", " : "", family,
                     strcmp(first, family) == 0 ? "" : ":N");
    at += n > 0 ? (size_t)n : 0;
  }
  return out;
}

/* An arch as messages show it: at most 64 bytes, anything outside
 * printable ASCII as '?'. */
static const char *shown(rig_desc_string s, char buf[72]) {
  size_t n = s.len < 64 ? s.len : 64;
  for (size_t i = 0; i < n; i++) buf[i] = s.bytes[i] >= 32 && s.bytes[i] < 127 ? s.bytes[i] : '?';
  strcpy(buf + n, s.len > 64 ? "..." : "");
  return buf;
}

/* The part fits its program: devices (their number, each name's form and
 * family), ints, inputs' and outputs' numbers. */
static int fit_part(const cli_job_machine *jm, const rig_desc *d, const char *where,
                    rig_error *err) {
  if (jm->ndevices && jm->ndevices != d->ndevices)
    return rig_error_set(err, RIG_EINVAL, "%s.devices: %zu devices for a program of %zu", where,
                         jm->ndevices, d->ndevices),
           CLI_EXIT_USAGE;
  for (size_t i = 0; i < jm->ndevices; i++) {
    int family = rig_family_of_device_name(jm->devices[i]);
    char arch[72], forms[128];
    if (family < 0)
      return rig_error_set(err, RIG_EINVAL,
                           "%s.devices: element %zu: \"%.64s\" is not a device's name (%s)", where,
                           i, jm->devices[i], name_forms(forms, sizeof forms)),
             CLI_EXIT_USAGE;
    if (arch_family(d->devices[i]) != family)
      return rig_error_set(err, RIG_EINVAL,
                           "%s.devices: element %zu: \"%s\" cannot stand for device %zu, of "
                           "arch \"%s\"",
                           where, i, jm->devices[i], i, shown(d->devices[i], arch)),
             CLI_EXIT_USAGE;
  }
  if (jm->nints > (uint64_t)d->ints)
    return rig_error_set(err, RIG_EINVAL, "%s.ints: %zu ints for a program of %" PRId64, where,
                         jm->nints, d->ints),
           CLI_EXIT_USAGE;
  for (size_t k = 0; k < jm->ninputs + jm->noutputs; k++) {
    bool input = k < jm->ninputs;
    const cli_job_io *io = input ? &jm->inputs[k] : &jm->outputs[k - jm->ninputs];
    if ((uint64_t)io->index >= d->ninputs)
      return rig_error_set(err, RIG_EINVAL,
                           "%s.%s: input %" PRId64 ": no such input (the program has %zu)", where,
                           input ? "inputs" : "outputs", io->index, d->ninputs),
             CLI_EXIT_USAGE;
  }
  return CLI_EXIT_OK;
}

/* A Ready leaf's rail that machine m is no end of: its id, or 0 (rail ids
 * start at 1). */
typedef struct ready_walk {
  const cli_jobfile *jf;
  int64_t machine;
  const cli_rail_map *map;
} ready_walk;

static bool has_end(const ready_walk *w, int64_t id) {
  const cli_job_rail *r = rail_of(w->jf, cli_rail_map_id(w->map, id));
  return r && (r->between[0] == w->machine || r->between[1] == w->machine);
}

static int64_t leaf_foreign(const ready_walk *w, const rig_desc_leaf *l) {
  return l->tag == RIG_LEAF_READY && !has_end(w, l->u.ready) ? l->u.ready : 0;
}

static int64_t value_foreign(const ready_walk *w, const rig_desc_value *v) {
  return v->tag == RIG_VALUE_LEAF ? leaf_foreign(w, &v->u.leaf) : 0;
}

static int64_t data_foreign(const ready_walk *w, const rig_desc_data *d) {
  for (size_t h = 0; h < d->nholes; h++)
    for (size_t t = 0; t < d->holes[h].terms.n; t++) {
      int64_t id = value_foreign(w, &d->holes[h].terms.items[t].value);
      if (id) return id;
    }
  return 0;
}

static int64_t part_foreign(const ready_walk *w, const rig_desc_part *p) {
  int64_t id = 0;
  if (p->tag == RIG_PART_FILL && !(id = leaf_foreign(w, &p->u.fill.fill)))
    id = data_foreign(w, &p->u.fill.params);
  if (p->tag == RIG_PART_LAUNCH) {
    id = data_foreign(w, &p->u.launch.params);
    for (int g = 0; g < 3 && !id; g++)
      if (!(id = value_foreign(w, &p->u.launch.groups[g])))
        id = value_foreign(w, &p->u.launch.threads[g]);
    if (!id) id = value_foreign(w, &p->u.launch.shared);
  }
  return id;
}

/* The first step (pre-order, *number counting) with such a leaf. */
static int64_t steps_foreign(const ready_walk *w, const rig_desc_steps *ss, size_t *number) {
  for (size_t i = 0; i < ss->n; i++) {
    const rig_desc_step *st = &ss->items[i];
    size_t at = (*number)++;
    int64_t id = 0;
    if (st->tag == RIG_STEP_LOOP) {
      if ((id = value_foreign(w, &st->u.loop.trips))) return *number = at, id;
      if ((id = steps_foreign(w, &st->u.loop.body, number))) return id;
    } else if (st->tag == RIG_STEP_SUBMIT) {
      for (size_t p = 0; p < st->u.submit.nparts && !id; p++)
        id = part_foreign(w, &st->u.submit.parts[p]);
      if (id) return *number = at, id;
    }
  }
  return 0;
}

/* The program's Rail memory and Ready leaves name rails its machine is an
 * end of, through the part's map (what the load refuses otherwise);
 * machine < 0 (`every` where its machines are not known) is not judged. */
static int fit_rails(const cli_jobfile *j, int64_t machine, const cli_rail_map *map,
                     const rig_desc *d, const char *program, const char *where, rig_error *err) {
  if (machine < 0) return CLI_EXIT_OK;
  for (size_t m = 0; m < d->nmemory; m++) {
    if (d->memory[m].tag != RIG_MEMORY_RAIL) continue;
    int64_t id = d->memory[m].u.rail.rail;
    /* A mapped rail has this machine at an end (cli_jobfile_rail_map). */
    if (cli_rail_map_id(map, id) < 0)
      return rig_error_set(err, RIG_EINVAL,
                           "%s.program: %s: memory %zu: no rail %" PRId64 " in %s.rails", where,
                           program, m, id, where),
             CLI_EXIT_USAGE;
    const cli_job_rail *r = rail_of(j, cli_rail_map_id(map, id));
    if (!r || (r->between[0] != machine && r->between[1] != machine))
      return rig_error_set(err, RIG_EINVAL,
                           "%s.program: %s: memory %zu: no rail %" PRId64
                           " of \"rails\" has machine %" PRId64 " at an end",
                           where, program, m, id, machine),
             CLI_EXIT_USAGE;
  }
  ready_walk w = {j, machine, map};
  char at[48] = "";
  int64_t id = 0;
  for (size_t m = 0; m < d->nmemory && !id; m++)
    if (d->memory[m].tag == RIG_MEMORY_ALLOC && (id = data_foreign(&w, &d->memory[m].u.alloc.init)))
      snprintf(at, sizeof at, "memory %zu", m);
  for (size_t k = 0; k < d->nimages && !id; k++)
    if ((id = data_foreign(&w, &d->images[k].binary))) snprintf(at, sizeof at, "image %zu", k);
  size_t number = 0;
  if (!id && (id = steps_foreign(&w, &d->steps, &number)))
    snprintf(at, sizeof at, "step %zu", number);
  if (id && cli_rail_map_id(map, id) < 0)
    return rig_error_set(err, RIG_EINVAL,
                         "%s.program: %s: %s: Ready(rail %" PRId64 "): no rail %" PRId64
                         " in %s.rails",
                         where, program, at, id, id, where),
           CLI_EXIT_USAGE;
  if (id)
    return rig_error_set(err, RIG_EINVAL,
                         "%s.program: %s: %s: Ready(rail %" PRId64 "): no rail %" PRId64
                         " of \"rails\" has machine %" PRId64 " at an end",
                         where, program, at, id, id, machine),
           CLI_EXIT_USAGE;
  return CLI_EXIT_OK;
}

int cli_jobfile_fit_rails(const cli_jobfile *j, int64_t machine, const cli_rail_map *map,
                          const rig_desc *d, const char *program, const char *where,
                          rig_error *err) {
  rail_view v = {j, machine, map};
  rig_desc_rail_sizes sizes = {area_bytes, &v};
  rig_status st = rig_desc_check_rails(d, machine >= 0 ? &sizes : NULL, err);
  if (st != RIG_OK) {
    rig_error_prefix(err, "%s.program: %s", where, program);
    return st == RIG_ENOMEM ? CLI_EXIT_FAIL : CLI_EXIT_USAGE;
  }
  return fit_rails(j, machine, map, d, program, where, err);
}

/* The part's rails on machine m of a job of `machines`: its map resolved
 * there, then its program's rails through it. */
static int fit_on(const cli_jobfile *j, const cli_job_machine *jm, const char *where, int64_t m,
                  size_t machines, const rig_desc *d, rig_error *err) {
  cli_rail_map map;
  int rc = cli_jobfile_rail_map(j, jm, where, m, machines, &map, err);
  if (rc == CLI_EXIT_OK) rc = cli_jobfile_fit_rails(j, m, &map, d, jm->program, where, err);
  cli_rail_map_free(&map);
  return rc;
}

static int check_part(const cli_jobfile *j, size_t i, rig_error *err) {
  char where[64];
  const cli_job_machine *jm = part_of(j, i, where, sizeof where);
  rig_desc *d = NULL;
  int rc = cli_read_desc_quiet(jm->program, &d, err);
  if (rc != CLI_EXIT_OK) {
    rig_error_prefix(err, "%s.program", where);
    return rc;
  }
  rc = fit_part(jm, d, where, err);
  /* `every` is judged on each machine its rails name past `machines`:
   * the job they fit, whose size a relative machine is taken modulo.
   * Where they name none, its machines are not known. */
  size_t machines = cli_jobfile_machines(j);
  if (rc == CLI_EXIT_OK && i < j->n)
    rc = fit_on(j, jm, where, (int64_t)i, machines, d, err);
  else if (rc == CLI_EXIT_OK && machines <= j->n)
    rc = cli_jobfile_fit_rails(j, -1, NULL, d, jm->program, where, err);
  for (size_t m = j->n; rc == CLI_EXIT_OK && i == j->n && m < machines; m++)
    rc = fit_on(j, jm, where, (int64_t)m, machines, d, err);
  /* What the load would refuse of its images, found here. */
  rig_status st = rc == CLI_EXIT_OK ? rig_desc_check_code(d, err) : RIG_OK;
  if (st != RIG_OK) {
    rig_error_prefix(err, "%s.program: %s", where, jm->program);
    rc = cli_exit_of(st);
  }
  rig_desc_free(d);
  return rc;
}

int cli_check_jobfile(const char *path) {
  cli_jobfile j;
  rig_error err = {0};
  int rc = cli_jobfile_read(path, &j, &err);
  if (rc != CLI_EXIT_OK) return cli_fail(rc, "%s", err.message);
  char shown_path[RIG_RUN_PATH_SHOWN];
  const char *file = rig_run_path_shown(path, shown_path, sizeof shown_path);
  /* Without `every` the job has exactly its `machines`: a rail past them
   * could never be made. */
  if (!j.has_every) rc = cli_jobfile_rails_fit(&j, j.n, file, &err);
  for (size_t i = 0; rc == CLI_EXIT_OK && i < nparts(&j); i++) {
    rc = check_part(&j, i, &err);
    if (rc != CLI_EXIT_OK) rig_error_prefix(&err, "%s", file);
  }
  cli_jobfile_free(&j);
  if (rc != CLI_EXIT_OK) return cli_fail(rc, "%s", err.message);
  puts("ok");
  return CLI_EXIT_OK;
}

/* ---- dump ------------------------------------------------------------------- */

static const char *plural(size_t n, const char *one, const char *many) {
  return n == 1 ? one : many;
}

static void print_ints(FILE *f, const cli_int *ints, size_t n) {
  if (n == 0) fputs(" (none)", f);
  for (size_t i = 0; i < n; i++) {
    fputs(i ? ", " : " ", f);
    if (ints[i].kind == CLI_INT_RUN)
      fputs("run", f);
    else if (ints[i].kind == CLI_INT_RANK)
      fputs("rank", f);
    else
      fprintf(f, "%" PRId64, ints[i].number);
  }
  fputc('\n', f);
}

static void print_io(FILE *f, const char *title, const cli_job_io *io, size_t n) {
  fprintf(f, "  %s:\n", title);
  if (n == 0) fputs("    (none)\n", f);
  for (size_t i = 0; i < n; i++) fprintf(f, "    %" PRId64 " %s\n", io[i].index, io[i].path);
}

/* A part's "rails", where it has them: "  rails: 0 from {rank-1}, 1 to
 * {rank+1}". */
static void print_rail_map(FILE *f, const cli_job_machine *jm) {
  if (!jm->has_rail_map) return;
  fputs("  rails:", f);
  if (jm->nrail_map == 0) fputs(" (none)", f);
  for (size_t k = 0; k < jm->nrail_map; k++) {
    char text[64];
    cli_rail_entry_text(&jm->rail_map[k], text, sizeof text);
    fprintf(f, "%s%" PRId64 " %s", k ? ", " : " ", jm->rail_map[k].id, text);
  }
  fputc('\n', f);
}

/* d's listing (rig_desc_listing) with two spaces before each line. */
static int print_indented(FILE *f, const rig_desc *d) {
  char *text = NULL;
  rig_error err;
  if (rig_desc_listing(d, &text, &err) != RIG_OK) return CLI_EXIT_FAIL;
  for (char *line = text; *line;) {
    char *end = strchr(line, '\n');
    size_t n = end ? (size_t)(end - line) : strlen(line);
    fprintf(f, "  %.*s\n", (int)n, line);
    line += n + (end ? 1 : 0);
  }
  free(text);
  return CLI_EXIT_OK;
}

static void print_transfers(FILE *f, const char *title, const rig_rail_transfer *t, size_t n) {
  fprintf(f, "    %s:\n", title);
  if (n == 0) fputs("      (none)\n", f);
  for (size_t i = 0; i < n; i++)
    fprintf(f, "      %zu src %" PRId64 ", dst %" PRId64 ", length %" PRId64 "\n", i, t[i].src,
            t[i].dst, t[i].length);
}

/* The job file and every part's program, read before anything is printed:
 * a listing is whole or not there. The exit code, the message in *err. */
static int read_job(const char *path, cli_jobfile *j, rig_desc ***descs, rig_error *err) {
  *descs = NULL;
  int rc = cli_jobfile_read(path, j, err);
  if (rc != CLI_EXIT_OK) return rc;
  char shown_path[RIG_RUN_PATH_SHOWN];
  const char *file = rig_run_path_shown(path, shown_path, sizeof shown_path);
  size_t n = nparts(j);
  if (!(*descs = calloc(n + 1, sizeof **descs)))
    return rig_error_set(err, RIG_ENOMEM, "out of memory"), CLI_EXIT_FAIL;
  for (size_t i = 0; rc == CLI_EXIT_OK && i < n; i++) {
    char where[64];
    const cli_job_machine *jm = part_of(j, i, where, sizeof where);
    rc = cli_read_desc_quiet(jm->program, &(*descs)[i], err);
    if (rc != CLI_EXIT_OK) rig_error_prefix(err, "%s: %s.program", file, where);
  }
  return rc;
}

static void free_job(cli_jobfile *j, rig_desc **descs) {
  for (size_t i = 0; descs && i < nparts(j); i++) rig_desc_free(descs[i]);
  free(descs);
  cli_jobfile_free(j);
}

int cli_dot_jobfile(const char *path, bool all) {
  cli_jobfile j;
  rig_desc **descs;
  rig_error err = {0};
  int rc = read_job(path, &j, &descs, &err);
  if (rc == CLI_EXIT_OK && (rc = cli_dot_job_print(stdout, &j, descs, all)) != CLI_EXIT_OK)
    rig_error_set(&err, RIG_ENOMEM, "out of memory");
  free_job(&j, descs);
  return rc == CLI_EXIT_OK ? rc : cli_fail(rc, "%s", err.message);
}

int cli_dump_jobfile(const char *path) {
  cli_jobfile j;
  rig_desc **descs;
  rig_error err = {0};
  int rc = read_job(path, &j, &descs, &err);
  size_t n = nparts(&j);
  if (rc == CLI_EXIT_OK) {
    printf("job: %zu %s, every %s, %zu %s, runs %" PRIu64 "\n", j.n,
           plural(j.n, "machine", "machines"), j.has_every ? "given" : "none", j.nrails,
           plural(j.nrails, "rail", "rails"), j.runs ? j.runs : 1);
    for (size_t i = 0; rc == CLI_EXIT_OK && i < n; i++) {
      char where[64];
      const cli_job_machine *jm = part_of(&j, i, where, sizeof where);
      if (i < j.n)
        printf("machine %zu:\n", i);
      else
        puts("every:");
      printf("  file: %s\n", jm->program);
      fputs("  devices:", stdout);
      if (jm->ndevices == 0) fputs(" by arch", stdout);
      for (size_t k = 0; k < jm->ndevices; k++) printf("%s%s", k ? ", " : " ", jm->devices[k]);
      putchar('\n');
      fputs("  ints:", stdout);
      print_ints(stdout, jm->ints, jm->nints);
      print_io(stdout, "inputs", jm->inputs, jm->ninputs);
      print_io(stdout, "outputs", jm->outputs, jm->noutputs);
      print_rail_map(stdout, jm);
      rc = print_indented(stdout, descs[i]);
      if (rc != CLI_EXIT_OK) rig_error_set(&err, RIG_ENOMEM, "out of memory");
    }
  }
  if (rc == CLI_EXIT_OK) {
    puts("rails:");
    if (j.nrails == 0) puts("  (none)");
    for (size_t i = 0; i < j.nrails; i++) {
      const cli_job_rail *r = &j.rails[i];
      printf("  rail %" PRId64 " between machines %d and %d\n", r->id, r->between[0],
             r->between[1]);
      print_transfers(stdout, "send", r->send, r->nsend);
      print_transfers(stdout, "receive", r->receive, r->nreceive);
    }
  }
  free_job(&j, descs);
  return rc == CLI_EXIT_OK ? rc : cli_fail(rc, "%s", err.message);
}

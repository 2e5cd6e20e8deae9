/* Job files (docs/jobs.md): JSON naming, per machine of an MPI job, its
 * program, devices, inputs, outputs and ints. Paths in it are relative to
 * the job file's folder. */
#include <errno.h>
#include <jansson.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_job.h"

static char *joined(const char *dir, const char *path) {
  size_t n = strlen(dir) + strlen(path) + 2;
  char *s = malloc(n);
  if (!s) return NULL;
  if (path[0] == '/')
    snprintf(s, n, "%s", path);
  else
    snprintf(s, n, "%s/%s", dir, path);
  return s;
}

/* An input's number as the command line writes it: "0" or a decimal
 * without leading zeros or sign, so that two keys never name one input. */
static bool input_number(const char *key, long long *out) {
  if (!(key[0] >= '1' && key[0] <= '9') && strcmp(key, "0") != 0) return false;
  char *end;
  errno = 0;
  long long i = strtoll(key, &end, 10);
  if (*end || errno) return false;
  *out = i;
  return true;
}

/* `every` serves many machines: each output path needs {rank} or they
 * would all write one file. */
static int parse_io(json_t *obj, const char *dir, const char *where, bool needs_rank,
                    cli_job_io **out, size_t *n, rig_error *err) {
  if (!obj) return CLI_EXIT_OK;
  if (!json_is_object(obj))
    return cli_jobfile_bad(err, where, "not an object of input numbers to paths");
  *out = calloc(json_object_size(obj) + 1, sizeof **out);
  if (!*out) return cli_jobfile_bad(err, where, "out of memory");
  const char *key;
  json_t *v;
  json_object_foreach(obj, key, v) {
    long long i = 0;
    if (!input_number(key, &i))
      return cli_jobfile_bad(err, where,
                             "\"%.32s\" is not an input's number (0, 1, ... in decimal)", key);
    if (!json_is_string(v)) return cli_jobfile_bad(err, where, "input %lld: not a path", i);
    if (needs_rank && !strstr(json_string_value(v), "{rank}"))
      return cli_jobfile_bad(err, where,
                             "input %lld: \"%.200s\" needs {rank}: every machine past \"machines\" "
                             "writes it",
                             i, json_string_value(v));
    cli_job_io *io = &(*out)[(*n)++];
    io->index = i;
    if (!(io->path = joined(dir, json_string_value(v))))
      return cli_jobfile_bad(err, where, "out of memory");
  }
  return CLI_EXIT_OK;
}

static int parse_machine(json_t *m, const char *dir, const char *where, bool every,
                         cli_job_machine *out, rig_error *err) {
  char at[96];
  if (!json_is_object(m)) return cli_jobfile_bad(err, where, "not an object");
  const char *key;
  json_t *v;
  json_object_foreach(m, key, v) {
    if (strcmp(key, "program") && strcmp(key, "devices") && strcmp(key, "inputs") &&
        strcmp(key, "outputs") && strcmp(key, "ints") && strcmp(key, "rails"))
      return cli_jobfile_bad(err, where, "unknown field \"%.32s\"", key);
  }
  json_t *prog = json_object_get(m, "program");
  if (!prog) return cli_jobfile_bad(err, where, "no \"program\" (a description's path)");
  if (!json_is_string(prog))
    return cli_jobfile_bad(err, where, "\"program\" is not a string (a description's path)");
  if (!(out->program = joined(dir, json_string_value(prog))))
    return cli_jobfile_bad(err, where, "out of memory");
  json_t *devs = json_object_get(m, "devices");
  if (devs) {
    snprintf(at, sizeof at, "%s.devices", where);
    if (!json_is_array(devs)) return cli_jobfile_bad(err, at, "not an array of device names");
    out->devices = calloc(json_array_size(devs) + 1, sizeof *out->devices);
    if (!out->devices) return cli_jobfile_bad(err, at, "out of memory");
    size_t i;
    json_array_foreach(devs, i, v) {
      if (!json_is_string(v)) return cli_jobfile_bad(err, at, "element %zu: not a device name", i);
      if (!(out->devices[i] = strdup(json_string_value(v))))
        return cli_jobfile_bad(err, at, "out of memory");
      out->ndevices = i + 1;
    }
  }
  snprintf(at, sizeof at, "%s.inputs", where);
  int rc = parse_io(json_object_get(m, "inputs"), dir, at, false, &out->inputs, &out->ninputs, err);
  if (rc != CLI_EXIT_OK) return rc;
  snprintf(at, sizeof at, "%s.outputs", where);
  rc = parse_io(json_object_get(m, "outputs"), dir, at, every, &out->outputs, &out->noutputs, err);
  if (rc != CLI_EXIT_OK) return rc;
  json_t *ints = json_object_get(m, "ints");
  if (ints) {
    snprintf(at, sizeof at, "%s.ints", where);
    if (!json_is_array(ints)) return cli_jobfile_bad(err, at, "not an array");
    out->ints = calloc(json_array_size(ints) + 1, sizeof *out->ints);
    if (!out->ints) return cli_jobfile_bad(err, at, "out of memory");
    size_t i;
    json_array_foreach(ints, i, v) {
      cli_int *x = &out->ints[i];
      if (json_is_integer(v)) {
        x->kind = CLI_INT_NUMBER;
        x->number = json_integer_value(v);
      } else if (json_is_string(v) && strcmp(json_string_value(v), "run") == 0) {
        x->kind = CLI_INT_RUN;
      } else if (json_is_string(v) && strcmp(json_string_value(v), "rank") == 0) {
        x->kind = CLI_INT_RANK;
      } else {
        return cli_jobfile_bad(err, at, "element %zu: not a number, \"run\" or \"rank\"", i);
      }
      out->nints = i + 1;
    }
  }
  return cli_jobfile_rail_map_parse(json_object_get(m, "rails"), where, out, err);
}

int cli_jobfile_read(const char *path, cli_jobfile *out, rig_error *err) {
  memset(out, 0, sizeof *out);
  char shown[RIG_RUN_PATH_SHOWN], *text = NULL;
  size_t len = 0;
  int rc = cli_read_whole(path, &text, &len, err);
  if (rc != CLI_EXIT_OK) return rc;
  json_error_t je;
  json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
  free(text);
  if (!root)
    return cli_jobfile_bad(err, NULL, "%s:%d:%d: %s", rig_run_path_shown(path, shown, sizeof shown),
                           je.line, je.column, je.text);
  char *copy = strdup(path);
  const char *dir = copy ? dirname(copy) : ".";
  const char *key;
  json_t *v;
  json_object_foreach(root, key, v) {
    if (strcmp(key, "machines") && strcmp(key, "every") && strcmp(key, "runs") &&
        strcmp(key, "rails")) {
      rc = cli_jobfile_bad(err, NULL, "unknown field \"%.32s\"", key);
      break;
    }
  }
  json_t *machines = json_object_get(root, "machines");
  json_t *every = json_object_get(root, "every");
  json_t *runs = json_object_get(root, "runs");
  /* "every" alone serves every machine alike. */
  if (rc == CLI_EXIT_OK && !(machines ? json_is_array(machines) : every != NULL))
    rc = cli_jobfile_bad(err, NULL, "\"machines\" is not an array");
  if (rc == CLI_EXIT_OK && runs &&
      (!json_is_integer(runs) || json_integer_value(runs) < 1 ||
       json_integer_value(runs) > CLI_MAX_RUNS))
    rc = cli_jobfile_bad(err, NULL, "\"runs\" is not a number of runs from 1 to %lld",
                         (long long)CLI_MAX_RUNS);
  if (rc == CLI_EXIT_OK) {
    out->runs = runs ? (uint64_t)json_integer_value(runs) : 0;
    out->n = json_array_size(machines);
    out->machines = calloc(out->n + 1, sizeof *out->machines);
    if (!out->machines) rc = cli_jobfile_bad(err, NULL, "out of memory");
  }
  for (size_t i = 0; rc == CLI_EXIT_OK && i < out->n; i++) {
    char where[64];
    snprintf(where, sizeof where, "machines[%zu]", i);
    rc = parse_machine(json_array_get(machines, i), dir, where, false, &out->machines[i], err);
  }
  if (rc == CLI_EXIT_OK && every) {
    out->has_every = true;
    rc = parse_machine(every, dir, "every", true, &out->every, err);
  }
  if (rc == CLI_EXIT_OK) rc = cli_jobfile_rails(json_object_get(root, "rails"), out, err);
  /* Every message names the file: a job has more than one. */
  if (rc != CLI_EXIT_OK) rig_error_prefix(err, "%s", rig_run_path_shown(path, shown, sizeof shown));
  free(copy);
  json_decref(root);
  if (rc != CLI_EXIT_OK) cli_jobfile_free(out);
  return rc;
}

static void free_machine(cli_job_machine *m) {
  free(m->program);
  for (size_t i = 0; i < m->ndevices; i++) free(m->devices[i]);
  free(m->devices);
  for (size_t i = 0; i < m->ninputs; i++) free(m->inputs[i].path);
  for (size_t i = 0; i < m->noutputs; i++) free(m->outputs[i].path);
  free(m->inputs);
  free(m->outputs);
  free(m->ints);
  free(m->rail_map);
}

void cli_jobfile_free(cli_jobfile *j) {
  for (size_t i = 0; j->machines && i < j->n; i++) free_machine(&j->machines[i]);
  free(j->machines);
  if (j->has_every) free_machine(&j->every);
  cli_jobfile_rails_free(j);
  memset(j, 0, sizeof *j);
}

const cli_job_machine *cli_jobfile_machine(const cli_jobfile *j, size_t m) {
  if (m < j->n) return &j->machines[m];
  return j->has_every ? &j->every : NULL;
}

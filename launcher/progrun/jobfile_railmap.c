/* A part's "rails" (docs/jobs.md, "One program for many machines"):
 * which of the job's rails each rail id of its program stands for, on
 * each machine of the part. A program names its rails by ids of its own
 * (a ring node's 0: from its left, 1: to its right); the part maps each
 * id to a rail of the job's "rails", by that rail's id or by the machines
 * it joins, relative to the machine ("{rank+1}", modulo the job's
 * machines), so that one program serves every node of a ring or a halo.
 * librig is left as it is: progrun resolves a part's map for each of its
 * machines, checks the program against it, and gives the load a lookup
 * that goes through it. */
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_job.h"

/* ---- reading ------------------------------------------------------------------ */

/* s, up to end, a number in canonical decimal: 0 or more ("0", "12"; not
 * "00", "+1"), at most 2^31 - 1. */
static bool decimal(const char *s, const char *end, int64_t *out) {
  size_t n = (size_t)(end - s);
  if (n == 0 || n > 10 || (s[0] == '0' && n > 1)) return false;
  int64_t v = 0;
  for (const char *p = s; p < end; p++) {
    if (*p < '0' || *p > '9') return false;
    v = v * 10 + (*p - '0');
  }
  if (v > INT32_MAX) return false;
  *out = v;
  return true;
}

/* A machine: a number, or "{rank}", "{rank+K}", "{rank-K}". */
static bool peer_of(json_t *v, cli_peer *out) {
  if (json_is_integer(v)) {
    json_int_t n = json_integer_value(v);
    if (n < 0 || n > INT32_MAX) return false;
    *out = (cli_peer){false, (int64_t)n};
    return true;
  }
  const char *s = json_is_string(v) ? json_string_value(v) : "";
  size_t len = strlen(s);
  if (strncmp(s, "{rank", 5) != 0 || len < 6 || s[len - 1] != '}') return false;
  *out = (cli_peer){true, 0};
  if (len == 6) return true;
  if (s[5] != '+' && s[5] != '-') return false;
  if (!decimal(s + 6, s + len - 1, &out->n)) return false;
  if (s[5] == '-') out->n = -out->n;
  return true;
}

static const char peer_forms[] = "a machine's number, \"{rank}\", \"{rank+K}\" or \"{rank-K}\"";
static const char entry_forms[] =
    "a rail's id of \"rails\", {\"to\": MACHINE} or {\"from\": MACHINE}";

static int parse_entry(const char *key, json_t *v, const char *where, cli_rail_entry *e,
                       rig_error *err) {
  if (!decimal(key, key + strlen(key), &e->id))
    return cli_jobfile_bad(
        err, where, "\"%.32s\" is not a rail's id (0, 1, ... in decimal: the program's)", key);
  if (json_is_integer(v)) {
    if (json_integer_value(v) < 1)
      return cli_jobfile_bad(err, where, "rail %" PRId64 ": not %s", e->id, entry_forms);
    e->kind = CLI_RAIL_BY_ID;
    e->job_id = json_integer_value(v);
    return CLI_EXIT_OK;
  }
  json_t *to = json_is_object(v) ? json_object_get(v, "to") : NULL;
  json_t *from = json_is_object(v) ? json_object_get(v, "from") : NULL;
  if (!json_is_object(v) || json_object_size(v) != 1 || (!to && !from))
    return cli_jobfile_bad(err, where, "rail %" PRId64 ": not %s", e->id, entry_forms);
  e->kind = to ? CLI_RAIL_TO : CLI_RAIL_FROM;
  if (!peer_of(to ? to : from, &e->peer))
    return cli_jobfile_bad(err, where, "rail %" PRId64 ": \"%s\": not %s", e->id,
                           to ? "to" : "from", peer_forms);
  return CLI_EXIT_OK;
}

static int by_id(const void *a, const void *b) {
  const cli_rail_entry *x = a, *y = b;
  return (x->id > y->id) - (x->id < y->id);
}

int cli_jobfile_rail_map_parse(void *json, const char *where, cli_job_machine *out,
                               rig_error *err) {
  json_t *obj = json;
  if (!obj) return CLI_EXIT_OK;
  char at[96];
  snprintf(at, sizeof at, "%s.rails", where);
  if (!json_is_object(obj))
    return cli_jobfile_bad(err, at, "not an object of the program's rail ids to the job's rails");
  out->has_rail_map = true;
  out->rail_map = calloc(json_object_size(obj) + 1, sizeof *out->rail_map);
  if (!out->rail_map) return cli_jobfile_bad(err, at, "out of memory");
  const char *key;
  json_t *v;
  json_object_foreach(obj, key, v) {
    int rc = parse_entry(key, v, at, &out->rail_map[out->nrail_map], err);
    if (rc != CLI_EXIT_OK) return rc;
    out->nrail_map++;
  }
  /* In the program's order, whatever the file's: messages and dumps are
   * the same for one map. */
  qsort(out->rail_map, out->nrail_map, sizeof *out->rail_map, by_id);
  return CLI_EXIT_OK;
}

/* ---- resolving, per machine --------------------------------------------------- */

size_t cli_jobfile_machines(const cli_jobfile *j) {
  size_t n = j->n;
  for (size_t i = 0; i < j->nrails; i++)
    for (int e = 0; e < 2; e++)
      if ((size_t)j->rails[i].between[e] + 1 > n) n = (size_t)j->rails[i].between[e] + 1;
  return n;
}

/* The job's rail an entry names on `machine`, or the message why none. */
static int resolve(const cli_jobfile *j, const cli_rail_entry *e, int64_t machine, size_t machines,
                   const char *at, int64_t *job_id, rig_error *err) {
  if (e->kind == CLI_RAIL_BY_ID) {
    for (size_t i = 0; i < j->nrails; i++) {
      if (j->rails[i].id != e->job_id) continue;
      if (j->rails[i].between[0] != machine && j->rails[i].between[1] != machine)
        return cli_jobfile_bad(err, at,
                               "rail %" PRId64 ": rail %" PRId64
                               " of \"rails\" does not have machine %" PRId64 " at an end",
                               e->id, e->job_id, machine);
      *job_id = e->job_id;
      return CLI_EXIT_OK;
    }
    return cli_jobfile_bad(err, at, "rail %" PRId64 ": no rail %" PRId64 " in \"rails\"", e->id,
                           e->job_id);
  }
  int64_t n = (int64_t)machines, peer = e->peer.n;
  if (e->peer.relative) peer = ((machine + peer) % n + n) % n;
  if (peer >= n)
    return cli_jobfile_bad(
        err, at, "rail %" PRId64 ": machine %" PRId64 " is not in this job of %zu machine%s", e->id,
        peer, machines, machines == 1 ? "" : "s");
  int64_t a = e->kind == CLI_RAIL_TO ? machine : peer, b = e->kind == CLI_RAIL_TO ? peer : machine;
  if (a == b)
    return cli_jobfile_bad(err, at, "rail %" PRId64 ": from machine %" PRId64 " to itself", e->id,
                           a);
  size_t found = SIZE_MAX;
  for (size_t i = 0; i < j->nrails; i++) {
    if (j->rails[i].between[0] != a || j->rails[i].between[1] != b) continue;
    if (found != SIZE_MAX)
      return cli_jobfile_bad(err, at,
                             "rail %" PRId64 ": rails[%zu] and rails[%zu] both go from machine "
                             "%" PRId64 " to machine %" PRId64 " (name one by its id)",
                             e->id, found, i, a, b);
    found = i;
  }
  if (found == SIZE_MAX)
    return cli_jobfile_bad(err, at,
                           "rail %" PRId64 ": no rail of \"rails\" goes from machine %" PRId64
                           " to machine %" PRId64,
                           e->id, a, b);
  *job_id = j->rails[found].id;
  return CLI_EXIT_OK;
}

int cli_jobfile_rail_map(const cli_jobfile *j, const cli_job_machine *jm, const char *where,
                         int64_t machine, size_t machines, cli_rail_map *out, rig_error *err) {
  memset(out, 0, sizeof *out);
  if (!jm->has_rail_map) return CLI_EXIT_OK;
  char at[96];
  snprintf(at, sizeof at, "%s.rails", where);
  out->given = true;
  out->pairs = calloc(jm->nrail_map + 1, sizeof *out->pairs);
  if (!out->pairs) return cli_jobfile_bad(err, at, "out of memory");
  for (size_t k = 0; k < jm->nrail_map; k++) {
    int64_t id = 0;
    int rc = resolve(j, &jm->rail_map[k], machine, machines, at, &id, err);
    if (rc != CLI_EXIT_OK) return rc;
    out->pairs[out->n][0] = jm->rail_map[k].id;
    out->pairs[out->n++][1] = id;
  }
  return CLI_EXIT_OK;
}

int64_t cli_rail_map_id(const cli_rail_map *m, int64_t id) {
  if (!m || !m->given) return id;
  for (size_t k = 0; k < m->n; k++)
    if (m->pairs[k][0] == id) return m->pairs[k][1];
  return -1;
}

void cli_rail_map_free(cli_rail_map *m) {
  free(m->pairs);
  memset(m, 0, sizeof *m);
}

/* ---- the load's lookup --------------------------------------------------------- */

static const rig_rail_end *mapped_lookup(void *ctx, int64_t id) {
  const cli_mapped_rails *r = ctx;
  int64_t job_id = cli_rail_map_id(r->map, id);
  return job_id < 0 || !r->job || !r->job->lookup ? NULL : r->job->lookup(r->job->ctx, job_id);
}

const rig_rails *cli_mapped_rails_of(cli_mapped_rails *r, const cli_rail_map *map,
                                     const rig_rails *job) {
  if (!map || !map->given) return job;
  r->map = map;
  r->job = job;
  r->rails = (rig_rails){mapped_lookup, r};
  return &r->rails;
}

/* ---- telling ------------------------------------------------------------------- */

void cli_rail_entry_text(const cli_rail_entry *e, char *buf, size_t size) {
  if (e->kind == CLI_RAIL_BY_ID) {
    snprintf(buf, size, "rail %" PRId64, e->job_id);
  } else if (!e->peer.relative) {
    snprintf(buf, size, "%s machine %" PRId64, e->kind == CLI_RAIL_TO ? "to" : "from", e->peer.n);
  } else if (e->peer.n == 0) {
    snprintf(buf, size, "%s {rank}", e->kind == CLI_RAIL_TO ? "to" : "from");
  } else {
    snprintf(buf, size, "%s {rank%+" PRId64 "}", e->kind == CLI_RAIL_TO ? "to" : "from", e->peer.n);
  }
}

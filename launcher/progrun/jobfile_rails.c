/* A job file's "rails" (docs/rails.md): each {"id", "between", "send",
 * "receive"}, every field checked, errors naming the JSON path, and each
 * end checked against the room of this host. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_job.h"

static bool only_keys(json_t *obj, const char *const *keys, const char **unknown) {
  const char *key;
  json_t *v;
  json_object_foreach(obj, key, v) {
    bool known = false;
    for (const char *const *k = keys; *k && !known; k++) known = strcmp(key, *k) == 0;
    if (!known) {
      *unknown = key;
      return false;
    }
  }
  return true;
}

static int parse_transfers(json_t *a, const char *where, rig_rail_transfer **out, size_t *n,
                           rig_error *err) {
  if (!json_is_array(a)) return cli_jobfile_bad(err, where, "not an array of transfers");
  *n = json_array_size(a);
  *out = calloc(*n + 1, sizeof **out);
  if (!*out) return cli_jobfile_bad(err, where, "out of memory");
  size_t i;
  json_t *t;
  json_array_foreach(a, i, t) {
    char at[160];
    snprintf(at, sizeof at, "%s[%zu]", where, i);
    static const char *const keys[] = {"src", "dst", "length", NULL};
    const char *unknown;
    if (!json_is_object(t)) return cli_jobfile_bad(err, at, "not a transfer {src, dst, length}");
    if (!only_keys(t, keys, &unknown))
      return cli_jobfile_bad(err, at, "unknown field \"%.32s\"", unknown);
    int64_t *fields[3] = {&(*out)[i].src, &(*out)[i].dst, &(*out)[i].length};
    for (int f = 0; f < 3; f++) {
      json_t *v = json_object_get(t, keys[f]);
      if (!json_is_integer(v))
        return cli_jobfile_bad(err, at, "no \"%s\" (a number of bytes)", keys[f]);
      *fields[f] = json_integer_value(v);
    }
  }
  return CLI_EXIT_OK;
}

static int parse_rail(json_t *r, const char *where, cli_job_rail *out, rig_error *err) {
  static const char *const keys[] = {"id", "between", "send", "receive", NULL};
  const char *unknown;
  if (!json_is_object(r)) return cli_jobfile_bad(err, where, "not an object");
  if (!only_keys(r, keys, &unknown))
    return cli_jobfile_bad(err, where, "unknown field \"%.32s\"", unknown);
  json_t *id = json_object_get(r, "id");
  if (!json_is_integer(id) || json_integer_value(id) < 1)
    return cli_jobfile_bad(err, where, "no \"id\" (a rail's number from 1)");
  out->id = json_integer_value(id);
  char at[160];
  snprintf(at, sizeof at, "%s.between", where);
  json_t *between = json_object_get(r, "between");
  if (!json_is_array(between) || json_array_size(between) != 2)
    return cli_jobfile_bad(err, at, "not the two machines of the rail");
  for (size_t e = 0; e < 2; e++) {
    json_t *m = json_array_get(between, e);
    if (!json_is_integer(m) || json_integer_value(m) < 0 || json_integer_value(m) > INT32_MAX)
      return cli_jobfile_bad(err, at, "element %zu: not a machine's number", e);
    out->between[e] = (int)json_integer_value(m);
  }
  if (out->between[0] == out->between[1])
    return cli_jobfile_bad(err, at, "machine %d and itself", out->between[0]);
  json_t *send = json_object_get(r, "send"), *receive = json_object_get(r, "receive");
  snprintf(at, sizeof at, "%s.send", where);
  int rc = send ? parse_transfers(send, at, &out->send, &out->nsend, err) : CLI_EXIT_OK;
  snprintf(at, sizeof at, "%s.receive", where);
  if (rc == CLI_EXIT_OK && receive)
    rc = parse_transfers(receive, at, &out->receive, &out->nreceive, err);
  if (rc != CLI_EXIT_OK) return rc;
  rig_error why;
  if (rig_rail_check(out->send, out->nsend, out->receive, out->nreceive, &why) != RIG_OK)
    return cli_jobfile_bad(err, where, "%s", why.message);
  /* Each end against this host's room, as the machines will check theirs
   * before they make it: refused here, before anything runs. */
  for (int e = 0; e < 2; e++) {
    uint64_t bytes = e == 0
                         ? rig_rail_end_bytes(out->send, out->nsend, out->receive, out->nreceive)
                         : rig_rail_end_bytes(out->receive, out->nreceive, out->send, out->nsend);
    if (rig_rail_room(bytes, &why) != RIG_OK)
      return cli_jobfile_bad(err, where, "machine %d: %s", out->between[e], why.message);
  }
  return CLI_EXIT_OK;
}

int cli_jobfile_rails(void *json, cli_jobfile *out, rig_error *err) {
  json_t *rails = json;
  if (!rails) return CLI_EXIT_OK;
  if (!json_is_array(rails)) return cli_jobfile_bad(err, "rails", "not an array of rails");
  out->nrails = json_array_size(rails);
  out->rails = calloc(out->nrails + 1, sizeof *out->rails);
  if (!out->rails) return cli_jobfile_bad(err, "rails", "out of memory");
  for (size_t i = 0; i < out->nrails; i++) {
    char where[64];
    snprintf(where, sizeof where, "rails[%zu]", i);
    int rc = parse_rail(json_array_get(rails, i), where, &out->rails[i], err);
    if (rc != CLI_EXIT_OK) return rc;
    for (size_t j = 0; j < i; j++)
      if (out->rails[j].id == out->rails[i].id)
        return cli_jobfile_bad(err, where, "id %lld is rails[%zu]'s too",
                               (long long)out->rails[i].id, j);
  }
  return CLI_EXIT_OK;
}

int cli_jobfile_rails_fit(const cli_jobfile *j, size_t machines, const char *file, rig_error *err) {
  for (size_t i = 0; i < j->nrails; i++)
    for (int e = 0; e < 2; e++)
      if ((size_t)j->rails[i].between[e] >= machines) {
        char where[4200];
        snprintf(where, sizeof where, "%s: rails[%zu].between", file, i);
        return cli_jobfile_bad(err, where, "machine %d is not in this job of %zu machine%s",
                               j->rails[i].between[e], machines, machines == 1 ? "" : "s");
      }
  return CLI_EXIT_OK;
}

void cli_jobfile_rails_free(cli_jobfile *j) {
  for (size_t i = 0; j->rails && i < j->nrails; i++) {
    free(j->rails[i].send);
    free(j->rails[i].receive);
  }
  free(j->rails);
  j->rails = NULL;
  j->nrails = 0;
}

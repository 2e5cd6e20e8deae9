/* trace_check.h: a --trace file read back and its promises checked. */
#include "trace_check.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Slices are compared in us, written from whole ns: a thousandth of a us
 * absorbs the rounding of ts + dur. */
#define EPS 0.001

static bool broken(trace_facts *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool broken(trace_facts *f, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(f->why, sizeof f->why, fmt, ap);
  va_end(ap);
  return false;
}

typedef struct slice {
  long long pid, tid, run, step;
  double ts, end;
  const char *device;
  bool submit, handover, window;
} slice;

static int by_track_then_time(const void *a, const void *b) {
  const slice *x = a, *y = b;
  if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
  if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
  return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static bool named_thread(json_t *events, long long pid, long long tid) {
  size_t i;
  json_t *e;
  json_array_foreach(events, i, e) {
    if (strcmp(json_string_value(json_object_get(e, "ph")), "M") == 0 &&
        strcmp(json_string_value(json_object_get(e, "name")), "thread_name") == 0 &&
        json_integer_value(json_object_get(e, "pid")) == pid &&
        json_integer_value(json_object_get(e, "tid")) == tid)
      return true;
  }
  return false;
}

static bool check_metadata(json_t *root, size_t machines, trace_facts *f) {
  json_t *ms = json_object_get(json_object_get(root, "otherData"), "machines");
  if (!json_is_array(ms)) return broken(f, "no otherData.machines");
  f->machines = json_array_size(ms);
  if (f->machines != machines)
    return broken(f, "%zu machines in otherData, not %zu", f->machines, machines);
  for (size_t m = 0; m < machines; m++) {
    json_t *o = json_array_get(ms, m), *off = json_object_get(o, "offset_ns"),
           *err = json_object_get(o, "error_ns");
    if (!json_is_integer(off) || !json_is_integer(err))
      return broken(f, "machine %zu: no integer offset_ns and error_ns", m);
    if (json_integer_value(json_object_get(o, "machine")) != (json_int_t)m)
      return broken(f, "otherData.machines[%zu] is not machine %zu", m, m);
    if (m == 0 && (json_integer_value(off) != 0 || json_integer_value(err) != 0))
      return broken(f, "machine 0's offset is not 0 within 0");
    if (json_integer_value(err) < 0) return broken(f, "machine %zu: a negative error", m);
    json_t *clamped = json_object_get(o, "clamped");
    if (!json_is_integer(clamped) || json_integer_value(clamped) < 0)
      return broken(f, "machine %zu: no count of clamped slices", m);
    f->clamped += json_integer_value(clamped);
    if (m < 16) f->offset_ns[m] = json_integer_value(off), f->error_ns[m] = json_integer_value(err);
  }
  return true;
}

/* The machine a hand-over's device names ("host@rank2": 2), or -1. */
static long long machine_of(const char *device) {
  const char *at = device ? strrchr(device, '@') : NULL;
  long long m;
  char end;
  return at && sscanf(at, "@rank%lld%c", &m, &end) == 1 ? m : -1;
}

/* Each slice of another machine's run lies inside that run's hand-over. */
static bool check_inside(const slice *s, size_t ns, trace_facts *f) {
  for (size_t a = 0; a < ns; a++) {
    if (s[a].pid == 0 || s[a].handover) continue;
    const slice *h = NULL;
    for (size_t b = 0; !h && b < ns; b++)
      if (s[b].handover && s[b].run == s[a].run && machine_of(s[b].device) == s[a].pid) h = &s[b];
    /* Machine-local runs: the job's window of the run on machine 0. */
    for (size_t b = 0; !h && b < ns; b++)
      if (s[b].window && s[b].run == s[a].run) h = &s[b];
    if (!h) return broken(f, "machine %lld: run %lld has no hand-over", s[a].pid, s[a].run);
    if (s[a].ts + EPS < h->ts || s[a].end > h->end + EPS)
      return broken(f,
                    "machine %lld: a slice of run %lld at %.3f to %.3f us outside its hand-over "
                    "(%.3f to %.3f)",
                    s[a].pid, s[a].run, s[a].ts, s[a].end, h->ts, h->end);
  }
  return true;
}

/* Rows: no thread id names tracks of two machines, and the most rows of
 * one track ("cpu:0 work", "cpu:0 work 2", ...). */
static bool check_rows(json_t *events, trace_facts *f) {
  size_t n = json_array_size(events), nn = 0;
  json_t **named = calloc(n ? n : 1, sizeof *named);
  if (!named) return broken(f, "out of memory");
  size_t i;
  json_t *e;
  json_array_foreach(events, i, e) {
    if (strcmp(json_string_value(json_object_get(e, "ph")), "M") == 0 &&
        strcmp(json_string_value(json_object_get(e, "name")), "thread_name") == 0)
      named[nn++] = e;
  }
  bool ok = true;
  for (size_t a = 0; ok && a < nn; a++) {
    long long pid = json_integer_value(json_object_get(named[a], "pid"));
    long long tid = json_integer_value(json_object_get(named[a], "tid"));
    const char *name =
        json_string_value(json_object_get(json_object_get(named[a], "args"), "name"));
    /* Its row: the number after its track's name, 1 for none. */
    const char *sp = name ? strrchr(name, ' ') : NULL;
    char *end;
    long row = sp ? strtol(sp + 1, &end, 10) : 0;
    if (!sp || sp[1] < '0' || sp[1] > '9' || *end) row = 1;
    if ((size_t)row > f->rows) f->rows = (size_t)row;
    for (size_t b = 0; ok && b < a; b++)
      if (json_integer_value(json_object_get(named[b], "tid")) == tid &&
          json_integer_value(json_object_get(named[b], "pid")) != pid)
        ok = broken(f, "thread id %lld names a track of machines %lld and %lld", tid,
                    json_integer_value(json_object_get(named[b], "pid")), pid);
  }
  free(named);
  return ok;
}

/* The events by kind: process names, slices, the run counters. */
static bool check_events(json_t *events, size_t machines, long long runs, trace_facts *f) {
  size_t n = json_array_size(events), ns = 0;
  slice *s = calloc(n ? n : 1, sizeof *s);
  long long *next_run = calloc(machines, sizeof *next_run);
  long long *last_count = calloc(machines * 64 * 2, sizeof *last_count);
  if (!s || !next_run || !last_count)
    return free(s), free(next_run), free(last_count), broken(f, "out of memory");
  bool ok = true;
  size_t i;
  json_t *e;
  json_array_foreach(events, i, e) {
    const char *ph = json_string_value(json_object_get(e, "ph"));
    const char *name = json_string_value(json_object_get(e, "name"));
    long long pid = json_integer_value(json_object_get(e, "pid"));
    if (!ph || !name || pid < 0 || (size_t)pid >= machines) {
      ok = broken(f, "event %zu: no ph, no name or a pid outside the machines", i);
      break;
    }
    json_t *args = json_object_get(e, "args");
    if (strcmp(ph, "M") == 0 && strcmp(name, "process_name") == 0) {
      char want[32];
      snprintf(want, sizeof want, "machine %lld (", pid);
      const char *got = json_string_value(json_object_get(args, "name"));
      if (!got || strncmp(got, want, strlen(want)) != 0) {
        ok = broken(f, "process %lld is named \"%s\"", pid, got ? got : "");
        break;
      }
      f->processes++;
    } else if (strcmp(ph, "C") == 0 && strcmp(name, "run") == 0) {
      long long v = json_integer_value(json_object_get(args, "run"));
      if (v != next_run[pid]) {
        ok = broken(f, "machine %lld: run counter %lld after %lld", pid, v, next_run[pid] - 1);
        break;
      }
      next_run[pid]++;
    } else if (strcmp(ph, "i") == 0) {
      const char *cat = json_string_value(json_object_get(e, "cat"));
      bool ready = cat && strcmp(cat, "rail ready") == 0;
      long long rail = json_integer_value(json_object_get(args, "rail"));
      long long count = json_integer_value(json_object_get(args, "count"));
      if (!cat || (!ready && strcmp(cat, "rail arrived") != 0) || rail < 0 || rail >= 64) {
        ok = broken(f, "event %zu: an instant of no rail", i);
        break;
      }
      /* Per machine, rail and kind: the last count seen. */
      long long *last = &last_count[((size_t)pid * 64 + (size_t)rail) * 2 + ready];
      if (count <= *last) {
        ok = broken(f, "machine %lld: rail %lld %s %lld after %lld", pid, rail,
                    ready ? "ready" : "arrived", count, *last);
        break;
      }
      *last = count;
      if (ready)
        f->readies++;
      else
        f->arrivals++;
    } else if (strcmp(ph, "X") == 0) {
      slice *x = &s[ns++];
      x->pid = pid;
      x->tid = json_integer_value(json_object_get(e, "tid"));
      x->ts = json_real_value(json_object_get(e, "ts"));
      x->end = x->ts + json_real_value(json_object_get(e, "dur"));
      x->run = json_integer_value(json_object_get(args, "run"));
      json_t *step = json_object_get(args, "step");
      x->step = step ? json_integer_value(step) : -1;
      x->device = json_string_value(json_object_get(args, "device"));
      const char *cat = json_string_value(json_object_get(e, "cat"));
      size_t len = strlen(name);
      x->submit = len > 7 && strcmp(name + len - 7, " submit") == 0;
      if (!x->device || !cat || x->end + EPS < x->ts) {
        ok = broken(f, "slice %zu: no device or category, or it ends before it starts", i);
        break;
      }
      x->handover = strcmp(cat, "hand-over") == 0;
      x->window = strcmp(cat, "run") == 0 && x->pid == 0;
      if (x->handover)
        f->handovers++;
      else if (x->window)
        f->windows++;
      else if (x->submit)
        f->submits++;
      else
        f->works++;
    }
  }
  for (size_t m = 0; ok && m < machines; m++)
    if (next_run[m] != runs)
      ok =
          broken(f, "machine %zu: the run counter reached %lld of %lld runs", m, next_run[m], runs);
  if (ok && f->processes != machines)
    ok = broken(f, "%zu processes named for %zu machines", f->processes, machines);
  /* Every work slice has its submit slice, starting no later. */
  for (size_t a = 0; ok && a < ns; a++) {
    if (s[a].submit || s[a].step < 0) continue;
    bool found = false;
    for (size_t b = 0; !found && b < ns; b++)
      found = s[b].submit && s[b].pid == s[a].pid && s[b].run == s[a].run &&
              s[b].step == s[a].step && strcmp(s[b].device, s[a].device) == 0 &&
              s[b].ts <= s[a].ts + EPS && s[b].end <= s[a].end + EPS;
    if (!found)
      ok = broken(f, "machine %lld: the work of step %lld of run %lld has no submit before it",
                  s[a].pid, s[a].step, s[a].run);
  }
  if (ok) ok = check_inside(s, ns, f);
  /* Devices per machine: those with a submit slice. */
  for (size_t a = 0; ok && a < ns; a++) {
    if (!s[a].submit || s[a].pid >= 16) continue;
    bool seen = false;
    for (size_t b = 0; b < a && !seen; b++)
      seen = s[b].submit && s[b].pid == s[a].pid && strcmp(s[b].device, s[a].device) == 0;
    if (!seen) f->devices[s[a].pid]++;
  }
  /* One track's slices never overlap. */
  qsort(s, ns, sizeof *s, by_track_then_time);
  for (size_t a = 0; ok && a < ns; a++) {
    if (a == 0 || s[a].pid != s[a - 1].pid || s[a].tid != s[a - 1].tid) {
      if (!named_thread(events, s[a].pid, s[a].tid))
        ok = broken(f, "machine %lld: track %lld has no name", s[a].pid, s[a].tid);
      continue;
    }
    if (s[a].ts + EPS < s[a - 1].end)
      ok = broken(f, "machine %lld, track %lld: a slice at %.3f us inside the one before (to %.3f)",
                  s[a].pid, s[a].tid, s[a].ts, s[a - 1].end);
  }
  free(s);
  free(next_run);
  free(last_count);
  return ok;
}

bool trace_check(const char *path, size_t machines, long long runs, trace_facts *f) {
  memset(f, 0, sizeof *f);
  json_error_t jerr;
  json_t *root = json_load_file(path, 0, &jerr);
  if (!root) return broken(f, "%s: %s", path, jerr.text);
  json_t *events = json_object_get(root, "traceEvents");
  bool ok = json_is_array(events) ? true : broken(f, "no traceEvents array");
  ok = ok && check_metadata(root, machines, f);
  ok = ok && check_events(events, machines, runs, f);
  ok = ok && check_rows(events, f);
  json_decref(root);
  return ok;
}

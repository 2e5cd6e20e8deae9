/* --trace PATH: the machines' traces as one Chrome trace-event file
 * (docs/cli.md "The trace"), which Perfetto and chrome://tracing open.
 *
 * A process per machine, named "machine M (host)"; per device a track of
 * its steps' submits and a track of their work (from the submit called to
 * the point seen reached); on the controller a track of the hand-overs of
 * other machines' runs; a track of instants of the machine's rails (a
 * count ready, a count told arrived); a counter "run" per machine. Times are each
 * machine's clock less its offset, so all are the controller's, in us from
 * the trace's first event. Slices of one track do not overlap: a slice
 * that would overlap the one before goes on a further track of the same
 * name with a number ("cpu:0 work 2"), as work submitted before the last
 * finished does; past LANES such tracks of one kind, the last takes the
 * rest. */
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_job.h"

/* Thread ids: per track TIDS_PER apart, one kind of slice in each block of
 * LANES, each lane a further row of that kind. */
#define LANES    64
#define TIDS_PER (3 * LANES)
enum { KIND_SUBMIT, KIND_WORK, KIND_HANDOVER };

typedef struct lanes {
  uint64_t end[LANES]; /* the last slice's end on each lane, 0: none */
  size_t used;
} lanes;

typedef struct writer {
  json_t *events;
  bool ok;
  uint64_t base; /* the first event's time, the controller's clock */
  const cli_trace_machine *m;
  size_t machine;
  lanes *lanes; /* per track and kind */
  bool rails_named;
} writer;

static void add(writer *w, json_t *e) {
  if (!e || json_array_append_new(w->events, e) != 0) w->ok = false;
}

/* A machine's time as the controller's: offset is the machine's clock
 * less the controller's. */
static uint64_t aligned(const cli_trace_machine *m, uint64_t t) {
  int64_t v = (int64_t)t - m->offset_ns;
  return v < 0 ? 0 : (uint64_t)v;
}

static double us(const writer *w, uint64_t t) {
  uint64_t a = aligned(w->m, t);
  return a > w->base ? (double)(a - w->base) / 1000.0 : 0.0;
}

static const char *const kind_names[] = {"submit", "work"};

static void name_thread(writer *w, int tid, const char *name) {
  add(w, json_pack("{s:s, s:s, s:I, s:i, s:{s:s}}", "ph", "M", "name", "thread_name", "pid",
                   (json_int_t)w->machine, "tid", tid, "args", "name", name));
  add(w, json_pack("{s:s, s:s, s:I, s:i, s:{s:i}}", "ph", "M", "name", "thread_sort_index", "pid",
                   (json_int_t)w->machine, "tid", tid, "args", "sort_index", tid));
}

/* The lane of [begin, end) among those of track `track`'s slices of this
 * kind: the first free one (its last slice ended), made and named when
 * new. The last lane takes what no lane can (more than LANES at once). */
static int lane_of(writer *w, size_t track, int kind, uint64_t begin, uint64_t end) {
  lanes *l = &w->lanes[track * 3 + (size_t)kind];
  size_t i = 0;
  while (i < l->used && l->end[i] > begin) i++;
  if (i == LANES) i = LANES - 1;
  int tid = (int)(track * TIDS_PER + (size_t)kind * LANES + i) + 1;
  if (i == l->used) {
    char name[96];
    if (kind == KIND_HANDOVER)
      snprintf(name, sizeof name, "hand-overs");
    else
      snprintf(name, sizeof name, "%s %s", rig_trace_track(w->m->trace, track), kind_names[kind]);
    if (i > 0) snprintf(name + strlen(name), sizeof name - strlen(name), " %zu", i + 1);
    name_thread(w, tid, name);
    l->used++;
  }
  l->end[i] = end;
  return tid;
}

static void slice(writer *w, int tid, const char *name, uint64_t begin, uint64_t end,
                  const rig_trace_event *e, const char *device) {
  double ts = us(w, begin), te = us(w, end);
  json_t *args = json_pack("{s:I, s:s}", "run", (json_int_t)e->run, "device", device);
  if (args && e->step >= 0) json_object_set_new(args, "step", json_integer(e->step));
  add(w,
      json_pack("{s:s, s:s, s:s, s:I, s:i, s:f, s:f, s:o}", "ph", "X", "name", name, "cat",
                e->kind == RIG_TRACE_HANDOVER ? "hand-over" : "step", "pid", (json_int_t)w->machine,
                "tid", tid, "ts", ts, "dur", te > ts ? te - ts : 0.0, "args", args));
}

static void machine_events(writer *w) {
  const rig_trace *t = w->m->trace;
  size_t n = rig_trace_count(t);
  const rig_trace_event *ev = rig_trace_events(t);
  char name[160];
  snprintf(name, sizeof name, "machine %zu (%s)", w->machine, w->m->host);
  add(w, json_pack("{s:s, s:s, s:I, s:i, s:{s:s}}", "ph", "M", "name", "process_name", "pid",
                   (json_int_t)w->machine, "tid", 0, "args", "name", name));
  add(w, json_pack("{s:s, s:s, s:I, s:i, s:{s:I}}", "ph", "M", "name", "process_sort_index", "pid",
                   (json_int_t)w->machine, "tid", 0, "args", "sort_index", (json_int_t)w->machine));
  for (size_t i = 0; w->ok && i < n; i++) {
    const rig_trace_event *e = &ev[i];
    bool tracked = e->kind == RIG_TRACE_STEP || e->kind == RIG_TRACE_HANDOVER;
    const char *dev = tracked ? rig_trace_track(t, e->track) : "";
    if (e->kind == RIG_TRACE_READY || e->kind == RIG_TRACE_ARRIVED) {
      /* One track of the machine's rails' instants, past every other. */
      int tid = (RIG_TRACE_TRACKS + 1) * TIDS_PER + 1;
      if (!w->rails_named) name_thread(w, tid, "rails");
      w->rails_named = true;
      bool ready = e->kind == RIG_TRACE_READY;
      snprintf(name, sizeof name, "rail %" PRId64 " %s %" PRIu64, e->step,
               ready ? "ready" : "arrived", e->run);
      add(w, json_pack("{s:s, s:s, s:s, s:s, s:I, s:i, s:f, s:{s:I, s:I}}", "ph", "i", "s", "t",
                       "name", name, "cat", ready ? "rail ready" : "rail arrived", "pid",
                       (json_int_t)w->machine, "tid", tid, "ts", us(w, e->begin_ns), "args", "rail",
                       (json_int_t)e->step, "count", (json_int_t)e->run));
    } else if (e->kind == RIG_TRACE_RUN) {
      add(w, json_pack("{s:s, s:s, s:I, s:i, s:f, s:{s:I}}", "ph", "C", "name", "run", "pid",
                       (json_int_t)w->machine, "tid", 0, "ts", us(w, e->begin_ns), "args", "run",
                       (json_int_t)e->run));
    } else if (e->kind == RIG_TRACE_HANDOVER) {
      if (!e->reached_ns) continue;
      snprintf(name, sizeof name, "run %" PRIu64 " to %s", e->run, dev);
      /* One track of hand-overs, whatever the device. */
      int tid = lane_of(w, RIG_TRACE_TRACKS, KIND_HANDOVER, e->begin_ns, e->reached_ns);
      slice(w, tid, name, e->begin_ns, e->reached_ns, e, dev);
    } else {
      snprintf(name, sizeof name, "step %" PRId64 " submit", e->step);
      int tid = lane_of(w, e->track, KIND_SUBMIT, e->begin_ns, e->submitted_ns);
      slice(w, tid, name, e->begin_ns, e->submitted_ns, e, dev);
      /* A step whose reach was not seen (its device lost) has no work. */
      if (!e->reached_ns) continue;
      snprintf(name, sizeof name, "step %" PRId64, e->step);
      tid = lane_of(w, e->track, KIND_WORK, e->begin_ns, e->reached_ns);
      slice(w, tid, name, e->begin_ns, e->reached_ns, e, dev);
    }
  }
}

/* What the file says of each machine besides its events. */
static json_t *metadata(const cli_trace_machine *ms, size_t n, uint64_t base) {
  json_t *machines = json_array(), *notes = json_array();
  for (size_t m = 0; m < n; m++) {
    uint64_t dropped = ms[m].trace ? rig_trace_dropped(ms[m].trace) : 0;
    size_t count = ms[m].trace ? rig_trace_count(ms[m].trace) : 0;
    json_array_append_new(machines,
                          json_pack("{s:I, s:s, s:I, s:I, s:I, s:I}", "machine", (json_int_t)m,
                                    "host", ms[m].host, "offset_ns", (json_int_t)ms[m].offset_ns,
                                    "error_ns", (json_int_t)ms[m].error_ns, "events",
                                    (json_int_t)count, "dropped", (json_int_t)dropped));
    if (dropped) {
      char note[128];
      snprintf(note, sizeof note, "machine %zu: dropped %" PRIu64 " events (its trace was full)", m,
               dropped);
      json_array_append_new(notes, json_string(note));
    }
  }
  return json_pack("{s:s, s:s, s:I, s:o, s:o}", "producer", "progrun 0.1.0", "clock",
                   "CLOCK_MONOTONIC of machine 0, the controller; other machines' aligned by "
                   "their offset_ns (their clock less the controller's, within error_ns)",
                   "base_ns", (json_int_t)base, "machines", machines, "notes", notes);
}

int cli_trace_text(const cli_trace_machine *ms, size_t n, char **out, size_t *len, rig_error *err) {
  writer w = {.events = json_array(), .ok = true, .base = UINT64_MAX};
  w.lanes = calloc((RIG_TRACE_TRACKS + 1) * 3, sizeof *w.lanes);
  for (size_t m = 0; m < n; m++) {
    const rig_trace *t = ms[m].trace;
    for (size_t i = 0; t && i < rig_trace_count(t); i++) {
      uint64_t a = aligned(&ms[m], rig_trace_events(t)[i].begin_ns);
      if (a < w.base) w.base = a;
    }
  }
  if (w.base == UINT64_MAX) w.base = 0;
  for (size_t m = 0; w.ok && w.lanes && m < n; m++) {
    if (!ms[m].trace) continue;
    memset(w.lanes, 0, (RIG_TRACE_TRACKS + 1) * 3 * sizeof *w.lanes);
    w.rails_named = false;
    w.m = &ms[m];
    w.machine = m;
    machine_events(&w);
  }
  free(w.lanes);
  json_t *root = w.ok && w.lanes
                     ? json_pack("{s:o, s:s, s:o}", "traceEvents", w.events, "displayTimeUnit",
                                 "ns", "otherData", metadata(ms, n, w.base))
                     : NULL;
  if (!root) {
    if (!w.ok || !w.lanes) json_decref(w.events);
    return rig_error_set(err, RIG_ENOMEM, "out of memory for the trace"), CLI_EXIT_FAIL;
  }
  char *text = json_dumps(root, JSON_COMPACT);
  json_decref(root);
  if (!text) return rig_error_set(err, RIG_ENOMEM, "out of memory for the trace"), CLI_EXIT_FAIL;
  *out = text;
  *len = strlen(text);
  return CLI_EXIT_OK;
}

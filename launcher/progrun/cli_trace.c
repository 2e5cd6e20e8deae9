/* --trace PATH: the machines' traces as one Chrome trace-event file
 * (docs/cli.md "The trace"), which Perfetto and chrome://tracing open.
 *
 * A process per machine, named "machine M (host)"; per device a track of
 * its steps' submits and a track of their work (from the submit called to
 * the point seen reached); on the controller a track of the hand-overs of
 * other machines' runs; a track of instants of the machine's rails (a
 * count ready, a count told arrived); a counter "run" per machine. Times
 * are each machine's clock less its offset (narrowed by the runs:
 * cli_trace_clock.c), so all are the controller's, in us from the trace's
 * first event. A track's slices that truly overlap (work queued behind
 * work) go on further rows of the same name with a number ("cpu:0 work
 * 2"); past LANES rows of one kind, the last takes the rest. Thread ids
 * are unique in the file, not only in their process. */
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_job.h"
#include "cli_trace.h"

/* Thread ids: per track TIDS_PER apart, one kind of slice in each block of
 * LANES, each lane a further row of that kind; the rails' past every
 * track; each machine's block TIDS_MACHINE past the one before. */
#define LANES        64
#define TIDS_PER     (3 * LANES)
#define TIDS_RAILS   ((RIG_TRACE_TRACKS + 1) * TIDS_PER + 1)
#define TIDS_MACHINE (TIDS_RAILS + 1)
enum { KIND_SUBMIT, KIND_WORK, KIND_HANDOVER, KIND_RUN };

/* A machine's clock as the file uses it, and what it cost. */
typedef struct mclock {
  int64_t offset;
  uint64_t error;
  bool narrowed;   /* false: the runs contradicted each other */
  size_t clamped;  /* slices moved inside their hand-over */
  cli_handover *h; /* machine 0's hand-overs to it, by run */
  size_t nh;
} mclock;

/* A slice to write: its event, kind and track, its times (the
 * controller's clock) and its row's thread id. */
typedef struct item {
  size_t event; /* SIZE_MAX: a run's window of the job (machine 0's) */
  uint64_t run; /* a window's */
  int kind;
  size_t track;
  uint64_t begin, end;
  json_int_t tid;
} item;

typedef struct writer {
  json_t *events;
  bool ok;
  uint64_t warmup; /* runs below it are warmup runs, marked so */
  uint64_t base;   /* the first event's time, the controller's clock */
  const cli_trace_machine *m;
  mclock *clock;
  size_t machine;
  item *items;
  size_t nitems;
} writer;

static void add(writer *w, json_t *e) {
  if (!e || json_array_append_new(w->events, e) != 0) w->ok = false;
}

/* A machine's time as the controller's: offset is the machine's clock
 * less the controller's. */
static uint64_t aligned(int64_t offset, uint64_t t) {
  int64_t v = (int64_t)t - offset;
  return v < 0 ? 0 : (uint64_t)v;
}

/* A time of the controller's clock in us from the file's start. */
static double us(const writer *w, uint64_t t) {
  return t > w->base ? (double)(t - w->base) / 1000.0 : 0.0;
}

static json_int_t tid_of(const writer *w, size_t local) {
  return (json_int_t)(w->machine * TIDS_MACHINE + local);
}

static void name_thread(writer *w, json_int_t tid, const char *name) {
  add(w, json_pack("{s:s, s:s, s:I, s:I, s:{s:s}}", "ph", "M", "name", "thread_name", "pid",
                   (json_int_t)w->machine, "tid", tid, "args", "name", name));
  add(w, json_pack("{s:s, s:s, s:I, s:I, s:{s:I}}", "ph", "M", "name", "thread_sort_index", "pid",
                   (json_int_t)w->machine, "tid", tid, "args", "sort_index", tid));
}

/* ---- rows ------------------------------------------------------------------------ */

static int by_row_then_time(const void *a, const void *b) {
  const item *x = *(const item *const *)a, *y = *(const item *const *)b;
  size_t kx = x->track * 3 + (size_t)x->kind, ky = y->track * 3 + (size_t)y->kind;
  if (kx != ky) return kx < ky ? -1 : 1;
  if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
  return x->event < y->event ? -1 : x->event > y->event;
}

static const char *const kind_names[] = {"submit", "work"};

static void name_row(writer *w, const item *it, size_t lane, json_int_t tid) {
  char name[96];
  if (it->kind == KIND_HANDOVER)
    snprintf(name, sizeof name, it->event == SIZE_MAX ? "runs" : "hand-overs");
  else
    snprintf(name, sizeof name, "%s %s", rig_trace_track(w->m->trace, it->track),
             kind_names[it->kind]);
  if (lane > 0) snprintf(name + strlen(name), sizeof name - strlen(name), " %zu", lane + 1);
  name_thread(w, tid, name);
}

/* Each slice's row: taken in order of their start, a slice goes on the
 * first row of its track and kind whose last slice ended by then, a new
 * row only when every row's overlaps it (the fewest rows there can be). */
static bool assign_rows(writer *w) {
  item **order = calloc(w->nitems ? w->nitems : 1, sizeof *order);
  if (!order) return false;
  for (size_t i = 0; i < w->nitems; i++) order[i] = &w->items[i];
  qsort(order, w->nitems, sizeof *order, by_row_then_time);
  uint64_t end[LANES]; /* each row's last end */
  size_t used = 0;
  for (size_t i = 0; i < w->nitems; i++) {
    item *it = order[i];
    const item *prev = i ? order[i - 1] : NULL;
    if (!prev || prev->track != it->track || prev->kind != it->kind) used = 0;
    size_t lane = 0;
    while (lane < used && end[lane] > it->begin) lane++;
    if (lane == LANES) lane = LANES - 1;
    it->tid = tid_of(w, it->track * TIDS_PER + (size_t)it->kind * LANES + lane + 1);
    if (lane == used) {
      name_row(w, it, lane, it->tid);
      end[used++] = it->end;
    } else if (it->end > end[lane]) {
      end[lane] = it->end;
    }
  }
  free(order);
  return true;
}

/* ---- slices -------------------------------------------------------------------------- */

/* [begin, end) of machine w->machine's clock as the controller's, inside
 * its run's hand-over where the machine's clock could not be narrowed
 * (counted). */
static void place(writer *w, const rig_trace_event *e, uint64_t begin, uint64_t end, item *it) {
  mclock *c = &w->clock[w->machine];
  it->begin = aligned(c->offset, begin);
  it->end = aligned(c->offset, end);
  const cli_handover *x = w->machine ? cli_handover_of(c->h, c->nh, e->run) : NULL;
  if (!x) return;
  bool moved = false;
  if (it->begin < x->begin) it->begin = x->begin, moved = true;
  if (x->end && it->end > x->end) it->end = x->end, moved = true;
  if (it->end < it->begin) it->end = it->begin;
  if (moved) c->clamped++;
}

/* The machine's slices, each an item, in the order of its events. */
static bool collect(writer *w) {
  const rig_trace *t = w->m->trace;
  size_t n = rig_trace_count(t);
  const rig_trace_event *ev = rig_trace_events(t);
  w->items = calloc(2 * n + w->m->nruns + 1, sizeof *w->items);
  if (!w->items) return false;
  w->nitems = 0;
  for (size_t i = 0; i < n; i++) {
    const rig_trace_event *e = &ev[i];
    item *it = &w->items[w->nitems];
    if (e->kind == RIG_TRACE_HANDOVER) {
      if (!e->reached_ns) continue;
      /* One track of hand-overs, whatever the device. */
      *it = (item){.event = i, .kind = KIND_HANDOVER, .track = RIG_TRACE_TRACKS};
      place(w, e, e->begin_ns, e->reached_ns, it);
      w->nitems++;
    } else if (e->kind == RIG_TRACE_STEP) {
      *it = (item){.event = i, .kind = KIND_SUBMIT, .track = e->track};
      place(w, e, e->begin_ns, e->submitted_ns, it);
      w->nitems++;
      /* A step whose reach was not seen (its device lost) has no work. */
      if (!e->reached_ns) continue;
      it = &w->items[w->nitems++];
      *it = (item){.event = i, .kind = KIND_WORK, .track = e->track};
      place(w, e, e->begin_ns, e->reached_ns, it);
    }
  }
  /* The job's run windows, on the track of hand-overs (there are none). */
  for (size_t r = 0; r < w->m->nruns; r++) {
    const cli_handover *x = &w->m->runs[r];
    if (!x->end) continue;
    w->items[w->nitems++] = (item){.event = SIZE_MAX,
                                   .run = x->run,
                                   .kind = KIND_HANDOVER,
                                   .track = RIG_TRACE_TRACKS,
                                   .begin = x->begin,
                                   .end = x->end};
  }
  return true;
}

/* A run's window of the job: from its start on machine 0 to its end on
 * every machine. */
static void window(writer *w, const item *it) {
  char name[64];
  bool warm = it->run < w->warmup;
  snprintf(name, sizeof name, "run %" PRIu64 "%s", it->run, warm ? " (warmup)" : "");
  double ts = us(w, it->begin), te = us(w, it->end);
  add(w, json_pack("{s:s, s:s, s:s, s:I, s:I, s:f, s:f, s:{s:I, s:s, s:b}}", "ph", "X", "name",
                   name, "cat", "run", "pid", (json_int_t)w->machine, "tid", it->tid, "ts", ts,
                   "dur", te > ts ? te - ts : 0.0, "args", "run", (json_int_t)it->run, "device",
                   "job", "warmup", warm));
}

static void slice(writer *w, const item *it) {
  if (it->event == SIZE_MAX) {
    window(w, it);
    return;
  }
  const rig_trace_event *e = &rig_trace_events(w->m->trace)[it->event];
  bool handover = it->kind == KIND_HANDOVER;
  const char *dev = rig_trace_track(w->m->trace, e->track);
  char name[160];
  if (handover)
    snprintf(name, sizeof name, "run %" PRIu64 " to %s", e->run, dev);
  else if (it->kind == KIND_SUBMIT)
    snprintf(name, sizeof name, "step %" PRId64 " submit", e->step);
  else
    snprintf(name, sizeof name, "step %" PRId64, e->step);
  double ts = us(w, it->begin), te = us(w, it->end);
  json_t *args = json_pack("{s:I, s:s}", "run", (json_int_t)e->run, "device", dev);
  if (args && e->step >= 0) json_object_set_new(args, "step", json_integer(e->step));
  /* Warmup runs are left out of the figures: marked, so a reader can too. */
  if (args && e->run < w->warmup) json_object_set_new(args, "warmup", json_true());
  add(w, json_pack("{s:s, s:s, s:s, s:I, s:I, s:f, s:f, s:o}", "ph", "X", "name", name, "cat",
                   handover ? "hand-over" : "step", "pid", (json_int_t)w->machine, "tid", it->tid,
                   "ts", ts, "dur", te > ts ? te - ts : 0.0, "args", args));
}

/* An event that is no slice: a rail's instant, or the run counter. */
static void instant(writer *w, const rig_trace_event *e, bool *rails_named) {
  uint64_t at = aligned(w->clock[w->machine].offset, e->begin_ns);
  if (e->kind == RIG_TRACE_RUN) {
    add(w, json_pack("{s:s, s:s, s:I, s:i, s:f, s:{s:I}}", "ph", "C", "name", "run", "pid",
                     (json_int_t)w->machine, "tid", 0, "ts", us(w, at), "args", "run",
                     (json_int_t)e->run));
    return;
  }
  /* One track of the machine's rails' instants, past every other. */
  json_int_t tid = tid_of(w, TIDS_RAILS);
  if (!*rails_named) name_thread(w, tid, "rails");
  *rails_named = true;
  bool ready = e->kind == RIG_TRACE_READY;
  char name[160];
  snprintf(name, sizeof name, "rail %" PRId64 " %s %" PRIu64, e->step, ready ? "ready" : "arrived",
           e->run);
  add(w, json_pack("{s:s, s:s, s:s, s:s, s:I, s:I, s:f, s:{s:I, s:I}}", "ph", "i", "s", "t", "name",
                   name, "cat", ready ? "rail ready" : "rail arrived", "pid",
                   (json_int_t)w->machine, "tid", tid, "ts", us(w, at), "args", "rail",
                   (json_int_t)e->step, "count", (json_int_t)e->run));
}

static void machine_events(writer *w) {
  const rig_trace *t = w->m->trace;
  char name[160];
  snprintf(name, sizeof name, "machine %zu (%s)", w->machine, w->m->host);
  add(w, json_pack("{s:s, s:s, s:I, s:i, s:{s:s}}", "ph", "M", "name", "process_name", "pid",
                   (json_int_t)w->machine, "tid", 0, "args", "name", name));
  add(w, json_pack("{s:s, s:s, s:I, s:i, s:{s:I}}", "ph", "M", "name", "process_sort_index", "pid",
                   (json_int_t)w->machine, "tid", 0, "args", "sort_index", (json_int_t)w->machine));
  if (!collect(w) || !assign_rows(w)) {
    w->ok = false;
    return;
  }
  const rig_trace_event *ev = rig_trace_events(t);
  bool rails_named = false;
  size_t next = 0;
  for (size_t i = 0; w->ok && i < rig_trace_count(t); i++) {
    if (ev[i].kind == RIG_TRACE_RUN || ev[i].kind == RIG_TRACE_READY ||
        ev[i].kind == RIG_TRACE_ARRIVED)
      instant(w, &ev[i], &rails_named);
    for (; next < w->nitems && w->items[next].event == i; next++) slice(w, &w->items[next]);
  }
  for (; w->ok && next < w->nitems; next++) slice(w, &w->items[next]); /* the windows */
}

/* ---- the file ------------------------------------------------------------------------ */

/* What the file says of each machine besides its events. */
static json_t *metadata(const cli_trace_machine *ms, const mclock *c, size_t n, uint64_t base) {
  json_t *machines = json_array(), *notes = json_array();
  for (size_t m = 0; m < n; m++) {
    uint64_t dropped = ms[m].trace ? rig_trace_dropped(ms[m].trace) : 0;
    size_t count = ms[m].trace ? rig_trace_count(ms[m].trace) : 0;
    json_array_append_new(
        machines,
        json_pack("{s:I, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "machine", (json_int_t)m, "host",
                  ms[m].host, "offset_ns", (json_int_t)c[m].offset, "error_ns",
                  (json_int_t)c[m].error, "pings_offset_ns", (json_int_t)ms[m].offset_ns,
                  "pings_error_ns", (json_int_t)ms[m].error_ns, "events", (json_int_t)count,
                  "dropped", (json_int_t)dropped, "clamped", (json_int_t)c[m].clamped));
    char note[160];
    if (dropped) {
      snprintf(note, sizeof note, "machine %zu: dropped %" PRIu64 " events (its trace was full)", m,
               dropped);
      json_array_append_new(notes, json_string(note));
    }
    if (c[m].clamped) {
      snprintf(
          note, sizeof note,
          "machine %zu: %zu of its slices clamped into their hand-overs (its runs bound no one "
          "offset: its clock drifted during them)",
          m, c[m].clamped);
      json_array_append_new(notes, json_string(note));
    }
  }
  return json_pack("{s:s, s:s, s:I, s:o, s:o}", "producer", "progrun " RIG_VERSION_STRING, "clock",
                   "CLOCK_MONOTONIC of machine 0, the controller; other machines' aligned by "
                   "their offset_ns (their clock less the controller's, within error_ns), "
                   "measured by pings and narrowed by the runs",
                   "base_ns", (json_int_t)base, "machines", machines, "notes", notes);
}

/* Every machine's clock: the pings', narrowed by its runs; and the
 * file's time 0. */
static bool clocks(const cli_trace_machine *ms, size_t n, mclock *c, uint64_t *base) {
  for (size_t m = 0; m < n; m++) {
    c[m] = (mclock){ms[m].offset_ns, ms[m].error_ns, true, 0, NULL, 0};
    if (m == 0 || !ms[m].trace || !ms[0].trace) continue;
    if (ms[0].nruns) {
      /* Machine-local runs: the job's windows bound every machine's. */
      if (!(c[m].h = malloc(ms[0].nruns * sizeof *c[m].h))) return false;
      memcpy(c[m].h, ms[0].runs, ms[0].nruns * sizeof *c[m].h);
      c[m].nh = ms[0].nruns;
    } else if (!cli_trace_handovers(ms[0].trace, m, &c[m].h, &c[m].nh)) {
      return false;
    }
    c[m].narrowed = cli_trace_narrow(c[m].h, c[m].nh, ms[m].trace, &c[m].offset, &c[m].error);
  }
  *base = UINT64_MAX;
  for (size_t m = 0; m < n; m++) {
    const rig_trace *t = ms[m].trace;
    for (size_t i = 0; t && i < rig_trace_count(t); i++) {
      uint64_t a = aligned(c[m].offset, rig_trace_events(t)[i].begin_ns);
      if (a < *base) *base = a;
    }
  }
  if (*base == UINT64_MAX) *base = 0;
  return true;
}

int cli_trace_text(const cli_trace_machine *ms, size_t n, uint64_t warmup, char **out, size_t *len,
                   rig_error *err) {
  writer w = {.events = json_array(), .ok = true, .warmup = warmup};
  mclock *c = calloc(n ? n : 1, sizeof *c);
  w.clock = c;
  w.ok = w.events && c && clocks(ms, n, c, &w.base);
  for (size_t m = 0; w.ok && m < n; m++) {
    if (!ms[m].trace) continue;
    w.m = &ms[m];
    w.machine = m;
    machine_events(&w);
    free(w.items);
    w.items = NULL;
  }
  json_t *root = w.ok ? json_pack("{s:o, s:s, s:o}", "traceEvents", w.events, "displayTimeUnit",
                                  "ns", "otherData", metadata(ms, c, n, w.base))
                      : NULL;
  if (!w.ok) json_decref(w.events);
  for (size_t m = 0; c && m < n; m++) free(c[m].h);
  free(c);
  if (!root) return rig_error_set(err, RIG_ENOMEM, "out of memory for the trace"), CLI_EXIT_FAIL;
  char *text = json_dumps(root, JSON_COMPACT);
  json_decref(root);
  if (!text) return rig_error_set(err, RIG_ENOMEM, "out of memory for the trace"), CLI_EXIT_FAIL;
  *out = text;
  *len = strlen(text);
  return CLI_EXIT_OK;
}

/* A job of machine-local runs (docs/jobs.md, "Jobs of many machines"):
 * every machine opens and runs its own program on its own devices, the
 * job's tree starts each run down it and ends it up it, and nothing of a
 * run passes through machine 0. Machine 0 reads every file, then shares
 * down the tree what several machines need (a description, an --input)
 * and scatters to each machine what only it needs; after the runs it
 * gathers each machine's times, and each machine writes its own outputs,
 * renamed over their targets once every machine has them whole (an
 * agreement up the tree, the verdict down). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli_job.h"
#include "cli_trace.h"
#include "rig/rig_array.h"

/* What a run needs besides a machine's own part. */
typedef struct local_opts {
  uint64_t runs, warmup;
  bool json_runs, gather;
} local_opts;

/* The begins of the runs that machine 0 keeps for their windows: a run
 * is known done everywhere W - 1 runs later, and its window opens W - 1
 * runs before it (W at most 2). */
#define RUN_BEGINS 4

/* One machine's part, as it runs it. */
typedef struct local_part {
  int m;
  rig_desc *desc; /* owned unless shared */
  bool owns_desc;
  char *file, *where; /* for messages */
  char **devices;
  size_t ndevices;
  cli_int *ints;
  size_t nints;
  uint8_t **inputs; /* per input of desc: its bytes (the input's length), or NULL */
  bool *owns_input;
  cli_plan_out *outs;
  size_t nouts;
  cli_rail_map rails;      /* its part's map on this machine (not given: none) */
  cli_mapped_rails mapped; /* the load's lookup through it */
} local_part;

/* A machine's runs and what they leave: its times and its outputs. */
typedef struct local_machine {
  rig_job *job;
  local_opts o;
  local_part *part;
  cli_machine mm;
  bool open;
  cli_times times;
  uint64_t *run_ns; /* --json-runs: every measured run's */
  uint64_t measured;
  char (*used)[2][64];
  cli_outset files;      /* its outputs, when it writes them itself */
  size_t *file_of;       /* per output: its index in files */
  int64_t *run_now;      /* where the run going on is kept (machine 0's session), or NULL */
  cli_handover *windows; /* machine 0, traced: each run's, from its start to its end everywhere */
  size_t nwindows, room;
  uint64_t sent, sent_bytes; /* messages and bytes it sent on the tree in the runs */
} local_machine;

/* ---- failures ---------------------------------------------------------------- */

/* A failure of this machine is the job's: told to every machine with its
 * label, standing for a fault of the input (exit 2) where code says so. */
static void fail_job(local_machine *lm, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void fail_job(local_machine *lm, int code, const char *fmt, ...) {
  char cause[RIG_ERROR_MESSAGE_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(cause, sizeof cause, fmt, ap);
  va_end(ap);
  rig_job_fail_as(lm->job, code == CLI_EXIT_USAGE ? RIG_EINVAL : RIG_EJOB, "%s", cause);
}

/* ---- opening ----------------------------------------------------------------------- */

static int record_used(local_machine *lm, rig_device *const *devs, size_t n) {
  lm->used = calloc(n + 1, sizeof *lm->used);
  if (!lm->used) return CLI_EXIT_FAIL;
  for (size_t i = 0; i < n; i++) {
    snprintf(lm->used[i][0], sizeof lm->used[i][0], "%s", rig_device_name(devs[i]));
    snprintf(lm->used[i][1], sizeof lm->used[i][1], "%s", rig_device_arch(devs[i]));
  }
  return CLI_EXIT_OK;
}

/* Its devices mapped, its program loaded with this machine's rail ends,
 * its inputs filled and its outputs checked here: a failure is the job's,
 * named as the controller names it ("FILE: machine 2: ..."). */
static bool open_part(local_machine *lm) {
  local_part *p = lm->part;
  const rig_desc *d = p->desc;
  rig_error err = {0};
  const char *label = rig_job_label(lm->job, p->m);
  rig_device **devs = calloc(d->ndevices + 1, sizeof *devs);
  if (!devs) return fail_job(lm, CLI_EXIT_FAIL, "%s: out of memory", label), false;
  char given_by[96];
  snprintf(given_by, sizeof given_by, "%s%s", p->where[0] ? p->where : "--devices",
           p->where[0] ? ".devices" : "");
  int rc = cli_map_devices_on(&cli_local_opener, d, p->devices, p->ndevices, given_by, devs, &err);
  bool jobfile_fault = rc == CLI_EXIT_USAGE && p->where[0];
  /* A device this machine lacks, in a job file's part: the field that
   * would map it is named, as the options' --devices is on one machine. */
  bool unmapped = rc != CLI_EXIT_OK && !jobfile_fault && p->where[0]; /* before the open */
  if (rc == CLI_EXIT_OK && record_used(lm, devs, d->ndevices) != CLI_EXIT_OK)
    rc = (rig_error_set(&err, RIG_ENOMEM, "out of memory"), CLI_EXIT_FAIL);
  if (rc == CLI_EXIT_OK)
    rc = cli_machine_open(&lm->mm, d, devs, p->m,
                          cli_mapped_rails_of(&p->mapped, &p->rails, rig_job_rails(lm->job)), &err);
  free(devs);
  if (rc != CLI_EXIT_OK) {
    if (jobfile_fault)
      fail_job(lm, rc, "%s", err.message); /* the job file's name is prefixed by machine 0 */
    else if (unmapped)
      fail_job(lm, rc, "%s: %s: %s (%s.devices maps the program's devices)", p->file, label,
               err.message, p->where);
    else
      fail_job(lm, rc, "%s: %s: %s", p->file, label, err.message);
    return false;
  }
  lm->open = true;
  for (size_t i = 0; i < d->ninputs; i++)
    if (p->inputs[i] && cli_machine_fill_input(&lm->mm, i, p->inputs[i], (size_t)d->inputs[i].bytes,
                                               &err) != CLI_EXIT_OK)
      return fail_job(lm, CLI_EXIT_FAIL, "%s: %s", label, err.message), false;
  if (!lm->o.gather && p->nouts) {
    if (!(lm->file_of = calloc(p->nouts, sizeof *lm->file_of)))
      return fail_job(lm, CLI_EXIT_FAIL, "%s: out of memory", label), false;
    for (size_t k = 0; k < p->nouts; k++)
      if ((rc = cli_outset_add(&lm->files, p->outs[k].path, p->outs[k].label, &lm->file_of[k],
                               &err)) != CLI_EXIT_OK)
        return fail_job(lm, rc, "%s: %s", label, err.message), false;
  }
  return true;
}

/* ---- running ------------------------------------------------------------------------ */

/* Waits for this machine's ends of a run, or for the job's failure: a
 * device of its own lost fails it at once (its reason), and a failure
 * elsewhere ends the wait whatever runs here (left to end on its own).
 * Yields first, keeping short runs' times true, then naps 50 us. */
static rig_status wait_ends(local_machine *lm, rig_error *err) {
  size_t seen = 0;
  for (unsigned polls = 0;; polls++) {
    bool all = false;
    rig_status st = cli_machine_ends_reached(&lm->mm, &seen, &all, err);
    if (st != RIG_OK || all) return st;
    if (rig_job_failed(lm->job, err)) return RIG_EJOB;
    cli_wait_round(polls);
  }
}

/* Run r here: begun by the tree, handed to the devices, its ends waited
 * for; *ns its time here. A failure here is the job's ("machine 2: step
 * 0: ..."), one elsewhere ends it. */
static bool run_here(local_machine *lm, uint64_t r, uint64_t *ns) {
  rig_error err = {0};
  if (rig_job_run_begin(lm->job, r, &err) != RIG_OK) return false;
  uint64_t t0 = cli_now_ns();
  const local_part *p = lm->part;
  if (cli_machine_start(&lm->mm, r, p->ints, p->nints, &err) != CLI_EXIT_OK ||
      wait_ends(lm, &err) != RIG_OK) {
    /* Machine 0's own failure is of its own run, whatever run before it
     * is still in flight elsewhere; a failure elsewhere that ended the
     * wait here is not (the job knows its run: cli_failed_run). */
    if (!rig_job_failed(lm->job, NULL)) {
      if (lm->run_now) __atomic_store_n(lm->run_now, (int64_t)r, __ATOMIC_RELEASE);
      rig_job_fail(lm->job, "%s: %s", rig_job_label(lm->job, p->m), err.message);
    }
    return false;
  }
  *ns = cli_now_ns() - t0;
  rig_trace_reached(lm->mm.ends, lm->mm.nends);
  return true;
}

/* This machine's time of run r, under the hold (an interrupt reads it). */
static bool record_here(local_machine *lm, uint64_t r, uint64_t ns) {
  if (r < lm->o.warmup) return true;
  rig_error err;
  cli_hold();
  bool ok = cli_times_add(&lm->times, ns, &err) == CLI_EXIT_OK;
  if (ok && lm->run_ns) lm->run_ns[lm->measured] = ns;
  lm->measured += ok;
  cli_release();
  if (!ok) fail_job(lm, CLI_EXIT_FAIL, "%s: %s", rig_job_label(lm->job, lm->part->m), err.message);
  return ok;
}

/* ---- the end: outputs ------------------------------------------------------------------- */

/* This machine's outputs into their temporary files beside their targets. */
static bool put_outputs_here(local_machine *lm) {
  local_part *p = lm->part;
  rig_error err = {0};
  for (size_t k = 0; k < p->nouts; k++) {
    uint8_t *b = NULL;
    size_t n = 0;
    int rc = cli_machine_read_input(&lm->mm, (size_t)p->outs[k].index, &b, &n, &err);
    cli_hold();
    if (rc == CLI_EXIT_OK) rc = cli_outset_put(&lm->files, lm->file_of[k], b, n, &err);
    cli_release();
    free(b);
    if (rc != CLI_EXIT_OK)
      return fail_job(lm, rc, "%s: %s", rig_job_label(lm->job, p->m), err.message), false;
  }
  return true;
}

/* For machine 0 to write (--gather-outputs): each output's index and bytes. */
static bool pack_outputs(local_machine *lm, const size_t *outputs, cli_wbuf *pk) {
  local_part *p = lm->part;
  rig_error err = {0};
  uint64_t n = 0;
  for (size_t i = 0; i < p->desc->ninputs; i++) n += outputs[i] != SIZE_MAX;
  cli_wbuf_u64(pk, n);
  for (size_t i = 0; i < p->desc->ninputs; i++) {
    if (outputs[i] == SIZE_MAX) continue;
    uint8_t *b = NULL;
    size_t len = 0;
    if (cli_machine_read_input(&lm->mm, i, &b, &len, &err) != CLI_EXIT_OK)
      return fail_job(lm, CLI_EXIT_FAIL, "%s: %s", rig_job_label(lm->job, p->m), err.message),
             false;
    cli_wbuf_u64(pk, i);
    cli_wbuf_bytes(pk, b, len);
    free(b);
  }
  return pk->ok || (fail_job(lm, CLI_EXIT_FAIL, "out of memory"), false);
}

/* What machine 0 gathers of each machine: its times, every run's with
 * --json-runs, its devices; then (--gather-outputs) its outputs. */
static bool pack_results(local_machine *lm, const size_t *outputs, cli_wbuf *pk) {
  cli_times_put(&lm->times, pk);
  cli_wbuf_u64(pk, lm->run_ns ? lm->measured : 0);
  for (uint64_t i = 0; lm->run_ns && i < lm->measured; i++) cli_wbuf_u64(pk, lm->run_ns[i]);
  size_t nd = lm->part->desc->ndevices;
  cli_wbuf_u64(pk, nd);
  for (size_t i = 0; i < nd; i++)
    cli_wbuf_str(pk, lm->used[i][0]), cli_wbuf_str(pk, lm->used[i][1]);
  return lm->o.gather ? pack_outputs(lm, outputs, pk) : pk->ok;
}

/* ---- one machine, from its part to its outputs ------------------------------------------ */

/* Opens, runs every run by the tree, and writes the outputs where they
 * are made; on machine 0 `each` is called once each run is done on every
 * machine (a run after its end here: runs overlap, rig_job_run_end), with
 * the run's slowest machine. Whether all went well (else the job failed). */
typedef void (*after_run_fn)(void *ctx, uint64_t r, const rig_job_slowest *slow);

/* A run the tree says is done everywhere: its window (traced), the run a
 * failure now falls in (the oldest still in flight), and `each`. Run q
 * may begin on another machine once machine 0 began run q - W + 1 (its
 * start goes down while machine 0 runs the run before it): its window
 * opens there. */
static void run_done(local_machine *lm, const uint64_t *begins, unsigned w,
                     const rig_job_slowest *slow, after_run_fn each, void *ctx) {
  if (slow->run == RIG_JOB_NO_RUN) return;
  uint64_t first = slow->run >= w - 1 ? slow->run - (w - 1) : 0;
  if (lm->windows && lm->nwindows < lm->room)
    lm->windows[lm->nwindows++] =
        (cli_handover){slow->run, begins[first % RUN_BEGINS], rig_trace_now()};
  if (lm->run_now) __atomic_store_n(lm->run_now, (int64_t)slow->run + 1, __ATOMIC_RELEASE);
  if (each) each(ctx, slow->run, slow);
}

static bool run_machine(local_machine *lm, after_run_fn each, void *ctx) {
  /* The interrupt thread tells them (at a SIGCONT too, as the job is
   * left): hidden before they are freed, with the frame that holds them. */
  cli_times_show(&lm->times);
  if (!open_part(lm)) return false;
  /* Every machine opened before run 0: a refusal anywhere is told as the
   * start's, not as a run's. */
  rig_error err;
  bool all = false;
  if (rig_job_agree(lm->job, true, &all, &err) != RIG_OK || !all) return false;
  if (lm->o.json_runs && lm->o.runs > lm->o.warmup &&
      !(lm->run_ns = calloc(lm->o.runs - lm->o.warmup, sizeof *lm->run_ns)))
    return fail_job(lm, CLI_EXIT_FAIL, "out of memory"), false;
  rig_job_tree before, after;
  rig_job_tree_facts(lm->job, &before);
  uint64_t begins[RUN_BEGINS] = {0};
  rig_job_slowest slow;
  rig_job_runs_plan(lm->job, lm->o.runs); /* machine 0's: no start past the last run */
  if (lm->run_now) __atomic_store_n(lm->run_now, 0, __ATOMIC_RELEASE);
  for (uint64_t r = 0; r < lm->o.runs; r++) {
    uint64_t ns = 0;
    begins[r % RUN_BEGINS] = lm->windows ? rig_trace_now() : 0;
    if (!run_here(lm, r, &ns) || !record_here(lm, r, ns)) return false;
    if (rig_job_run_end(lm->job, r, ns, &slow, &err) != RIG_OK) return false;
    run_done(lm, begins, before.in_flight, &slow, each, ctx);
  }
  /* The run still in flight, done everywhere. */
  if (rig_job_runs_done(lm->job, &slow, &err) != RIG_OK) return false;
  run_done(lm, begins, before.in_flight, &slow, each, ctx);
  rig_job_tree_facts(lm->job, &after);
  lm->sent = after.messages - before.messages;
  lm->sent_bytes = after.bytes - before.bytes;
  return true;
}

static void machine_free(local_machine *lm) {
  cli_times_show(NULL); /* before anything of it goes */
  if (lm->open) cli_machine_close(&lm->mm);
  cli_times_free(&lm->times);
  cli_outset_free(&lm->files);
  free(lm->run_ns);
  free(lm->used);
  free(lm->file_of);
  free(lm->windows);
}

void cli_local_told(cli_told *t, bool held) {
  cli_times_told(&t->figures, held);
}

/* ---- the plans, as bytes ---------------------------------------------------------- */

/* What several machines need goes once down the tree (a table of
 * descriptions and of inputs); what one machine needs goes to it alone.
 * An item is known by its file: the same path is the same bytes. */
typedef struct item {
  const char *path;
  const void *bytes; /* a description's are encoded into owned */
  size_t len;
  uint8_t *owned;
  size_t users;   /* machines past 0 that need it */
  int64_t shared; /* its index in the shared table, or -1 */
} item;

typedef RIG_ARRAY_OF(item) items;

static int64_t item_of(items *t, const char *path) {
  for (size_t i = 0; i < t->t.n; i++)
    if (strcmp(t->t.items[i].path, path) == 0) return (int64_t)i;
  if (!RIG_ARRAY_PUSH(t, ((item){path, NULL, 0, NULL, 0, -1}))) return -1;
  return (int64_t)t->t.n - 1;
}

static void items_free(items *t) {
  for (size_t i = 0; i < t->t.n; i++) free(t->t.items[i].owned);
  rig_array_free(&t->a);
}

/* A reference in a machine's part: an index into the shared table, or
 * the bytes themselves (OWN), or none. */
#define REF_OWN  UINT64_MAX
#define REF_NONE (UINT64_MAX - 1)

static void pack_ref(cli_wbuf *pk, const item *it) {
  if (it->shared >= 0) {
    cli_wbuf_u64(pk, (uint64_t)it->shared);
  } else {
    cli_wbuf_u64(pk, REF_OWN);
    cli_wbuf_bytes(pk, it->bytes, it->len);
  }
}

/* The shared table and each machine's part. */
typedef struct blobs {
  cli_wbuf shared;
  cli_wbuf *parts; /* per machine; [0] unused */
  items descs, inputs;
  int64_t *desc_of;   /* per machine: its item */
  int64_t **input_of; /* per machine, per input: its item, or -1 */
} blobs;

static void blobs_free(blobs *b, size_t n) {
  cli_wbuf_free(&b->shared);
  for (size_t m = 0; b->parts && m < n; m++) cli_wbuf_free(&b->parts[m]);
  for (size_t m = 0; b->input_of && m < n; m++) free(b->input_of[m]);
  free(b->parts);
  free(b->desc_of);
  free(b->input_of);
  items_free(&b->descs);
  items_free(&b->inputs);
}

/* Machine m's outputs: where it writes each itself, or, when machine 0
 * writes them (--gather-outputs), the inputs it sends back, no path. */
static void pack_outs(cli_wbuf *pk, const cli_plan *p, bool gather) {
  if (!gather) {
    cli_wbuf_u64(pk, p->nouts);
    for (size_t k = 0; k < p->nouts; k++) {
      cli_wbuf_u64(pk, (uint64_t)p->outs[k].index);
      cli_wbuf_str(pk, p->outs[k].path);
      cli_wbuf_str(pk, p->outs[k].label);
    }
    return;
  }
  uint64_t n = 0;
  for (size_t i = 0; i < p->ninputs; i++) n += p->outputs[i] != SIZE_MAX;
  cli_wbuf_u64(pk, n);
  for (size_t i = 0; i < p->ninputs; i++)
    if (p->outputs[i] != SIZE_MAX) {
      cli_wbuf_u64(pk, i);
      cli_wbuf_str(pk, "");
      cli_wbuf_str(pk, "");
    }
}

/* Who needs what, machine m past 0: its description's item (encoded
 * once) and each input's, by file. false: out of memory; *st: a failed
 * encoding. */
static bool count_users(blobs *b, size_t m, const cli_plan *p, int *st, rig_error *err) {
  if ((b->desc_of[m] = item_of(&b->descs, p->file)) < 0) return false;
  item *d = &b->descs.t.items[b->desc_of[m]];
  if (!d->users++) {
    if (rig_desc_to_bytes(p->desc, &d->owned, &d->len, err) != RIG_OK) {
      *st = CLI_EXIT_FAIL;
      return true;
    }
    d->bytes = d->owned;
  }
  if (!(b->input_of[m] = malloc((p->ninputs + 1) * sizeof **b->input_of))) return false;
  for (size_t i = 0; i < p->ninputs; i++) {
    b->input_of[m][i] = -1;
    if (!p->bytes[i]) continue;
    int64_t k = item_of(&b->inputs, p->in_paths[i]);
    if (k < 0) return false;
    item *it = &b->inputs.t.items[k];
    if (!it->users++) {
      it->bytes = p->bytes[i];
      it->len = (size_t)p->desc->inputs[i].bytes;
    } else if (it->len != (size_t)p->desc->inputs[i].bytes) {
      /* The same file as inputs of other lengths: each its own. */
      it->users--;
      continue;
    }
    b->input_of[m][i] = k;
  }
  return true;
}

/* The shared table: options, then what more than one machine needs. */
static void pack_shared(cli_session *s, blobs *b) {
  cli_wbuf *sh = &b->shared;
  cli_wbuf_u64(sh, s->runs);
  cli_wbuf_u64(sh, s->opts->warmup);
  cli_wbuf_u64(sh, s->opts->json_runs);
  cli_wbuf_u64(sh, s->opts->gather_outputs);
  items *tables[2] = {&b->descs, &b->inputs};
  for (int t = 0; t < 2; t++) {
    uint64_t k = 0;
    for (size_t i = 0; i < tables[t]->t.n; i++)
      if (tables[t]->t.items[i].users > 1) tables[t]->t.items[i].shared = (int64_t)k++;
    cli_wbuf_u64(sh, k);
    for (size_t i = 0; i < tables[t]->t.n; i++)
      if (tables[t]->t.items[i].users > 1)
        cli_wbuf_bytes(sh, tables[t]->t.items[i].bytes, tables[t]->t.items[i].len);
  }
}

/* Machine m's part: its description and inputs (shared or its own), its
 * devices, ints and outputs, and its rail map, resolved here (the
 * description stays shared). */
static void pack_part(const blobs *b, size_t m, const cli_plan *p, bool gather, cli_wbuf *pk) {
  *pk = (cli_wbuf)CLI_WBUF_INIT;
  pack_ref(pk, &b->descs.t.items[b->desc_of[m]]);
  cli_wbuf_str(pk, p->file);
  cli_wbuf_str(pk, p->where);
  cli_wbuf_u64(pk, p->ndevices);
  for (size_t i = 0; i < p->ndevices; i++) cli_wbuf_str(pk, p->devices[i]);
  cli_wbuf_u64(pk, p->nints);
  for (size_t i = 0; i < p->nints; i++)
    cli_wbuf_u64(pk, (uint64_t)p->ints[i].kind), cli_wbuf_u64(pk, (uint64_t)p->ints[i].number);
  cli_wbuf_u64(pk, p->ninputs);
  for (size_t i = 0; i < p->ninputs; i++) {
    int64_t k = b->input_of[m][i];
    if (k >= 0) {
      pack_ref(pk, &b->inputs.t.items[k]);
    } else if (p->bytes[i]) {
      cli_wbuf_u64(pk, REF_OWN);
      cli_wbuf_bytes(pk, p->bytes[i], (size_t)p->desc->inputs[i].bytes);
    } else {
      cli_wbuf_u64(pk, REF_NONE);
    }
  }
  pack_outs(pk, p, gather);
  cli_wbuf_u64(pk, p->rails.given);
  cli_wbuf_u64(pk, p->rails.n);
  for (size_t k = 0; k < p->rails.n; k++) {
    cli_wbuf_u64(pk, (uint64_t)p->rails.pairs[k][0]);
    cli_wbuf_u64(pk, (uint64_t)p->rails.pairs[k][1]);
  }
}

static int make_blobs(cli_session *s, blobs *b, rig_error *err) {
  size_t n = s->n;
  b->descs = (items)RIG_ARRAY_OF_INIT(item, 0);
  b->inputs = (items)RIG_ARRAY_OF_INIT(item, 0);
  b->shared = (cli_wbuf)CLI_WBUF_INIT;
  b->parts = calloc(n, sizeof *b->parts);
  b->desc_of = calloc(n, sizeof *b->desc_of);
  b->input_of = calloc(n, sizeof *b->input_of);
  if (!b->parts || !b->desc_of || !b->input_of) goto oom;
  int st = CLI_EXIT_OK;
  for (size_t m = 1; m < n && st == CLI_EXIT_OK; m++)
    if (!count_users(b, m, &s->plans[m], &st, err)) goto oom;
  if (st != CLI_EXIT_OK) return st;
  pack_shared(s, b);
  for (size_t m = 1; m < n; m++) {
    pack_part(b, m, &s->plans[m], s->opts->gather_outputs, &b->parts[m]);
    if (!b->parts[m].ok) goto oom;
  }
  if (!b->shared.ok) goto oom;
  return CLI_EXIT_OK;
oom:
  rig_error_set(err, RIG_ENOMEM, "out of memory for the machines' plans");
  return CLI_EXIT_FAIL;
}

/* ---- the plans, read back (on an agent) ------------------------------------------- */

/* The shared table as an agent reads it: each entry's bytes. */
typedef struct table {
  const void **bytes;
  size_t *len;
  uint64_t n;
} table;

static bool read_table(cli_rbuf *u, table *t) {
  t->n = cli_rbuf_count(u, 8);
  t->bytes = calloc(t->n + 1, sizeof *t->bytes);
  t->len = calloc(t->n + 1, sizeof *t->len);
  if (!t->bytes || !t->len) return u->ok = false;
  for (uint64_t i = 0; u->ok && i < t->n; i++) t->bytes[i] = cli_rbuf_bytes(u, &t->len[i]);
  return u->ok;
}

/* A reference: the shared entry's bytes, or the bytes that follow. */
static const void *read_ref(cli_rbuf *u, const table *t, size_t *len, bool *none) {
  uint64_t r = cli_rbuf_u64(u);
  *none = r == REF_NONE;
  *len = 0;
  if (!u->ok || *none) return NULL;
  if (r == REF_OWN) return cli_rbuf_bytes(u, len);
  if (r >= t->n) return u->ok = false, NULL;
  *len = t->len[r];
  return t->bytes[r];
}

static void part_free(local_part *p) {
  free(p->file);
  free(p->where);
  for (size_t i = 0; p->devices && i < p->ndevices; i++) free(p->devices[i]);
  free(p->devices);
  free(p->ints);
  for (size_t i = 0; p->inputs && p->desc && i < p->desc->ninputs; i++)
    if (p->owns_input && p->owns_input[i]) free(p->inputs[i]);
  free(p->inputs);
  free(p->owns_input);
  for (size_t k = 0; p->outs && k < p->nouts; k++) free(p->outs[k].path), free(p->outs[k].label);
  free(p->outs);
  cli_rail_map_free(&p->rails);
  /* Last: the inputs' count is the description's. */
  if (p->owns_desc) rig_desc_free(p->desc);
}

/* Machine m's part from its bytes and the shared table: what does not fit
 * (a broken buffer, a description that does not decode) is an error. */
static bool read_part(const void *b, size_t n, const table *descs, const table *inputs,
                      local_part *p, rig_error *err) {
  cli_rbuf u = {b, n, 0, true};
  size_t len;
  bool none;
  const void *d = read_ref(&u, descs, &len, &none);
  if (!u.ok || none) return rig_error_set(err, RIG_EMALFORMED, "a broken plan"), false;
  if (rig_desc_of_bytes(d, len, &p->desc, err) != RIG_OK) return false;
  p->owns_desc = true;
  p->file = cli_rbuf_str(&u);
  p->where = cli_rbuf_str(&u);
  p->ndevices = cli_rbuf_count(&u, 8);
  if (p->ndevices && !(p->devices = calloc(p->ndevices, sizeof *p->devices))) u.ok = false;
  for (size_t i = 0; u.ok && i < p->ndevices; i++) p->devices[i] = cli_rbuf_str(&u);
  p->nints = cli_rbuf_count(&u, 16);
  if (!(p->ints = calloc(p->nints + 1, sizeof *p->ints))) u.ok = false;
  for (size_t i = 0; u.ok && i < p->nints; i++) {
    p->ints[i].kind = (cli_int_kind)cli_rbuf_u64(&u);
    p->ints[i].number = (int64_t)cli_rbuf_u64(&u);
  }
  uint64_t ninputs = cli_rbuf_u64(&u);
  if (u.ok && ninputs != p->desc->ninputs) u.ok = false;
  p->inputs = calloc(p->desc->ninputs + 1, sizeof *p->inputs);
  p->owns_input = calloc(p->desc->ninputs + 1, sizeof *p->owns_input);
  if (!p->inputs || !p->owns_input) u.ok = false;
  for (size_t i = 0; u.ok && i < p->desc->ninputs; i++) {
    const void *in = read_ref(&u, inputs, &len, &none);
    if (!u.ok || none) continue;
    if (len != (size_t)p->desc->inputs[i].bytes || !(p->inputs[i] = malloc(len ? len : 1))) {
      u.ok = false;
      break;
    }
    p->owns_input[i] = true;
    if (len) memcpy(p->inputs[i], in, len);
  }
  p->nouts = cli_rbuf_count(&u, 24);
  if (u.ok && !(p->outs = calloc(p->nouts + 1, sizeof *p->outs))) u.ok = false;
  for (size_t k = 0; u.ok && k < p->nouts; k++) {
    p->outs[k].index = (int64_t)cli_rbuf_u64(&u);
    p->outs[k].path = cli_rbuf_str(&u);
    p->outs[k].label = cli_rbuf_str(&u);
    if (u.ok && (uint64_t)p->outs[k].index >= p->desc->ninputs) u.ok = false;
  }
  p->rails.given = cli_rbuf_u64(&u) != 0;
  p->rails.n = cli_rbuf_count(&u, 16);
  if (u.ok && !(p->rails.pairs = calloc(p->rails.n + 1, sizeof *p->rails.pairs))) u.ok = false;
  for (size_t k = 0; u.ok && k < p->rails.n; k++) {
    p->rails.pairs[k][0] = (int64_t)cli_rbuf_u64(&u);
    p->rails.pairs[k][1] = (int64_t)cli_rbuf_u64(&u);
  }
  if (!u.ok || u.at != u.n) return rig_error_set(err, RIG_EMALFORMED, "a broken plan"), false;
  return true;
}

/* ---- an agent ------------------------------------------------------------------ */

/* The agent's files while it has them, under the hold: what a launcher
 * gone removes. */
static cli_outset *agent_files;

void cli_local_abort_files(void) {
  if (agent_files) cli_outset_abort(agent_files);
}

void cli_local_agent(rig_job *job) {
  int m = rig_job_rank(job);
  rig_error err = {0};
  void *shared = NULL, *mine = NULL;
  size_t nshared = 0, nmine = 0;
  if (rig_job_share(job, &shared, &nshared, &err) != RIG_OK ||
      rig_job_scatter(job, NULL, NULL, &mine, &nmine, &err) != RIG_OK) {
    return;
  }
  local_machine lm = {.job = job};
  local_part part = {.m = m};
  lm.part = &part;
  cli_hold();
  agent_files = &lm.files;
  cli_release();
  table descs = {0}, inputs = {0};
  cli_rbuf u = {shared, nshared, 0, true};
  lm.o.runs = cli_rbuf_u64(&u);
  lm.o.warmup = cli_rbuf_u64(&u);
  lm.o.json_runs = cli_rbuf_u64(&u) != 0;
  lm.o.gather = cli_rbuf_u64(&u) != 0;
  bool ok = read_table(&u, &descs) && read_table(&u, &inputs) && u.at == u.n &&
            read_part(mine, nmine, &descs, &inputs, &part, &err);
  if (!ok) {
    if (u.ok)
      rig_job_fail(job, "%s: %s", rig_job_label(job, m), err.message);
    else
      rig_job_fail(job, "%s: a broken plan from machine 0", rig_job_label(job, m));
  }
  /* Which inputs machine 0 writes for it (--gather-outputs). */
  size_t *outputs = ok ? malloc((part.desc->ninputs + 1) * sizeof *outputs) : NULL;
  if (ok && !outputs) rig_job_fail(job, "%s: out of memory", rig_job_label(job, m)), ok = false;
  for (size_t i = 0; ok && i <= part.desc->ninputs; i++) outputs[i] = SIZE_MAX;
  for (size_t k = 0; ok && k < part.nouts; k++) outputs[part.outs[k].index] = k;
  if (ok) ok = run_machine(&lm, NULL, NULL);
  cli_wbuf results = CLI_WBUF_INIT;
  if (ok) ok = pack_results(&lm, outputs, &results);
  if (ok) ok = rig_job_gather(job, results.b, results.n, NULL, NULL, &err) == RIG_OK;
  if (ok && !lm.o.gather) ok = put_outputs_here(&lm);
  /* Files written in place (a device, a FIFO) cannot wait for the verdict:
   * before it, as one machine's set writes them before its renames. */
  if (ok && !lm.o.gather && cli_outset_in_place(&lm.files, &err) != CLI_EXIT_OK) {
    fail_job(&lm, CLI_EXIT_USAGE, "%s: %s", rig_job_label(job, m), err.message);
    ok = false;
  }
  bool all = false;
  if (ok) ok = rig_job_agree(job, true, &all, &err) == RIG_OK && all;
  cli_hold();
  if (ok && !lm.o.gather && cli_outset_commit(&lm.files, &err) != CLI_EXIT_OK)
    fail_job(&lm, CLI_EXIT_USAGE, "%s: %s", rig_job_label(job, m), err.message);
  if (!ok) cli_outset_abort(&lm.files);
  agent_files = NULL;
  cli_release();
  cli_wbuf_free(&results);
  free(outputs);
  machine_free(&lm);
  part_free(&part);
  free(descs.bytes);
  free(descs.len);
  free(inputs.bytes);
  free(inputs.len);
  free(shared);
  free(mine);
}

/* ---- the controller ------------------------------------------------------------------ */

/* Machine 0's part: its plan as it is. */
static int part_of_plan(const cli_plan *p, local_part *part) {
  part->m = 0;
  part->desc = p->desc; /* the session's */
  part->file = strdup(p->file);
  part->where = strdup(p->where);
  part->devices = NULL;
  part->ndevices = p->ndevices;
  if (p->ndevices && !(part->devices = calloc(p->ndevices, sizeof *part->devices)))
    return CLI_EXIT_FAIL;
  for (size_t i = 0; i < p->ndevices; i++)
    if (!(part->devices[i] = strdup(p->devices[i]))) return CLI_EXIT_FAIL;
  part->ints = calloc(p->nints + 1, sizeof *part->ints);
  part->inputs = calloc(p->ninputs + 1, sizeof *part->inputs);
  part->owns_input = calloc(p->ninputs + 1, sizeof *part->owns_input);
  if (!part->file || !part->where || !part->ints || !part->inputs || !part->owns_input)
    return CLI_EXIT_FAIL;
  if (p->nints) memcpy(part->ints, p->ints, p->nints * sizeof *p->ints);
  part->nints = p->nints;
  for (size_t i = 0; i < p->ninputs; i++) part->inputs[i] = p->bytes[i]; /* the plan's */
  part->rails = (cli_rail_map){p->rails.given, NULL, p->rails.n};
  if (!(part->rails.pairs = calloc(p->rails.n + 1, sizeof *part->rails.pairs)))
    return CLI_EXIT_FAIL;
  if (p->rails.n) memcpy(part->rails.pairs, p->rails.pairs, p->rails.n * sizeof *p->rails.pairs);
  return CLI_EXIT_OK;
}

typedef struct progress_ctx {
  cli_session *s;
  uint64_t start_ns;
} progress_ctx;

/* After run r on every machine: the job's time (its slowest machine's),
 * the progress line. */
static void after_run(void *ctx, uint64_t r, const rig_job_slowest *slow) {
  progress_ctx *pc = ctx;
  cli_session *s = pc->s;
  rig_error err;
  cli_hold();
  if (r >= s->opts->warmup) {
    if (s->measured == 0) s->first_ns = pc->start_ns;
    if (s->run_ns) s->run_ns[s->n][s->measured] = slow->ns;
    cli_times_add(&s->job_times, slow->ns, &err);
    s->measured++;
  }
  s->last_ns = cli_now_ns();
  pc->start_ns = s->last_ns;
  cli_progress_update(&s->bar, r + 1, (long)slow->machine, slow->ns);
  cli_release();
}

/* Machine m's results, as machine 0 gathered them: into the session. */
static int take_results(cli_session *s, size_t m, const void *b, size_t n, rig_error *err) {
  cli_rbuf u = {b, n, 0, true};
  cli_plan *p = &s->plans[m];
  cli_times_get(&u, &s->times[m]);
  uint64_t runs = cli_rbuf_count(&u, 8);
  if (u.ok && s->run_ns && runs != s->runs - s->opts->warmup) u.ok = false;
  for (uint64_t i = 0; u.ok && i < runs; i++) {
    uint64_t ns = cli_rbuf_u64(&u);
    if (s->run_ns) s->run_ns[m][i] = ns;
  }
  uint64_t nd = cli_rbuf_count(&u, 16);
  if (u.ok && nd != p->desc->ndevices) u.ok = false;
  if (u.ok && !(p->used = calloc(nd + 1, sizeof *p->used))) u.ok = false;
  p->nused = u.ok ? nd : 0;
  for (uint64_t i = 0; u.ok && i < nd; i++)
    for (int k = 0; k < 2; k++) {
      char *t = cli_rbuf_str(&u);
      if (t) snprintf(p->used[i][k], sizeof p->used[i][k], "%s", t);
      free(t);
    }
  if (u.ok && s->opts->gather_outputs) {
    uint64_t k = cli_rbuf_count(&u, 16);
    for (uint64_t j = 0; u.ok && j < k; j++) {
      uint64_t i = cli_rbuf_u64(&u);
      size_t len;
      const void *bytes = cli_rbuf_bytes(&u, &len);
      if (!u.ok || i >= p->ninputs || p->outputs[i] == SIZE_MAX) {
        u.ok = false;
        break;
      }
      cli_hold();
      int rc = cli_outset_put(&s->files, p->outputs[i], bytes, len, err);
      cli_release();
      if (rc != CLI_EXIT_OK) return rc;
    }
  }
  if (!u.ok || u.at != u.n) {
    rig_error_set(err, RIG_EJOB, "%s: broken results", rig_job_label(s->job, (int)m));
    return CLI_EXIT_FAIL;
  }
  return CLI_EXIT_OK;
}

/* Every other machine's results, gathered. */
static int gather_results(cli_session *s, local_machine *lm, rig_error *err) {
  void **parts = calloc(s->n, sizeof *parts);
  size_t *lens = calloc(s->n, sizeof *lens);
  int rc = parts && lens ? CLI_EXIT_OK : CLI_EXIT_FAIL;
  if (rc != CLI_EXIT_OK) rig_error_set(err, RIG_ENOMEM, "out of memory");
  if (rc == CLI_EXIT_OK && rig_job_gather(s->job, NULL, 0, parts, lens, err) != RIG_OK)
    rc = CLI_EXIT_FAIL;
  for (size_t m = 1; rc == CLI_EXIT_OK && m < s->n; m++)
    rc = take_results(s, m, parts[m], lens[m], err);
  for (size_t m = 1; parts && m < s->n; m++) free(parts[m]);
  free(parts);
  free(lens);
  /* Machine 0's own. */
  cli_hold();
  if (rc == CLI_EXIT_OK) {
    cli_times_free(&s->times[0]);
    s->times[0] = lm->times;
    lm->times = (cli_times){0};
    if (s->run_ns) memcpy(s->run_ns[0], lm->run_ns, lm->measured * sizeof *lm->run_ns);
    cli_plan *p = &s->plans[0];
    p->used = lm->used;
    p->nused = p->desc->ndevices;
    lm->used = NULL;
  }
  cli_release();
  return rc;
}

/* Every machine's plan: what several need shared down the tree, then
 * each one's part scattered. */
static int send_plans(cli_session *s, blobs *b, rig_error *err) {
  int rc = make_blobs(s, b, err);
  void *shared = b->shared.b;
  size_t nshared = b->shared.n;
  if (rc == CLI_EXIT_OK && rig_job_share(s->job, &shared, &nshared, err) != RIG_OK)
    rc = CLI_EXIT_FAIL;
  if (rc != CLI_EXIT_OK) return rc;
  const void **parts = calloc(s->n, sizeof *parts);
  size_t *lens = calloc(s->n, sizeof *lens);
  for (size_t m = 1; parts && lens && m < s->n; m++)
    parts[m] = b->parts[m].b, lens[m] = b->parts[m].n;
  if (!parts || !lens)
    rc = (rig_error_set(err, RIG_ENOMEM, "out of memory"), CLI_EXIT_FAIL);
  else if (rig_job_scatter(s->job, parts, lens, NULL, NULL, err) != RIG_OK)
    rc = CLI_EXIT_FAIL;
  free(parts);
  free(lens);
  return rc;
}

/* Machine 0's own part, run by the tree, with the progress bar. */
static int run_own(cli_session *s, local_machine *lm, local_part *part, rig_error *err) {
  if (part_of_plan(&s->plans[0], part) != CLI_EXIT_OK)
    return rig_error_set(err, RIG_ENOMEM, "out of memory"), CLI_EXIT_FAIL;
  int rc = CLI_EXIT_OK;
  cli_progress_start(&s->bar, s->opts, s->runs, s->files.has_stderr);
  s->started = (int64_t)time(NULL);
  lm->run_now = &s->run;
  /* Traced: each run's window, which bounds every machine's slices. */
  if (s->traces) {
    lm->room = s->runs < CLI_TRACE_EVENTS ? (size_t)s->runs : CLI_TRACE_EVENTS;
    lm->windows = calloc(lm->room, sizeof *lm->windows);
  }
  progress_ctx pc = {s, cli_now_ns()};
  /* machine 0's outputs are the session's: its plan's, put below. */
  lm->o.gather = true;
  if (!run_machine(lm, after_run, &pc)) {
    rc = CLI_EXIT_FAIL;
    s->failed_run = __atomic_load_n(&s->run, __ATOMIC_ACQUIRE);
    if (!rig_job_failed(s->job, err)) rig_error_set(err, RIG_EJOB, "the runs failed");
  }
  __atomic_store_n(&s->run, -1, __ATOMIC_RELEASE);
  cli_hold();
  cli_progress_end(&s->bar);
  cli_release();
  return rc;
}

/* After the runs: the tree's facts, the trace, every machine's results,
 * machine 0's outputs and the reports; then every machine agrees that its
 * files are whole, and only then do all go. */
static int finish(cli_session *s, local_machine *lm, int rc, rig_error *err) {
  s->windows = lm->windows;
  s->nwindows = lm->nwindows;
  lm->windows = NULL;
  /* What machine 0 sent on the tree in the runs, for the report. */
  rig_job_tree_facts(s->job, &s->tree);
  s->tree.messages = lm->sent;
  s->tree.bytes = lm->sent_bytes;
  rc = cli_trace_end(s, rc, err);
  if (rc == CLI_EXIT_OK) rc = gather_results(s, lm, err);
  if (rc == CLI_EXIT_OK) {
    /* Machine 0's outputs from its program, into the session's files. */
    s->machines[0] = lm->mm;
    rc = cli_put_outputs(s, 1, err);
    s->machines[0] = (cli_machine){0};
  }
  if (rc == CLI_EXIT_OK) rc = cli_put_reports(s, err);
  if (rc == CLI_EXIT_OK) rc = cli_outset_in_place(&s->files, err);
  bool all = false;
  if (rc == CLI_EXIT_OK && (rig_job_agree(s->job, true, &all, err) != RIG_OK || !all))
    rc = CLI_EXIT_FAIL;
  if (rc != CLI_EXIT_OK && !rig_job_failed(s->job, NULL) && err->code == RIG_OK)
    rig_error_set(err, RIG_EJOB, "the job failed");
  return rc;
}

int cli_local_control(cli_session *s, rig_error *err) {
  if (cli_session_make(s) != CLI_EXIT_OK)
    return rig_error_set(err, RIG_ENOMEM, "out of memory"), CLI_EXIT_FAIL;
  int rc = s->opts->trace ? cli_trace_begin(s, err) : CLI_EXIT_OK;
  if (rc == CLI_EXIT_OK) rc = cli_make_rails(s, err);
  blobs b = {0};
  if (rc == CLI_EXIT_OK) rc = send_plans(s, &b, err);
  local_machine lm = {.job = s->job};
  local_part part = {0};
  lm.part = &part;
  lm.o = (local_opts){s->runs, s->opts->warmup, s->opts->json_runs, s->opts->gather_outputs};
  if (rc == CLI_EXIT_OK) rc = run_own(s, &lm, &part, err);
  rc = finish(s, &lm, rc, err);
  machine_free(&lm);
  part_free(&part); /* its description and inputs are the session's */
  blobs_free(&b, s->n);
  return rc;
}

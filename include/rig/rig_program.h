/* rig_program.h: programs, as the seed's Rig_program (Rig_program's OCaml interface;
 * docs/program.md; docs/program.md has a worked example).
 *
 * rig_program_load checks a description against the devices of one
 * machine, makes its memory (one or two copies), loads its images and
 * prepares a submission per Submit step (per copy where it names memory of
 * two copies); rig_program_run runs its steps once over a frame and returns
 * the ends, the points its work ends at. Run n uses copy n mod 2 of memory
 * of two copies, once the work of run n - 2 on that copy is done. */
#ifndef RIG_PROGRAM_H
#define RIG_PROGRAM_H

#include "rig_core.h"
#include "rig_desc.h"
#include "rig_host_abi.h"
#include "rig_rail.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Exported; the rest of librig is hidden (src/librig.map). */
#pragma GCC visibility push(default)

typedef struct rig_program rig_program;

/* What a load would refuse that is found without a device or a rail
 * (`progrun check`), for a description rig_desc_check passed: RIG_EINVAL
 * for an arch that names a device (`devices[0]: "host" names a device,
 * not an arch: ...`); RIG_EREFUSED for an image that is no image of its
 * device's arch (`image 0 (device 0, x86_64): not an ELF shared object
 * (..)`), or a launch or fill of a function its image does not export
 * (`step 4: image 1 has no function "scale_by_in" (it exports:
 * scale_by_int)`). Images are read by their family (host and cpu: ELF
 * dynamic symbols), never run; an arch no family of this build has, or
 * a family that cannot tell without a device (cuda), is left to the
 * load. */
rig_status rig_desc_check_code(const rig_desc *desc, rig_error *err);

/* Loads desc on devices (device i of the description is devices[i]); rails
 * may be NULL (no rail). RIG_EINVAL, before anything is made, for a rule
 * the description breaks (docs/rules.md; also: `<n> devices for a program
 * of <m>`, `device <i>: <name> is "<arch>", not "<expected>"`, `devices of
 * several machines`, `no rail <id> on this machine`), or as a hole's value
 * is filled (`<what>: a hole at byte <at>: its value meets set bits of its
 * bytes`); RIG_EREFUSED for what a device refuses, starting with the
 * device's name or `step <s>: `; RIG_ENOMEM; RIG_ELOST. On failure
 * everything made is released. The program keeps its own copy of desc. */
rig_status rig_program_load(const rig_desc *desc, rig_device *const *devices, size_t ndevices,
                            const rig_rails *rails, rig_program **out, rig_error *err);

/* A run's frame: its inputs by index, the first words of its ints, and
 * where the run stores each Submit step's last point (one element per
 * Submit step, in step order, a loop's body counted once). */
typedef struct rig_frame {
  rig_buffer *const *inputs;
  size_t ninputs;
  const int64_t *ints;
  size_t nints;
  rig_point *step_points;
  size_t nstep_points;
} rig_frame;

/* Runs p's steps once over f. Each device's first submission, and each
 * move, follows `waits`. ends (room for rig_program_devices(p) points)
 * receives, for each device that ran a submission or a move, in device
 * order, the point of its last one; *nends how many. Work the run does on
 * the host is done when it returns.
 *
 * RIG_EINVAL before any step for a frame that does not fit (`<n> inputs for
 * a program of <m>`, `<n> ints for a program of <m>`, `<n> step points for
 * a program of <m> Submit steps`, `input <i>: ...`) or for a run from
 * inside its own run; at a step (`step <s>: ...`) after the earlier steps
 * ran. Allocates nothing once the frame's inputs have been seen. */
rig_status rig_program_run(rig_program *p, const rig_frame *f, const rig_point *waits,
                           size_t nwaits, rig_point *ends, size_t *nends, rig_error *err);

/* A fresh array for the frames' step_points (free() it), each element the
 * reached host point; *n its length (the program's Submit steps). */
rig_point *rig_program_step_points(const rig_program *p, size_t *n);

size_t rig_program_devices(const rig_program *p);
size_t rig_program_submits(const rig_program *p);
const rig_desc *rig_program_desc(const rig_program *p);

/* For each Launch part in step order (a loop's body in place), the most
 * threads a group of its function may have, 0 when its driver does not
 * know; writes at most n and returns how many there are. */
size_t rig_program_threads(const rig_program *p, uint32_t *out, size_t n);

/* The program's memory, images and rail ends return once released and the
 * work of its runs is done. */
void rig_program_release(rig_program *p);

/* ---- Programs of another machine (docs/format.md "The remote binary", "The run
 * words"; docs/program.md last section) ---------------------------------------- */

/* The remote binary of desc for devices of ids `ids` on their machine
 * (malloc'd, freed by the caller). */
rig_status rig_program_remote_binary(const rig_desc *desc, const int64_t *ids, size_t nids,
                                     uint8_t **bytes, size_t *len, rig_error *err);

/* rig_program_load of the description in a remote binary, on the devices
 * device(ctx, id) gives. RIG_EREFUSED for everything refused, rules broken
 * included (another process made the bytes): `not a program another process
 * loads`, `a malformed program at byte <p>: <r>`, `no device <id> on this
 * machine`, the description's own messages. */
rig_status rig_program_load_received(const void *bytes, size_t len,
                                     rig_device *(*device)(void *ctx, int64_t id), void *device_ctx,
                                     const rig_rails *rails, rig_program **out, rig_error *err);

/* One input of a run of another machine: memory `id` on that machine, a
 * view of it. */
typedef struct rig_remote_input {
  uint64_t id, offset, length;
} rig_remote_input;

/* The run words of a run: the program's id, each input, m, and `ints`
 * words (the program's), of which the first m are the frame's (the rest
 * zero). words has room for rig_program_run_words_count(ninputs, ints). */
size_t rig_program_run_words_count(size_t ninputs, size_t ints);
void rig_program_run_words(uint64_t program_id, const rig_remote_input *inputs, size_t ninputs,
                           const int64_t *frame_ints, size_t m, size_t ints, uint64_t *words);

/* Runs the program program(ctx, id) gives for the first word of `words`,
 * over the frame they hold, each input the view of region(ctx, id) at its
 * offset and length. RIG_EREFUSED for malformed words (`a malformed run at
 * byte <p>: <r>`, `no program of this entry`, `no memory <id>`, `<len>
 * bytes at <first> past memory <id>`, `<m> ints for a program of <n>`);
 * otherwise as rig_program_run. */
rig_status rig_program_run_received(const void *words, size_t len,
                                    rig_program *(*program)(void *ctx, uint64_t id),
                                    rig_buffer *(*region)(void *ctx, uint64_t id), void *ctx,
                                    const rig_point *waits, size_t nwaits, rig_point *ends,
                                    size_t *nends, rig_error *err);

/* ---- Tracing (docs/internals.md "Tracing") ---------------------------------- */

/* A bounded record of what this process's runs did, each time in
 * rig_trace_now's nanoseconds. While a trace is the process's sink
 * (rig_trace_set), every run of a program of this machine records a RUN
 * event at its start and a STEP event per Submit or Move step: when its
 * submit was called (begin), when it returned (submitted), and when its
 * point was first seen reached (reached: the submit's return for work done
 * by then, else the first of rig_trace_reached's callers and the trace's
 * observer thread, which polls; 0 when the wait failed or the trace was
 * settled before); a run of a program of another machine records a
 * HANDOVER, its reach that of the run's end there as this machine learns
 * it; a rail of this process records READY and ARRIVED
 * (rig_rail_set_stamp), instants. Without a sink a run tests one pointer
 * and records nothing; with one it allocates nothing: a full trace counts
 * what it drops. */
typedef struct rig_trace rig_trace;

typedef enum rig_trace_kind {
  RIG_TRACE_STEP = 1,     /* a Submit or Move step of a program of this machine */
  RIG_TRACE_RUN = 2,      /* a run's start */
  RIG_TRACE_HANDOVER = 3, /* a run of a program of another machine handed over to it */
  RIG_TRACE_READY = 4,    /* a rail's count made ready, as its put is posted */
  RIG_TRACE_ARRIVED = 5,  /* a rail's count told to the peer's arrived */
} rig_trace_kind;

typedef struct rig_trace_event {
  uint32_t kind;  /* rig_trace_kind */
  uint32_t track; /* STEP, HANDOVER: the device's track (rig_trace_track) */
  int64_t step;   /* STEP: the step's number (pre-order); READY, ARRIVED: the rail; else -1 */
  uint64_t run;   /* the program's run index; READY, ARRIVED: the count */
  uint64_t begin_ns, submitted_ns, reached_ns;
} rig_trace_event;

/* The most devices (tracks) a trace names; a step on another is dropped. */
#define RIG_TRACE_TRACKS 64

/* A trace of room for `capacity` events (1 to 2^24), with its observer
 * thread. RIG_EINVAL for a capacity outside, RIG_ENOMEM, RIG_ESYS. */
rig_status rig_trace_make(size_t capacity, rig_trace **out, rig_error *err);
/* Frees t (not the sink any more: rig_trace_set(NULL) first). */
void rig_trace_free(rig_trace *t);
/* Makes t (or NULL: none) the sink of this process's runs; set it before
 * the runs and take it away after they are done. */
void rig_trace_set(rig_trace *t);
rig_trace *rig_trace_sink(void);
/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t rig_trace_now(void);
/* Tells the sink, if any, that the points pts were seen reached: call it
 * once they were (a wait returned, a report came), before acting on it.
 * Each recorded STEP or HANDOVER whose point is at or before one of them
 * on its device, and not stamped earlier, takes the time now as its reach.
 * Without a sink it costs one load. */
void rig_trace_reached(const rig_point *pts, size_t n);
/* Waits, at most timeout_ms, until the observer has seen every recorded
 * step's point; false when the bound passed (those steps keep reached 0). */
bool rig_trace_settle(rig_trace *t, unsigned timeout_ms);
/* The events recorded (in order), how many were dropped, and the tracks:
 * read them once the runs are done and the trace settled. */
size_t rig_trace_count(const rig_trace *t);
const rig_trace_event *rig_trace_events(const rig_trace *t);
uint64_t rig_trace_dropped(const rig_trace *t);
size_t rig_trace_tracks(const rig_trace *t);
const char *rig_trace_track(const rig_trace *t, size_t i);
/* The trace as bytes (malloc'd), for another process; rig_trace_decode
 * takes them back, refusing (RIG_EINVAL, `a malformed trace: <why>`)
 * anything another encode did not make, or more than `capacity` events. A
 * decoded trace has no observer: it is only read. */
rig_status rig_trace_encode(rig_trace *t, uint8_t **bytes, size_t *len, rig_error *err);
rig_status rig_trace_decode(const void *bytes, size_t len, size_t capacity, rig_trace **out,
                            rig_error *err);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif

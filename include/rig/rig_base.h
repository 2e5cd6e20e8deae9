/* rig_base.h: what every layer of librig shares: status codes, the error
 * record, and the enumerations of the seed's Rig module (buffer kinds and
 * access) that descriptions and the core both name. */
#ifndef RIG_BASE_H
#define RIG_BASE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Exported; the rest of librig is hidden (src/librig.map). */
#pragma GCC visibility push(default)

#define RIG_VERSION_STRING "0.1.0"

/* Every fallible call returns one of these. The seed's Invalid_argument is
 * RIG_EINVAL, its `Error why` RIG_EREFUSED, Rig.Out_of_memory RIG_ENOMEM and
 * Rig.Lost RIG_ELOST. */
typedef enum rig_status {
  RIG_OK = 0,
  RIG_EINVAL,     /* a rule of the description, frame or call is broken */
  RIG_EREFUSED,   /* a device refused (an image, a borrow, a step) */
  RIG_ENOMEM,     /* memory could not be made */
  RIG_ELOST,      /* a device is lost */
  RIG_EMALFORMED, /* bytes or text that do not decode */
  RIG_ESYS,       /* the operating system failed a call */
  RIG_EJOB,       /* the MPI job failed; the message is its root cause */
} rig_status;

#define RIG_ERROR_MESSAGE_MAX 512

/* Filled by a failing call when the caller passes one; fixed size so that
 * reporting an error never allocates. */
typedef struct rig_error {
  rig_status code;
  char message[RIG_ERROR_MESSAGE_MAX];
} rig_error;

/* The name of a status ("RIG_EINVAL"). */
const char *rig_status_name(rig_status s);

/* Sets *err (when non-NULL) to code and the formatted message; returns code.
 * A message longer than the record is cut with "...". */
rig_status rig_error_set(rig_error *err, rig_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
rig_status rig_error_setv(rig_error *err, rig_status code, const char *fmt, va_list ap);

/* Puts "<prefix>: " before the message already in *err; returns its code. */
rig_status rig_error_prefix(rig_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* ---- The log (docs/environment.md, RIG_LOG) ------------------------------
 * What librig has to say beside a call's status (how a job's runs go, a
 * transport's warnings, with RIG_TRACE=1 every control frame): one line at
 * a time, each whole. By default lines go to stderr through a thread of
 * the log's own, so that a stderr that blocks never holds a thread of
 * librig (a job's beats); lines that find no room are counted and the
 * count said. */
typedef enum rig_log_level {
  RIG_LOG_ERROR = 0,
  RIG_LOG_WARN,
  RIG_LOG_INFO,
  RIG_LOG_DEBUG,
} rig_log_level;

/* A handler: gets every line logged (its level at most RIG_LOG's), the
 * prefix first ("progrun: ..."), no newline. It is called from any thread
 * of librig, may not call librig, and should not block. */
typedef void rig_log_fn(void *ctx, rig_log_level level, const char *line);
/* Sends the lines to fn (NULL: to stderr again). */
void rig_log_set_handler(rig_log_fn *fn, void *ctx);
/* The words each line starts with, before ": " (default "librig"; the
 * progrun command says "progrun"); "" for none. */
void rig_log_set_prefix(const char *prefix);
/* Waits up to timeout_s seconds for the lines on their way to stderr to be
 * written (before a process leaves with _exit); whether they were. */
bool rig_log_flush(double timeout_s);
/* "error", "warn", "info", "debug". */
const char *rig_log_level_name(rig_log_level level);

/* Whether the RIG_* variables librig reads (docs/environment.md) are
 * valid: RIG_EINVAL naming the first that is not ("RIG_JOB_SILENCE=0.5:
 * below the beat of 1 s"). The environment is read once, at the first call
 * of the library that needs it; rig_device_open, rig_program_load and
 * rig_job_start refuse to go on with an invalid one. */
rig_status rig_environment_check(rig_error *err);

/* Rig.Buffer.kind. */
typedef enum rig_buffer_kind {
  RIG_KIND_DEVICE = 0, /* the device's own memory */
  RIG_KIND_PINNED = 1, /* host memory both the host and the device address */
  RIG_KIND_MAPPED = 2, /* device memory the host also addresses */
} rig_buffer_kind;

/* Rig.access. */
typedef enum rig_access {
  RIG_ACCESS_READ = 0,
  RIG_ACCESS_READ_WRITE = 1,
} rig_access;

/* How work uses memory (the seed's `use`; Rig.Submission.read, write,
 * unordered): an Unordered use reads and writes in an order the device does
 * not impose: it is ordered as a write, but two Unordered uses need not be
 * ordered against each other. */
typedef enum rig_use {
  RIG_USE_READ = 0,
  RIG_USE_WRITE = 1,
  RIG_USE_UNORDERED = 2,
} rig_use;

/* The seed's integers are OCaml ints: 63-bit two's complement. */
#define RIG_INT_MAX ((int64_t)((UINT64_C(1) << 62) - 1))
#define RIG_INT_MIN (-RIG_INT_MAX - 1)

static inline int rig_int_fits(int64_t v) {
  return v >= RIG_INT_MIN && v <= RIG_INT_MAX;
}

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif

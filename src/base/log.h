/* log.h: librig's log, leveled (RIG_LOG; RIG_TRACE=1 is debug), each
 * line whole, to the application's handler or to stderr without ever
 * blocking the caller (log.c). The public half is in rig_base.h. Private
 * to librig: no other librig file writes to stderr. */
#ifndef RIG_BASE_LOG_H
#define RIG_BASE_LOG_H

#include <stdbool.h>

#include "rig/rig_base.h"

/* The longest line, its prefix included; longer ones are cut. */
#define RIG_LOG_LINE_MAX 1024

/* Whether lines of this level are logged (RIG_LOG, RIG_TRACE). */
bool rig_log_enabled(rig_log_level level);
/* A line "<prefix>: <text>", when its level is logged. */
void rig_log(rig_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A line of another library's own format (UCX's), without the prefix. */
void rig_log_raw(rig_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A line written to stderr at once, whatever waits (an assertion's, just
 * before the process aborts). */
void rig_log_now(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif

/* The failure of a rig_assert (assert.h): an invariant of librig broken,
 * a bug, so the process ends where it is seen. */
#include "assert.h"

#include <stdlib.h>

#include "log.h"

void rig_assert_fail(const char *what, const char *file, int line, const char *function) {
  rig_log_now("librig: %s:%d: %s: assertion `%s` failed", file, line, function, what);
  abort();
}

/* The unit a time is shown in: on its own, so that the tests can check
 * its choice without a run. */
#include <stdio.h>

#include "cli.h"

/* The largest unit in which the value rounds to at least 1, and below 1000
 * in it once rounded (999.96 us is "1.0 ms", never "1000.0 us"): ns whole,
 * us and ms with one decimal, s with two. */
const char *cli_format_ns(double ns, char *buf, size_t size) {
  if (ns < 999.5)
    snprintf(buf, size, "%.0f ns", ns < 0 ? 0.0 : ns);
  else if (ns < 999950.0)
    snprintf(buf, size, "%.1f us", ns / 1e3);
  else if (ns < 999950000.0)
    snprintf(buf, size, "%.1f ms", ns / 1e6);
  else
    snprintf(buf, size, "%.2f s", ns / 1e9);
  return buf;
}

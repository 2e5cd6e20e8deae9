/* bytes.h: a number of bytes as messages say it. Private to librig (never
 * installed). */
#ifndef RIG_BASE_BYTES_H
#define RIG_BASE_BYTES_H

#include <stdint.h>
#include <stdio.h>

/* Bytes as a person reads them: "40 GiB", "512 MiB", "100 bytes". */
static inline void rig_say_bytes(uint64_t n, char *out, size_t size) {
  static const char *const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  double v = (double)n;
  while (v >= 1024 && u < 6) v /= 1024, u++;
  snprintf(out, size, "%.4g %s", v, units[u]);
}

#endif

/* PCI bus ids read (pci.h): strictly, since hwloc is asked about exactly
 * the numbers read, and a text that is not an id must match no device. */
#include "pci.h"

#include <stddef.h>

static int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* 1 to `most` hex digits at *s, then `end`; moves *s past both. */
static bool field(const char **s, int most, char end, unsigned *out) {
  unsigned v = 0;
  int n = 0;
  for (int d; n < most && (d = hex_digit(**s)) >= 0; n++, (*s)++) v = v * 16 + (unsigned)d;
  if (n == 0 || **s != end) return false;
  if (end) (*s)++;
  *out = v;
  return true;
}

bool rig_pci_parse(const char *text, rig_pci_id *id) {
  if (!text) return false;
  /* The domain is there when two colons are. */
  size_t colons = 0;
  for (const char *c = text; *c; c++) colons += *c == ':';
  rig_pci_id p = {0, 0, 0, 0};
  const char *s = text;
  if (colons == 2 && !field(&s, 8, ':', &p.domain)) return false;
  if (colons != 1 && colons != 2) return false;
  if (!field(&s, 2, ':', &p.bus) || !field(&s, 2, '.', &p.device) ||
      !field(&s, 1, '\0', &p.function))
    return false;
  if (p.device > 0x1f || p.function > 7) return false;
  *id = p;
  return true;
}

/* A program outside the project that uses the installed librig: builds an
 * empty description, encodes it, and checks the bytes start with the magic. */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>

#include <rig/rig_desc.h>

int main(void) {
  rig_desc *d = rig_desc_create();
  if (!d) return 1;
  uint8_t *bytes = NULL;
  size_t len = 0;
  rig_error err;
  if (rig_desc_to_bytes(d, &bytes, &len, &err) != RIG_OK) {
    fprintf(stderr, "consumer: %s\n", err.message);
    return 1;
  }
  rig_desc_free(d);
  /* Magic, version and six empty counts: 12 + 8 + 6 * 8 bytes. */
  assert(len == 68);
  int ok = rig_desc_is_bytes(bytes, len);
  free(bytes);
  if (!ok) {
    fprintf(stderr, "consumer: the bytes do not start with the magic\n");
    return 1;
  }
  puts("ok");
  return 0;
}

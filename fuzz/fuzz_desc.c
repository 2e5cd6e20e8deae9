/* fuzz_desc: libFuzzer target for the description layer (codec, JSON text,
 * checker). Bytes that decode must check without crashing and round-trip
 * exactly, through the bytes and through the JSON text; any other input is
 * tried as JSON text, and what it decodes to must check and round-trip
 * through the bytes. A broken round trip aborts. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rig/rig_desc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

__attribute__((noreturn)) static void broken(const char *what, const rig_error *err) {
  fprintf(stderr, "fuzz_desc: %s%s%s\n", what, err ? ": " : "", err ? err->message : "");
  abort();
}

/* d's bytes, which must exist (d decoded from bytes or JSON text). */
static uint8_t *bytes_of(const rig_desc *d, size_t *len, const char *what) {
  uint8_t *bytes = NULL;
  rig_error err;
  rig_status st = rig_desc_to_bytes(d, &bytes, len, &err);
  if (st == RIG_ENOMEM) return NULL;
  if (st != RIG_OK) broken(what, &err);
  return bytes;
}

static bool same(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen) {
  return alen == blen && memcmp(a, b, alen) == 0;
}

/* The bytes `data` decoded to d: bytes again, then JSON text and back. */
static void round_trip_bytes(const rig_desc *d, const uint8_t *data, size_t size) {
  size_t len = 0;
  uint8_t *bytes = bytes_of(d, &len, "a decoded description does not encode");
  if (!bytes) return;
  if (!same(bytes, len, data, size)) broken("bytes -> desc -> bytes differ", NULL);
  free(bytes);

  char *text = NULL;
  rig_error err;
  rig_status st = rig_desc_to_json(d, &text, &err);
  if (st == RIG_ENOMEM) return;
  if (st != RIG_OK) broken("a decoded description has no JSON text", &err);
  rig_desc *back = NULL;
  st = rig_desc_of_json(text, strlen(text), NULL, &back, &err);
  free(text);
  if (st == RIG_ENOMEM) return;
  if (st != RIG_OK) broken("a description's JSON text does not read back", &err);
  bytes = bytes_of(back, &len, "a description read from JSON does not encode");
  rig_desc_free(back);
  if (!bytes) return;
  if (!same(bytes, len, data, size)) broken("bytes -> JSON -> bytes differ", NULL);
  free(bytes);
}

/* Text that read as JSON to d: its bytes decode back to the same bytes. */
static void round_trip_json(const rig_desc *d) {
  size_t len = 0;
  uint8_t *bytes = bytes_of(d, &len, "a description read from JSON does not encode");
  if (!bytes) return;
  rig_desc *back = NULL;
  rig_error err;
  rig_status st = rig_desc_of_bytes(bytes, len, &back, &err);
  if (st == RIG_ENOMEM) {
    free(bytes);
    return;
  }
  if (st != RIG_OK) broken("the bytes of a description do not decode", &err);
  size_t len2 = 0;
  uint8_t *bytes2 = bytes_of(back, &len2, "a decoded description does not encode");
  rig_desc_free(back);
  if (bytes2 && !same(bytes, len, bytes2, len2)) broken("JSON -> bytes -> bytes differ", NULL);
  free(bytes2);
  free(bytes);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  rig_desc *d = NULL;
  rig_error err;
  if (rig_desc_is_bytes(data, size)) {
    if (rig_desc_of_bytes(data, size, &d, &err) != RIG_OK) return 0;
    (void)rig_desc_check(d, &err);
    round_trip_bytes(d, data, size);
    rig_desc_free(d);
    return 0;
  }
  /* Not bytes: try it as JSON text, NUL-terminated. */
  char *text = malloc(size + 1);
  if (!text) return 0;
  if (size) memcpy(text, data, size);
  text[size] = '\0';
  rig_status st = rig_desc_of_json(text, size, NULL, &d, &err);
  free(text);
  if (st != RIG_OK) return 0;
  (void)rig_desc_check(d, &err);
  round_trip_json(d);
  rig_desc_free(d);
  return 0;
}

/* Private to src/desc: the JSON reader's walk (json_read.c), shared with
 * the files that read one part of the schema (json_params.c, a part's
 * typed parameters). Every jr_ function reads at the reader's current JSON
 * path, and a failure unwinds with longjmp (desc_internal.h says why that
 * is safe), so that none of them returns a status. */
#ifndef RIG_DESC_JSON_READ_H
#define RIG_DESC_JSON_READ_H

#include <jansson.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "desc_internal.h"

/* Loops 64 deep with every index 20 digits take under 2100 bytes. */
#define PATH_ROOM 4096

typedef struct reader {
  rig_desc_arena *arena;
  const char *base_dir;
  jmp_buf fail;
  bool nomem;
  bool leaves;         /* reading a leaf data's holes: terms are bare leaves */
  int depth;           /* of the loop bodies being read */
  uint64_t file_bytes; /* of the {"file": ...} read so far */
  char path[PATH_ROOM];
  size_t plen;
  char why[RIG_ERROR_MESSAGE_MAX];
} reader;

/* Each reader of a part of the schema reads j (at the current path) into
 * out. */
typedef void read_fn(reader *r, json_t *j, void *out);

/* A record's field names, for jr_record(). */
#define FIELDS(...) ((const char *const[]){__VA_ARGS__, NULL})
#define NAMES(...)  ((const char *const[]){__VA_ARGS__})

/* A variant type: its name for messages and its constructors' names;
 * `nullary` has bit i set when constructor i has no arguments. */
typedef struct variant {
  const char *what;
  const char *const *names;
  unsigned count;
  unsigned nullary;
} variant;

extern const variant jr_width_v, jr_use_v;

/* "<path>: <reason>", then unwinds; out of memory unwinds as such. */
__attribute__((noreturn, format(printf, 2, 3))) void jr_fail(reader *r, const char *fmt, ...);
__attribute__((noreturn)) void jr_fail_nomem(reader *r);

/* A string of the input for a message, quoted and cut (out: QUOTE_ROOM). */
#define QUOTE_ROOM 72
const char *jr_quote(const char *s, char *out, size_t size);

/* The path grows by a key or an index; each returns the mark to go back to. */
size_t jr_path_key(reader *r, const char *key);
size_t jr_path_index(reader *r, size_t i);
void jr_path_back(reader *r, size_t mark);

/* An object with only the given fields (NULL-terminated). */
void jr_record(reader *r, json_t *j, const char *const *fields);
/* obj's field key, or the failure that it is missing. */
json_t *jr_need(reader *r, json_t *obj, const char *key);
/* The field `key` of a record, read by fn with the path ending in it; the
 * optional one leaves out unchanged when the field is absent. */
void jr_field(reader *r, json_t *obj, const char *key, read_fn *fn, void *out);
void jr_opt_field(reader *r, json_t *obj, const char *key, read_fn *fn, void *out);
/* Element i of an array, read by fn with the path ending in [i]. */
void jr_element(reader *r, json_t *arr, size_t i, read_fn *fn, void *out);
/* The constructor of an enumeration in the field `key` of obj. */
unsigned jr_enum_field(reader *r, json_t *obj, const char *key, const variant *v);

/* Readers of the schema's types (out: an int64_t, a rig_desc_leaf, a
 * rig_desc_terms of values). */
read_fn jr_read_int, jr_read_leaf, jr_read_terms;

/* One typed value ({"u32": 7}, {"hex": "00ff"}) into out (only checked when
 * out is NULL); its count of bytes. */
size_t jr_typed_value(reader *r, json_t *j, uint8_t *out);

/* A part's params written as a list of typed parameters (json_params.c):
 * its data and its refs, each at the place the list gives it. */
void jr_read_params(reader *r, json_t *list, rig_desc_data *params, rig_desc_ref **refs,
                    size_t *nrefs);

#endif

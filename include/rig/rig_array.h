/* rig_array.h: a growable array, the one librig's layers share instead of
 * each writing its own realloc, and the one an application (progrun among
 * them) may use too. It never aborts: a growth that cannot be (out of
 * memory, count * size past SIZE_MAX, past the array's bound) answers
 * false and leaves the items as they were. Room grows geometrically, and
 * an array with room left allocates nothing, so that what a run needs is
 * made before it (reserved) and the run itself never allocates. Not
 * locked: its owner's lock covers it.
 *
 * Typed: RIG_ARRAY_OF(T) is an array of T whose items are `T *` (x.t.items,
 * x.t.n) and whose operations are the untyped core's on x.a; RIG_ARRAY_PUSH
 * type-checks what it appends, RIG_ARRAY_AT checks the index. */
#ifndef RIG_ARRAY_H
#define RIG_ARRAY_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

typedef struct rig_array {
  void *items; /* malloc's: n items, room for `room` */
  size_t n, room;
  size_t size; /* of one item */
  size_t max;  /* the most items it may hold; 0: as many as memory allows */
} rig_array;

/* An empty array of items of type T, at most `max` of them (0: no bound
 * but memory), as an initializer (a static array's too). */
#define RIG_ARRAY_INIT(T, max)                                                                     \
  { NULL, 0, 0, sizeof(T), (max) }

/* Empty, of items of `size` bytes, at most `max` (0: no bound). */
void rig_array_init(rig_array *a, size_t size, size_t max);
/* Frees the items; the array is empty again, and may be used again. */
void rig_array_free(rig_array *a);

/* Room for `more` items past the n held: allocates only when the room is
 * short, then at least doubles it (up to the bound). False: none made. */
bool rig_array_reserve(rig_array *a, size_t more);
/* Appends `count` items copied from `items` (false: none appended). */
bool rig_array_append(rig_array *a, const void *items, size_t count);
/* Appends one item, copied from `item`. */
static inline bool rig_array_push(rig_array *a, const void *item) {
  return rig_array_append(a, item, 1);
}
/* n items: those past the old n are zeroed (false: n is as it was). */
bool rig_array_resize(rig_array *a, size_t n);
/* Removes item i: the last item takes its place (the order is not kept). */
void rig_array_remove(rig_array *a, size_t i);
/* The items, the caller's to free(); the array is left empty. */
void *rig_array_take(rig_array *a);
/* i, once checked to be below a's n (an index past it aborts with a
 * message: a bug, never an input's fault). */
size_t rig_array_index(const rig_array *a, size_t i);

/* Item i's place (i < n, or < room for a reserved place). */
static inline void *rig_array_at(const rig_array *a, size_t i) {
  return (char *)a->items + i * a->size;
}

/* ---- typed ----------------------------------------------------------------- */

/* An array of T: `a` for the operations above, `t` to read its items as
 * T (the two share one layout). */
#define RIG_ARRAY_OF(T)                                                                            \
  union {                                                                                          \
    rig_array a;                                                                                   \
    struct {                                                                                       \
      T *items;                                                                                    \
      size_t n, room, size, max;                                                                   \
    } t;                                                                                           \
  }

/* An empty typed array of T, at most `max` items (0: no bound). */
#define RIG_ARRAY_OF_INIT(T, max)                                                                  \
  {                                                                                                \
    .a = RIG_ARRAY_INIT(T, max)                                                                    \
  }

/* Appends `item` (a T, type-checked by the assignment) to the typed array
 * *x: false when it cannot grow, nothing appended. */
#define RIG_ARRAY_PUSH(x, item)                                                                    \
  (rig_array_reserve(&(x)->a, 1) ? ((x)->t.items[(x)->t.n++] = (item), true) : false)

/* Item i of the typed array *x, as an lvalue of T; i checked below n. */
#define RIG_ARRAY_AT(x, i) ((x)->t.items[rig_array_index(&(x)->a, (i))])

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif

/* What every layer shares (src/base): the environment's table, read
 * through a lookup of the test's own (the process's environment is read
 * once per process), and its page, docs/environment.md; the log; the base
 * kit: arrays, id tables, PCI bus ids and the process's topology. */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/array.h"
#include "base/copy.h"
#include "base/env.h"
#include "base/idtab.h"
#include "base/log.h"
#include "base/pci.h"
#include "base/topology.h"
#include "rig_test.h"

/* The environment a test reads: NAME=value pairs. */
static const char *const *given;

static const char *lookup(const char *name) {
  size_t n = strlen(name);
  for (const char *const *v = given; v && *v; v++)
    if (strncmp(*v, name, n) == 0 && (*v)[n] == '=') return *v + n + 1;
  return NULL;
}

static rig_status read_env(const char *const *vars, rig_env *env, rig_error *err) {
  given = vars;
  return rig_env_read(lookup, env, err);
}

static void test_unset_variables_take_their_defaults(void) {
  rig_env env;
  rig_error err = {0};
  CU_ASSERT_EQUAL(read_env(NULL, &env, &err), RIG_OK);
  CU_ASSERT_EQUAL(env.workers, 0);
  CU_ASSERT_EQUAL(env.cpu_devices, 2);
  CU_ASSERT_EQUAL(env.job_silence, 10.0);
  CU_ASSERT_FALSE(env.trace);
  CU_ASSERT_TRUE(env.job_express);
  CU_ASSERT_STRING_EQUAL(env.cuda_library, "");
  CU_ASSERT_STRING_EQUAL(env.ucx_tls, "");
  CU_ASSERT_EQUAL(env.log_level, RIG_LOG_WARN);
}

static void test_valid_values_are_read(void) {
  static const char *const vars[] = {
      "RIG_WORKERS=3", "RIG_CPU_DEVICES=0",    "RIG_JOB_SILENCE=3",
      "RIG_TRACE=1",   "RIG_JOB_EXPRESS=0",    "RIG_CUDA_LIBRARY=/opt/x/libcuda.so",
      "RIG_LOG=info",  "RIG_UCX_TLS=tcp,self", NULL};
  rig_env env;
  rig_error err = {0};
  CU_ASSERT_EQUAL(read_env(vars, &env, &err), RIG_OK);
  CU_ASSERT_EQUAL(env.workers, 3);
  CU_ASSERT_EQUAL(env.cpu_devices, 0);
  CU_ASSERT_EQUAL(env.job_silence, 3.0);
  CU_ASSERT_TRUE(env.trace);
  CU_ASSERT_FALSE(env.job_express);
  CU_ASSERT_STRING_EQUAL(env.cuda_library, "/opt/x/libcuda.so");
  CU_ASSERT_EQUAL(env.log_level, RIG_LOG_INFO);
  CU_ASSERT_STRING_EQUAL(env.ucx_tls, "tcp,self");
}

/* A bound of 1.01 s was taken, and a healthy job then failed: a machine
 * is heard once a beat (1 s), late by its scheduling. */
static void test_a_silence_bound_below_three_beats_is_refused_by_name(void) {
  static const struct {
    const char *var, *message;
  } cases[] = {
      {"RIG_JOB_SILENCE=1.01", "RIG_JOB_SILENCE=1.01: below 3 s, three of the job's 1 s beats"},
      {"RIG_JOB_SILENCE=2.99", "RIG_JOB_SILENCE=2.99: below 3 s, three of the job's 1 s beats"},
      {"RIG_JOB_SILENCE=-5", "RIG_JOB_SILENCE=-5: below 3 s, three of the job's 1 s beats"},
      {"RIG_JOB_SILENCE=86401", "RIG_JOB_SILENCE=86401: above 86400 s"},
      {"RIG_JOB_SILENCE=abc", "RIG_JOB_SILENCE=abc: not a number of seconds"},
      {"RIG_JOB_SILENCE=nan", "RIG_JOB_SILENCE=nan: not a number of seconds"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    const char *vars[] = {cases[i].var, NULL};
    rig_env env;
    rig_error err = {0};
    RIG_ASSERT_ERROR(read_env(vars, &env, &err), err, RIG_EINVAL, cases[i].message);
    CU_ASSERT_EQUAL(env.job_silence, 10.0); /* the default stays */
  }
}

static void test_each_kind_of_variable_refuses_a_bad_value_by_name(void) {
  static const struct {
    const char *var, *message;
  } cases[] = {
      {"RIG_WORKERS=abc", "RIG_WORKERS=abc: not a count"},
      {"RIG_WORKERS=0", "RIG_WORKERS=0: outside 1..4096"},
      {"RIG_CPU_DEVICES=-1", "RIG_CPU_DEVICES=-1: not a count"},
      {"RIG_CPU_DEVICES=999", "RIG_CPU_DEVICES=999: outside 0..256"},
      {"RIG_TRACE=yes", "RIG_TRACE=yes: neither 0 nor 1"},
      {"RIG_JOB_EXPRESS=", "RIG_JOB_EXPRESS=: neither 0 nor 1"},
      {"RIG_LOG=verbose", "RIG_LOG=verbose: not error, warn, info or debug"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    const char *vars[] = {cases[i].var, NULL};
    rig_env env;
    rig_error err = {0};
    RIG_ASSERT_ERROR(read_env(vars, &env, &err), err, RIG_EINVAL, cases[i].message);
  }
  static char library[RIG_ENV_PATH_MAX + 32] = "RIG_CUDA_LIBRARY=";
  memset(library + strlen(library), 'a', RIG_ENV_PATH_MAX);
  const char *vars[] = {library, NULL};
  rig_env env;
  rig_error err = {0};
  CU_ASSERT_EQUAL(read_env(vars, &env, &err), RIG_EINVAL);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.message, ": longer than 4095 bytes"));
  CU_ASSERT_STRING_EQUAL(env.cuda_library, "");
}

/* The first invalid variable is the one named; the others still hold
 * valid values. */
static void test_the_first_invalid_variable_is_named_and_the_rest_are_read(void) {
  static const char *const vars[] = {"RIG_TRACE=2", "RIG_WORKERS=x", "RIG_CPU_DEVICES=5", NULL};
  rig_env env;
  rig_error err = {0};
  RIG_ASSERT_ERROR(read_env(vars, &env, &err), err, RIG_EINVAL, "RIG_WORKERS=x: not a count");
  CU_ASSERT_EQUAL(env.cpu_devices, 5);
  CU_ASSERT_FALSE(env.trace);
}

/* ---- the log --------------------------------------------------------------- */

typedef struct caught {
  int n;
  rig_log_level level[4];
  char line[4][RIG_LOG_LINE_MAX];
} caught;

static void catch_line(void *ctx, rig_log_level level, const char *line) {
  caught *c = ctx;
  if (c->n < 4) {
    c->level[c->n] = level;
    snprintf(c->line[c->n], sizeof c->line[c->n], "%s", line);
  }
  c->n++;
}

/* The process's RIG_LOG is unset: warn. */
static void test_a_log_line_reaches_the_handler_whole_with_its_prefix_and_level(void) {
  caught c = {0};
  rig_log_set_prefix("tester");
  rig_log_set_handler(catch_line, &c);
  rig_log(RIG_LOG_WARN, "machine %d: a %s\n", 3, "warning");
  rig_log(RIG_LOG_INFO, "not logged at warn");
  rig_log(RIG_LOG_DEBUG, "nor this");
  rig_log_raw(RIG_LOG_ERROR, "[ucx] its own format");
  rig_log_set_handler(NULL, NULL);
  rig_log_set_prefix("librig");
  CU_ASSERT_EQUAL(c.n, 2);
  CU_ASSERT_EQUAL(c.level[0], RIG_LOG_WARN);
  CU_ASSERT_STRING_EQUAL(c.line[0], "tester: machine 3: a warning");
  CU_ASSERT_EQUAL(c.level[1], RIG_LOG_ERROR);
  CU_ASSERT_STRING_EQUAL(c.line[1], "[ucx] its own format");
}

typedef struct flood {
  int lines;
  _Atomic bool done;
} flood;

static void *log_flood(void *arg) {
  flood *f = arg;
  char text[400];
  memset(text, 'x', sizeof text - 1);
  text[sizeof text - 1] = '\0';
  for (int i = 0; i < f->lines; i++) rig_log(RIG_LOG_WARN, "%d %s", i, text);
  atomic_store(&f->done, true);
  return NULL;
}

/* stderr a pipe nobody reads (a launcher stopped): a thread that logs
 * far more than the pipe and the log hold is never held; once the pipe is
 * read again, the lines come whole, each on its own, then the count of
 * those dropped. */
static void test_a_stderr_nobody_reads_never_holds_a_thread_that_logs(void) {
  int p[2];
  CU_ASSERT_EQUAL_FATAL(pipe(p), 0);
  fflush(stderr);
  int saved = dup(2);
  CU_ASSERT_FATAL(saved >= 0);
  dup2(p[1], 2);
  rig_log_set_prefix("tester");
  flood f = {.lines = 4000};
  pthread_t t;
  pthread_create(&t, NULL, log_flood, &f);
  /* Not read until the thread is done: with a blocking stderr it never
   * would be (the suite's timeout ends it). */
  pthread_join(t, NULL);
  CU_ASSERT_TRUE(atomic_load(&f.done));
  fcntl(p[0], F_SETFL, O_NONBLOCK);
  size_t room = 1 << 22, n = 0;
  char *got = calloc(1, room + 1);
  CU_ASSERT_PTR_NOT_NULL_FATAL(got);
  for (int idle = 0; idle < 200 && n < room;) {
    ssize_t k = read(p[0], got + n, room - n);
    if (k > 0) {
      n += (size_t)k;
      idle = 0;
      if (strstr(got, " log lines dropped: stderr took none\n")) break;
    } else {
      rig_log_flush(0.01);
      idle++;
    }
  }
  dup2(saved, 2);
  close(saved);
  rig_log_set_prefix("librig");
  CU_ASSERT_PTR_NOT_NULL(strstr(got, "tester: 0 xxx"));
  CU_ASSERT_PTR_NOT_NULL(strstr(got, " log lines dropped: stderr took none\n"));
  /* Every line whole: each starts with the prefix. */
  bool whole = true;
  for (char *line = got; *line; line = strchr(line, '\n') + 1) {
    if (strncmp(line, "tester: ", 8) != 0) whole = false;
    if (!strchr(line, '\n')) break;
  }
  CU_ASSERT_TRUE(whole);
  free(got);
  rig_log_flush(1.0);
  close(p[0]);
  close(p[1]);
}

/* The table of docs/environment.md, from its head row to its last. */
static char *doc_table(const char *doc) {
  const char *start = strstr(doc, "| variable |");
  if (!start) return NULL;
  const char *end = start;
  while (*end == '|') {
    const char *nl = strchr(end, '\n');
    end = nl ? nl + 1 : end + strlen(end);
  }
  return strndup(start, (size_t)(end - start));
}

static void test_the_doc_shows_the_environment_table_as_it_is(void) {
  char path[4096];
  size_t len = 0;
  char *doc =
      rig_test_read_file(rig_test_source_path("docs/environment.md", path, sizeof path), &len);
  CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
  char *text = realloc(doc, len + 1);
  CU_ASSERT_PTR_NOT_NULL_FATAL(text);
  text[len] = '\0';
  char *shown = doc_table(text);
  char *table = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&table, &n);
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  rig_env_markdown(f);
  fclose(f);
  CU_ASSERT_PTR_NOT_NULL(shown);
  CU_ASSERT_STRING_EQUAL(shown ? shown : "", table);
  if (!shown || strcmp(shown, table) != 0)
    fprintf(stderr, "docs/environment.md's table should read:\n%s", table);
  free(shown);
  free(table);
  free(text);
}

/* ---- the growable array ----------------------------------------------------------------- */

static void test_an_array_keeps_what_was_pushed_in_order(void) {
  rig_array a = RIG_ARRAY_INIT(uint64_t, 0);
  for (uint64_t i = 0; i < 1000; i++) CU_ASSERT_TRUE_FATAL(rig_array_push(&a, &i));
  CU_ASSERT_EQUAL(a.n, 1000);
  bool in_order = true;
  for (size_t i = 0; i < a.n; i++) in_order &= *(uint64_t *)rig_array_at(&a, i) == i;
  CU_ASSERT_TRUE(in_order);
  rig_array_free(&a);
}

static void test_an_array_with_room_left_allocates_nothing(void) {
  rig_array a;
  rig_array_init(&a, sizeof(int), 0);
  CU_ASSERT_TRUE_FATAL(rig_array_reserve(&a, 100));
  void *items = a.items;
  size_t room = a.room;
  for (int i = 0; i < 100; i++) CU_ASSERT_TRUE(rig_array_push(&a, &i));
  CU_ASSERT_TRUE(rig_array_reserve(&a, 0));
  CU_ASSERT_PTR_EQUAL(a.items, items);
  CU_ASSERT_EQUAL(a.room, room);
  rig_array_free(&a);
}

static void test_a_full_array_at_least_doubles_its_room(void) {
  rig_array a = RIG_ARRAY_INIT(char, 0);
  char c = 'x';
  for (int i = 0; i < 5000; i++) {
    size_t room = a.room;
    CU_ASSERT_TRUE_FATAL(rig_array_push(&a, &c));
    if (a.room != room && room) CU_ASSERT(a.room >= 2 * room);
  }
  rig_array_free(&a);
}

static void test_an_array_past_its_bound_refuses_and_keeps_its_items(void) {
  rig_array a = RIG_ARRAY_INIT(int, 4);
  for (int i = 0; i < 4; i++) CU_ASSERT_TRUE(rig_array_push(&a, &i));
  int five = 5, more[2] = {6, 7};
  CU_ASSERT_FALSE(rig_array_push(&a, &five));
  CU_ASSERT_FALSE(rig_array_append(&a, more, 2));
  CU_ASSERT_FALSE(rig_array_resize(&a, 5));
  CU_ASSERT_EQUAL(a.n, 4);
  CU_ASSERT(a.room <= 4);
  for (int i = 0; i < 4; i++) CU_ASSERT_EQUAL(*(int *)rig_array_at(&a, (size_t)i), i);
  rig_array_free(&a);
}

static void test_an_array_refuses_a_count_whose_bytes_overflow(void) {
  rig_array a = RIG_ARRAY_INIT(uint64_t, 0);
  uint64_t one = 1;
  CU_ASSERT_TRUE_FATAL(rig_array_push(&a, &one));
  CU_ASSERT_FALSE(rig_array_reserve(&a, SIZE_MAX / 8));
  CU_ASSERT_FALSE(rig_array_reserve(&a, SIZE_MAX));
  CU_ASSERT_FALSE(rig_array_resize(&a, SIZE_MAX));
  CU_ASSERT_EQUAL(a.n, 1);
  CU_ASSERT_EQUAL(*(uint64_t *)rig_array_at(&a, 0), 1);
  rig_array_free(&a);
}

static void test_an_array_resized_larger_holds_zeroes_past_its_items(void) {
  rig_array a = RIG_ARRAY_INIT(uint32_t, 0);
  uint32_t v = 0xffffffffu;
  CU_ASSERT_TRUE_FATAL(rig_array_push(&a, &v));
  CU_ASSERT_TRUE_FATAL(rig_array_resize(&a, 0));
  CU_ASSERT_TRUE_FATAL(rig_array_resize(&a, 300));
  uint32_t any = 0;
  for (size_t i = 0; i < a.n; i++) any |= *(uint32_t *)rig_array_at(&a, i);
  CU_ASSERT_EQUAL(a.n, 300);
  CU_ASSERT_EQUAL(any, 0);
  rig_array_free(&a);
}

static void test_an_item_removed_gives_its_place_to_the_last(void) {
  rig_array a = RIG_ARRAY_INIT(int, 0);
  int items[] = {10, 11, 12, 13};
  CU_ASSERT_TRUE_FATAL(rig_array_append(&a, items, 4));
  rig_array_remove(&a, 1);
  CU_ASSERT_EQUAL(a.n, 3);
  CU_ASSERT_EQUAL(*(int *)rig_array_at(&a, 1), 13);
  rig_array_remove(&a, 2);
  CU_ASSERT_EQUAL(a.n, 2);
  CU_ASSERT_EQUAL(*(int *)rig_array_at(&a, 0), 10);
  CU_ASSERT_EQUAL(*(int *)rig_array_at(&a, 1), 13);
  rig_array_free(&a);
}

/* A typed array (rig_array.h) appends values of its type, reads them back
 * by a checked index, and refuses a push past its bound, keeping its items. */
static void test_a_typed_array_pushes_and_reads_its_type(void) {
  typedef struct pair {
    int a;
    double b;
  } pair;
  RIG_ARRAY_OF(pair) x = RIG_ARRAY_OF_INIT(pair, 100);
  for (int i = 0; i < 100; i++) CU_ASSERT_TRUE(RIG_ARRAY_PUSH(&x, ((pair){i, i / 2.0})));
  CU_ASSERT_FALSE(RIG_ARRAY_PUSH(&x, ((pair){-1, 0})));
  CU_ASSERT_EQUAL(x.t.n, 100);
  size_t bad = 0;
  for (int i = 0; i < 100; i++)
    bad += RIG_ARRAY_AT(&x, i).a != i || RIG_ARRAY_AT(&x, i).b != i / 2.0;
  CU_ASSERT_EQUAL(bad, 0);
  RIG_ARRAY_AT(&x, 7).a = 70;
  CU_ASSERT_EQUAL(x.t.items[7].a, 70);
  rig_array_free(&x.a);
  CU_ASSERT_EQUAL(x.t.n, 0);
}

static void test_an_arrays_items_taken_are_the_callers_and_leave_it_empty(void) {
  rig_array a = RIG_ARRAY_INIT(char, 0);
  CU_ASSERT_TRUE_FATAL(rig_array_append(&a, "abc", 4));
  char *text = rig_array_take(&a);
  CU_ASSERT_STRING_EQUAL(text, "abc");
  CU_ASSERT_PTR_NULL(a.items);
  CU_ASSERT_EQUAL(a.n, 0);
  CU_ASSERT_EQUAL(a.room, 0);
  free(text);
  CU_ASSERT_TRUE(rig_array_push(&a, "d")); /* usable again */
  rig_array_free(&a);
}

/* ---- the id table ----------------------------------------------------------------------- */

static void test_an_id_table_gives_back_what_it_was_given(void) {
  rig_idtab t;
  rig_idtab_init(&t, 0);
  int things[200];
  uint64_t ids[200];
  for (int i = 0; i < 200; i++) CU_ASSERT_TRUE_FATAL(rig_idtab_add(&t, &things[i], &ids[i]));
  bool all = true;
  for (int i = 0; i < 200; i++) all &= rig_idtab_get(&t, ids[i]) == &things[i];
  CU_ASSERT_TRUE(all);
  rig_idtab_free(&t);
}

static void test_an_id_table_counts_ids_from_one_and_never_gives_one_twice(void) {
  rig_idtab t;
  rig_idtab_init(&t, 0);
  int a, b, c;
  uint64_t ia, ib, ic;
  CU_ASSERT_TRUE_FATAL(rig_idtab_add(&t, &a, &ia));
  CU_ASSERT_TRUE_FATAL(rig_idtab_add(&t, &b, &ib));
  CU_ASSERT_PTR_EQUAL(rig_idtab_take(&t, ib), &b);
  CU_ASSERT_TRUE_FATAL(rig_idtab_add(&t, &c, &ic));
  CU_ASSERT_EQUAL(ia, 1);
  CU_ASSERT_EQUAL(ib, 2);
  CU_ASSERT_EQUAL(ic, 3);
  CU_ASSERT_EQUAL(rig_idtab_end(&t), 4);
  rig_idtab_free(&t);
}

static void test_an_id_taken_holds_nothing(void) {
  rig_idtab t;
  rig_idtab_init(&t, 0);
  int a;
  uint64_t id;
  CU_ASSERT_TRUE_FATAL(rig_idtab_add(&t, &a, &id));
  CU_ASSERT_PTR_EQUAL(rig_idtab_take(&t, id), &a);
  CU_ASSERT_PTR_NULL(rig_idtab_get(&t, id));
  CU_ASSERT_PTR_NULL(rig_idtab_take(&t, id));
  rig_idtab_free(&t);
}

static void test_an_id_put_past_the_end_leaves_the_ids_below_it_empty(void) {
  rig_idtab t;
  rig_idtab_init(&t, 0);
  int a, b;
  CU_ASSERT_TRUE_FATAL(rig_idtab_put(&t, 70, &a));
  CU_ASSERT_PTR_EQUAL(rig_idtab_get(&t, 70), &a);
  bool empty = true;
  for (uint64_t id = 1; id < 70; id++) empty &= rig_idtab_get(&t, id) == NULL;
  CU_ASSERT_TRUE(empty);
  CU_ASSERT_TRUE(rig_idtab_put(&t, 3, &b));
  CU_ASSERT_PTR_EQUAL(rig_idtab_get(&t, 3), &b);
  CU_ASSERT_PTR_EQUAL(rig_idtab_get(&t, 70), &a);
  rig_idtab_free(&t);
}

static void test_an_id_table_refuses_id_0_and_ids_past_its_bound(void) {
  rig_idtab t;
  rig_idtab_init(&t, 8);
  int a;
  uint64_t id;
  CU_ASSERT_FALSE(rig_idtab_put(&t, 0, &a));
  CU_ASSERT_FALSE(rig_idtab_put(&t, 9, &a));
  CU_ASSERT_FALSE(rig_idtab_put(&t, UINT64_MAX, &a));
  CU_ASSERT_TRUE(rig_idtab_put(&t, 8, &a));
  CU_ASSERT_FALSE(rig_idtab_add(&t, &a, &id));
  CU_ASSERT_PTR_EQUAL(rig_idtab_get(&t, 8), &a);
  rig_idtab_free(&t);
}

static void test_an_id_never_given_holds_nothing(void) {
  rig_idtab t;
  rig_idtab_init(&t, 0);
  int a;
  uint64_t id;
  CU_ASSERT_PTR_NULL(rig_idtab_get(&t, 1));
  CU_ASSERT_TRUE_FATAL(rig_idtab_add(&t, &a, &id));
  CU_ASSERT_PTR_NULL(rig_idtab_get(&t, 0));
  CU_ASSERT_PTR_NULL(rig_idtab_get(&t, 2));
  CU_ASSERT_PTR_NULL(rig_idtab_get(&t, UINT64_MAX));
  rig_idtab_free(&t);
}

/* ---- PCI bus ids ------------------------------------------------------------------------ */

/* A bulk copy (base/copy.h) moves exactly its bytes, on either side of its
 * string-move bound and at odd offsets, and writes nothing past them. */
static void test_a_bulk_copy_moves_exactly_its_bytes(void) {
  size_t lens[] = {0, 1, 4099, RIG_COPY_BULK_MIN - 1, RIG_COPY_BULK_MIN, RIG_COPY_BULK_MIN + 77};
  size_t cap = RIG_COPY_BULK_MIN + 128;
  unsigned char *src = malloc(cap), *dst = malloc(cap);
  CU_ASSERT_PTR_NOT_NULL_FATAL(src);
  CU_ASSERT_PTR_NOT_NULL_FATAL(dst);
  for (size_t i = 0; i < cap; i++) src[i] = (unsigned char)(i * 131 + 7);
  for (size_t k = 0; k < sizeof lens / sizeof *lens; k++) {
    memset(dst, 0xee, cap);
    rig_copy_bulk(dst + 3, src + 5, lens[k]);
    size_t bad = 0;
    for (size_t i = 0; i < cap; i++) {
      unsigned char want = i >= 3 && i < 3 + lens[k] ? src[i + 2] : 0xee;
      bad += dst[i] != want;
    }
    CU_ASSERT_EQUAL(bad, 0);
  }
  free(src);
  free(dst);
}

static void test_a_pci_bus_id_with_a_domain_and_one_without_parse_alike(void) {
  rig_pci_id with, without;
  CU_ASSERT_TRUE_FATAL(rig_pci_parse("0000:3b:1f.7", &with));
  CU_ASSERT_TRUE_FATAL(rig_pci_parse("3b:1f.7", &without));
  CU_ASSERT_EQUAL(with.domain, 0);
  CU_ASSERT_EQUAL(with.bus, 0x3b);
  CU_ASSERT_EQUAL(with.device, 0x1f);
  CU_ASSERT_EQUAL(with.function, 7);
  CU_ASSERT_EQUAL(memcmp(&with, &without, sizeof with), 0);
}

static void test_a_pci_bus_id_reads_its_domain_and_either_case(void) {
  rig_pci_id id;
  CU_ASSERT_TRUE_FATAL(rig_pci_parse("0001C000:AB:0A.1", &id)); /* NVML's eight digits */
  CU_ASSERT_EQUAL(id.domain, 0x1c000);
  CU_ASSERT_EQUAL(id.bus, 0xab);
  CU_ASSERT_EQUAL(id.device, 0xa);
  CU_ASSERT_EQUAL(id.function, 1);
}

static void test_malformed_pci_bus_ids_are_refused(void) {
  static const char *const bad[] = {"",
                                    "0000:3b:00",
                                    "0000:3b:00.",
                                    "0000:3b.00.0",
                                    "3b.00.0",
                                    "00.0",
                                    " 0000:3b:00.0",
                                    "0000:3b:00.0 ",
                                    "0000:3b:00.0\n",
                                    "0000:3b:00.8",
                                    "0000:3b:20.0",
                                    "000000000:3b:00.0",
                                    "0000:13b:00.0",
                                    "0000:3g:00.0",
                                    "0:0:3b:00.0",
                                    "0000::00.0",
                                    "0x3b:00.0",
                                    "-1:00.0",
                                    "0000:3b:00.00",
                                    "+3b:00.0"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    rig_pci_id id = {9, 9, 9, 9};
    bool parsed = rig_pci_parse(bad[i], &id);
    CU_ASSERT_FALSE(parsed);
    if (parsed) fprintf(stderr, "\"%s\" parsed\n", bad[i]);
    CU_ASSERT_EQUAL(id.domain + id.bus + id.device + id.function, 36); /* left as it was */
  }
  rig_pci_id id;
  CU_ASSERT_FALSE(rig_pci_parse(NULL, &id));
}

/* ---- the topology ----------------------------------------------------------------------- */

static void *ask_topology(void *out) {
  *(hwloc_topology_t *)out = rig_topology();
  return NULL;
}

static void test_the_topology_is_loaded_once_per_process(void) {
  enum { THREADS = 8 };
  pthread_t t[THREADS];
  hwloc_topology_t got[THREADS];
  for (int i = 0; i < THREADS; i++)
    CU_ASSERT_EQUAL_FATAL(pthread_create(&t[i], NULL, ask_topology, &got[i]), 0);
  for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
  bool same = true;
  for (int i = 0; i < THREADS; i++) same &= got[i] == rig_topology();
  CU_ASSERT_TRUE(same);
  CU_ASSERT_EQUAL(rig_topology_loads(), 1);
}

static void test_a_pci_device_the_machine_lacks_sits_nowhere(void) {
  rig_pci_id id;
  CU_ASSERT_TRUE_FATAL(rig_pci_parse("ffff:ff:1f.7", &id));
  CU_ASSERT_PTR_NULL(rig_topology_near(&id));
}

void rig_test_register(void) {
  static CU_TestInfo env[] = {
      {"unset variables take their defaults", test_unset_variables_take_their_defaults},
      {"valid values are read", test_valid_values_are_read},
      {"a silence bound below three beats is refused by name",
       test_a_silence_bound_below_three_beats_is_refused_by_name},
      {"each kind of variable refuses a bad value by name",
       test_each_kind_of_variable_refuses_a_bad_value_by_name},
      {"the first invalid variable is named and the rest are read",
       test_the_first_invalid_variable_is_named_and_the_rest_are_read},
      {"the doc shows the environment table as it is",
       test_the_doc_shows_the_environment_table_as_it_is},
      {"a log line reaches the handler whole, with its prefix and level",
       test_a_log_line_reaches_the_handler_whole_with_its_prefix_and_level},
      {"a stderr nobody reads never holds a thread that logs",
       test_a_stderr_nobody_reads_never_holds_a_thread_that_logs},
      CU_TEST_INFO_NULL,
  };
  rig_test_add_suite("environment", env);
  static CU_TestInfo kit[] = {
      {"an array keeps what was pushed, in order", test_an_array_keeps_what_was_pushed_in_order},
      {"an array with room left allocates nothing", test_an_array_with_room_left_allocates_nothing},
      {"a full array at least doubles its room", test_a_full_array_at_least_doubles_its_room},
      {"an array past its bound refuses and keeps its items",
       test_an_array_past_its_bound_refuses_and_keeps_its_items},
      {"an array refuses a count whose bytes overflow",
       test_an_array_refuses_a_count_whose_bytes_overflow},
      {"an array resized larger holds zeroes past its items",
       test_an_array_resized_larger_holds_zeroes_past_its_items},
      {"an item removed gives its place to the last",
       test_an_item_removed_gives_its_place_to_the_last},
      {"a typed array pushes and reads its type", test_a_typed_array_pushes_and_reads_its_type},
      {"an array's items taken are the caller's and leave it empty",
       test_an_arrays_items_taken_are_the_callers_and_leave_it_empty},
      {"an id table gives back what it was given", test_an_id_table_gives_back_what_it_was_given},
      {"an id table counts ids from one and never gives one twice",
       test_an_id_table_counts_ids_from_one_and_never_gives_one_twice},
      {"an id taken holds nothing", test_an_id_taken_holds_nothing},
      {"an id put past the end leaves the ids below it empty",
       test_an_id_put_past_the_end_leaves_the_ids_below_it_empty},
      {"an id table refuses id 0 and ids past its bound",
       test_an_id_table_refuses_id_0_and_ids_past_its_bound},
      {"an id never given holds nothing", test_an_id_never_given_holds_nothing},
      {"a PCI bus id with a domain and one without parse alike",
       test_a_pci_bus_id_with_a_domain_and_one_without_parse_alike},
      {"a PCI bus id reads its domain and either case",
       test_a_pci_bus_id_reads_its_domain_and_either_case},
      {"malformed PCI bus ids are refused", test_malformed_pci_bus_ids_are_refused},
      {"a bulk copy moves exactly its bytes", test_a_bulk_copy_moves_exactly_its_bytes},
      {"the topology is loaded once per process", test_the_topology_is_loaded_once_per_process},
      {"a PCI device the machine lacks sits nowhere",
       test_a_pci_device_the_machine_lacks_sits_nowhere},
      CU_TEST_INFO_NULL,
  };
  rig_test_add_suite("base kit", kit);
}

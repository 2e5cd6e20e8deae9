/* What every layer shares (src/base): the environment's table, read
 * through a lookup of the test's own (the process's environment is read
 * once per process), and its page, docs/environment.md. */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/env.h"
#include "base/log.h"
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
}

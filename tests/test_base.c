/* What every layer shares (src/base): the environment's table, read
 * through a lookup of the test's own (the process's environment is read
 * once per process), and its page, docs/environment.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/env.h"
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
}

static void test_valid_values_are_read(void) {
  static const char *const vars[] = {"RIG_WORKERS=3",
                                     "RIG_CPU_DEVICES=0",
                                     "RIG_JOB_SILENCE=3",
                                     "RIG_TRACE=1",
                                     "RIG_JOB_EXPRESS=0",
                                     "RIG_CUDA_LIBRARY=/opt/x/libcuda.so",
                                     NULL};
  rig_env env;
  rig_error err = {0};
  CU_ASSERT_EQUAL(read_env(vars, &env, &err), RIG_OK);
  CU_ASSERT_EQUAL(env.workers, 3);
  CU_ASSERT_EQUAL(env.cpu_devices, 0);
  CU_ASSERT_EQUAL(env.job_silence, 3.0);
  CU_ASSERT_TRUE(env.trace);
  CU_ASSERT_FALSE(env.job_express);
  CU_ASSERT_STRING_EQUAL(env.cuda_library, "/opt/x/libcuda.so");
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
      CU_TEST_INFO_NULL,
  };
  rig_test_add_suite("environment", env);
}

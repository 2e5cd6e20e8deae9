/* rig_run.h: a description file run on this machine in one call, as
 * `progrun run` runs it. The build tree's examples/saxpy.json (its kernels
 * beside it) is run and its output checked against the same arithmetic;
 * every refusal is checked by its status and its whole message, and a
 * failure is checked to leave every output as it was. */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rig/rig_desc.h"
#include "rig/rig_run.h"
#include "rig_test.h"

enum { N = 1024, BYTES = N * 4 };

/* ---- files ---------------------------------------------------------------- */

/* One temporary directory for the whole binary, removed at exit even when a
 * fatal assertion cut a test short. */
static char tmp_dir[256];

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st;
  (void)flag;
  (void)ftw;
  return remove(path);
}

static void tmp_remove(void) {
  if (tmp_dir[0]) nftw(tmp_dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

static const char *tmp_path(const char *name, char *buf, size_t size) {
  if (!tmp_dir[0]) {
    const char *base = getenv("TMPDIR");
    snprintf(tmp_dir, sizeof tmp_dir, "%s/rig-run-XXXXXX", base && *base ? base : "/tmp");
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(tmp_dir));
    atexit(tmp_remove);
  }
  snprintf(buf, size, "%s/%s", tmp_dir, name);
  return buf;
}

static void write_file(const char *path, const void *bytes, size_t len) {
  FILE *f = fopen(path, "wb");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  CU_ASSERT_EQUAL(fwrite(bytes, 1, len, f), len);
  CU_ASSERT_EQUAL(fclose(f), 0);
}

/* The file is exactly `want`'s n bytes. */
static bool file_is(const char *path, const void *want, size_t n) {
  size_t got = 0;
  uint8_t *b = rig_test_read_file(path, &got);
  bool same = b && got == n && memcmp(b, want, n) == 0;
  free(b);
  return same;
}

/* How many entries a folder holds (its temporaries included). */
static size_t entries(const char *dir) {
  DIR *d = opendir(dir);
  size_t n = 0;
  for (struct dirent *e; d && (e = readdir(d));)
    n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
  if (d) closedir(d);
  return n;
}

static const char *saxpy(char *buf, size_t size) {
  return rig_test_binary_path("examples/saxpy.json", buf, size);
}

/* ---- saxpy ---------------------------------------------------------------- */

/* What a run of saxpy.json makes of x (tests/test_cli.c): y = x, then each
 * trip t: y = 2x + y, x = 1.5x + t. */
static void saxpy_expect(const float *x0, size_t n, int64_t trips, float *y) {
  for (size_t i = 0; i < n; i++) {
    float x = x0[i], v = x0[i];
    for (int64_t t = 0; t < trips; t++) {
      v = 2.0f * x + v;
      x = x * 1.5f + (float)t;
    }
    y[i] = v;
  }
}

/* x = 0, 1, 2, ... into a file; its path in buf. */
static const char *x_file(const char *name, size_t floats, char *buf, size_t size) {
  float x[N];
  for (size_t i = 0; i < N; i++) x[i] = (float)(i % 97) - 40.0f;
  write_file(tmp_path(name, buf, size), x, floats * sizeof *x);
  return buf;
}

/* saxpy.json run `runs` times with ints `ints`, input 0 from `in` and
 * input 1 out to `out`. */
static rig_status run_saxpy(uint64_t runs, rig_run_int trips, const char *in, const char *out,
                            rig_error *err) {
  char ex[4096];
  rig_run_io inputs[] = {{0, in}}, outputs[] = {{1, out}};
  rig_run_options o = {.size = sizeof o,
                       .runs = runs,
                       .ints = &trips,
                       .nints = 1,
                       .inputs = inputs,
                       .ninputs = in ? 1 : 0,
                       .outputs = outputs,
                       .noutputs = 1};
  return rig_run_file(saxpy(ex, sizeof ex), &o, err);
}

static void test_saxpy_writes_what_its_runs_compute(void) {
  char xp[4096], yp[4096];
  rig_error err = {0};
  x_file("x.bin", N, xp, sizeof xp);
  tmp_path("y.bin", yp, sizeof yp);
  rig_status st = run_saxpy(3, rig_run_number(4), xp, yp, &err);
  CU_ASSERT_EQUAL_FATAL(st, RIG_OK);
  float x[N], y[N];
  size_t n = 0;
  float *got = rig_test_read_file(xp, &n);
  CU_ASSERT_PTR_NOT_NULL_FATAL(got);
  memcpy(x, got, sizeof x);
  free(got);
  saxpy_expect(x, N, 4, y);
  CU_ASSERT(file_is(yp, y, sizeof y));
}

static void test_a_run_index_int_is_each_runs_index(void) {
  char xp[4096], yp[4096];
  rig_error err = {0};
  x_file("x-index.bin", N, xp, sizeof xp);
  tmp_path("y-index.bin", yp, sizeof yp);
  /* The last run, run 2, makes 2 trips. */
  CU_ASSERT_EQUAL_FATAL(run_saxpy(3, rig_run_index(), xp, yp, &err), RIG_OK);
  float x[N], y[N];
  for (size_t i = 0; i < N; i++) x[i] = (float)(i % 97) - 40.0f;
  saxpy_expect(x, N, 2, y);
  CU_ASSERT(file_is(yp, y, sizeof y));
}

static void test_a_shorter_input_file_is_zeros_past_its_end(void) {
  char xp[4096], yp[4096];
  rig_error err = {0};
  x_file("x-half.bin", N / 2, xp, sizeof xp);
  tmp_path("y-half.bin", yp, sizeof yp);
  CU_ASSERT_EQUAL_FATAL(run_saxpy(1, rig_run_number(3), xp, yp, &err), RIG_OK);
  float x[N] = {0}, y[N];
  for (size_t i = 0; i < N / 2; i++) x[i] = (float)(i % 97) - 40.0f;
  saxpy_expect(x, N, 3, y);
  CU_ASSERT(file_is(yp, y, sizeof y));
}

static void test_inputs_not_given_are_zeros_and_ints_not_given_0(void) {
  char ex[4096], yp[4096];
  rig_run_io outputs[] = {{1, tmp_path("y-zeros.bin", yp, sizeof yp)}};
  rig_run_options o = {.size = sizeof o, .outputs = outputs, .noutputs = 1};
  rig_error err = {0};
  CU_ASSERT_EQUAL_FATAL(rig_run_file(saxpy(ex, sizeof ex), &o, &err), RIG_OK);
  static const float zeros[N];
  CU_ASSERT(file_is(yp, zeros, sizeof zeros));
}

static void test_times_hold_each_runs_time(void) {
  char ex[4096];
  uint64_t times[4] = {0, 0, 0, UINT64_MAX};
  rig_run_options o = {.size = sizeof o, .runs = 3, .times = times, .ntimes = 3};
  rig_error err = {0};
  CU_ASSERT_EQUAL_FATAL(rig_run_file(saxpy(ex, sizeof ex), &o, &err), RIG_OK);
  CU_ASSERT(times[0] > 0 && times[1] > 0 && times[2] > 0);
  CU_ASSERT_EQUAL(times[3], UINT64_MAX); /* past the runs: untouched */
}

static void test_no_options_run_once_on_devices_by_arch(void) {
  char ex[4096];
  rig_error err = {0};
  CU_ASSERT_EQUAL(rig_run_file(saxpy(ex, sizeof ex), NULL, &err), RIG_OK);
}

/* Options built against an older rig_run.h, shorter than this one by a
 * field librig added since, run with that field zero. */
static void test_options_of_an_older_size_run_with_the_rest_zero(void) {
  char ex[4096];
  uint64_t times[2] = {0, 0};
  rig_error err = {0};
  rig_run_options o = {.size = sizeof o, .runs = 2, .times = times, .ntimes = 2};
  CU_ASSERT_EQUAL_FATAL(rig_run_file(saxpy(ex, sizeof ex), &o, &err), RIG_OK);
  CU_ASSERT(times[0] > 0 && times[1] > 0);
  /* The first size librig took: through ntimes. */
  o.size = offsetof(rig_run_options, ntimes) + sizeof(size_t);
  times[0] = times[1] = 0;
  CU_ASSERT_EQUAL_FATAL(rig_run_file(saxpy(ex, sizeof ex), &o, &err), RIG_OK);
  CU_ASSERT(times[0] > 0 && times[1] > 0);
}

/* ---- refusals --------------------------------------------------------------- */

static void test_options_without_their_size_are_refused(void) {
  char ex[4096], want[256];
  rig_error err = {0};
  rig_run_options o = {.runs = 2};
  snprintf(want, sizeof want,
           "options: 0 bytes, fewer than the %zu of the first rig_run_options: set .size = "
           "sizeof (rig_run_options)",
           offsetof(rig_run_options, ntimes) + sizeof(size_t));
  RIG_ASSERT_ERROR(rig_run_file(saxpy(ex, sizeof ex), &o, &err), err, RIG_EINVAL, want);
}

/* A newer caller's options, with a field this librig does not know set. */
static void test_options_set_past_the_fields_librig_knows_are_refused(void) {
  char ex[4096], want[256];
  rig_error err = {0};
  struct {
    rig_run_options o;
    uint64_t newer;
  } n = {.o = {.size = sizeof n, .runs = 1}, .newer = 7};
  snprintf(want, sizeof want,
           "options: %zu bytes, set past the %zu this librig knows (a newer rig_run.h)", sizeof n,
           sizeof n.o);
  RIG_ASSERT_ERROR(rig_run_file(saxpy(ex, sizeof ex), &n.o, &err), err, RIG_EINVAL, want);
  n.newer = 0; /* a newer field left zero is what this librig does anyway */
  CU_ASSERT_EQUAL(rig_run_file(saxpy(ex, sizeof ex), &n.o, &err), RIG_OK);
}

static void test_a_missing_input_file_names_the_input_and_the_file(void) {
  char missing[4096], yp[4096], want[16384];
  rig_error err = {0};
  tmp_path("no-such-x.bin", missing, sizeof missing);
  tmp_path("y-missing.bin", yp, sizeof yp);
  snprintf(want, sizeof want, "input 0=%s: cannot read %s: %s", missing, missing, strerror(ENOENT));
  RIG_ASSERT_ERROR(run_saxpy(1, rig_run_number(4), missing, yp, &err), err, RIG_ESYS, want);
  CU_ASSERT_EQUAL(access(yp, F_OK), -1); /* no output written */
}

static void test_an_input_file_longer_than_its_input_is_refused(void) {
  char big[4096], ex[4096], want[16384];
  static const uint8_t bytes[BYTES + 1];
  write_file(tmp_path("big.bin", big, sizeof big), bytes, sizeof bytes);
  rig_run_io inputs[] = {{1, big}};
  rig_run_options o = {.size = sizeof o, .inputs = inputs, .ninputs = 1};
  rig_error err = {0};
  snprintf(want, sizeof want, "input 1=%s: 4097 bytes, more than the input's 4096", big);
  RIG_ASSERT_ERROR(rig_run_file(saxpy(ex, sizeof ex), &o, &err), err, RIG_EINVAL, want);
}

static void test_a_device_name_that_does_not_open_names_the_field(void) {
  char ex[4096], want[16384];
  const char *names[] = {"host", "nope"};
  rig_run_options o = {.size = sizeof o, .devices = names, .ndevices = 2};
  rig_error err = {0};
  snprintf(want, sizeof want, "%s: devices: nope: no such device", saxpy(ex, sizeof ex));
  RIG_ASSERT_ERROR(rig_run_file(ex, &o, &err), err, RIG_EINVAL, want);
}

static void test_a_named_device_of_another_arch_is_refused(void) {
  char ex[4096], want[16384];
  const char *names[] = {"cpu:0", "cpu:1"};
  rig_run_options o = {.size = sizeof o, .devices = names, .ndevices = 2};
  rig_error err = {0};
  snprintf(want, sizeof want, "%s: devices: device 0: cpu:0 is \"cpu-%s\", not \"%s\"",
           saxpy(ex, sizeof ex), rig_host_isa(), rig_host_isa());
  RIG_ASSERT_ERROR(rig_run_file(ex, &o, &err), err, RIG_EINVAL, want);
}

static void test_an_output_whose_folder_is_missing_is_refused_before_any_run(void) {
  char ex[4096], yp[4096], dir[4096], want[16384];
  tmp_path("no-dir", dir, sizeof dir);
  tmp_path("no-dir/y.bin", yp, sizeof yp);
  rig_run_io outputs[] = {{1, yp}};
  uint64_t times[1] = {UINT64_MAX};
  rig_run_options o = {
      .size = sizeof o, .outputs = outputs, .noutputs = 1, .times = times, .ntimes = 1};
  rig_error err = {0};
  snprintf(want, sizeof want, "cannot write %s: its folder %s does not exist", yp, dir);
  RIG_ASSERT_ERROR(rig_run_file(saxpy(ex, sizeof ex), &o, &err), err, RIG_ESYS, want);
  CU_ASSERT_EQUAL(times[0], UINT64_MAX); /* no run */
}

static void test_one_file_for_two_outputs_is_refused(void) {
  char ex[4096], yp[4096], want[16384];
  tmp_path("y-twice.bin", yp, sizeof yp);
  rig_run_io outputs[] = {{0, yp}, {1, yp}};
  rig_run_options o = {.size = sizeof o, .outputs = outputs, .noutputs = 2};
  rig_error err = {0};
  snprintf(want, sizeof want, "output 1=%s: the same file as output 0=%s", yp, yp);
  RIG_ASSERT_ERROR(rig_run_file(saxpy(ex, sizeof ex), &o, &err), err, RIG_EINVAL, want);
}

static void test_an_input_past_the_programs_is_refused_naming_the_file(void) {
  char ex[4096], want[16384];
  rig_run_io inputs[] = {{2, "/dev/null"}};
  rig_run_options o = {.size = sizeof o, .inputs = inputs, .ninputs = 1};
  rig_error err = {0};
  snprintf(want, sizeof want, "%s: input 2: no such input (the program has 2)",
           saxpy(ex, sizeof ex));
  RIG_ASSERT_ERROR(rig_run_file(ex, &o, &err), err, RIG_EINVAL, want);
}

static void test_more_ints_than_the_programs_are_refused(void) {
  char ex[4096], want[16384];
  rig_run_int ints[] = {rig_run_number(1), rig_run_number(2), rig_run_number(3)};
  rig_run_options o = {.size = sizeof o, .ints = ints, .nints = 3};
  rig_error err = {0};
  snprintf(want, sizeof want, "%s: ints: 3 ints for a program of 2", saxpy(ex, sizeof ex));
  RIG_ASSERT_ERROR(rig_run_file(ex, &o, &err), err, RIG_EINVAL, want);
}

static void test_times_without_room_for_every_run_are_refused(void) {
  char ex[4096];
  uint64_t times[2];
  rig_run_options o = {.size = sizeof o, .runs = 3, .times = times, .ntimes = 2};
  rig_error err = {0};
  RIG_ASSERT_ERROR(rig_run_file(saxpy(ex, sizeof ex), &o, &err), err, RIG_EINVAL,
                   "times: room for 2 of 3 runs");
}

static void test_a_file_that_is_no_description_says_where_the_reader_stopped(void) {
  char path[4096], want[16384];
  write_file(tmp_path("not.json", path, sizeof path), "{\n", 2);
  rig_error err = {0};
  snprintf(want, sizeof want,
           "%s:2:0: not a program description: neither the bytes' magic nor JSON: string or '}' "
           "expected near end of file",
           path);
  RIG_ASSERT_ERROR(rig_run_file(path, NULL, &err), err, RIG_EMALFORMED, want);
}

/* rig_run_desc_of_text: the reading half of rig_run_read_desc, for text
 * its caller read (progrun's "-"). */
static void test_text_read_is_a_description_by_its_json_or_its_bytes(void) {
  char ex[4096];
  size_t len = 0;
  uint8_t *text = rig_test_read_file(saxpy(ex, sizeof ex), &len);
  CU_ASSERT_PTR_NOT_NULL_FATAL(text);
  /* Its kernel files are found beside the folder given. */
  *strrchr(ex, '/') = '\0';
  rig_desc *d = NULL, *again = NULL;
  rig_error err = {0};
  RIG_ASSERT_ERROR(rig_run_desc_of_text(text, len, "saxpy.json", ex, &d, &err), err, RIG_OK, "");
  free(text);
  CU_ASSERT_PTR_NOT_NULL_FATAL(d);
  uint8_t *bytes = NULL;
  CU_ASSERT_EQUAL_FATAL(rig_desc_to_bytes(d, &bytes, &len, &err), RIG_OK);
  RIG_ASSERT_ERROR(rig_run_desc_of_text(bytes, len, "saxpy.bin", NULL, &again, &err), err, RIG_OK,
                   "");
  CU_ASSERT_PTR_NOT_NULL_FATAL(again);
  CU_ASSERT_EQUAL(rig_desc_count_steps(again), rig_desc_count_steps(d));
  free(bytes);
  rig_desc_free(again);
  rig_desc_free(d);
}

static void test_text_that_is_no_json_is_no_description_at_the_path_shown(void) {
  rig_desc *d = (rig_desc *)&d; /* NULL after a failure */
  rig_error err = {0};
  RIG_ASSERT_ERROR(rig_run_desc_of_text("{\n", 2, "shown/d.json", NULL, &d, &err), err,
                   RIG_EMALFORMED,
                   "shown/d.json:2:0: not a program description: neither the bytes' magic nor "
                   "JSON: string or '}' expected near end of file");
  CU_ASSERT_PTR_NULL(d);
}

/* Repeated keys and \u0000 are JSON: the reader's words, after the path. */
static void test_json_the_reader_refuses_is_told_in_its_words_after_the_path(void) {
  static const struct {
    const char *text, *want;
  } cases[] = {
      {"{\"ints\": 0, \"ints\": 1}", "d.json: JSON line 1 column 18: duplicate object key near "
                                     "'\"ints\"'"},
      {"{\"devices\": [\"a\\u0000b\"]}",
       "d.json: JSON line 1 column 23: a string holds \\u0000 (write such bytes as {\"hex\": "
       "...})"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    rig_desc *d = NULL;
    rig_error err = {0};
    RIG_ASSERT_ERROR(
        rig_run_desc_of_text(cases[i].text, strlen(cases[i].text), "d.json", NULL, &d, &err), err,
        RIG_EMALFORMED, cases[i].want);
    CU_ASSERT_PTR_NULL(d);
  }
}

/* A description whose move reads 8 bytes at 8 * int 0 of a 16-byte input:
 * run 2 (int 0 its index) reads past it. Written as bytes. */
static const char *past_input(char *buf, size_t size) {
  rig_desc *d = rig_desc_create();
  CU_ASSERT_PTR_NOT_NULL_FATAL(d);
  rig_desc_add_device(d, rig_host_isa());
  rig_desc_add_alloc(d, 0, RIG_KIND_DEVICE, 8, RIG_COPIES_ONE);
  rig_desc_add_input(d, 0, 16);
  rig_desc_set_ints(d, 1);
  rig_desc_step *mv =
      rig_desc_add_move(d, NULL, rig_desc_slot_input(0), rig_desc_slot_memory(0, 0, 8), 8);
  CU_ASSERT_PTR_NOT_NULL_FATAL(mv);
  CU_ASSERT_EQUAL(rig_desc_terms_add(d, &mv->u.move.src_offset, rig_desc_int(0), 8), RIG_OK);
  uint8_t *b = NULL;
  size_t n = 0;
  CU_ASSERT_EQUAL_FATAL(rig_desc_to_bytes(d, &b, &n, NULL), RIG_OK);
  rig_desc_free(d);
  write_file(tmp_path("past-input.bin", buf, size), b, n);
  free(b);
  return buf;
}

static void test_a_failed_run_leaves_every_output_as_it_was(void) {
  char desc[4096], dir[4096], yp[4096];
  past_input(desc, sizeof desc);
  tmp_path("kept", dir, sizeof dir);
  CU_ASSERT_EQUAL_FATAL(mkdir(dir, 0777), 0);
  tmp_path("kept/y.bin", yp, sizeof yp);
  write_file(yp, "old", 3);
  rig_run_int ints[] = {rig_run_index()};
  rig_run_io outputs[] = {{0, yp}};
  rig_run_options o = {
      .size = sizeof o, .runs = 5, .ints = ints, .nints = 1, .outputs = outputs, .noutputs = 1};
  rig_error err = {0};
  CU_ASSERT_EQUAL(rig_run_file(desc, &o, &err), RIG_EINVAL);
  CU_ASSERT(strncmp(err.message, "run 2: step 0: ", 15) == 0);
  CU_ASSERT(file_is(yp, "old", 3));
  CU_ASSERT_EQUAL(entries(dir), 1); /* no temporary left beside it */
}

static void test_outputs_replace_their_files_whole(void) {
  char desc[4096], dir[4096], yp[4096];
  past_input(desc, sizeof desc);
  tmp_path("replaced", dir, sizeof dir);
  CU_ASSERT_EQUAL_FATAL(mkdir(dir, 0777), 0);
  tmp_path("replaced/y.bin", yp, sizeof yp);
  write_file(yp, "a longer old content", 20);
  rig_run_io outputs[] = {{0, yp}};
  rig_run_options o = {.size = sizeof o, .runs = 2, .outputs = outputs, .noutputs = 1};
  rig_error err = {0};
  CU_ASSERT_EQUAL_FATAL(rig_run_file(desc, &o, &err), RIG_OK);
  static const uint8_t zeros[16];
  CU_ASSERT(file_is(yp, zeros, sizeof zeros));
  CU_ASSERT_EQUAL(entries(dir), 1);
}

static void test_an_output_to_dev_null_is_written_in_place(void) {
  char ex[4096];
  rig_run_io outputs[] = {{1, "/dev/null"}, {0, "/dev/null"}};
  rig_run_options o = {.size = sizeof o, .outputs = outputs, .noutputs = 2};
  rig_error err = {0};
  CU_ASSERT_EQUAL(rig_run_file(saxpy(ex, sizeof ex), &o, &err), RIG_OK);
}

/* The set alone (rig_outputs): a file added but never put fails the
 * commit, and the file that was put is left as it was, no temporary
 * beside it; one put to a file shared by `also` lands in both. */
static void test_a_set_of_outputs_is_written_all_or_none(void) {
  char dir[4096], a[4096], b[4096], c[4096];
  tmp_path("set", dir, sizeof dir);
  CU_ASSERT_EQUAL_FATAL(mkdir(dir, 0777), 0);
  tmp_path("set/a.bin", a, sizeof a);
  tmp_path("set/b.bin", b, sizeof b);
  tmp_path("set/c.bin", c, sizeof c);
  write_file(a, "old", 3);
  rig_outputs *s = NULL;
  rig_error err = {0};
  size_t ka = 0, kb = 0;
  CU_ASSERT_EQUAL_FATAL(rig_outputs_make(&s, &err), RIG_OK);
  CU_ASSERT_EQUAL(rig_outputs_add(s, a, "a", &ka, &err), RIG_OK);
  CU_ASSERT_EQUAL(rig_outputs_add(s, b, "b", &kb, &err), RIG_OK);
  CU_ASSERT_EQUAL(rig_outputs_put(s, ka, "new", 3, &err), RIG_OK);
  CU_ASSERT_EQUAL(rig_outputs_commit(s, &err), RIG_EREFUSED);
  CU_ASSERT(strstr(err.message, "b.bin: its bytes never came") != NULL);
  rig_outputs_free(s);
  CU_ASSERT(file_is(a, "old", 3));
  CU_ASSERT_EQUAL(entries(dir), 1);
  /* Two files of one put; the same file twice is refused by its labels. */
  size_t kc = 0, again = 0;
  CU_ASSERT_EQUAL_FATAL(rig_outputs_make(&s, &err), RIG_OK);
  CU_ASSERT_EQUAL(rig_outputs_add(s, a, "output 0=a", &ka, &err), RIG_OK);
  CU_ASSERT_EQUAL(rig_outputs_add(s, c, "output 1=c", &kc, &err), RIG_OK);
  CU_ASSERT_EQUAL(rig_outputs_add(s, a, "output 2=a", &again, &err), RIG_EINVAL);
  CU_ASSERT_STRING_EQUAL(err.message, "output 2=a: the same file as output 0=a");
  rig_outputs_also(s, kc, ka);
  CU_ASSERT_EQUAL(rig_outputs_put(s, ka, "both", 4, &err), RIG_OK);
  CU_ASSERT_EQUAL(rig_outputs_commit(s, &err), RIG_OK);
  rig_outputs_free(s);
  CU_ASSERT(file_is(a, "both", 4));
  CU_ASSERT(file_is(c, "both", 4));
  CU_ASSERT_EQUAL(entries(dir), 2);
}

static void test_an_input_given_twice_is_refused(void) {
  char ex[4096];
  rig_run_io inputs[] = {{0, "/dev/null"}, {0, "/dev/null"}};
  rig_run_options o = {.size = sizeof o, .inputs = inputs, .ninputs = 2};
  rig_error err = {0};
  RIG_ASSERT_ERROR(rig_run_file(saxpy(ex, sizeof ex), &o, &err), err, RIG_EINVAL,
                   "input 0 given twice");
}

/* ---- the devices by arch ------------------------------------------------------- */

/* A description of these archs alone. */
static rig_desc *of_archs(const char *const *archs, size_t n) {
  rig_desc *d = rig_desc_create();
  CU_ASSERT_PTR_NOT_NULL_FATAL(d);
  for (size_t i = 0; i < n; i++) rig_desc_add_device(d, archs[i]);
  return d;
}

static void test_archs_map_to_the_host_and_the_next_free_cpu(void) {
  char cpu[64];
  snprintf(cpu, sizeof cpu, "cpu-%s", rig_host_isa());
  const char *archs[] = {cpu, rig_host_isa(), cpu};
  rig_desc *d = of_archs(archs, 3);
  rig_device *out[3];
  rig_error err = {0};
  CU_ASSERT_EQUAL_FATAL(rig_run_map_devices(d, NULL, 0, NULL, NULL, NULL, out, &err), RIG_OK);
  CU_ASSERT_STRING_EQUAL(rig_device_name(out[0]), "cpu:0");
  CU_ASSERT_STRING_EQUAL(rig_device_name(out[1]), "host");
  CU_ASSERT_STRING_EQUAL(rig_device_name(out[2]), "cpu:1");
  rig_desc_free(d);
}

static void test_an_arch_whose_devices_are_taken_is_refused(void) {
  char cpu[64], want[512];
  snprintf(cpu, sizeof cpu, "cpu-%s", rig_host_isa());
  /* One more than this machine's cpu devices (RIG_CPU_DEVICES). */
  unsigned n = 0;
  CU_ASSERT_EQUAL_FATAL(rig_family_devices((size_t)rig_family_of_arch(cpu), &n, NULL), RIG_OK);
  CU_ASSERT_FATAL(n < 64);
  const char *archs[65];
  for (unsigned i = 0; i <= n; i++) archs[i] = cpu;
  rig_desc *d = of_archs(archs, n + 1);
  rig_device *out[65];
  rig_error err = {0};
  snprintf(want, sizeof want,
           "device %u: no free device of arch \"%s\": this machine's %u cpu devices are taken by "
           "earlier ones (docs/environment.md says how to have more)",
           n, cpu, n);
  RIG_ASSERT_ERROR(rig_run_map_devices(d, NULL, 0, NULL, NULL, NULL, out, &err), err, RIG_EREFUSED,
                   want);
  rig_desc_free(d);
}

static void test_an_arch_no_device_here_has_is_refused(void) {
  const char *archs[] = {"vax"}; /* another machine's ISA: the host's family */
  rig_desc *d = of_archs(archs, 1);
  rig_device *out[1];
  rig_error err = {0};
  RIG_ASSERT_ERROR(rig_run_map_devices(d, NULL, 0, NULL, NULL, NULL, out, &err), err, RIG_EREFUSED,
                   "device 0: no device of arch \"vax\" on this machine");
  rig_desc_free(d);
}

/* sm_XY is the cuda family's (the run-fakecuda test: two of fakecuda's
 * sm_90 devices; skipped where this machine has none). */
static void test_sm_archs_map_to_the_next_free_cuda_device(void) {
  int family = rig_family_of_arch("sm_90");
  unsigned n = 0;
  rig_error why = {0};
  rig_status st = family < 0 ? RIG_EINVAL : rig_family_devices((size_t)family, &n, &why);
  if (st != RIG_OK || n < 2) {
    rig_test_skip("sm archs map to the next free cuda device",
                  family < 0     ? "no cuda backend in this build"
                  : st != RIG_OK ? why.message
                                 : "fewer than 2 cuda devices");
    return;
  }
  const char *archs[] = {"sm_90", rig_host_isa(), "sm_90"};
  rig_desc *d = of_archs(archs, 3);
  rig_device *out[3];
  rig_error err = {0};
  CU_ASSERT_EQUAL_FATAL(rig_run_map_devices(d, NULL, 0, NULL, NULL, NULL, out, &err), RIG_OK);
  CU_ASSERT_STRING_EQUAL(rig_device_name(out[0]), "cuda:0");
  CU_ASSERT_STRING_EQUAL(rig_device_name(out[1]), "host");
  CU_ASSERT_STRING_EQUAL(rig_device_name(out[2]), "cuda:1");
  rig_desc_free(d);
}

/* An opener of another machine's devices that has none: counts its calls. */
static rig_device *refusing(void *ctx, const char *name, rig_error *why) {
  ++*(int *)ctx;
  rig_error_set(why, RIG_EREFUSED, "%s: not on machine 1", name);
  return NULL;
}

static void test_a_name_the_opener_refuses_is_told_as_what_gave_it(void) {
  char cpu[64];
  snprintf(cpu, sizeof cpu, "cpu-%s", rig_host_isa());
  const char *archs[] = {cpu}, *names[] = {"cpu:1"};
  rig_desc *d = of_archs(archs, 1);
  rig_device *out[1];
  rig_error err = {0};
  int calls = 0;
  RIG_ASSERT_ERROR(
      rig_run_map_devices(d, names, 1, "machines[1].devices", refusing, &calls, out, &err), err,
      RIG_EINVAL, "machines[1].devices: cpu:1: not on machine 1");
  CU_ASSERT_EQUAL(calls, 1);
  rig_desc_free(d);
}

static void test_an_arch_the_opener_has_none_of_says_why(void) {
  char cpu[64], want[512];
  snprintf(cpu, sizeof cpu, "cpu-%s", rig_host_isa());
  const char *archs[] = {cpu};
  rig_desc *d = of_archs(archs, 1);
  rig_device *out[1];
  rig_error err = {0};
  int calls = 0;
  snprintf(want, sizeof want,
           "device 0: no device of arch \"%s\" on this machine (cpu:0: not on "
           "machine 1)",
           cpu);
  RIG_ASSERT_ERROR(rig_run_map_devices(d, NULL, 0, NULL, refusing, &calls, out, &err), err,
                   RIG_EREFUSED, want);
  CU_ASSERT_EQUAL(calls, 1);
  rig_desc_free(d);
}

/* A job file is a regular file holding a JSON object with "machines" or
 * "every", which says how many machines it lists only without "every";
 * a description, other JSON, a missing file and a pipe are none. */
static void test_a_job_file_is_told_by_its_machines_or_every(void) {
  char path[512], ex[512];
  size_t machines = 99;
  const char listed[] = "{\"machines\": [{\"program\": \"a.json\"}, {\"program\": \"b.json\"}]}";
  write_file(tmp_path("job-listed.json", path, sizeof path), listed, strlen(listed));
  CU_ASSERT_TRUE(rig_run_is_jobfile(path, &machines));
  CU_ASSERT_EQUAL(machines, 2);
  const char every[] = "{\"machines\": [{\"program\": \"a.json\"}], \"every\": {}}";
  write_file(tmp_path("job-every.json", path, sizeof path), every, strlen(every));
  CU_ASSERT_TRUE(rig_run_is_jobfile(path, &machines));
  CU_ASSERT_EQUAL(machines, 0);
  CU_ASSERT_TRUE(rig_run_is_jobfile(path, NULL));
  const char other[] = "[{\"machines\": 1}]";
  write_file(tmp_path("not-a-job.json", path, sizeof path), other, strlen(other));
  machines = 99;
  CU_ASSERT_FALSE(rig_run_is_jobfile(path, &machines));
  CU_ASSERT_EQUAL(machines, 0);
  CU_ASSERT_FALSE(rig_run_is_jobfile(saxpy(ex, sizeof ex), NULL));
  CU_ASSERT_FALSE(rig_run_is_jobfile(tmp_path("no-such-job.json", path, sizeof path), NULL));
  CU_ASSERT_FALSE(rig_run_is_jobfile("/dev/stdin", NULL));
}

/* A launcher is told by OMPI_COMM_WORLD_SIZE, PMIX_RANK or PMI_RANK; the
 * rank by the first of OMPI_COMM_WORLD_RANK, PMIX_RANK and PMI_RANK set,
 * which is not 0 unless it is "0"; with none set, neither. */
static void test_a_launcher_and_its_rank_are_told_by_the_environment(void) {
  static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "PMIX_RANK",
                                     "PMI_RANK"};
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) unsetenv(vars[i]);
  CU_ASSERT_FALSE(rig_run_under_launcher());
  CU_ASSERT_FALSE(rig_run_rank_is_not_0());
  setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
  CU_ASSERT_TRUE(rig_run_under_launcher());
  CU_ASSERT_FALSE(rig_run_rank_is_not_0());
  setenv("PMI_RANK", "2", 1);
  CU_ASSERT_TRUE(rig_run_rank_is_not_0());
  setenv("PMIX_RANK", "0", 1); /* before PMI_RANK */
  CU_ASSERT_FALSE(rig_run_rank_is_not_0());
  setenv("OMPI_COMM_WORLD_RANK", "1", 1); /* before both */
  CU_ASSERT_TRUE(rig_run_rank_is_not_0());
  unsetenv("OMPI_COMM_WORLD_SIZE");
  CU_ASSERT_TRUE(rig_run_under_launcher()); /* PMIX_RANK */
  unsetenv("PMIX_RANK");
  CU_ASSERT_TRUE(rig_run_under_launcher()); /* PMI_RANK */
  unsetenv("PMI_RANK");
  CU_ASSERT_FALSE(rig_run_under_launcher()); /* OMPI_COMM_WORLD_RANK alone is none */
  unsetenv("OMPI_COMM_WORLD_RANK");
}

void rig_test_register(void) {
  static CU_TestInfo runs[] = {
      {"saxpy writes what its runs compute", test_saxpy_writes_what_its_runs_compute},
      {"a run-index int is each run's index", test_a_run_index_int_is_each_runs_index},
      {"a shorter input file is zeros past its end",
       test_a_shorter_input_file_is_zeros_past_its_end},
      {"inputs not given are zeros and ints not given 0",
       test_inputs_not_given_are_zeros_and_ints_not_given_0},
      {"times hold each run's time", test_times_hold_each_runs_time},
      {"no options run once on devices by arch", test_no_options_run_once_on_devices_by_arch},
      {"options of an older size run with the rest zero",
       test_options_of_an_older_size_run_with_the_rest_zero},
      {"options without their size are refused", test_options_without_their_size_are_refused},
      {"options set past the fields librig knows are refused",
       test_options_set_past_the_fields_librig_knows_are_refused},
      {"outputs replace their files whole", test_outputs_replace_their_files_whole},
      {"an output to /dev/null is written in place",
       test_an_output_to_dev_null_is_written_in_place},
      {"a set of outputs is written all or none", test_a_set_of_outputs_is_written_all_or_none},
      CU_TEST_INFO_NULL};
  static CU_TestInfo refusals[] = {
      {"a missing input file names the input and the file",
       test_a_missing_input_file_names_the_input_and_the_file},
      {"an input file longer than its input is refused",
       test_an_input_file_longer_than_its_input_is_refused},
      {"a device name that does not open names the field",
       test_a_device_name_that_does_not_open_names_the_field},
      {"a named device of another arch is refused", test_a_named_device_of_another_arch_is_refused},
      {"an output whose folder is missing is refused before any run",
       test_an_output_whose_folder_is_missing_is_refused_before_any_run},
      {"one file for two outputs is refused", test_one_file_for_two_outputs_is_refused},
      {"an input past the program's is refused naming the file",
       test_an_input_past_the_programs_is_refused_naming_the_file},
      {"more ints than the program's are refused", test_more_ints_than_the_programs_are_refused},
      {"times without room for every run are refused",
       test_times_without_room_for_every_run_are_refused},
      {"a file that is no description says where the reader stopped",
       test_a_file_that_is_no_description_says_where_the_reader_stopped},
      {"text read is a description by its JSON or its bytes",
       test_text_read_is_a_description_by_its_json_or_its_bytes},
      {"text that is no JSON is no description at the path shown",
       test_text_that_is_no_json_is_no_description_at_the_path_shown},
      {"JSON the reader refuses is told in its words after the path",
       test_json_the_reader_refuses_is_told_in_its_words_after_the_path},
      {"a failed run leaves every output as it was",
       test_a_failed_run_leaves_every_output_as_it_was},
      {"an input given twice is refused", test_an_input_given_twice_is_refused},
      CU_TEST_INFO_NULL};
  static CU_TestInfo files[] = {{"a job file is told by its machines or every",
                                 test_a_job_file_is_told_by_its_machines_or_every},
                                CU_TEST_INFO_NULL};
  static CU_TestInfo launcher[] = {{"a launcher and its rank are told by the environment",
                                    test_a_launcher_and_its_rank_are_told_by_the_environment},
                                   CU_TEST_INFO_NULL};
  static CU_TestInfo devices[] = {
      {"archs map to the host and the next free cpu",
       test_archs_map_to_the_host_and_the_next_free_cpu},
      {"an arch whose devices are taken is refused",
       test_an_arch_whose_devices_are_taken_is_refused},
      {"an arch no device here has is refused", test_an_arch_no_device_here_has_is_refused},
      {"sm archs map to the next free cuda device", test_sm_archs_map_to_the_next_free_cuda_device},
      {"a name the opener refuses is told as what gave it",
       test_a_name_the_opener_refuses_is_told_as_what_gave_it},
      {"an arch the opener has none of says why", test_an_arch_the_opener_has_none_of_says_why},
      CU_TEST_INFO_NULL};
  rig_test_add_suite("runs", runs);
  rig_test_add_suite("refusals", refusals);
  rig_test_add_suite("files", files);
  rig_test_add_suite("devices", devices);
  rig_test_add_suite("launcher", launcher);
}

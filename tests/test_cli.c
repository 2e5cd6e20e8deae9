/* The progrun command (docs/cli.md): check, dump, pack, run, help and
 * version, run as a child process whose stdout, stderr and exit status are
 * compared. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h" /* cli_format_ns (launcher/progrun/cli_units.c) */
#include "desc_gen.h"
#include "rig/rig_core.h"
#include "rig/rig_desc.h"
#include "rig_test.h"
#include "trace_check.h"

/* ---- running progrun ------------------------------------------------------ */

/* A child that runs longer than this is killed and counts as failed. */
#define RUN_TIMEOUT_MS 20000

typedef struct out_buf {
  char *p;
  size_t n, room;
} out_buf;

typedef struct proc {
  int code; /* the exit status; -1 if killed by a signal or the timeout */
  out_buf out, err;
} proc;

static void out_put(out_buf *b, const char *s, size_t n) {
  if (b->room - b->n < n + 1) {
    size_t room = b->room ? b->room : 4096;
    while (room - b->n < n + 1) room *= 2;
    char *p = realloc(b->p, room);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    b->p = p;
    b->room = room;
  }
  memcpy(b->p + b->n, s, n);
  b->n += n;
  b->p[b->n] = '\0';
}

static void proc_free(proc *p) {
  free(p->out.p);
  free(p->err.p);
}

/* Made absolute, since some tests run it from another directory. */
static const char *progrun_path(void) {
  static char buf[4096], abs[PATH_MAX];
  const char *p = getenv("RIG_PROGRUN");
  if (!p || !*p) p = rig_test_binary_path("progrun", buf, sizeof buf);
  return realpath(p, abs) ? abs : p;
}

static int64_t now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* When nonzero, the child's RLIMIT_FSIZE (its SIGXFSZ ignored, so that a
 * write past it fails with EFBIG rather than killing it). */
static rlim_t child_fsize;

/* Runs progrun with the NULL-terminated `args` (after argv[0]) in directory
 * `cwd` (NULL: this one), stdin from the file `in` (NULL: /dev/null). */
static proc run_io(const char *cwd, const char *in, const char *const *args) {
  proc r = {.code = -1};
  out_put(&r.out, "", 0);
  out_put(&r.err, "", 0);
  const char *argv[32];
  size_t argc = 0;
  argv[argc++] = progrun_path();
  for (; args[argc - 1] && argc < 31; argc++) argv[argc] = args[argc - 1];
  argv[argc] = NULL;

  int po[2], pe[2];
  CU_ASSERT_FATAL(pipe2(po, O_CLOEXEC) == 0 && pipe2(pe, O_CLOEXEC) == 0);
  pid_t pid = fork();
  CU_ASSERT_FATAL(pid >= 0);
  if (pid == 0) {
    int fd = open(in ? in : "/dev/null", O_RDONLY);
    if (fd < 0 || dup2(fd, 0) < 0 || dup2(po[1], 1) < 0 || dup2(pe[1], 2) < 0) _exit(126);
    if (cwd && chdir(cwd) != 0) _exit(126);
    if (child_fsize) {
      struct rlimit rl = {child_fsize, child_fsize};
      signal(SIGXFSZ, SIG_IGN);
      if (setrlimit(RLIMIT_FSIZE, &rl) != 0) _exit(126);
    }
    execv(argv[0], (char *const *)argv);
    _exit(127);
  }
  close(po[1]);
  close(pe[1]);
  struct pollfd fds[2] = {{po[0], POLLIN, 0}, {pe[0], POLLIN, 0}};
  out_buf *bufs[2] = {&r.out, &r.err};
  int open_fds = 2;
  int64_t deadline = now_ms() + RUN_TIMEOUT_MS;
  bool timed_out = false;
  while (open_fds > 0) {
    int64_t left = deadline - now_ms();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    int n = poll(fds, 2, (int)left);
    if (n < 0 && errno == EINTR) continue;
    CU_ASSERT_FATAL(n >= 0);
    for (int i = 0; i < 2; i++) {
      if (fds[i].fd < 0 || !fds[i].revents) continue;
      char chunk[4096];
      ssize_t got = read(fds[i].fd, chunk, sizeof chunk);
      if (got > 0) {
        out_put(bufs[i], chunk, (size_t)got);
      } else if (got == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;
        open_fds--;
      }
    }
  }
  if (timed_out) kill(pid, SIGKILL);
  for (int i = 0; i < 2; i++)
    if (fds[i].fd >= 0) close(fds[i].fd);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!timed_out && WIFEXITED(status)) r.code = WEXITSTATUS(status);
  CU_ASSERT(!timed_out);
  return r;
}

#define RUN(...) run_io(NULL, NULL, (const char *const[]){__VA_ARGS__, NULL})

/* Runs progrun where only its exit status matters (a step that makes a
 * file, say): the status must be `want`; what it said is shown when not. */
#define RUN_EXITS(want, ...)                                                                       \
  do {                                                                                             \
    proc p_ = RUN(__VA_ARGS__);                                                                    \
    CU_ASSERT_EQUAL(p_.code, (want));                                                              \
    if (p_.code != (want)) show(#__VA_ARGS__, &p_);                                                \
    proc_free(&p_);                                                                                \
  } while (0)

/* Prints what the child said when an expectation fails, for diagnosis. */
static void show(const char *what, const proc *p) {
  fprintf(stderr, "\n%s: exit %d\n--- stdout\n%s--- stderr\n%s---\n", what, p->code, p->out.p,
          p->err.p);
}

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
    snprintf(tmp_dir, sizeof tmp_dir, "%s/rig-cli-XXXXXX", base && *base ? base : "/tmp");
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

static void write_text(const char *path, const char *text) {
  write_file(path, text, strlen(text));
}

/* d's bytes in the temporary file `name`; the path in buf. */
static const char *write_desc(const rig_desc *d, const char *name, char *buf, size_t size) {
  uint8_t *b = NULL;
  size_t n = 0;
  CU_ASSERT_EQUAL_FATAL(rig_desc_to_bytes(d, &b, &n, NULL), RIG_OK);
  write_file(tmp_path(name, buf, size), b, n);
  free(b);
  return buf;
}

static bool same_file(const char *a, const char *b) {
  size_t na = 0, nb = 0;
  char *pa = rig_test_read_file(a, &na), *pb = rig_test_read_file(b, &nb);
  bool same = pa && pb && na == nb && memcmp(pa, pb, na) == 0;
  free(pa);
  free(pb);
  return same;
}

/* The examples as the build copies them (examples/CMakeLists.txt): there
 * their images' {"file": "kernels/NAME.so"} name the kernels built beside
 * them. */
static const char *const examples[] = {"examples/saxpy.json", "examples/stencil.json"};
enum { nexamples = sizeof examples / sizeof examples[0] };

static const char *example_path(size_t i, char *buf, size_t size) {
  return rig_test_binary_path(examples[i], buf, size);
}

/* A small description with one of each kind of thing, the decoder's
 * fixture in test_codec.c. */
static rig_desc *sample(void) {
  rig_desc *d = rig_desc_create();
  rig_desc_add_device(d, "x86_64");
  int64_t m = rig_desc_add_alloc(d, 0, RIG_KIND_DEVICE, 64, RIG_COPIES_TWO);
  rig_desc_data_set(d, &d->memory[m].u.alloc.init, "\0\0\0\0\0\0\0\0", 8);
  rig_desc_hole *h = rig_desc_data_add_hole(d, &d->memory[m].u.alloc.init, 0, RIG_W64, 0, 0);
  rig_desc_terms_add(d, &h->terms, rig_desc_leaf_value(rig_desc_address(0, 0)), 1);
  rig_desc_add_rail(d, 3, RIG_AREA_COUNTS);
  rig_desc_add_image(d, 0, "\177ELF", 4);
  /* Long enough to be listed by its start and digest. */
  uint8_t code[300];
  for (size_t i = 0; i < sizeof code; i++) code[i] = (uint8_t)i;
  int64_t k = rig_desc_add_image(d, 0, code, sizeof code);
  h = rig_desc_data_add_hole(d, &d->images[k].binary, 8, RIG_W64, 0, 0);
  rig_desc_terms_add(d, &h->terms, rig_desc_leaf_value(rig_desc_entry(0, "k")), 1);
  rig_desc_add_input(d, 0, 16);
  d->ints = 2;
  rig_desc_step *loop = rig_desc_add_loop(d, NULL, rig_desc_int(0));
  rig_desc_loop_set_trip(loop, 1);
  rig_desc_submit *s = rig_desc_add_submit(d, loop, 0);
  rig_desc_submit_add_slot(d, s, rig_desc_slot_input(0));
  rig_desc_submit_add_slot(d, s, rig_desc_slot_ints());
  rig_desc_part *p = rig_desc_submit_add_launch(d, s, 0, "k", "\0\0\0\0\0\0\0\0", 8,
                                                rig_desc_fixed(4), rig_desc_fixed(1));
  rig_desc_part_add_ref(d, p, 0, 0, RIG_USE_WRITE);
  p = rig_desc_submit_add_fill(d, s, rig_desc_entry(0, "f\n"), "\0\0\0\0", 4);
  h = rig_desc_data_add_hole(d, rig_desc_part_params(p), 0, RIG_W32, -8, 32);
  rig_desc_terms_add(d, &h->terms, rig_desc_int(1), 16);
  rig_desc_terms_add(d, &h->terms, rig_desc_leaf_value(rig_desc_handle(0)), 1);
  rig_desc_part_add_ref(d, p, 1, 0, RIG_USE_READ);
  rig_desc_submit_add_copy(d, s, 0, 1, 8);
  rig_desc_submit_add_words(d, s, rig_desc_view_of(0, 8, 16));
  rig_desc_submit_add_fixed(d, s, rig_desc_view_of(0, 0, 64), RIG_ACCESS_READ_WRITE);
  rig_desc_step *mv =
      rig_desc_add_move(d, NULL, rig_desc_slot_input(0), rig_desc_slot_memory(0, 0, 64), 8);
  rig_desc_terms_add(d, &mv->u.move.dst_offset, rig_desc_int(1), 8);
  rig_desc_step *l2 = rig_desc_add_loop(d, NULL, rig_desc_fixed(3));
  rig_desc_loop_set_flag(l2, rig_desc_slot_memory(0, 0, 8), 0);
  return d;
}

static const char sample_dump[] =
    "program: 1 device, 2 memory, 2 images, 1 input, 2 ints, 4 steps\n"
    "devices:\n"
    "  0 x86_64\n"
    "memory:\n"
    "  0 Alloc device 0, Device, 64 bytes, Two copies\n"
    "    init: 8 bytes, 1 hole\n"
    "      bytes: 0000000000000000\n"
    "      hole at 0 W64 = Address(memory 0, on 0)*1 + 0 >> 0\n"
    "  1 Rail rail 3, Counts\n"
    "images:\n"
    "  0 device 0, 4 bytes, 0 holes\n"
    "    bytes: 7f454c46\n"
    "  1 device 0, 300 bytes, 1 hole\n"
    "    bytes: 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f... (300 "
    "bytes, fnv1a-64 4c68c7903ce32299)\n"
    "    hole at 8 W64 = Entry(image 0, \"k\")*1 + 0 >> 0\n"
    "inputs:\n"
    "  0 device 0, 16 bytes\n"
    "steps:\n"
    "  step 0: Loop trips Int(0), trip int 1, flag none, body 1 step\n"
    "    step 1: Submit on device 0\n"
    "      parts:\n"
    "        0 Launch image 0 \"k\", params 8 bytes, 0 holes, 1 ref\n"
    "          groups (Fixed(4), Fixed(1), Fixed(1)), threads (Fixed(1), Fixed(1), Fixed(1)), "
    "shared Fixed(0)\n"
    "          bytes: 0000000000000000\n"
    "          ref slot 0 at 0 Write\n"
    "        1 Fill Entry(image 0, 0x660a), params 4 bytes, 1 hole, 1 ref\n"
    "          bytes: 00000000\n"
    "          hole at 0 W32 = Int(1)*16 + Handle(memory 0)*1 + -8 >> 32\n"
    "          ref slot 1 at 0 Read\n"
    "        2 Copy slot 0 +[] -> slot 1 +[] length 8\n"
    "        3 Words memory 0, offset 8, length 16\n"
    "      slots:\n"
    "        0 Input(0)\n"
    "        1 Ints\n"
    "      fixed:\n"
    "        memory 0, offset 0, length 64, Read_write\n"
    "  step 2: Move Input(0) +[] -> Memory(memory 0, offset 0, length 64) +[Int(1)*8] length 8\n"
    "  step 3: Loop trips Fixed(3), trip none, flag Memory(memory 0, offset 0, length 8) at 0, "
    "body 0 steps\n";

/* ---- check ---------------------------------------------------------------- */

static void test_check_passes_every_example(void) {
  char path[4096];
  for (size_t i = 0; i < nexamples; i++) {
    proc p = RUN("check", example_path(i, path, sizeof path));
    CU_ASSERT_EQUAL(p.code, 0);
    CU_ASSERT_STRING_EQUAL(p.out.p, "ok\n");
    CU_ASSERT_STRING_EQUAL(p.err.p, "");
    if (p.code != 0) show(examples[i], &p);
    proc_free(&p);
  }
}

/* Bytes the decoder refuses: its message after the file's name, exit 2. */
static void test_check_gives_the_decoder_message(void) {
  char path[4096], want[8192];
  static const uint8_t v2[20] = "rig.program\n\2\0\0\0\0\0\0\0";
  write_file(tmp_path("v2.bin", path, sizeof path), v2, sizeof v2);
  proc p = RUN("check", path);
  CU_ASSERT_EQUAL(p.code, 2);
  CU_ASSERT_STRING_EQUAL(p.out.p, "");
  snprintf(want, sizeof want, "progrun: %s: a program description of format version 2, not 4\n",
           path);
  CU_ASSERT_STRING_EQUAL(p.err.p, want);
  proc_free(&p);

  /* The empty description and one byte more. */
  rig_desc *d = rig_desc_create();
  uint8_t *b = NULL;
  size_t n = 0;
  CU_ASSERT_EQUAL_FATAL(rig_desc_to_bytes(d, &b, &n, NULL), RIG_OK);
  uint8_t *longer = malloc(n + 1);
  CU_ASSERT_PTR_NOT_NULL_FATAL(longer);
  memcpy(longer, b, n);
  longer[n] = 7;
  write_file(tmp_path("after.bin", path, sizeof path), longer, n + 1);
  p = RUN("dump", path);
  CU_ASSERT_EQUAL(p.code, 2);
  CU_ASSERT_STRING_EQUAL(p.out.p, "");
  snprintf(want, sizeof want, "progrun: %s: 1 bytes after a program description\n", path);
  CU_ASSERT_STRING_EQUAL(p.err.p, want);
  proc_free(&p);
  free(longer);
  free(b);
  rig_desc_free(d);
}

/* A description that decodes but breaks a rule: the rule's message. */
static void test_check_gives_the_rule_message(void) {
  char path[4096], want[8192];
  rig_desc *d = rig_desc_create();
  rig_desc_add_device(d, "x86_64");
  rig_desc_add_alloc(d, 3, RIG_KIND_DEVICE, 64, RIG_COPIES_ONE);
  write_desc(d, "rule.bin", path, sizeof path);
  rig_desc_free(d);
  proc p = RUN("check", path);
  CU_ASSERT_EQUAL(p.code, 2);
  CU_ASSERT_STRING_EQUAL(p.out.p, "");
  snprintf(want, sizeof want, "progrun: %s: memory 0: device 3: no such device\n", path);
  CU_ASSERT_STRING_EQUAL(p.err.p, want);
  proc_free(&p);

  /* The same through JSON. */
  write_text(tmp_path("rule.json", path, sizeof path),
             "{\"format\": 4, \"devices\": [], \"memory\": [], \"images\": [], \"inputs\": [],"
             " \"ints\": -1, \"steps\": []}\n");
  p = RUN("check", path);
  CU_ASSERT_EQUAL(p.code, 2);
  snprintf(want, sizeof want, "progrun: %s: -1 ints\n", path);
  CU_ASSERT_STRING_EQUAL(p.err.p, want);
  if (p.code != 2) show("check rule.json", &p);
  proc_free(&p);
}

/* ---- dump ----------------------------------------------------------------- */

/* The listing of a description with every kind of thing, whole. */
static void test_dump_lists_every_field(void) {
  char path[4096];
  rig_desc *d = sample();
  write_desc(d, "sample.bin", path, sizeof path);
  rig_desc_free(d);
  proc p = RUN("dump", path);
  CU_ASSERT_EQUAL(p.code, 0);
  CU_ASSERT_STRING_EQUAL(p.out.p, sample_dump);
  CU_ASSERT_STRING_EQUAL(p.err.p, "");
  if (strcmp(p.out.p, sample_dump) != 0) show("dump sample.bin", &p);
  proc_free(&p);
}

static void test_dump_shows_sections_and_step_numbers(void) {
  char path[4096];
  proc p = RUN("dump", example_path(0, path, sizeof path));
  CU_ASSERT_EQUAL(p.code, 0);
  static const char *const want[] = {
      "program: 2 devices, 3 memory, 2 images, 2 inputs, 2 ints, 6 steps\n",
      "devices:\n  0 x86_64\n  1 cpu-x86_64\n",
      "memory:\n  0 Alloc device 0, Pinned, 4096 bytes, Two copies\n",
      "images:\n  0 device 0, ",
      "    bytes: 7f454c46", /* the kernels' ELF, listed by its start */
      "inputs:\n  0 device 0, 4096 bytes\n  1 device 0, 4096 bytes\n",
      "steps:\n  step 0: Move Input(0) +[] -> Memory(memory 0, offset 0, length 4096) +[] "
      "length 4096\n",
      "  step 2: Loop trips Int(0), trip int 1, flag none, body 2 steps\n",
      "    step 3: Submit on device 1\n",
      "        0 Launch image 1 \"saxpy\", params 24 bytes, 0 holes, 2 refs\n"
      "          groups (Fixed(4), Fixed(1), Fixed(1)), threads (Fixed(256), Fixed(1), "
      "Fixed(1)), shared Fixed(0)\n",
      "    step 4: Submit on device 0\n",
      "          hole at 0 W64 = Address(memory 2, on 0)*1 + 0 >> 0\n",
      "      fixed:\n        memory 2, offset 0, length 8, Read\n",
      "  step 5: Move Memory(memory 1, offset 0, length 4096) +[] -> Input(1) +[] length 4096\n",
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    CU_ASSERT_PTR_NOT_NULL(strstr(p.out.p, want[i]));
    if (!strstr(p.out.p, want[i])) fprintf(stderr, "\nmissing: %s", want[i]);
  }
  CU_ASSERT_STRING_EQUAL(p.err.p, "");
  proc_free(&p);
}

/* dump --json gives JSON that packs into the same bytes as the original. */
static void test_dump_json_repacks_to_the_same_bytes(void) {
  char src[4096], json[4096], a[4096], b[4096];
  rig_desc *d = sample();
  const char *sample_bin = write_desc(d, "repack-sample.bin", src, sizeof src);
  rig_desc_free(d);
  for (size_t i = 0; i <= nexamples; i++) {
    const char *from = i < nexamples ? example_path(i, src, sizeof src) : sample_bin;
    proc p = RUN("dump", from, "--json");
    CU_ASSERT_EQUAL(p.code, 0);
    CU_ASSERT_STRING_EQUAL(p.err.p, "");
    CU_ASSERT(p.out.n > 0 && p.out.p[0] == '{');
    write_file(tmp_path("repack.json", json, sizeof json), p.out.p, p.out.n);
    proc_free(&p);
    RUN_EXITS(0, "pack", json, "-o", tmp_path("repack-a.bin", a, sizeof a));
    RUN_EXITS(0, "pack", from, "-o", tmp_path("repack-b.bin", b, sizeof b));
    CU_ASSERT(same_file(a, b));
  }
}

/* Any description the bytes hold, ill-formed ones included, dumps in both
 * forms, and its JSON packs back into the same bytes. */
static void test_dump_takes_any_description(void) {
  char bin[4096], json[4096], back[4096];
  rig_rng r = {7};
  for (int i = 0; i < 25; i++) {
    rig_desc *d = rig_gen_desc(&r, i % 5 == 0 ? RIG_DESC_MAX_DEPTH : 4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    write_desc(d, "any.bin", bin, sizeof bin);
    rig_desc_free(d);
    proc p = RUN("dump", bin);
    CU_ASSERT_EQUAL(p.code, 0);
    CU_ASSERT(strncmp(p.out.p, "program: ", 9) == 0);
    CU_ASSERT_STRING_EQUAL(p.err.p, "");
    proc_free(&p);
    p = RUN("dump", "--json", bin);
    CU_ASSERT_EQUAL(p.code, 0);
    write_file(tmp_path("any.json", json, sizeof json), p.out.p, p.out.n);
    proc_free(&p);
    RUN_EXITS(0, "pack", json, "-o", tmp_path("any-back.bin", back, sizeof back));
    CU_ASSERT(same_file(bin, back));
  }
}

/* ---- pack ----------------------------------------------------------------- */

static void test_pack_then_check_round_trips(void) {
  char src[4096], bin[4096], bin2[4096];
  for (size_t i = 0; i < nexamples; i++) {
    example_path(i, src, sizeof src);
    proc p = RUN("pack", src, "-o", tmp_path("rt.bin", bin, sizeof bin));
    CU_ASSERT_EQUAL(p.code, 0);
    CU_ASSERT_STRING_EQUAL(p.out.p, "");
    CU_ASSERT_STRING_EQUAL(p.err.p, "");
    proc_free(&p);

    size_t n = 0;
    uint8_t *b = rig_test_read_file(bin, &n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT(rig_desc_is_bytes(b, n));
    rig_desc *d = NULL;
    CU_ASSERT_EQUAL(rig_desc_of_bytes(b, n, &d, NULL), RIG_OK);
    rig_desc_free(d);
    free(b);

    p = RUN("check", bin);
    CU_ASSERT_EQUAL(p.code, 0);
    CU_ASSERT_STRING_EQUAL(p.out.p, "ok\n");
    proc_free(&p);

    /* Bytes in, the same bytes out. */
    RUN_EXITS(0, "pack", bin, "-o", tmp_path("rt2.bin", bin2, sizeof bin2));
    CU_ASSERT(same_file(bin, bin2));
  }
}

/* pack converts what decodes, rules broken or not; check then refuses it. */
static void test_pack_converts_a_description_that_breaks_a_rule(void) {
  char json[4096], bin[4096], want[8192];
  write_text(tmp_path("broken.json", json, sizeof json),
             "{\"format\": 4, \"devices\": [], \"memory\": [], \"images\": [], \"inputs\": [],"
             " \"ints\": -1, \"steps\": []}\n");
  proc p = RUN("pack", json, "-o", tmp_path("broken.bin", bin, sizeof bin));
  CU_ASSERT_EQUAL(p.code, 0);
  CU_ASSERT_STRING_EQUAL(p.err.p, "");
  proc_free(&p);
  p = RUN("check", bin);
  CU_ASSERT_EQUAL(p.code, 2);
  snprintf(want, sizeof want, "progrun: %s: -1 ints\n", bin);
  CU_ASSERT_STRING_EQUAL(p.err.p, want);
  proc_free(&p);
}

/* The number of entries in dir, hidden ones included. */
static size_t entries(const char *dir) {
  DIR *d = opendir(dir);
  CU_ASSERT_PTR_NOT_NULL_FATAL(d);
  size_t n = 0;
  for (struct dirent *e; (e = readdir(d));)
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) n++;
  closedir(d);
  return n;
}

/* pack replaces its output whole, leaves no temporary file, and writes
 * nothing when the input does not decode or the output cannot be made. */
static void test_pack_writes_whole_or_not_at_all(void) {
  char dir[4096], src[4096], out[4096], bad[4096], want[8192];
  CU_ASSERT_EQUAL_FATAL(mkdir(tmp_path("atomic", dir, sizeof dir), 0777), 0);
  example_path(0, src, sizeof src);
  tmp_path("atomic/out.bin", out, sizeof out);
  write_text(out, "old contents");
  RUN_EXITS(0, "pack", src, "-o", out);
  size_t n = 0;
  char *b = rig_test_read_file(out, &n);
  CU_ASSERT(b && rig_desc_is_bytes(b, n));
  free(b);
  CU_ASSERT_EQUAL(entries(dir), 1);
  struct stat st;
  CU_ASSERT(stat(out, &st) == 0 && (st.st_mode & 0444) == 0444);

  /* Input that does not decode: the old output stays. */
  tmp_path("atomic/bad.bin", bad, sizeof bad);
  write_file(bad, "rig.program\n", 12);
  RUN_EXITS(2, "pack", bad, "-o", out);
  CU_ASSERT_EQUAL(entries(dir), 2);
  b = rig_test_read_file(out, &n);
  CU_ASSERT(b && rig_desc_is_bytes(b, n));
  free(b);

  /* An output in no directory. */
  tmp_path("atomic/none/out.bin", out, sizeof out);
  proc p = RUN("pack", src, "-o", out);
  CU_ASSERT_EQUAL(p.code, 2);
  snprintf(want, sizeof want, "progrun: cannot write %s: %s\n", out, strerror(ENOENT));
  CU_ASSERT_STRING_EQUAL(p.err.p, want);
  proc_free(&p);
  CU_ASSERT_EQUAL(entries(dir), 2);
}

/* {"file": ...} in JSON is relative to the JSON file, not to the working
 * directory. */
static void test_json_file_paths_are_relative_to_the_json_file(void) {
  char dir[4096], path[4096];
  CU_ASSERT_EQUAL_FATAL(mkdir(tmp_path("rel", dir, sizeof dir), 0777), 0);
  tmp_path("rel/k.bin", path, sizeof path);
  write_file(path, "\177ELF", 4);
  tmp_path("rel/d.json", path, sizeof path);
  write_text(path, "{\"format\": 4, \"devices\": [\"x86_64\"], \"memory\": [],"
                   " \"images\": [{\"device\": 0, \"binary\": {\"bytes\": {\"file\": \"k.bin\"},"
                   " \"holes\": []}}], \"inputs\": [], \"ints\": 0, \"steps\": []}\n");
  /* From the temporary directory, naming the file relatively. */
  proc p = run_io(tmp_dir, NULL, (const char *const[]){"dump", "rel/d.json", NULL});
  CU_ASSERT_EQUAL(p.code, 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(p.out.p, "images:\n  0 device 0, 4 bytes, 0 holes\n"
                                         "    bytes: 7f454c46\n"));
  if (p.code != 0) show("dump rel/d.json", &p);
  proc_free(&p);
  p = RUN("check", path);
  CU_ASSERT_EQUAL(p.code, 0);
  CU_ASSERT_STRING_EQUAL(p.out.p, "ok\n");
  proc_free(&p);
}

/* "-" reads the description from stdin, bytes or JSON. */
static void test_a_dash_reads_stdin(void) {
  char src[4096], bin[4096], want[4096], dir[4096];
  example_path(1, src, sizeof src);
  /* From stdin, {"file": ...} is relative to the working directory. */
  rig_test_binary_path("examples", dir, sizeof dir);
  proc p = run_io(
      dir, src,
      (const char *const[]){"pack", "-", "-o", tmp_path("stdin.bin", bin, sizeof bin), NULL});
  CU_ASSERT_EQUAL(p.code, 0);
  proc_free(&p);
  RUN_EXITS(0, "pack", src, "-o", tmp_path("stdin-want.bin", want, sizeof want));
  CU_ASSERT(same_file(bin, want));
  p = run_io(NULL, bin, (const char *const[]){"check", "-", NULL});
  CU_ASSERT_EQUAL(p.code, 0);
  CU_ASSERT_STRING_EQUAL(p.out.p, "ok\n");
  proc_free(&p);
}

/* ---- run ------------------------------------------------------------------ */

/* Floats of the saxpy example's input x: small integers, so that every sum
 * the kernels make is exact and the order of operations cannot matter. */
static void saxpy_x(float *x, size_t n) {
  for (size_t i = 0; i < n; i++) x[i] = (float)(i % 17) - 3.0f;
}

/* y as examples/saxpy.json computes it, with the same float operations:
 * y = x, then each trip t: y = 2 x + y (cpu device), x = 1.5 x + t (host). */
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

/* The output file is exactly `want`'s n bytes. */
static bool file_is(const char *path, const void *want, size_t n) {
  size_t got = 0;
  uint8_t *b = rig_test_read_file(path, &got);
  bool same = b && got == n && memcmp(b, want, n) == 0;
  free(b);
  return same;
}

/* "--opt" "I=PATH" made in buf. */
static const char *io_arg(size_t index, const char *path, char *buf, size_t size) {
  snprintf(buf, size, "%zu=%s", index, path);
  return buf;
}

/* The summary line, whole: "runs N, min A, median B, mean C, p99 D, max
 * E, stddev F per run", each figure a number and a unit. */
static bool summary_shape(const char *line, const char *start) {
  if (strncmp(line, start, strlen(start)) != 0) return false;
  const char *at = line + strlen(start);
  static const char *const names[] = {"min", "median", "mean", "p99", "max", "stddev"};
  for (size_t i = 0; i < 6; i++) {
    char name[16], unit[8];
    double v = 0;
    int used = 0;
    if (sscanf(at, "%15s %lf %7[a-z]%n", name, &v, unit, &used) != 3) return false;
    if (strcmp(name, names[i]) != 0) return false;
    if (strcmp(unit, "ns") && strcmp(unit, "us") && strcmp(unit, "ms") && strcmp(unit, "s"))
      return false;
    at += used;
    if (i < 5 && strncmp(at, ", ", 2) != 0) return false;
    at += i < 5 ? 2 : 0;
  }
  return strcmp(at, " per run\n") == 0;
}

static void test_run_saxpy_gives_checkable_output(void) {
  char ex[4096], xp[4096], yp[4096], in[4200], out[4200];
  float x[1024], y[1024];
  saxpy_x(x, 1024);
  write_file(tmp_path("saxpy-x.bin", xp, sizeof xp), x, sizeof x);
  tmp_path("saxpy-y.bin", yp, sizeof yp);
  proc p = RUN("run", example_path(0, ex, sizeof ex), "--runs", "3", "--ints", "4", "--input",
               io_arg(0, xp, in, sizeof in), "--output", io_arg(1, yp, out, sizeof out));
  CU_ASSERT_EQUAL(p.code, 0);
  CU_ASSERT(summary_shape(p.out.p, "runs 3, "));
  CU_ASSERT_STRING_EQUAL(p.err.p, "");
  if (p.code != 0) show("run saxpy", &p);
  proc_free(&p);
  saxpy_expect(x, 1024, 4, y);
  CU_ASSERT(file_is(yp, y, sizeof y));

  /* `progrun FILE` is `progrun run FILE`; --ints run: the last run (2)
   * makes 2 trips. --quiet prints nothing. */
  p = RUN(ex, "--quiet", "--runs=3", "--ints=run", "--input", in, "--output", out);
  CU_ASSERT_EQUAL(p.code, 0);
  CU_ASSERT_STRING_EQUAL(p.out.p, "");
  CU_ASSERT_STRING_EQUAL(p.err.p, "");
  proc_free(&p);
  saxpy_expect(x, 1024, 2, y);
  CU_ASSERT(file_is(yp, y, sizeof y));

  /* No --input: x is 0, so y is too; no --ints: no trip. */
  RUN_EXITS(0, ex, "-q", "--output", out);
  memset(y, 0, sizeof y);
  CU_ASSERT(file_is(yp, y, sizeof y));
}

/* The stencil example, its loop ended by its flag: the cells as a plain
 * loop computes them, then the number of trips. */
static void test_run_stencil_stops_at_its_flag(void) {
  char ex[4096], up[4096], vp[4096], in[4200], out[4200];
  uint64_t u[64] = {0}, want[65];
  u[0] = 1000; /* a hot end, kept: heat spreads until nothing changes */
  u[40] = 77;
  write_file(tmp_path("stencil-u.bin", up, sizeof up), u, sizeof u);
  uint64_t trips = 0;
  for (bool changed = true; changed && trips < 1000; trips++) {
    uint64_t v[64];
    changed = false;
    for (size_t i = 0; i < 64; i++) {
      v[i] = i == 0 || i == 63 ? u[i] : (u[i - 1] + 2 * u[i] + u[i + 1]) >> 2;
      changed |= v[i] != u[i];
    }
    memcpy(u, v, sizeof u);
  }
  CU_ASSERT(trips > 1 && trips < 1000); /* the flag, not the trip count, ends it */
  memcpy(want, u, sizeof u);
  want[64] = trips;
  proc p = RUN("run", example_path(1, ex, sizeof ex), "--runs", "2", "--input",
               io_arg(0, up, in, sizeof in), "--output",
               io_arg(1, tmp_path("stencil-v.bin", vp, sizeof vp), out, sizeof out));
  CU_ASSERT_EQUAL(p.code, 0);
  CU_ASSERT_STRING_EQUAL(p.err.p, "");
  if (p.code != 0) show("run stencil", &p);
  proc_free(&p);
  CU_ASSERT(file_is(vp, want, sizeof want));
}

/* One host device, three ints, a Move of the ints into input 0: the
 * output shows the frame's ints of the last run. */
static void test_run_ints_take_run_and_rank(void) {
  char path[4096], op[4096], out[4200], want[8192];
  rig_desc *d = rig_desc_create();
  rig_desc_add_device(d, rig_host_isa());
  rig_desc_add_input(d, 0, 24);
  d->ints = 3;
  rig_desc_add_move(d, NULL, rig_desc_slot_ints(), rig_desc_slot_input(0), 24);
  write_desc(d, "ints.bin", path, sizeof path);
  rig_desc_free(d);
  io_arg(0, tmp_path("ints.out", op, sizeof op), out, sizeof out);

  RUN_EXITS(0, "run", path, "--runs", "4", "--ints", "run,rank,-7", "--output", out, "-q");
  int64_t w1[3] = {3, 0, -7};
  CU_ASSERT(file_is(op, w1, sizeof w1));

  /* Ints not given are 0. */
  RUN_EXITS(0, "run", path, "--ints", "5", "--output", out, "-q");
  int64_t w2[3] = {5, 0, 0};
  CU_ASSERT(file_is(op, w2, sizeof w2));

  /* More ints than the program's: the option does not fit the file. */
  proc p = RUN("run", path, "--ints", "1,2,3,4");
  CU_ASSERT_EQUAL(p.code, 2);
  snprintf(want, sizeof want, "progrun: %s: --ints: 4 ints for a program of 3\n", path);
  CU_ASSERT_STRING_EQUAL(p.err.p, want);
  proc_free(&p);

  static const char *const bad[] = {"1,,2", "x", "runs", "9223372036854775808", "1 "};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    p = RUN("run", path, "--ints", bad[i]);
    CU_ASSERT_EQUAL(p.code, 2);
    CU_ASSERT(strncmp(p.err.p, "progrun: run: --ints: '", 23) == 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(p.err.p, "usage:"));
    proc_free(&p);
  }
}

static void test_run_devices_map_and_refuse(void) {
  char ex[4096], xp[4096], yp[4096], in[4200], out[4200], want[8192];
  float x[1024], y[1024];
  saxpy_x(x, 1024);
  write_file(tmp_path("dev-x.bin", xp, sizeof xp), x, sizeof x);
  example_path(0, ex, sizeof ex);
  io_arg(0, xp, in, sizeof in);
  io_arg(1, tmp_path("dev-y.bin", yp, sizeof yp), out, sizeof out);
  RUN_EXITS(0, "run", ex, "--devices", "host,cpu:1", "--ints", "3", "--input", in, "--output", out);
  saxpy_expect(x, 1024, 3, y);
  CU_ASSERT(file_is(yp, y, sizeof y));

  struct {
    const char *list, *message;
  } cases[] = {
      {"host", "--devices: 1 devices for a program of 2"},
      {"host,cpu:0,cpu:1", "--devices: 3 devices for a program of 2"},
      {"host,gpu:9", "--devices: gpu:9: no such device"},
      {"cpu:0,cpu:1", "--devices: device 0: cpu:0 is \"cpu-%s\", not \"%s\""},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char msg[256];
    snprintf(msg, sizeof msg, cases[i].message, rig_host_isa(), rig_host_isa());
    proc p = RUN("run", ex, "--devices", cases[i].list);
    CU_ASSERT_EQUAL(p.code, 2);
    CU_ASSERT_STRING_EQUAL(p.out.p, "");
    snprintf(want, sizeof want, "progrun: %s: %s\n", ex, msg);
    CU_ASSERT_STRING_EQUAL(p.err.p, want);
    if (strcmp(p.err.p, want) != 0) show(cases[i].list, &p);
    proc_free(&p);
  }
}

/* Devices of an arch this machine lacks, or more cpu devices than it has:
 * the machine cannot run it (exit 1), naming the device. */
static void test_run_refuses_devices_the_machine_lacks(void) {
  char path[4096], want[8192];
  static const char *const archs[] = {"gfx90a", "sm_5"};
  for (size_t i = 0; i < 2; i++) {
    rig_desc *d = rig_desc_create();
    rig_desc_add_device(d, archs[i]);
    write_desc(d, "lacks.bin", path, sizeof path);
    rig_desc_free(d);
    proc p = RUN("run", path);
    CU_ASSERT_EQUAL(p.code, 1);
    snprintf(want, sizeof want, "progrun: %s: device 0: no ", path);
    CU_ASSERT(strncmp(p.err.p, want, strlen(want)) == 0);
    snprintf(want, sizeof want, "of arch \"%s\"", archs[i]);
    CU_ASSERT_PTR_NOT_NULL(strstr(p.err.p, want));
    if (p.code != 1) show(archs[i], &p);
    proc_free(&p);
  }
  char cpu[64];
  snprintf(cpu, sizeof cpu, "cpu-%s", rig_host_isa());
  rig_desc *d = rig_desc_create();
  for (int i = 0; i < 3; i++) rig_desc_add_device(d, cpu);
  write_desc(d, "three-cpus.bin", path, sizeof path);
  rig_desc_free(d);
  setenv("RIG_CPU_DEVICES", "2", 1); /* the child inherits it */
  proc p = RUN("run", path);
  unsetenv("RIG_CPU_DEVICES");
  CU_ASSERT_EQUAL(p.code, 1);
  snprintf(want, sizeof want, "progrun: %s: device 2: no free device of arch \"%s\"", path, cpu);
  CU_ASSERT(strncmp(p.err.p, want, strlen(want)) == 0);
  proc_free(&p);
}

/* Each RIG_* variable progrun reads is checked before anything runs: an
 * invalid value is refused with exit 2, naming it (docs/environment.md). */
static void test_an_invalid_environment_variable_is_refused_by_name(void) {
  static const struct {
    const char *name, *value, *message;
  } cases[] = {
      {"RIG_JOB_SILENCE", "0.5", "progrun: RIG_JOB_SILENCE=0.5: below the beat of 1 s\n"},
      {"RIG_JOB_SILENCE", "abc", "progrun: RIG_JOB_SILENCE=abc: not a number of seconds\n"},
      {"RIG_JOB_SILENCE", "-5", "progrun: RIG_JOB_SILENCE=-5: below the beat of 1 s\n"},
      {"RIG_JOB_SILENCE", "0", "progrun: RIG_JOB_SILENCE=0: below the beat of 1 s\n"},
      {"RIG_WORKERS", "abc", "progrun: RIG_WORKERS=abc: not a count\n"},
      {"RIG_WORKERS", "0", "progrun: RIG_WORKERS=0: outside 1..4096\n"},
      {"RIG_CPU_DEVICES", "-1", "progrun: RIG_CPU_DEVICES=-1: not a count\n"},
      {"RIG_CPU_DEVICES", "999", "progrun: RIG_CPU_DEVICES=999: outside 0..256\n"},
      {"RIG_TRACE", "yes", "progrun: RIG_TRACE=yes: neither 0 nor 1\n"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    setenv(cases[i].name, cases[i].value, 1); /* the child inherits it */
    proc p = RUN("info");
    unsetenv(cases[i].name);
    CU_ASSERT_EQUAL(p.code, 2);
    CU_ASSERT_STRING_EQUAL(p.err.p, cases[i].message);
    CU_ASSERT_STRING_EQUAL(p.out.p, "");
    proc_free(&p);
  }
  setenv("RIG_JOB_SILENCE", "2.5", 1); /* valid values pass */
  proc p = RUN("info");
  unsetenv("RIG_JOB_SILENCE");
  CU_ASSERT_EQUAL(p.code, 0);
  proc_free(&p);
}

/* info --json on one machine: one object, one machine, rank 0; another
 * argument is bad usage. */
static void test_info_json_gives_one_machine_here(void) {
  proc p = RUN("info", "--json");
  CU_ASSERT_EQUAL(p.code, 0);
  CU_ASSERT(strncmp(p.out.p, "{\n \"progrun\": \"" RIG_VERSION_STRING "\",\n", 18) == 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(p.out.p, "\"rank\": 0,"));
  CU_ASSERT_PTR_NOT_NULL(strstr(p.out.p, "\"cpuset\": "));
  CU_ASSERT_PTR_NOT_NULL(strstr(p.out.p, "\"name\": \"cpu:0\""));
  CU_ASSERT_STRING_EQUAL(p.err.p, "");
  proc_free(&p);
  p = RUN("info", "--yaml");
  CU_ASSERT_EQUAL(p.code, 2);
  CU_ASSERT(strncmp(p.err.p, "progrun: info: takes only --json, not '--yaml'\n", 47) == 0);
  proc_free(&p);
}

static void test_run_checks_input_and_output_files(void) {
  char ex[4096], missing[4096], big[4096], arg[8400], want[8192];
  example_path(0, ex, sizeof ex);
  tmp_path("no-such-input.bin", missing, sizeof missing);
  proc p = RUN("run", ex, "--input", io_arg(0, missing, arg, sizeof arg));
  CU_ASSERT_EQUAL(p.code, 2);
  snprintf(want, sizeof want, "progrun: cannot read %s: %s\n", missing, strerror(ENOENT));
  CU_ASSERT_STRING_EQUAL(p.err.p, want);
  proc_free(&p);

  static uint8_t bytes[4097];
  write_file(tmp_path("big.bin", big, sizeof big), bytes, sizeof bytes);
  p = RUN("run", ex, "--input", io_arg(1, big, arg, sizeof arg));
  CU_ASSERT_EQUAL(p.code, 2);
  snprintf(want, sizeof want, "progrun: --input 1=%s: 4097 bytes, more than the input's 4096\n",
           big);
  CU_ASSERT_STRING_EQUAL(p.err.p, want);
  proc_free(&p);
  /* A shorter file is zero-filled: 4095 bytes fit. */
  write_file(big, bytes, 4095);
  RUN_EXITS(0, "run", ex, "-q", "--input", arg);

  p = RUN("run", ex, "--output", "2=/dev/null");
  CU_ASSERT_EQUAL(p.code, 2);
  snprintf(want, sizeof want, "progrun: %s: --output 2: no such input (the program has 2)\n", ex);
  CU_ASSERT_STRING_EQUAL(p.err.p, want);
  proc_free(&p);

  tmp_path("no-dir/y.bin", big, sizeof big);
  p = RUN("run", ex, "-q", "--output", io_arg(1, big, arg, sizeof arg));
  CU_ASSERT_EQUAL(p.code, 2);
  snprintf(want, sizeof want, "progrun: cannot write %s: %s\n", big, strerror(ENOENT));
  CU_ASSERT_STRING_EQUAL(p.err.p, want);
  proc_free(&p);
}

static void test_run_refuses_bad_usage(void) {
  char ex[4096];
  example_path(0, ex, sizeof ex);
  const char *const cases[][5] = {
      {"run", NULL},
      {"run", ex, "--runs", "0", NULL},
      {"run", ex, "--runs", "-1", NULL},
      {"run", ex, "--runs", "x", NULL},
      {"run", ex, "--runs", "1.5", NULL},
      {"run", ex, "--runs", "", NULL},
      {"run", ex, "--runs", NULL},
      {"run", ex, "--runs", "4611686018427387905", NULL},
      {"run", ex, "--input", "0", NULL},
      {"run", ex, "--input", "x=y", NULL},
      {"run", ex, "--output", "0=", NULL},
      {"run", ex, "--devices", "host,,cpu:0", NULL},
      {"run", ex, "--frobnicate", NULL},
      {"run", ex, ex, NULL},
      {"--runs", "3", NULL},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    proc p = run_io(NULL, NULL, cases[i]);
    CU_ASSERT_EQUAL(p.code, 2);
    CU_ASSERT_STRING_EQUAL(p.out.p, "");
    CU_ASSERT(strncmp(p.err.p, "progrun: ", 9) == 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(p.err.p, "usage:"));
    if (p.code != 2 || !strstr(p.err.p, "usage:")) show(cases[i][2] ? cases[i][2] : "run", &p);
    proc_free(&p);
  }
  proc p = RUN("run", ex, "--input", "0=/dev/null", "--input", "0=/dev/null");
  CU_ASSERT_EQUAL(p.code, 2);
  CU_ASSERT(strncmp(p.err.p, "progrun: run: --input 0 given twice\n", 36) == 0);
  proc_free(&p);
}

/* A description that breaks a rule is refused before anything runs. */
static void test_run_refuses_a_broken_rule(void) {
  char path[4096], want[8192];
  rig_desc *d = rig_desc_create();
  rig_desc_add_device(d, rig_host_isa());
  rig_desc_add_alloc(d, 3, RIG_KIND_DEVICE, 64, RIG_COPIES_ONE);
  write_desc(d, "run-rule.bin", path, sizeof path);
  rig_desc_free(d);
  proc p = RUN("run", path);
  CU_ASSERT_EQUAL(p.code, 2);
  CU_ASSERT_STRING_EQUAL(p.out.p, "");
  snprintf(want, sizeof want, "progrun: %s: memory 0: device 3: no such device\n", path);
  CU_ASSERT_STRING_EQUAL(p.err.p, want);
  proc_free(&p);
}

/* Runs that fail at a step: exit 1, `run <r>: step <s>: ...`, after the
 * runs before it succeeded. */
static void test_run_failing_at_a_step_exits_1(void) {
  char path[4096], so[4096];
  /* A move of 8 bytes from byte 8 * run of a 16-byte input: run 2 reads
   * past it. */
  rig_desc *d = rig_desc_create();
  rig_desc_add_device(d, rig_host_isa());
  rig_desc_add_alloc(d, 0, RIG_KIND_DEVICE, 8, RIG_COPIES_ONE);
  rig_desc_add_input(d, 0, 16);
  d->ints = 1;
  rig_desc_step *mv =
      rig_desc_add_move(d, NULL, rig_desc_slot_input(0), rig_desc_slot_memory(0, 0, 8), 8);
  rig_desc_terms_add(d, &mv->u.move.src_offset, rig_desc_int(0), 8);
  write_desc(d, "past-input.bin", path, sizeof path);
  rig_desc_free(d);
  proc p = RUN("run", path, "--runs", "5", "--ints", "run");
  CU_ASSERT_EQUAL(p.code, 1);
  CU_ASSERT_STRING_EQUAL(p.out.p, "");
  CU_ASSERT(strncmp(p.err.p, "progrun: run 2: step 0: ", 24) == 0);
  if (p.code != 1) show("past-input", &p);
  proc_free(&p);

  /* A loop whose flag lies past its input's 8 bytes. */
  d = rig_desc_create();
  rig_desc_add_device(d, rig_host_isa());
  rig_desc_add_input(d, 0, 8);
  rig_desc_step *loop = rig_desc_add_loop(d, NULL, rig_desc_fixed(1));
  rig_desc_loop_set_flag(loop, rig_desc_slot_input(0), 100);
  write_desc(d, "flag-past.bin", path, sizeof path);
  rig_desc_free(d);
  p = RUN("run", path);
  CU_ASSERT_EQUAL(p.code, 1);
  CU_ASSERT(strncmp(p.err.p, "progrun: run 0: step 0: ", 24) == 0);
  if (p.code != 1) show("flag-past", &p);
  proc_free(&p);

  /* A launch of Int(0) groups: none for rank 0 refuses the step. */
  size_t n = 0;
  uint8_t *code =
      rig_test_read_file(rig_test_binary_path("examples/kernels/saxpy.so", so, sizeof so), &n);
  CU_ASSERT_PTR_NOT_NULL_FATAL(code);
  d = rig_desc_create();
  rig_desc_add_device(d, rig_host_isa());
  rig_desc_add_alloc(d, 0, RIG_KIND_DEVICE, 4096, RIG_COPIES_ONE);
  rig_desc_add_alloc(d, 0, RIG_KIND_DEVICE, 4096, RIG_COPIES_ONE);
  rig_desc_add_image(d, 0, code, n);
  free(code);
  d->ints = 1;
  rig_desc_submit *s = rig_desc_add_submit(d, NULL, 0);
  rig_desc_submit_add_slot(d, s, rig_desc_slot_memory(0, 0, 4096));
  rig_desc_submit_add_slot(d, s, rig_desc_slot_memory(1, 0, 4096));
  static const uint8_t params[24] = {[16] = 0, [19] = 0x40, [21] = 4}; /* a = 2, n = 1024 */
  rig_desc_part *l = rig_desc_submit_add_launch(d, s, 0, "saxpy", params, sizeof params,
                                                rig_desc_int(0), rig_desc_fixed(256));
  rig_desc_part_add_ref(d, l, 0, 0, RIG_USE_READ);
  rig_desc_part_add_ref(d, l, 1, 8, RIG_USE_WRITE);
  write_desc(d, "groups.bin", path, sizeof path);
  rig_desc_free(d);
  RUN_EXITS(0, "run", path, "--ints", "4", "-q");
  p = RUN("run", path, "--ints", "rank");
  CU_ASSERT_EQUAL(p.code, 1);
  CU_ASSERT(strncmp(p.err.p, "progrun: run 0: step 0: ", 24) == 0);
  if (p.code != 1) show("groups rank", &p);
  proc_free(&p);
}

/* The past-input description of test_run_failing_at_a_step_exits_1: with
 * --ints run, run 2 fails at its step (exit 1). Its one input is 16 bytes. */
static const char *write_past_input(char *buf, size_t size) {
  rig_desc *d = rig_desc_create();
  rig_desc_add_device(d, rig_host_isa());
  rig_desc_add_alloc(d, 0, RIG_KIND_DEVICE, 8, RIG_COPIES_ONE);
  rig_desc_add_input(d, 0, 16);
  d->ints = 1;
  rig_desc_step *mv =
      rig_desc_add_move(d, NULL, rig_desc_slot_input(0), rig_desc_slot_memory(0, 0, 8), 8);
  rig_desc_terms_add(d, &mv->u.move.src_offset, rig_desc_int(0), 8);
  write_desc(d, "past-input.bin", buf, size);
  rig_desc_free(d);
  return buf;
}

/* An output that cannot be written is refused with exit 2 before the first
 * run (which here would fail with exit 1), and no other output is written. */
static void test_run_checks_every_output_before_the_first_run(void) {
  char desc[4096], ok[4096], bad[4096], a1[8400], a2[8400], want[8400];
  write_past_input(desc, sizeof desc);
  tmp_path("early-ok.bin", ok, sizeof ok);
  const char *dirs[] = {"no-dir/y.bin", ""};
  int errs[] = {ENOENT, EISDIR};
  for (size_t i = 0; i < 2; i++) {
    tmp_path(dirs[i], bad, sizeof bad);
    proc p = RUN("run", desc, "--runs", "5", "--ints", "run", "--output",
                 io_arg(0, ok, a1, sizeof a1), "--output", io_arg(0, bad, a2, sizeof a2));
    CU_ASSERT_EQUAL(p.code, 2);
    snprintf(want, sizeof want, "progrun: cannot write %s: %s\n", bad, strerror(errs[i]));
    CU_ASSERT_STRING_EQUAL(p.err.p, want);
    if (p.code != 2) show("early output", &p);
    proc_free(&p);
    CU_ASSERT_EQUAL(access(ok, F_OK), -1);
  }
  /* A job file's output, run here (machine 0's part). */
  char job[4096], text[8400];
  snprintf(text, sizeof text,
           "{\"machines\": [{\"program\": \"%s\", \"ints\": [\"run\"], "
           "\"outputs\": {\"0\": \"no-dir/y.bin\"}}], \"runs\": 5}",
           desc);
  write_text(tmp_path("early-job.json", job, sizeof job), text);
  proc p = RUN("run", job);
  CU_ASSERT_EQUAL(p.code, 2);
  tmp_path("no-dir/y.bin", bad, sizeof bad);
  snprintf(want, sizeof want, "progrun: cannot write %s: %s\n", bad, strerror(ENOENT));
  CU_ASSERT_STRING_EQUAL(p.err.p, want);
  proc_free(&p);
}

/* --output replaces its file by a rename: a hard link to the old file
 * keeps the old bytes, and no temporary file is left. */
static void test_run_replaces_an_output_whole(void) {
  char dir[4096], ex[4096], out[4096], old[4096], arg[8400];
  CU_ASSERT_EQUAL_FATAL(mkdir(tmp_path("whole", dir, sizeof dir), 0777), 0);
  tmp_path("whole/y.bin", out, sizeof out);
  tmp_path("whole/old.bin", old, sizeof old);
  write_text(out, "old contents");
  CU_ASSERT_EQUAL_FATAL(link(out, old), 0);
  RUN_EXITS(0, "run", example_path(0, ex, sizeof ex), "-q", "--output",
            io_arg(1, out, arg, sizeof arg));
  struct stat st;
  CU_ASSERT(stat(out, &st) == 0 && st.st_size == 4096 && st.st_nlink == 1);
  CU_ASSERT(file_is(old, "old contents", 12));
  CU_ASSERT_EQUAL(entries(dir), 2);
}

/* Writing that fails midway (here past RLIMIT_FSIZE) keeps the old file
 * and leaves no temporary one, for --output and pack alike. */
static void test_a_failed_write_keeps_the_old_file(void) {
  char dir[4096], ex[4096], desc[4096], out[4096], arg[8400];
  write_past_input(desc, sizeof desc);
  CU_ASSERT_EQUAL_FATAL(mkdir(tmp_path("keep", dir, sizeof dir), 0777), 0);
  tmp_path("keep/y.bin", out, sizeof out);
  example_path(0, ex, sizeof ex);
  for (int i = 0; i < 2; i++) {
    write_text(out, "old contents");
    child_fsize = 8; /* both outputs are larger (16 bytes, a description) */
    proc p = i == 0 ? RUN("run", desc, "-q", "--output", io_arg(0, out, arg, sizeof arg))
                    : RUN("pack", ex, "-o", out);
    child_fsize = 0;
    CU_ASSERT_EQUAL(p.code, 2);
    CU_ASSERT(strncmp(p.err.p, "progrun: cannot write ", 22) == 0);
    if (p.code != 2) show("fsize", &p);
    proc_free(&p);
    CU_ASSERT(file_is(out, "old contents", 12));
    CU_ASSERT_EQUAL(entries(dir), 1);
  }
}

/* An output that is a symbolic link writes its target (the link stays); a
 * FIFO is written in place, not replaced. For pack -o and --output. */
static void test_outputs_follow_links_and_keep_special_files(void) {
  char dir[4096], ex[4096], link_path[4096], target[4096], fifo[4096], arg[8400];
  CU_ASSERT_EQUAL_FATAL(mkdir(tmp_path("special", dir, sizeof dir), 0777), 0);
  example_path(0, ex, sizeof ex);
  tmp_path("special/target.bin", target, sizeof target);
  tmp_path("special/link.bin", link_path, sizeof link_path);
  CU_ASSERT_EQUAL_FATAL(symlink("target.bin", link_path), 0);
  for (int i = 0; i < 2; i++) {
    if (i == 0)
      RUN_EXITS(0, "pack", ex, "-o", link_path);
    else
      RUN_EXITS(0, "run", ex, "-q", "--output", io_arg(1, link_path, arg, sizeof arg));
    struct stat st;
    CU_ASSERT(lstat(link_path, &st) == 0 && S_ISLNK(st.st_mode));
    size_t n = 0;
    char *b = rig_test_read_file(target, &n);
    CU_ASSERT(b && (i == 0 ? rig_desc_is_bytes(b, n) : n == 4096));
    free(b);
    unlink(target);
  }
  /* A dangling link makes its target. */
  RUN_EXITS(0, "pack", ex, "-o", link_path);
  CU_ASSERT_EQUAL(access(target, F_OK), 0);

  tmp_path("special/fifo", fifo, sizeof fifo);
  CU_ASSERT_EQUAL_FATAL(mkfifo(fifo, 0666), 0);
  for (int i = 0; i < 2; i++) {
    int rd = open(fifo, O_RDONLY | O_NONBLOCK);
    CU_ASSERT_FATAL(rd >= 0);
    if (i == 0)
      RUN_EXITS(0, "pack", ex, "-o", fifo);
    else
      RUN_EXITS(0, "run", ex, "-q", "--output", io_arg(1, fifo, arg, sizeof arg));
    struct stat st;
    CU_ASSERT(lstat(fifo, &st) == 0 && S_ISFIFO(st.st_mode));
    static char got[65536];
    ssize_t n = read(rd, got, sizeof got);
    CU_ASSERT(n > 0 && (i == 0 ? rig_desc_is_bytes(got, (size_t)n) : n == 4096));
    close(rd);
  }
}

/* FILE and --input files are read up to 1 GiB: a larger regular file is
 * refused unread, an endless one (/dev/zero, as FILE or as stdin) once it
 * passes the bound; exit 2. */
static void test_reading_stops_at_the_bound(void) {
  char big[4096], want[8400];
  int fd = open(tmp_path("sparse.bin", big, sizeof big), O_WRONLY | O_CREAT | O_TRUNC, 0666);
  CU_ASSERT_FATAL(fd >= 0);
  CU_ASSERT_EQUAL_FATAL(ftruncate(fd, (off_t)3 << 30), 0);
  close(fd);
  proc p = RUN("check", big);
  CU_ASSERT_EQUAL(p.code, 2);
  snprintf(want, sizeof want,
           "progrun: %s: 3221225472 bytes, more than the 1 GiB progrun reads of a file\n", big);
  CU_ASSERT_STRING_EQUAL(p.err.p, want);
  proc_free(&p);
  p = RUN("check", "/dev/zero");
  CU_ASSERT_EQUAL(p.code, 2);
  CU_ASSERT_STRING_EQUAL(p.err.p,
                         "progrun: /dev/zero: more than the 1 GiB progrun reads of a file\n");
  proc_free(&p);
  p = run_io(NULL, "/dev/zero", (const char *const[]){"check", "-", NULL});
  CU_ASSERT_EQUAL(p.code, 2);
  CU_ASSERT_STRING_EQUAL(p.err.p, "progrun: -: more than the 1 GiB progrun reads of a file\n");
  proc_free(&p);

  /* An input of 4 GiB: its file may not pass the bound either. */
  char desc[4096], arg[8400];
  rig_desc *d = rig_desc_create();
  rig_desc_add_device(d, rig_host_isa());
  rig_desc_add_input(d, 0, (int64_t)4 << 30);
  write_desc(d, "huge-input.bin", desc, sizeof desc);
  rig_desc_free(d);
  p = RUN("run", desc, "--input", io_arg(0, big, arg, sizeof arg));
  CU_ASSERT_EQUAL(p.code, 2);
  snprintf(want, sizeof want,
           "progrun: --input 0=%s: 3221225472 bytes, more than the 1 GiB progrun reads of a file\n",
           big);
  CU_ASSERT_STRING_EQUAL(p.err.p, want);
  proc_free(&p);
  unlink(big);
}

/* --runs takes any count up to 2^62 (here stopped by an output that does
 * not fit), and a job file's "runs" too; one more is bad usage. */
static void test_run_takes_up_to_2_to_the_62_runs(void) {
  char ex[4096], want[8400];
  example_path(0, ex, sizeof ex);
  proc p = RUN("run", ex, "--runs", "4611686018427387904", "--output", "2=/dev/null");
  CU_ASSERT_EQUAL(p.code, 2);
  snprintf(want, sizeof want, "progrun: %s: --output 2: no such input (the program has 2)\n", ex);
  CU_ASSERT_STRING_EQUAL(p.err.p, want);
  proc_free(&p);
  p = RUN("run", ex, "--runs", "4611686018427387905");
  CU_ASSERT_EQUAL(p.code, 2);
  CU_ASSERT_PTR_NOT_NULL(strstr(p.err.p, "progrun: run: --runs: '4611686018427387905' is not a "
                                         "number of runs from 1 to 4611686018427387904\n"));
  proc_free(&p);
  /* Past the runs whose times are kept one by one (2^20), a summary still. */
  char empty[4096];
  rig_desc *d = rig_desc_create();
  rig_desc_add_device(d, rig_host_isa());
  write_desc(d, "empty.bin", empty, sizeof empty);
  rig_desc_free(d);
  p = RUN("run", empty, "--runs", "1100000");
  CU_ASSERT_EQUAL(p.code, 0);
  CU_ASSERT(summary_shape(p.out.p, "runs 1100000, "));
  if (p.code != 0) show("many runs", &p);
  proc_free(&p);
}

/* ---- the summary, --warmup, --json, the progress line ---------------------- */

static void test_units_fit_the_time(void) {
  char b[32];
  CU_ASSERT_STRING_EQUAL(cli_format_ns(0, b, sizeof b), "0 ns");
  CU_ASSERT_STRING_EQUAL(cli_format_ns(812, b, sizeof b), "812 ns");
  CU_ASSERT_STRING_EQUAL(cli_format_ns(999.4, b, sizeof b), "999 ns");
  /* Never "1000 ns", "1000.0 us" or "1000.0 ms": the next unit. */
  CU_ASSERT_STRING_EQUAL(cli_format_ns(999.6, b, sizeof b), "1.0 us");
  CU_ASSERT_STRING_EQUAL(cli_format_ns(45049, b, sizeof b), "45.0 us");
  CU_ASSERT_STRING_EQUAL(cli_format_ns(999960, b, sizeof b), "1.0 ms");
  CU_ASSERT_STRING_EQUAL(cli_format_ns(1.5e6, b, sizeof b), "1.5 ms");
  CU_ASSERT_STRING_EQUAL(cli_format_ns(999.96e6, b, sizeof b), "1.00 s");
  CU_ASSERT_STRING_EQUAL(cli_format_ns(2e9, b, sizeof b), "2.00 s");
  CU_ASSERT_STRING_EQUAL(cli_format_ns(7200e9, b, sizeof b), "7200.00 s");
}

static void test_warmup_runs_are_left_out_of_the_figures(void) {
  char ex[4096];
  example_path(0, ex, sizeof ex);
  proc p = RUN("run", ex, "--runs", "5", "--warmup", "2");
  CU_ASSERT_EQUAL(p.code, 0);
  CU_ASSERT(summary_shape(p.out.p, "runs 3, "));
  if (p.code != 0) show("warmup", &p);
  proc_free(&p);
  /* --warmup 0 leaves every run in. */
  p = RUN("run", ex, "--runs=4", "--warmup=0");
  CU_ASSERT(summary_shape(p.out.p, "runs 4, "));
  proc_free(&p);
}

static void test_warmup_of_every_run_is_bad_usage(void) {
  char ex[4096];
  example_path(0, ex, sizeof ex);
  proc p = RUN("run", ex, "--runs", "3", "--warmup", "3");
  CU_ASSERT_EQUAL(p.code, 2);
  CU_ASSERT_STRING_EQUAL(p.out.p, "");
  const char *want = "progrun: run: --warmup 3 leaves none of the 3 runs to measure (give more "
                     "--runs)\n";
  CU_ASSERT(strncmp(p.err.p, want, strlen(want)) == 0);
  proc_free(&p);
  p = RUN("run", ex, "--warmup", "x");
  CU_ASSERT_EQUAL(p.code, 2);
  want = "progrun: run: --warmup: 'x' is not a number of runs from 0 to 4611686018427387903\n";
  CU_ASSERT(strncmp(p.err.p, want, strlen(want)) == 0);
  proc_free(&p);
}

/* The figures' fields of o, as ints where they are ints. */
static bool has_figures(json_t *o, json_int_t runs) {
  static const char *const ints[] = {"min_ns", "median_ns", "p99_ns", "max_ns"};
  bool ok = json_is_object(o) && json_integer_value(json_object_get(o, "runs")) == runs;
  for (size_t i = 0; ok && i < 4; i++) ok = json_is_integer(json_object_get(o, ints[i]));
  ok = ok && json_is_number(json_object_get(o, "mean_ns")) &&
       json_is_number(json_object_get(o, "stddev_ns"));
  ok = ok &&
       json_integer_value(json_object_get(o, "min_ns")) <=
           json_integer_value(json_object_get(o, "median_ns")) &&
       json_integer_value(json_object_get(o, "median_ns")) <=
           json_integer_value(json_object_get(o, "max_ns"));
  return ok;
}

static void test_json_writes_the_figures_of_the_job_and_each_machine(void) {
  char ex[4096], path[4096];
  example_path(0, ex, sizeof ex);
  tmp_path("figures.json", path, sizeof path);
  proc p = RUN("run", ex, "--runs", "4", "--warmup", "1", "--json", path, "--quiet");
  CU_ASSERT_EQUAL(p.code, 0);
  CU_ASSERT_STRING_EQUAL(p.out.p, "");
  if (p.code != 0) show("json", &p);
  proc_free(&p);
  json_error_t jerr;
  json_t *root = json_load_file(path, 0, &jerr);
  CU_ASSERT_PTR_NOT_NULL_FATAL(root);
  json_t *job = json_object_get(root, "job"), *machines = json_object_get(root, "machines");
  CU_ASSERT(has_figures(job, 3));
  CU_ASSERT_EQUAL(json_integer_value(json_object_get(job, "warmup")), 1);
  CU_ASSERT_EQUAL(json_integer_value(json_object_get(job, "machines")), 1);
  json_t *command = json_object_get(job, "command");
  CU_ASSERT(json_is_array(command) && json_array_size(command) == 10);
  CU_ASSERT_STRING_EQUAL(json_string_value(json_array_get(command, 1)), "run");
  CU_ASSERT_STRING_EQUAL(json_string_value(json_array_get(command, 2)), ex);
  json_t *hosts = json_object_get(job, "hosts");
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  CU_ASSERT(json_is_array(hosts) && json_array_size(hosts) == 1);
  CU_ASSERT_STRING_EQUAL(json_string_value(json_array_get(hosts, 0)), host);
  CU_ASSERT(json_is_array(machines) && json_array_size(machines) == 1);
  json_t *m0 = json_array_get(machines, 0);
  CU_ASSERT(has_figures(m0, 3));
  CU_ASSERT_EQUAL(json_integer_value(json_object_get(m0, "machine")), 0);
  CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(m0, "host")), host);
  json_decref(root);
}

static void test_json_to_an_unwritable_path_is_refused_before_any_run(void) {
  char ex[4096], path[4096], want[4200];
  example_path(0, ex, sizeof ex);
  tmp_path("no-dir/figures.json", path, sizeof path);
  proc p = RUN("run", ex, "--json", path);
  CU_ASSERT_EQUAL(p.code, 2);
  CU_ASSERT_STRING_EQUAL(p.out.p, "");
  snprintf(want, sizeof want, "progrun: cannot write %s: No such file or directory\n", path);
  CU_ASSERT_STRING_EQUAL(p.err.p, want);
  proc_free(&p);
}

/* ---- --trace ------------------------------------------------------------------ */

/* saxpy's steps on its two devices (the host, cpu:0): a track of submits
 * and one of work for each, every slice of a track after the one before,
 * each step's work from its submit on, and the run counter 0, 1, 2. */
static void test_a_trace_shows_every_step_per_device_in_order_with_a_run_counter(void) {
  char ex[4096], path[4096];
  example_path(0, ex, sizeof ex);
  tmp_path("saxpy-trace.json", path, sizeof path);
  proc p = RUN("run", ex, "--runs", "3", "--ints", "4", "--trace", path);
  CU_ASSERT_EQUAL(p.code, 0);
  CU_ASSERT(summary_shape(p.out.p, "runs 3, "));
  if (p.code != 0) show("run --trace", &p);
  proc_free(&p);
  trace_facts f;
  bool ok = trace_check(path, 1, 3, &f);
  CU_ASSERT(ok);
  if (!ok) fprintf(stderr, "%s: %s\n", path, f.why);
  CU_ASSERT_EQUAL(f.devices[0], 2);
  /* Two moves, 4 trips of the loop's two Submits, a move: 11 steps a run. */
  CU_ASSERT_EQUAL(f.submits, 3 * 11);
  CU_ASSERT_EQUAL(f.works, f.submits);
  CU_ASSERT_EQUAL(f.handovers, 0);
}

/* A --trace that cannot be written (a directory, a missing directory) is
 * refused with exit 2 before the first run (which would fail, exit 1):
 * nothing is printed on stdout and no output written. */
static void test_a_bad_trace_path_is_refused_before_any_run(void) {
  char desc[4096], ok[4096], bad[4096], a1[8400], want[8400];
  write_past_input(desc, sizeof desc);
  tmp_path("trace-ok.bin", ok, sizeof ok);
  const char *dirs[] = {"no-dir/t.json", ""};
  int errs[] = {ENOENT, EISDIR};
  for (size_t i = 0; i < 2; i++) {
    tmp_path(dirs[i], bad, sizeof bad);
    proc p = RUN("run", desc, "--runs", "5", "--ints", "run", "--output",
                 io_arg(0, ok, a1, sizeof a1), "--trace", bad);
    CU_ASSERT_EQUAL(p.code, 2);
    snprintf(want, sizeof want, "progrun: cannot write %s: %s\n", bad, strerror(errs[i]));
    CU_ASSERT_STRING_EQUAL(p.err.p, want);
    CU_ASSERT_STRING_EQUAL(p.out.p, "");
    if (p.code != 2) show("bad --trace", &p);
    proc_free(&p);
    CU_ASSERT_EQUAL(access(ok, F_OK), -1);
  }
}

/* --trace takes one path: none, an empty one, or two are bad usage. */
static void test_trace_without_a_path_or_twice_is_bad_usage(void) {
  char ex[4096], a[4096], b[4096];
  example_path(0, ex, sizeof ex);
  tmp_path("t-a.json", a, sizeof a);
  tmp_path("t-b.json", b, sizeof b);
  const char *const cases[][7] = {{"run", ex, "--trace", NULL},
                                  {"run", ex, "--trace=", NULL},
                                  {"run", ex, "--trace", a, "--trace", b}};
  const char *const wants[] = {"progrun: run: --trace needs a value\n",
                               "progrun: run: --trace needs a path\n",
                               "progrun: run: --trace given twice\n"};
  for (size_t i = 0; i < 3; i++) {
    proc p = run_io(NULL, NULL, cases[i]);
    CU_ASSERT_EQUAL(p.code, 2);
    CU_ASSERT(strncmp(p.err.p, wants[i], strlen(wants[i])) == 0);
    if (p.code != 2 || strncmp(p.err.p, wants[i], strlen(wants[i])) != 0) show("--trace usage", &p);
    proc_free(&p);
    CU_ASSERT_EQUAL(access(a, F_OK), -1);
  }
}

static void test_progress_forces_the_line_and_no_progress_suppresses_it(void) {
  char ex[4096];
  example_path(0, ex, sizeof ex);
  /* stdout and stderr are pipes here: only --progress shows the line. */
  proc p = RUN("run", ex, "--runs", "3", "--progress");
  CU_ASSERT_EQUAL(p.code, 0);
  const char *first = "\rprogrun: run 1/3, ";
  CU_ASSERT(strncmp(p.err.p, first, strlen(first)) == 0);
  /* Erased at the end: spaces over it, back to the line's start. */
  size_t n = strlen(p.err.p);
  CU_ASSERT(n > 2 && p.err.p[n - 1] == '\r' && p.err.p[n - 2] == ' ');
  CU_ASSERT(summary_shape(p.out.p, "runs 3, "));
  proc_free(&p);
  p = RUN("run", ex, "--runs", "3", "--no-progress");
  CU_ASSERT_EQUAL(p.code, 0);
  CU_ASSERT_STRING_EQUAL(p.err.p, "");
  proc_free(&p);
  p = RUN("run", ex, "--runs", "3");
  CU_ASSERT_STRING_EQUAL(p.err.p, "");
  proc_free(&p);
}

/* ---- job files --------------------------------------------------------------- */

/* Runs the job file `text` (written to `name`) on this machine; its path
 * in job. */
static proc run_job_text(const char *name, const char *text, char *job, size_t size) {
  write_text(tmp_path(name, job, size), text);
  return RUN("run", job);
}

/* "every" serves many machines: an output of it without {rank} is refused
 * (exit 2), as --output without {rank} is for many machines. */
static void test_a_job_file_refuses_every_outputs_without_rank(void) {
  char ex[4096], text[8400], job[4096], want[8400];
  snprintf(text, sizeof text,
           "{\"machines\": [], \"every\": {\"program\": \"%s\", \"outputs\": {\"1\": \"v.bin\"}}}",
           example_path(0, ex, sizeof ex));
  proc p = run_job_text("every-norank.json", text, job, sizeof job);
  CU_ASSERT_EQUAL(p.code, 2);
  snprintf(want, sizeof want,
           "progrun: %s: every.outputs: input 1: \"v.bin\" needs {rank}: every machine past "
           "\"machines\" writes it\n",
           job);
  CU_ASSERT_STRING_EQUAL(p.err.p, want);
  proc_free(&p);
}

/* Every {rank} of an output path is replaced, not only the first. */
static void test_a_job_file_replaces_every_rank_in_a_path(void) {
  char ex[4096], text[8400], job[4096], out[4096];
  snprintf(text, sizeof text,
           "{\"machines\": [{\"program\": \"%s\", \"outputs\": {\"1\": \"r{rank}-{rank}.bin\"}}]}",
           example_path(0, ex, sizeof ex));
  proc p = run_job_text("two-ranks.json", text, job, sizeof job);
  CU_ASSERT_EQUAL(p.code, 0);
  if (p.code != 0) show("two ranks", &p);
  proc_free(&p);
  CU_ASSERT_EQUAL(access(tmp_path("r0-0.bin", out, sizeof out), F_OK), 0);
}

/* A job file's messages start with its name and say what is wrong: a
 * "program" that is no string, an input's number not in canonical decimal
 * ("00" and "+0" are not input 0). */
static void test_job_file_errors_name_the_file_and_what_is_wrong(void) {
  char ex[4096], text[8400], job[4096], want[8400];
  example_path(0, ex, sizeof ex);
  static const struct {
    const char *machine, *message;
  } cases[] = {
      {"{\"program\": 5}", "machines[0]: \"program\" is not a string (a description's path)"},
      {"{}", "machines[0]: no \"program\" (a description's path)"},
      {"{\"program\": \"%s\", \"inputs\": {\"00\": \"x.bin\"}}",
       "machines[0].inputs: \"00\" is not an input's number (0, 1, ... in decimal)"},
      {"{\"program\": \"%s\", \"outputs\": {\"+0\": \"x.bin\"}}",
       "machines[0].outputs: \"+0\" is not an input's number (0, 1, ... in decimal)"},
      {"{\"program\": \"%s\", \"colour\": 1}", "machines[0]: unknown field \"colour\""},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char machine[4200];
    snprintf(machine, sizeof machine, cases[i].machine, ex);
    snprintf(text, sizeof text, "{\"machines\": [%s]}", machine);
    proc p = run_job_text("bad-job.json", text, job, sizeof job);
    CU_ASSERT_EQUAL(p.code, 2);
    snprintf(want, sizeof want, "progrun: %s: %s\n", job, cases[i].message);
    CU_ASSERT_STRING_EQUAL(p.err.p, want);
    proc_free(&p);
  }
  proc p = run_job_text("bad-job.json", "{\"machines\": 3}", job, sizeof job);
  snprintf(want, sizeof want, "progrun: %s: \"machines\" is not an array\n", job);
  CU_ASSERT_STRING_EQUAL(p.err.p, want);
  proc_free(&p);
}

/* A job file's rails are checked field by field, each message naming the
 * file and the JSON path; a rail naming a machine the job lacks is refused
 * (exit 2) before anything runs. */
static void test_job_file_rails_are_checked_field_by_field(void) {
  char ex[4096], text[8400], job[4096], want[8400];
  example_path(0, ex, sizeof ex);
  static const struct {
    const char *rails, *message;
  } cases[] = {
      {"3", "rails: not an array of rails"},
      {"[{\"between\": [0, 1], \"send\": []}]", "rails[0]: no \"id\" (a rail's number from 1)"},
      {"[{\"id\": 1, \"between\": [0], \"send\": []}]",
       "rails[0].between: not the two machines of the rail"},
      {"[{\"id\": 1, \"between\": [1, 1], \"send\": []}]",
       "rails[0].between: machine 1 and itself"},
      {"[{\"id\": 1, \"between\": [0, 1], \"send\": [{\"src\": 0, \"dst\": 0}]}]",
       "rails[0].send[0]: no \"length\" (a number of bytes)"},
      {"[{\"id\": 1, \"between\": [0, 1], \"send\": [{\"src\": 0, \"dst\": 0, "
       "\"length\": 0}]}]",
       "rails[0]: send 0: a length of 0"},
      {"[{\"id\": 1, \"between\": [0, 1], \"receive\": [{\"src\": -8, \"dst\": 0, "
       "\"length\": 8}]}]",
       "rails[0]: receive 0: a negative offset (-8)"},
      {"[{\"id\": 1, \"between\": [0, 1]}]", "rails[0]: a rail with no transfer either way"},
      {"[{\"id\": 1, \"between\": [0, 1], \"colour\": 2}]", "rails[0]: unknown field \"colour\""},
      {"[{\"id\": 2, \"between\": [0, 1], \"send\": [{\"src\": 0, \"dst\": 0, \"length\": 8}]}, "
       "{\"id\": 2, \"between\": [1, 0], \"send\": [{\"src\": 0, \"dst\": 0, \"length\": 8}]}]",
       "rails[1]: id 2 is rails[0]'s too"},
      /* Well formed, but run here the job has one machine. */
      {"[{\"id\": 1, \"between\": [0, 1], \"send\": [{\"src\": 0, \"dst\": 0, \"length\": 8}]}]",
       "rails[0].between: machine 1 is not in this job of 1 machine"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    snprintf(text, sizeof text, "{\"machines\": [{\"program\": \"%s\"}], \"rails\": %s}", ex,
             cases[i].rails);
    proc p = run_job_text("bad-rails.json", text, job, sizeof job);
    CU_ASSERT_EQUAL(p.code, 2);
    snprintf(want, sizeof want, "progrun: %s: %s\n", job, cases[i].message);
    CU_ASSERT_STRING_EQUAL(p.err.p, want);
    if (strcmp(p.err.p, want) != 0) show("rails", &p);
    proc_free(&p);
  }
}

/* A rail whose end this host cannot hold (one transfer of 2^59 bytes: an
 * end of 1 EiB, past its shared memory) is refused by check and by run
 * before anything is made, naming the rail, the machine and the room. */
static void test_a_job_file_rail_past_the_hosts_room_is_refused_by_check_and_run(void) {
  char ex[4096], text[8400], job[4096], want[8400];
  snprintf(text, sizeof text,
           "{\"machines\": [{\"program\": \"%s\"}], \"rails\": [{\"id\": 1, \"between\": [0, "
           "1], \"send\": [{\"src\": 0, \"dst\": 0, \"length\": 576460752303423488}]}]}",
           example_path(0, ex, sizeof ex));
  write_text(tmp_path("huge-rail.json", job, sizeof job), text);
  snprintf(want, sizeof want,
           "progrun: %s: rails[0]: machine 0: its end needs 1 EiB of shared memory, past half of "
           "the ",
           job);
  const char *const cmds[] = {"check", "run"};
  for (int i = 0; i < 2; i++) {
    proc p = RUN(cmds[i], job);
    CU_ASSERT_EQUAL(p.code, 2);
    bool named = strncmp(p.err.p, want, strlen(want)) == 0 &&
                 strstr(p.err.p, " /dev/shm has free\n") != NULL;
    CU_ASSERT(named);
    if (p.code != 2 || !named) show(cmds[i], &p);
    proc_free(&p);
  }
}

/* A file that is neither bytes (its magic) nor JSON is "not a program
 * description" (docs/format.md), then what each reading found. */
static void test_a_file_neither_bytes_nor_json_is_not_a_program_description(void) {
  char path[4096], want[8400];
  static const struct {
    const char *text, *found;
  } cases[] = {
      {"", "line 1 column 0: unexpected token near end of file"},
      {"rig.programX{}", "line 1 column 3: invalid token near 'rig'"},
  };
  for (size_t i = 0; i < 2; i++) {
    write_text(tmp_path("neither.bin", path, sizeof path), cases[i].text);
    proc p = RUN("check", path);
    CU_ASSERT_EQUAL(p.code, 2);
    snprintf(want, sizeof want,
             "progrun: %s: not a program description: neither the bytes' magic nor JSON: %s\n",
             path, cases[i].found);
    CU_ASSERT_STRING_EQUAL(p.err.p, want);
    proc_free(&p);
  }
}

/* An image the device refuses is named: `image <i>: <device>: <why>`. */
static void test_an_image_a_device_refuses_is_named(void) {
  char path[4096], want[8400];
  rig_desc *d = rig_desc_create();
  rig_desc_add_device(d, rig_host_isa());
  rig_desc_add_image(d, 0, "AB", 2);
  write_desc(d, "short-image.bin", path, sizeof path);
  rig_desc_free(d);
  proc p = RUN("run", path);
  CU_ASSERT_EQUAL(p.code, 1);
  snprintf(want, sizeof want, "progrun: %s: host: image 0: ", path);
  CU_ASSERT(strncmp(p.err.p, want, strlen(want)) == 0);
  if (strncmp(p.err.p, want, strlen(want)) != 0) show("short image", &p);
  proc_free(&p);
}

/* A path too long for a message is shortened in its middle, so that the
 * reason after it is never cut off. */
static void test_a_long_path_keeps_the_reason(void) {
  char ex[4096], path[4096], arg[8400];
  example_path(0, ex, sizeof ex);
  tmp_path("", path, sizeof path);
  for (int i = 0; i < 6; i++) {
    size_t n = strlen(path);
    memset(path + n, 'a' + i, 100);
    strcpy(path + n + 100, "/");
  }
  strcat(path, "y.bin");
  const char *opts[] = {"--input", "--output"};
  const char *verbs[] = {"cannot read ", "cannot write "};
  for (int i = 0; i < 2; i++) {
    proc p = RUN("run", ex, opts[i], io_arg(0, path, arg, sizeof arg));
    CU_ASSERT_EQUAL(p.code, 2);
    size_t n = strlen(p.err.p);
    const char *reason = ": No such file or directory\n";
    CU_ASSERT(n > strlen(reason) && strcmp(p.err.p + n - strlen(reason), reason) == 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(p.err.p, verbs[i]));
    CU_ASSERT_PTR_NOT_NULL(strstr(p.err.p, "b...e"));
    CU_ASSERT_PTR_NOT_NULL(strstr(p.err.p, "/y.bin: "));
    if (n <= strlen(reason) || strcmp(p.err.p + n - strlen(reason), reason) != 0)
      show("long path", &p);
    proc_free(&p);
  }
}

/* An option of one value given twice, or a word after --version, is bad
 * usage (exit 2, the usage on stderr) rather than silently one of them:
 * pack -o a -o b writes neither. */
static void test_a_repeated_option_or_extra_word_is_bad_usage(void) {
  char ex[4096], a[4096], b[4096];
  example_path(0, ex, sizeof ex);
  tmp_path("twice-a.bin", a, sizeof a);
  tmp_path("twice-b.bin", b, sizeof b);
  const char *const cases[][7] = {
      {"--version", "extra", NULL},
      {"pack", ex, "-o", a, "-o", b, NULL},
      {"dump", ex, "--json", "--json", NULL},
      {"run", ex, "--runs", "2", "--runs=3", NULL},
      {"run", ex, "--ints", "1", "--ints", "2", NULL},
      {"run", ex, "--devices", "host,cpu:0", "--devices", "host,cpu:1", NULL},
      {"run", ex, "--warmup", "1", "--warmup=2", NULL},
      {"run", ex, "--json", a, "--json", b, NULL},
      {"run", ex, "--progress", "--no-progress", NULL},
  };
  static const char *const said[] = {
      "progrun: --version takes nothing more, not 'extra'\n",
      NULL,
      "progrun: dump: --json given twice\n",
      "progrun: run: --runs given twice\n",
      "progrun: run: --ints given twice\n",
      "progrun: run: --devices given twice\n",
      "progrun: run: --warmup given twice\n",
      "progrun: run: --json given twice\n",
      "progrun: run: --progress and --no-progress both given\n",
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    proc p = run_io(NULL, NULL, cases[i]);
    CU_ASSERT_EQUAL(p.code, 2);
    CU_ASSERT_STRING_EQUAL(p.out.p, "");
    CU_ASSERT_PTR_NOT_NULL(strstr(p.err.p, "usage:"));
    if (said[i]) CU_ASSERT(strncmp(p.err.p, said[i], strlen(said[i])) == 0);
    if (p.code != 2) show(cases[i][0], &p);
    proc_free(&p);
  }
  CU_ASSERT_EQUAL(access(a, F_OK), -1);
  CU_ASSERT_EQUAL(access(b, F_OK), -1);
}

/* A job file run here that fails (a load refused, a run failing at its
 * step) exits with the message, having freed what it made: under the
 * asan preset LeakSanitizer would change the exit status otherwise. */
static void test_a_job_file_failing_here_exits_with_its_message(void) {
  char desc[4096], image[4096], text[8400], job[4096];
  write_past_input(desc, sizeof desc);
  rig_desc *d = rig_desc_create();
  rig_desc_add_device(d, rig_host_isa());
  rig_desc_add_image(d, 0, "AB", 2);
  write_desc(d, "job-short-image.bin", image, sizeof image);
  rig_desc_free(d);
  snprintf(text, sizeof text,
           "{\"runs\": 5, \"machines\": [{\"program\": \"%s\", \"ints\": [\"run\"]}]}", desc);
  proc p = run_job_text("failing-run.json", text, job, sizeof job);
  CU_ASSERT_EQUAL(p.code, 1);
  CU_ASSERT(strncmp(p.err.p, "progrun: run 2 on machine 0: step 0: ", 37) == 0);
  if (p.code != 1) show("failing run", &p);
  proc_free(&p);
  snprintf(text, sizeof text, "{\"machines\": [{\"program\": \"%s\"}]}", image);
  p = run_job_text("failing-load.json", text, job, sizeof job);
  CU_ASSERT_EQUAL(p.code, 1);
  CU_ASSERT_PTR_NOT_NULL(strstr(p.err.p, ": machine 0: host: image 0: "));
  if (p.code != 1) show("failing load", &p);
  proc_free(&p);
  snprintf(text, sizeof text, "{\"machines\": [{\"program\": \"%s\", \"devices\": [\"cpu:0\"]}]}",
           desc);
  p = run_job_text("failing-devices.json", text, job, sizeof job);
  CU_ASSERT_EQUAL(p.code, 2);
  CU_ASSERT_PTR_NOT_NULL(strstr(p.err.p, ": machine 0: --devices: device 0: cpu:0 is "));
  if (p.code != 2) show("failing devices", &p);
  proc_free(&p);
}

/* ---- job files where a description goes ------------------------------------ */

/* check takes a job file: every machine's program, read and checked against
 * its part and the rails it is an end of, gives "ok". */
static void test_check_passes_the_example_job_files(void) {
  static const char *const jobs[] = {"examples/pipeline.json", "examples/ring-2.json",
                                     "examples/ring-4.json"};
  char path[4096];
  for (size_t i = 0; i < sizeof jobs / sizeof jobs[0]; i++) {
    proc p = RUN("check", rig_test_binary_path(jobs[i], path, sizeof path));
    CU_ASSERT_EQUAL(p.code, 0);
    CU_ASSERT_STRING_EQUAL(p.out.p, "ok\n");
    CU_ASSERT_STRING_EQUAL(p.err.p, "");
    if (p.code != 0) show(jobs[i], &p);
    proc_free(&p);
  }
}

/* A job file check refuses: exit 2, the message naming the job file, then
 * the JSON path, then (for a program's rule) the program's file. */
static void test_check_of_a_job_file_names_the_file_and_the_json_path(void) {
  char ex[4096], produce[4096], consume[4096], missing[4096], text[16800], job[4096], want[16800],
      msg[8400], every[4200];
  example_path(0, ex, sizeof ex);
  rig_test_binary_path("examples/pipeline_produce.json", produce, sizeof produce);
  rig_test_binary_path("examples/pipeline_consume.json", consume, sizeof consume);
  /* Machine 1, the other end of the rail, past "machines". */
  snprintf(every, sizeof every, ", \"every\": {\"program\": \"%s\"}", consume);
  tmp_path("no-such-program.json", missing, sizeof missing);
  static const char rail[] = "{\"id\": 1, \"between\": [0, 1], \"send\": [{\"src\": 0, \"dst\": 0, "
                             "\"length\": %d}], \"receive\": [{\"src\": 0, \"dst\": 0, "
                             "\"length\": 8}]}";
  static const struct {
    int program; /* 0 saxpy, 1 pipeline_produce, 2 missing */
    const char *machine, *rails, *message;
  } cases[] = {
      {0, "\"devices\": [\"host\"]", NULL, "machines[0].devices: 1 devices for a program of 2"},
      {0, "\"devices\": [\"host\", \"gpu:0\"]", NULL,
       "machines[0].devices: element 1: \"gpu:0\" is not a device's name (host, cpu:N, cuda:N)"},
      {0, "\"devices\": [\"host\", \"cpu:01\"]", NULL,
       "machines[0].devices: element 1: \"cpu:01\" is not a device's name (host, cpu:N, cuda:N)"},
      {0, "\"devices\": [\"cpu:0\", \"cpu:1\"]", NULL,
       "machines[0].devices: element 0: \"cpu:0\" cannot stand for device 0, of arch \"%s\""},
      {0, "\"ints\": [1, 2, \"run\"]", NULL, "machines[0].ints: 3 ints for a program of 2"},
      {0, "\"inputs\": {\"5\": \"x.bin\"}", NULL,
       "machines[0].inputs: input 5: no such input (the program has 2)"},
      {0, "\"outputs\": {\"2\": \"y.bin\"}", NULL,
       "machines[0].outputs: input 2: no such input (the program has 2)"},
      {2, NULL, NULL, "machines[0].program: cannot read %s: No such file or directory"},
      {1, NULL, NULL,
       "machines[0].program: %s: memory 0: no rail 1 of \"rails\" has machine 0 "
       "at an end"},
      {1, NULL, "8",
       "machines[0].program: %s: step 0: memory 0: a view of 8192 bytes at 0 "
       "outside its 512 bytes"},
      {1, NULL, "4096", "rails[0].between: machine 1 is not in this job of 1 machine"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const char *program = cases[i].program == 0 ? ex : cases[i].program == 1 ? produce : missing;
    char rails[512] = "";
    if (cases[i].rails) {
      char one[400];
      snprintf(one, sizeof one, rail, atoi(cases[i].rails));
      snprintf(rails, sizeof rails, ", \"rails\": [%s]", one);
    }
    bool with_every = cases[i].rails && strcmp(cases[i].rails, "8") == 0;
    snprintf(text, sizeof text, "{\"machines\": [{\"program\": \"%s\"%s%s}]%s%s}", program,
             cases[i].machine ? ", " : "", cases[i].machine ? cases[i].machine : "", rails,
             with_every ? every : "");
    write_text(tmp_path("check-job.json", job, sizeof job), text);
    proc p = RUN("check", job);
    CU_ASSERT_EQUAL(p.code, 2);
    CU_ASSERT_STRING_EQUAL(p.out.p, "");
    if (i == 3)
      snprintf(msg, sizeof msg, cases[i].message, rig_host_isa());
    else
      snprintf(msg, sizeof msg, cases[i].message, program);
    snprintf(want, sizeof want, "progrun: %s: %s\n", job, msg);
    CU_ASSERT_STRING_EQUAL(p.err.p, want);
    if (strcmp(p.err.p, want) != 0) show(text, &p);
    proc_free(&p);
  }
}

/* check of a job file finds a Ready leaf of a rail the machine is no end
 * of, naming the step, as the load would refuse it. */
static void test_check_of_a_job_file_finds_a_ready_of_a_rail_the_machine_lacks(void) {
  char prog[4096], text[8400], job[4096], want[16800];
  rig_desc *d = rig_desc_create();
  rig_desc_add_device(d, rig_host_isa());
  rig_desc_add_image(d, 0, "\177ELF", 4);
  rig_desc_submit *s = rig_desc_add_submit(d, NULL, 0);
  rig_desc_part *p = rig_desc_submit_add_launch(d, s, 0, "k", "\0\0\0\0\0\0\0\0", 8,
                                                rig_desc_fixed(1), rig_desc_fixed(1));
  rig_desc_hole *h = rig_desc_data_add_hole(d, rig_desc_part_params(p), 0, RIG_W64, 0, 0);
  rig_desc_terms_add(d, &h->terms, rig_desc_leaf_value(rig_desc_ready(5)), 1);
  write_desc(d, "ready-5.bin", prog, sizeof prog);
  rig_desc_free(d);
  snprintf(text, sizeof text,
           "{\"machines\": [{\"program\": \"%s\"}, {\"program\": \"%s\"}], \"rails\": "
           "[{\"id\": 5, \"between\": [1, 0], \"send\": [{\"src\": 0, \"dst\": 0, "
           "\"length\": 8}]}]}",
           prog, prog);
  write_text(tmp_path("ready-job.json", job, sizeof job), text);
  proc r = RUN("check", job);
  CU_ASSERT_EQUAL(r.code, 0);
  if (r.code != 0) show(text, &r);
  proc_free(&r);
  snprintf(text, sizeof text, "{\"machines\": [{\"program\": \"%s\"}]}", prog);
  write_text(job, text);
  r = RUN("check", job);
  CU_ASSERT_EQUAL(r.code, 2);
  snprintf(want, sizeof want,
           "progrun: %s: machines[0].program: %s: step 0: Ready(rail 5): no rail 5 of \"rails\" "
           "has machine 0 at an end\n",
           job, prog);
  CU_ASSERT_STRING_EQUAL(r.err.p, want);
  if (strcmp(r.err.p, want) != 0) show(text, &r);
  proc_free(&r);
}

/* dump takes a job file: the job's line, each machine's part (its file,
 * devices, ints, inputs, outputs) and program listing two spaces in, then
 * `every`, then the rails; --json of a job file is bad usage. */
static void test_dump_lists_a_job_files_machines_and_rails(void) {
  char prog[4096], job[4096], want[16800];
  rig_desc *d = rig_desc_create();
  rig_desc_add_device(d, "x86_64");
  rig_desc_add_input(d, 0, 8);
  d->ints = 3;
  write_desc(d, "job-dump.bin", prog, sizeof prog);
  rig_desc_free(d);
  write_text(tmp_path("job-dump.json", job, sizeof job),
             "{\"runs\": 7, \"machines\": [{\"program\": \"job-dump.bin\", \"devices\": "
             "[\"host\"], \"ints\": [3, \"run\", \"rank\"], \"inputs\": {\"0\": \"x.bin\"}}], "
             "\"every\": {\"program\": \"job-dump.bin\", \"outputs\": {\"0\": \"o{rank}.bin\"}}, "
             "\"rails\": [{\"id\": 2, \"between\": [0, 1], \"send\": [{\"src\": 0, \"dst\": 8, "
             "\"length\": 16}]}]}");
  static const char listing[] = "  program: 1 device, 0 memory, 0 images, 1 input, 3 ints, 0 "
                                "steps\n"
                                "  devices:\n"
                                "    0 x86_64\n"
                                "  memory:\n"
                                "    (none)\n"
                                "  images:\n"
                                "    (none)\n"
                                "  inputs:\n"
                                "    0 device 0, 8 bytes\n"
                                "  steps:\n"
                                "    (none)\n";
  snprintf(want, sizeof want,
           "job: 1 machine, every given, 1 rail, runs 7\n"
           "machine 0:\n"
           "  file: %s\n"
           "  devices: host\n"
           "  ints: 3, run, rank\n"
           "  inputs:\n"
           "    0 %s/x.bin\n"
           "  outputs:\n"
           "    (none)\n"
           "%s"
           "every:\n"
           "  file: %s\n"
           "  devices: by arch\n"
           "  ints: (none)\n"
           "  inputs:\n"
           "    (none)\n"
           "  outputs:\n"
           "    0 %s/o{rank}.bin\n"
           "%s"
           "rails:\n"
           "  rail 2 between machines 0 and 1\n"
           "    send:\n"
           "      0 src 0, dst 8, length 16\n"
           "    receive:\n"
           "      (none)\n",
           prog, tmp_dir, listing, prog, tmp_dir, listing);
  proc p = RUN("dump", job);
  CU_ASSERT_EQUAL(p.code, 0);
  CU_ASSERT_STRING_EQUAL(p.out.p, want);
  CU_ASSERT_STRING_EQUAL(p.err.p, "");
  if (strcmp(p.out.p, want) != 0) show("dump job", &p);
  proc_free(&p);
  p = RUN("dump", "--json", job);
  CU_ASSERT_EQUAL(p.code, 2);
  snprintf(want, sizeof want, "progrun: dump: --json lists a description, and %s is a job file\n",
           job);
  CU_ASSERT(strncmp(p.err.p, want, strlen(want)) == 0);
  proc_free(&p);
}

/* dump of a job file whose program cannot be read prints nothing on stdout
 * and names the file and the JSON path. */
static void test_dump_of_a_job_file_names_the_program_it_cannot_read(void) {
  char missing[4096], text[8400], job[4096], want[16800];
  tmp_path("no-such-dump-program.json", missing, sizeof missing);
  snprintf(text, sizeof text, "{\"machines\": [], \"every\": {\"program\": \"%s\"}}", missing);
  write_text(tmp_path("dump-missing.json", job, sizeof job), text);
  proc p = RUN("dump", job);
  CU_ASSERT_EQUAL(p.code, 2);
  CU_ASSERT_STRING_EQUAL(p.out.p, "");
  snprintf(want, sizeof want, "progrun: %s: every.program: cannot read %s: %s\n", job, missing,
           strerror(ENOENT));
  CU_ASSERT_STRING_EQUAL(p.err.p, want);
  proc_free(&p);
}

/* ---- dot ------------------------------------------------------------------ */

/* The lines of a graph that are edges, in order, joined. */
static void edges_of(const char *graph, char *out, size_t size) {
  out[0] = '\0';
  size_t used = 0;
  for (const char *line = graph; *line;) {
    const char *end = strchr(line, '\n');
    size_t n = end ? (size_t)(end - line) + 1 : strlen(line);
    if (memmem(line, n, " -> ", 4) && used + n < size) {
      memcpy(out + used, line, n);
      used += n;
      out[used] = '\0';
    }
    line += n;
  }
}

static void write_launch(rig_desc *d, int64_t device, int64_t image, const int64_t *memory,
                         const rig_desc_use *uses, size_t n) {
  rig_desc_submit *s = rig_desc_add_submit(d, NULL, device);
  rig_desc_part *p =
      rig_desc_submit_add_launch(d, s, image, "k", NULL, 0, rig_desc_fixed(1), rig_desc_fixed(1));
  for (size_t i = 0; i < n; i++) {
    rig_desc_submit_add_slot(d, s, rig_desc_slot_memory(memory[i], 0, 64));
    rig_desc_part_add_ref(d, p, (int64_t)i, 0, uses[i]);
  }
}

/* dot draws an edge from each step (each part of a Submit) to the earlier
 * ones it follows: another device's conflicting use of the same memory,
 * named with the two uses, or the same device's earlier work ("device
 * order"); a read after a read, or two Unordered uses, draw none. */
static void test_dot_draws_what_each_step_follows_and_why(void) {
  char path[4096], got[8192];
  rig_desc *d = rig_desc_create();
  rig_desc_add_device(d, "x86_64");
  rig_desc_add_device(d, "cpu-x86_64");
  rig_desc_add_alloc(d, 0, RIG_KIND_PINNED, 64, RIG_COPIES_ONE);
  rig_desc_add_alloc(d, 0, RIG_KIND_PINNED, 64, RIG_COPIES_ONE);
  rig_desc_add_image(d, 0, "\177ELF", 4);
  rig_desc_add_image(d, 1, "\177ELF", 4);
  rig_desc_add_input(d, 0, 64);
  /* step 0 on cpu writes memory 0; step 1 on the host reads it, writes
   * memory 1 and then reads it (Words); the Move reads memory 1; step 3 on
   * cpu uses memory 0 Unordered. */
  write_launch(d, 1, 1, (int64_t[]){0}, (rig_desc_use[]){RIG_USE_WRITE}, 1);
  write_launch(d, 0, 0, (int64_t[]){0, 1}, (rig_desc_use[]){RIG_USE_READ, RIG_USE_WRITE}, 2);
  rig_desc_submit_add_words(d, &d->steps.items[1].u.submit, rig_desc_view_of(1, 0, 8));
  rig_desc_add_move(d, NULL, rig_desc_slot_memory(1, 0, 64), rig_desc_slot_input(0), 64);
  write_launch(d, 1, 1, (int64_t[]){0}, (rig_desc_use[]){RIG_USE_UNORDERED}, 1);
  write_desc(d, "dot-a.bin", path, sizeof path);
  rig_desc_free(d);
  proc p = RUN("dot", path);
  CU_ASSERT_EQUAL(p.code, 0);
  CU_ASSERT(strncmp(p.out.p, "digraph program {\n", 18) == 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(p.out.p, "subgraph cluster_s1 {"));
  edges_of(p.out.p, got, sizeof got);
  CU_ASSERT_STRING_EQUAL(got, "  s1p0 -> s0p0 [label=\"memory 0: Read after Write\"];\n"
                              "  s1p1 -> s1p0 [label=\"device order\"];\n"
                              "  s2 -> s1p0 [label=\"memory 1: Read after Write\"];\n"
                              "  s3p0 -> s0p0 [label=\"device order\"];\n"
                              "  s3p0 -> s1p0 [label=\"memory 0: Unordered after Read\"];\n");
  if (p.code != 0) show("dot", &p);
  proc_free(&p);

  /* A loop is a cluster; its head reads the flag, which each body step's
   * Unordered use follows; the two Unordered uses do not follow each
   * other. */
  d = rig_desc_create();
  rig_desc_add_device(d, "x86_64");
  rig_desc_add_device(d, "cpu-x86_64");
  rig_desc_add_alloc(d, 0, RIG_KIND_PINNED, 64, RIG_COPIES_ONE);
  rig_desc_add_image(d, 0, "\177ELF", 4);
  rig_desc_add_image(d, 1, "\177ELF", 4);
  rig_desc_step *loop = rig_desc_add_loop(d, NULL, rig_desc_fixed(4));
  rig_desc_loop_set_flag(loop, rig_desc_slot_memory(0, 0, 8), 0);
  for (int64_t dev = 0; dev < 2; dev++) {
    rig_desc_submit *s = rig_desc_add_submit(d, loop, dev);
    rig_desc_part *part =
        rig_desc_submit_add_launch(d, s, dev, "k", NULL, 0, rig_desc_fixed(1), rig_desc_fixed(1));
    rig_desc_submit_add_slot(d, s, rig_desc_slot_memory(0, 0, 64));
    rig_desc_part_add_ref(d, part, 0, 0, RIG_USE_UNORDERED);
  }
  write_desc(d, "dot-b.bin", path, sizeof path);
  rig_desc_free(d);
  p = RUN("dot", path);
  CU_ASSERT_EQUAL(p.code, 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(p.out.p, "subgraph cluster_s0 {"));
  edges_of(p.out.p, got, sizeof got);
  CU_ASSERT_STRING_EQUAL(got, "  s1p0 -> s0 [label=\"memory 0: Unordered after Read\"];\n"
                              "  s2p0 -> s0 [label=\"memory 0: Unordered after Read\"];\n");
  proc_free(&p);
}

/* dot of a job file: a cluster per machine, each step's node named after
 * its machine, and an edge per rail labelled with its id. */
static void test_dot_of_a_job_file_draws_a_cluster_per_machine_and_an_edge_per_rail(void) {
  char path[4096];
  proc p = RUN("dot", rig_test_binary_path("examples/pipeline.json", path, sizeof path));
  CU_ASSERT_EQUAL(p.code, 0);
  CU_ASSERT(strncmp(p.out.p, "digraph job {\n", 14) == 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(p.out.p, "  subgraph cluster_m0 {\n"));
  CU_ASSERT_PTR_NOT_NULL(strstr(p.out.p, "  subgraph cluster_m1 {\n"));
  CU_ASSERT_PTR_NOT_NULL(strstr(p.out.p, "m1_s0p0 [label="));
  CU_ASSERT_PTR_NOT_NULL(strstr(p.out.p, "  m0 -> m1 [label=\"rail 1\", ltail=cluster_m0, "
                                         "lhead=cluster_m1, style=dashed];\n"));
  if (p.code != 0) show("dot job", &p);
  proc_free(&p);
}

/* ---- usage ---------------------------------------------------------------- */

static void test_help_prints_usage_on_stdout(void) {
  static const char *const forms[] = {"--help", "-h", "help"};
  for (size_t i = 0; i < 3; i++) {
    proc p = RUN(forms[i]);
    CU_ASSERT_EQUAL(p.code, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(p.out.p, "usage:"));
    CU_ASSERT_PTR_NOT_NULL(strstr(p.out.p, "progrun check FILE"));
    CU_ASSERT_PTR_NOT_NULL(strstr(p.out.p, "progrun dump FILE [--json]"));
    CU_ASSERT_PTR_NOT_NULL(strstr(p.out.p, "progrun pack FILE -o OUT"));
    CU_ASSERT_STRING_EQUAL(p.err.p, "");
    proc_free(&p);
  }
  proc p = RUN("pack", "--help");
  CU_ASSERT_EQUAL(p.code, 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(p.out.p, "usage:"));
  proc_free(&p);
}

static void test_version_is_the_library_version(void) {
  proc p = RUN("--version");
  CU_ASSERT_EQUAL(p.code, 0);
  CU_ASSERT_STRING_EQUAL(p.out.p, "progrun " RIG_VERSION_STRING "\n");
  CU_ASSERT_STRING_EQUAL(p.err.p, "");
  proc_free(&p);
}

static void test_bad_usage_exits_2_with_usage_on_stderr(void) {
  char ex[4096];
  const char *e = example_path(0, ex, sizeof ex);
  const char *const cases[][5] = {
      {NULL},
      {"frobnicate", NULL},
      {"--frobnicate", NULL},
      {"check", NULL},
      {"dump", NULL},
      {"pack", NULL},
      {"check", e, e, NULL},
      {"check", "--json", e, NULL},
      {"dump", "--yaml", e, NULL},
      {"pack", e, NULL},
      {"pack", e, "-o", NULL},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    proc p = run_io(NULL, NULL, cases[i]);
    CU_ASSERT_EQUAL(p.code, 2);
    CU_ASSERT_STRING_EQUAL(p.out.p, "");
    CU_ASSERT(strncmp(p.err.p, "progrun: ", 9) == 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(p.err.p, "usage:"));
    if (p.code != 2) show(cases[i][0] ? cases[i][0] : "(no argument)", &p);
    proc_free(&p);
  }
}

/* A file that cannot be read: its path and the system's reason, exit 2. */
static void test_unreadable_file_names_its_path(void) {
  char missing[4096], want[8192];
  tmp_path("no-such-file.bin", missing, sizeof missing);
  static const char *const cmds[] = {"check", "dump", "pack"};
  for (size_t i = 0; i < 3; i++) {
    proc p = i == 2 ? RUN(cmds[i], missing, "-o", "/dev/null") : RUN(cmds[i], missing);
    CU_ASSERT_EQUAL(p.code, 2);
    CU_ASSERT_STRING_EQUAL(p.out.p, "");
    snprintf(want, sizeof want, "progrun: cannot read %s: %s\n", missing, strerror(ENOENT));
    CU_ASSERT_STRING_EQUAL(p.err.p, want);
    proc_free(&p);
  }
  proc p = RUN("check", tmp_dir);
  CU_ASSERT_EQUAL(p.code, 2);
  snprintf(want, sizeof want, "progrun: cannot read %s: %s\n", tmp_dir, strerror(EISDIR));
  CU_ASSERT_STRING_EQUAL(p.err.p, want);
  proc_free(&p);
}

void rig_test_register(void) {
  static CU_TestInfo check[] = {
      {"check passes every example", test_check_passes_every_example},
      {"check gives the decoder message", test_check_gives_the_decoder_message},
      {"check gives the rule message", test_check_gives_the_rule_message},
      {"a file neither bytes nor JSON is not a program description",
       test_a_file_neither_bytes_nor_json_is_not_a_program_description},
      CU_TEST_INFO_NULL};
  static CU_TestInfo dump[] = {
      {"dump lists every field", test_dump_lists_every_field},
      {"dump shows sections and step numbers", test_dump_shows_sections_and_step_numbers},
      {"dump --json repacks to the same bytes", test_dump_json_repacks_to_the_same_bytes},
      {"dump takes any description", test_dump_takes_any_description},
      CU_TEST_INFO_NULL};
  static CU_TestInfo pack[] = {
      {"pack then check round trips", test_pack_then_check_round_trips},
      {"pack converts a description that breaks a rule",
       test_pack_converts_a_description_that_breaks_a_rule},
      {"pack writes whole or not at all", test_pack_writes_whole_or_not_at_all},
      {"JSON file paths are relative to the JSON file",
       test_json_file_paths_are_relative_to_the_json_file},
      {"a dash reads stdin", test_a_dash_reads_stdin},
      CU_TEST_INFO_NULL};
  static CU_TestInfo usage[] = {
      {"help prints usage on stdout", test_help_prints_usage_on_stdout},
      {"version is the library version", test_version_is_the_library_version},
      {"bad usage exits 2 with usage on stderr", test_bad_usage_exits_2_with_usage_on_stderr},
      {"unreadable file names its path", test_unreadable_file_names_its_path},
      {"a repeated option or extra word is bad usage",
       test_a_repeated_option_or_extra_word_is_bad_usage},
      CU_TEST_INFO_NULL};
  static CU_TestInfo run[] = {
      {"run saxpy gives checkable output", test_run_saxpy_gives_checkable_output},
      {"run stencil stops at its flag", test_run_stencil_stops_at_its_flag},
      {"run ints take run and rank", test_run_ints_take_run_and_rank},
      {"run devices map and refuse", test_run_devices_map_and_refuse},
      {"run refuses devices the machine lacks", test_run_refuses_devices_the_machine_lacks},
      {"run checks input and output files", test_run_checks_input_and_output_files},
      {"info --json gives one machine here", test_info_json_gives_one_machine_here},
      {"an invalid environment variable is refused by name",
       test_an_invalid_environment_variable_is_refused_by_name},
      {"run refuses bad usage", test_run_refuses_bad_usage},
      {"run refuses a broken rule", test_run_refuses_a_broken_rule},
      {"run failing at a step exits 1", test_run_failing_at_a_step_exits_1},
      {"run checks every output before the first run",
       test_run_checks_every_output_before_the_first_run},
      {"run replaces an output whole", test_run_replaces_an_output_whole},
      {"a failed write keeps the old file", test_a_failed_write_keeps_the_old_file},
      {"outputs follow links and keep special files",
       test_outputs_follow_links_and_keep_special_files},
      {"reading stops at the bound", test_reading_stops_at_the_bound},
      {"run takes up to 2^62 runs", test_run_takes_up_to_2_to_the_62_runs},
      {"an image a device refuses is named", test_an_image_a_device_refuses_is_named},
      {"a long path keeps the reason", test_a_long_path_keeps_the_reason},
      {"units fit the time", test_units_fit_the_time},
      {"warmup runs are left out of the figures", test_warmup_runs_are_left_out_of_the_figures},
      {"warmup of every run is bad usage", test_warmup_of_every_run_is_bad_usage},
      {"json writes the figures of the job and each machine",
       test_json_writes_the_figures_of_the_job_and_each_machine},
      {"json to an unwritable path is refused before any run",
       test_json_to_an_unwritable_path_is_refused_before_any_run},
      {"a trace shows every step per device in order with a run counter",
       test_a_trace_shows_every_step_per_device_in_order_with_a_run_counter},
      {"a bad trace path is refused before any run",
       test_a_bad_trace_path_is_refused_before_any_run},
      {"trace without a path or twice is bad usage",
       test_trace_without_a_path_or_twice_is_bad_usage},
      {"progress forces the line and no-progress suppresses it",
       test_progress_forces_the_line_and_no_progress_suppresses_it},
      CU_TEST_INFO_NULL};
  static CU_TestInfo jobs[] = {
      {"a job file refuses every outputs without rank",
       test_a_job_file_refuses_every_outputs_without_rank},
      {"a job file replaces every rank in a path", test_a_job_file_replaces_every_rank_in_a_path},
      {"job file errors name the file and what is wrong",
       test_job_file_errors_name_the_file_and_what_is_wrong},
      {"job file rails are checked field by field", test_job_file_rails_are_checked_field_by_field},
      {"a job file rail past the host's room is refused by check and run",
       test_a_job_file_rail_past_the_hosts_room_is_refused_by_check_and_run},
      {"a job file failing here exits with its message",
       test_a_job_file_failing_here_exits_with_its_message},
      {"check passes the example job files", test_check_passes_the_example_job_files},
      {"check of a job file names the file and the JSON path",
       test_check_of_a_job_file_names_the_file_and_the_json_path},
      {"check of a job file finds a Ready of a rail the machine lacks",
       test_check_of_a_job_file_finds_a_ready_of_a_rail_the_machine_lacks},
      {"dump lists a job file's machines and rails",
       test_dump_lists_a_job_files_machines_and_rails},
      {"dump of a job file names the program it cannot read",
       test_dump_of_a_job_file_names_the_program_it_cannot_read},
      CU_TEST_INFO_NULL};
  rig_test_add_suite("cli: check", check);
  rig_test_add_suite("cli: dump", dump);
  rig_test_add_suite("cli: pack", pack);
  rig_test_add_suite("cli: run", run);
  rig_test_add_suite("cli: usage", usage);
  static CU_TestInfo dot[] = {
      {"dot draws what each step follows and why", test_dot_draws_what_each_step_follows_and_why},
      {"dot of a job file draws a cluster per machine and an edge per rail",
       test_dot_of_a_job_file_draws_a_cluster_per_machine_and_an_edge_per_rail},
      CU_TEST_INFO_NULL};
  rig_test_add_suite("cli: job files", jobs);
  rig_test_add_suite("cli: dot", dot);
}

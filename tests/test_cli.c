/* The progrun command (docs/cli.md): check, dump, pack, run, help and
 * version, run as a child process whose stdout, stderr and exit status are
 * compared. */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"     /* cli_format_ns, cli_summary_line (cli_units.c); cli_times_* (cli_times.c) */
#include "cli_job.h" /* cli_trace_text (launcher/progrun/cli_trace.c) */
#include "cli_trace.h" /* cli_trace_narrow (launcher/progrun/cli_trace_clock.c) */
#include "desc_gen.h"
#include "describe.h" /* examples/embed: saxpy built in C */
#include "proc.h"
#include "rig/rig_core.h"
#include "rig/rig_desc.h"
#include "rig_test.h"
#include "trace_check.h"
#include "wait.h"

/* ---- running progrun ------------------------------------------------------ */

/* A child that runs longer than this is killed and counts as failed: a
 * hang's bound (wait.h), not a bet on how fast progrun is. */
#define RUN_TIMEOUT_MS ((int64_t)(RIG_HANG_S * 1000))

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
/* When set, the child's stdout is this file (made anew), not a pipe. */
static const char *child_stdout;
/* When nonzero, the child gets this signal once its stderr holds
 * child_signal_after (an interrupt in the middle of its runs). */
static int child_signal;
static const char *child_signal_after;

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
    int out = child_stdout ? open(child_stdout, O_WRONLY | O_CREAT | O_TRUNC, 0666) : po[1];
    if (fd < 0 || out < 0 || dup2(fd, 0) < 0 || dup2(out, 1) < 0 || dup2(pe[1], 2) < 0) _exit(126);
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
        if (i == 1 && child_signal && strstr(r.err.p, child_signal_after)) {
          kill(pid, child_signal);
          child_signal = 0;
        }
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

/* Runs `script` under bash; its stdout. */
static char *bash_out(const char *script) {
  char *argv[] = {"/bin/bash", "-c", (char *)script, NULL};
  rig_proc p = rig_proc_run(argv, NULL, 30);
  CU_ASSERT_EQUAL(p.code, 0);
  if (p.code != 0) fprintf(stderr, "\nbash: exit %d\n%s\n%s\n", p.code, p.out, p.err);
  char *out = p.out;
  p.out = NULL;
  rig_proc_free(&p);
  return out;
}

/* Whether stderr is a usage error as progrun says one: a line "progrun:
 * <what>", then one pointing to the help of `cmd` (NULL: progrun's own),
 * and nothing more. */
static bool usage_said(const char *err, const char *cmd) {
  char see[64];
  snprintf(see, sizeof see, "see 'progrun %s%s--help'\n", cmd ? cmd : "", cmd ? " " : "");
  const char *nl = strchr(err, '\n');
  return strncmp(err, "progrun: ", 9) == 0 && nl && strcmp(nl + 1, see) == 0;
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

/* What progrun says of an output whose folder is missing. */
static const char *no_folder(const char *path, char *buf, size_t size) {
  char folder[4096];
  snprintf(folder, sizeof folder, "%s", path);
  char *slash = strrchr(folder, '/');
  if (slash) *slash = '\0';
  snprintf(buf, size, "its folder %s does not exist", folder);
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
static const char *const examples[] = {"examples/saxpy.json", "examples/stencil.json",
                                       "examples/hello.json", "examples/scale.json"};
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
  char path[4096], want[12800];
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
/* saxpy.so's bytes, a real host image; *len its length. */
static void *saxpy_image(size_t *len) {
  char so[4096];
  return rig_test_read_file(rig_test_binary_path("examples/kernels/saxpy.so", so, sizeof so), len);
}

/* check finds what a load would refuse without a device: a launch of a
 * function its image lacks (naming what it has), an image that is not an
 * ELF shared object (the C source given by mistake), an arch that names a
 * device; a job file's program alike, after its part's path. */
static void test_check_finds_what_a_load_would_refuse_without_a_device(void) {
  char path[4096], job[4096], text[8400], want[12800];
  size_t len = 0;
  void *image = saxpy_image(&len);
  CU_ASSERT_PTR_NOT_NULL_FATAL(image);
  static const char source[] = "void saxpy(void) {}\n";
  for (int k = 0; k < 3; k++) {
    rig_desc *d = rig_desc_create();
    rig_desc_add_device(d, k == 2 ? "host" : "x86_64");
    if (k == 1)
      rig_desc_add_image(d, 0, source, sizeof source - 1);
    else
      rig_desc_add_image(d, 0, image, len);
    rig_desc_submit *s = rig_desc_add_submit(d, NULL, 0);
    rig_desc_submit_add_launch(d, s, 0, k == 0 ? "saxpi" : "saxpy", NULL, 0, rig_desc_fixed(1),
                               rig_desc_fixed(1));
    write_desc(d, "code.bin", path, sizeof path);
    rig_desc_free(d);
    proc p = RUN("check", path);
    CU_ASSERT_EQUAL(p.code, 2);
    CU_ASSERT_STRING_EQUAL(p.out.p, "");
    static const char *const said[] = {
        "step 0: image 0 has no function \"saxpi\" (it exports: saxpy, scale)",
        "image 0 (device 0, x86_64): not an ELF shared object (20 bytes: no ELF magic)",
        "devices[0]: \"host\" names a device, not an arch: a description names the arch of each "
        "device (this machine's host is "};
    snprintf(want, sizeof want, "progrun: %s: %s", path, said[k]);
    CU_ASSERT(strncmp(p.err.p, want, strlen(want)) == 0);
    if (strncmp(p.err.p, want, strlen(want)) != 0) show("check code", &p);
    proc_free(&p);
  }
  /* The last, in a job file. */
  snprintf(text, sizeof text, "{\"machines\": [{\"program\": \"%s\"}]}", path);
  write_text(tmp_path("code-job.json", job, sizeof job), text);
  proc p = RUN("check", job);
  CU_ASSERT_EQUAL(p.code, 2);
  snprintf(want, sizeof want, "progrun: %s: machines[0].program: %s: devices[0]: \"host\" names",
           job, path);
  CU_ASSERT(strncmp(p.err.p, want, strlen(want)) == 0);
  if (strncmp(p.err.p, want, strlen(want)) != 0) show("check code job", &p);
  proc_free(&p);
  free(image);
}

static void test_check_gives_the_rule_message(void) {
  char path[4096], want[12800];
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
  char json[4096], bin[4096], want[12800];
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
  char dir[4096], src[4096], out[4096], bad[4096], want[12800];
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
  char why[4200];
  snprintf(want, sizeof want, "progrun: cannot write %s: %s\n", out,
           no_folder(out, why, sizeof why));
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
  /* check reads k.bin beside d.json: its 4 bytes are no ELF object. */
  p = RUN("check", path);
  CU_ASSERT_EQUAL(p.code, 2);
  CU_ASSERT_PTR_NOT_NULL(
      strstr(p.err.p, "image 0 (device 0, x86_64): not an ELF shared object (4 bytes: "));
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
 * E, stddev F per run", each figure a number and the one unit of the
 * line. */
static bool summary_shape(const char *line, const char *start) {
  if (strncmp(line, start, strlen(start)) != 0) return false;
  const char *at = line + strlen(start);
  static const char *const names[] = {"min", "median", "mean", "p99", "max", "stddev"};
  char first[8] = "";
  for (size_t i = 0; i < 6; i++) {
    char name[16], unit[8];
    double v = 0;
    int used = 0;
    if (sscanf(at, "%15s %lf %7[a-z]%n", name, &v, unit, &used) != 3) return false;
    if (strcmp(name, names[i]) != 0) return false;
    if (strcmp(unit, "ns") && strcmp(unit, "us") && strcmp(unit, "ms") && strcmp(unit, "s"))
      return false;
    if (i == 0) snprintf(first, sizeof first, "%s", unit);
    if (strcmp(unit, first) != 0) return false;
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
  char path[4096], op[4096], out[4200], want[12800];
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
    CU_ASSERT(usage_said(p.err.p, "run"));
    proc_free(&p);
  }
}

static void test_run_devices_map_and_refuse(void) {
  char ex[4096], xp[4096], yp[4096], in[4200], out[4200], want[12800];
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
  char path[4096], want[12800];
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
      {"RIG_JOB_SILENCE", "0.5",
       "progrun: RIG_JOB_SILENCE=0.5: below 3 s, three of the job's 1 s beats\n"},
      {"RIG_JOB_SILENCE", "1.01",
       "progrun: RIG_JOB_SILENCE=1.01: below 3 s, three of the job's 1 s beats\n"},
      {"RIG_JOB_SILENCE", "abc", "progrun: RIG_JOB_SILENCE=abc: not a number of seconds\n"},
      {"RIG_JOB_SILENCE", "-5",
       "progrun: RIG_JOB_SILENCE=-5: below 3 s, three of the job's 1 s beats\n"},
      {"RIG_JOB_SILENCE", "0",
       "progrun: RIG_JOB_SILENCE=0: below 3 s, three of the job's 1 s beats\n"},
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
  setenv("RIG_JOB_SILENCE", "3.5", 1); /* valid values pass */
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
  /* The two counts of memory, apart: the NUMA nodes' and the system's. */
  CU_ASSERT_PTR_NOT_NULL(strstr(p.out.p, "\"numa_bytes\": "));
  CU_ASSERT_PTR_NOT_NULL(strstr(p.out.p, "\"memory_bytes\": "));
  CU_ASSERT_STRING_EQUAL(p.err.p, "");
  proc_free(&p);
  p = RUN("info", "--yaml");
  CU_ASSERT_EQUAL(p.code, 2);
  CU_ASSERT(strncmp(p.err.p, "progrun: info: takes only --json, not '--yaml'\n", 47) == 0);
  proc_free(&p);
}

/* RIG_UCX_TLS, where set, gives librig's transports in the place of
 * UCX_TLS (left to an MPI on UCX); info shows both. */
static void test_rig_ucx_tls_takes_the_place_of_ucx_tls_for_librig(void) {
  setenv("UCX_TLS", "^tcp", 1);
  setenv("RIG_UCX_TLS", "tcp,self", 1);
  proc p = RUN("info", "--json");
  CU_ASSERT_EQUAL(p.code, 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(p.out.p, "\"transports\": [\n     \"self/memory0\",\n     \"tcp/"));
  CU_ASSERT_PTR_NULL(strstr(p.out.p, "posix/"));
  CU_ASSERT_PTR_NOT_NULL(strstr(p.out.p, "\"UCX_TLS\": \"^tcp\""));
  CU_ASSERT_PTR_NOT_NULL(strstr(p.out.p, "\"RIG_UCX_TLS\": \"tcp,self\""));
  proc_free(&p);
  setenv("RIG_UCX_TLS", "sysv,self", 1); /* the same rules as UCX_TLS, named */
  p = RUN("info");
  CU_ASSERT_PTR_NOT_NULL(strstr(p.out.p, "transports: none (RIG_UCX_TLS=sysv,self names sysv,"));
  proc_free(&p);
  unsetenv("RIG_UCX_TLS");
  unsetenv("UCX_TLS");
}

/* What a line of info's block is about: its words up to its first ':'
 * (the first word when it has none); device lines (two spaces in), which
 * differ from machine to machine, are left out. Joined by '|'. */
static void info_keys(const char *text, size_t n, char *out, size_t size) {
  size_t used = 0;
  out[0] = '\0';
  for (const char *line = text; line < text + n;) {
    size_t len = strcspn(line, "\n");
    if (len > 0 && line[0] != ' ') {
      const char *colon = memchr(line, ':', len);
      const char *space = memchr(line, ' ', len);
      size_t k = colon ? (size_t)(colon - line) : space ? (size_t)(space - line) : len;
      if (used + k + 2 < size)
        used += (size_t)snprintf(out + used, size - used, "%.*s|", (int)k, line);
    }
    line += len + 1;
  }
}

/* docs/cli.md's example of progrun info has the lines progrun info
 * prints, in order (their values are that machine's). */
static void test_cli_md_shows_the_info_block_as_printed(void) {
  char path[4096], want[1024], got[1024];
  size_t len = 0;
  char *doc = rig_test_read_file(rig_test_source_path("docs/cli.md", path, sizeof path), &len);
  CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
  char *text = realloc(doc, len + 1);
  CU_ASSERT_PTR_NOT_NULL_FATAL(text);
  text[len] = '\0';
  const char *block = strstr(text, "$ progrun info\n");
  CU_ASSERT_PTR_NOT_NULL_FATAL(block);
  block += strlen("$ progrun info\n");
  const char *end = strstr(block, "```");
  CU_ASSERT_PTR_NOT_NULL_FATAL(end);
  info_keys(block, (size_t)(end - block), want, sizeof want);
  proc p = RUN("info");
  CU_ASSERT_EQUAL(p.code, 0);
  info_keys(p.out.p, strlen(p.out.p), got, sizeof got);
  CU_ASSERT_STRING_EQUAL(got, want);
  CU_ASSERT_STRING_EQUAL(got, "progrun|host|topology|memory|workers|devices, each with the memory "
                              "it may allocate|MPI|UCX|");
  proc_free(&p);
  free(text);
}

static void test_run_checks_input_and_output_files(void) {
  char ex[4096], missing[4096], big[4096], arg[8400], want[12800];
  example_path(0, ex, sizeof ex);
  tmp_path("no-such-input.bin", missing, sizeof missing);
  proc p = RUN("run", ex, "--input", io_arg(0, missing, arg, sizeof arg));
  CU_ASSERT_EQUAL(p.code, 2);
  snprintf(want, sizeof want, "progrun: --input 0=%s: cannot read %s: %s\n", missing, missing,
           strerror(ENOENT));
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
  char why[4200];
  snprintf(want, sizeof want, "progrun: cannot write %s: %s\n", big,
           no_folder(big, why, sizeof why));
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
    /* progrun --runs 3: an option of no command. */
    const char *cmd = strcmp(cases[i][0], "run") == 0 ? "run" : NULL;
    CU_ASSERT(usage_said(p.err.p, cmd));
    if (p.code != 2 || !usage_said(p.err.p, cmd)) show(cases[i][2] ? cases[i][2] : "run", &p);
    proc_free(&p);
  }
  proc p = RUN("run", ex, "--input", "0=/dev/null", "--input", "0=/dev/null");
  CU_ASSERT_EQUAL(p.code, 2);
  CU_ASSERT(strncmp(p.err.p, "progrun: run: --input 0 given twice\n", 36) == 0);
  proc_free(&p);
}

/* A description that breaks a rule is refused before anything runs. */
static void test_run_refuses_a_broken_rule(void) {
  char path[4096], want[12800];
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
  char desc[4096], ok[4096], bad[4096], a1[8400], a2[8400], want[12800];
  write_past_input(desc, sizeof desc);
  tmp_path("early-ok.bin", ok, sizeof ok);
  const char *dirs[] = {"no-dir/y.bin", ""};
  int errs[] = {ENOENT, EISDIR};
  for (size_t i = 0; i < 2; i++) {
    tmp_path(dirs[i], bad, sizeof bad);
    proc p = RUN("run", desc, "--runs", "5", "--ints", "run", "--output",
                 io_arg(0, ok, a1, sizeof a1), "--output", io_arg(0, bad, a2, sizeof a2));
    CU_ASSERT_EQUAL(p.code, 2);
    char why[4200];
    snprintf(want, sizeof want, "progrun: cannot write %s: %s\n", bad,
             errs[i] == ENOENT ? no_folder(bad, why, sizeof why) : strerror(errs[i]));
    CU_ASSERT_STRING_EQUAL(p.err.p, want);
    if (p.code != 2) show("early output", &p);
    proc_free(&p);
    CU_ASSERT_EQUAL(access(ok, F_OK), -1);
  }
  /* A job file's output, run here (a job of one machine). */
  char job[4096], text[8400];
  snprintf(text, sizeof text,
           "{\"machines\": [{\"program\": \"%s\", \"ints\": [\"run\"], "
           "\"outputs\": {\"0\": \"no-dir/y.bin\"}}], \"runs\": 5}",
           desc);
  write_text(tmp_path("early-job.json", job, sizeof job), text);
  proc p = RUN("run", job);
  CU_ASSERT_EQUAL(p.code, 2);
  tmp_path("no-dir/y.bin", bad, sizeof bad);
  char why[4200];
  snprintf(want, sizeof want, "progrun: cannot write %s: %s\n", bad,
           no_folder(bad, why, sizeof why));
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
  char big[4096], want[12800];
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
  char ex[4096], want[12800];
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
  char ex[4096], path[4096], want[12800];
  example_path(0, ex, sizeof ex);
  tmp_path("no-dir/figures.json", path, sizeof path);
  proc p = RUN("run", ex, "--json", path);
  CU_ASSERT_EQUAL(p.code, 2);
  CU_ASSERT_STRING_EQUAL(p.out.p, "");
  char why[4200];
  snprintf(want, sizeof want, "progrun: cannot write %s: %s\n", path,
           no_folder(path, why, sizeof why));
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

/* --warmup's runs are marked in the trace: each slice of run 0 says
 * "warmup": true, no slice of a measured run does. */
static void test_warmup_runs_are_marked_in_the_trace(void) {
  char ex[4096], path[4096];
  tmp_path("warmup-trace.json", path, sizeof path);
  proc p = RUN("run", example_path(0, ex, sizeof ex), "--runs", "3", "--warmup", "1", "--ints", "2",
               "--trace", path, "-q");
  CU_ASSERT_EQUAL(p.code, 0);
  proc_free(&p);
  json_error_t je;
  json_t *root = json_load_file(path, 0, &je);
  CU_ASSERT_PTR_NOT_NULL_FATAL(root);
  size_t i, warm = 0, measured = 0, wrong = 0;
  json_t *e;
  json_array_foreach(json_object_get(root, "traceEvents"), i, e) {
    json_t *args = json_object_get(e, "args");
    if (strcmp(json_string_value(json_object_get(e, "ph")), "X") != 0 || !args) continue;
    bool run0 = json_integer_value(json_object_get(args, "run")) == 0;
    bool marked = json_is_true(json_object_get(args, "warmup"));
    *(run0 ? &warm : &measured) += 1;
    wrong += run0 != marked;
  }
  CU_ASSERT(warm > 0 && measured > 0);
  CU_ASSERT_EQUAL(wrong, 0);
  json_decref(root);
}

/* A trace as another process sends it (rig_trace_encode's form: a head,
 * the tracks' names, the events), decoded. */
static rig_trace *trace_of(const char *track, const rig_trace_event *ev, size_t n) {
  struct {
    char magic[8];
    uint32_t ntracks, unused;
    uint64_t nevents, dropped;
  } h = {{'r', 'i', 'g', 't', 'r', 'a', 'c', 'e'}, 1, 0, n, 0};
  size_t len = sizeof h + 64 + n * sizeof *ev;
  uint8_t *b = calloc(1, len);
  CU_ASSERT_PTR_NOT_NULL_FATAL(b);
  memcpy(b, &h, sizeof h);
  snprintf((char *)b + sizeof h, 64, "%s", track);
  memcpy(b + sizeof h + 64, ev, n * sizeof *ev);
  rig_trace *t = NULL;
  rig_error err;
  CU_ASSERT_EQUAL_FATAL(rig_trace_decode(b, len, n, &t, &err), RIG_OK);
  free(b);
  return t;
}

/* Machine 0's hand-overs to machine 1 of runs 0 and 1, [1000, 2000] and
 * [3000, 4000] ns; machine 1's steps of those runs on a clock 500 ns
 * ahead (reached at 1900 and 4400 there), or (drifted) with the second
 * reached at 5000, which no one offset explains. */
static void two_machines(bool drifted, rig_trace **t0, rig_trace **t1) {
  rig_trace_event h[2] = {{RIG_TRACE_HANDOVER, 0, -1, 0, 1000, 1100, 2000},
                          {RIG_TRACE_HANDOVER, 0, -1, 1, 3000, 3100, 4000}};
  rig_trace_event s[2] = {{RIG_TRACE_STEP, 0, 0, 0, 1600, 1700, 1900},
                          {RIG_TRACE_STEP, 0, 0, 1, 3700, 3800, drifted ? 5000 : 4400}};
  *t0 = trace_of("host@rank1", h, 2);
  *t1 = trace_of("host", s, 2);
}

/* Each run bounds machine 1's offset (its clock less machine 0's) as a
 * ping does: at most 1600 - 1000 and 3700 - 3000 (nothing there starts
 * before its hand-over), at least 1900 - 2000 and 4400 - 4000 (nothing
 * there ends after it): [400, 600], where the pings' 450 within 1000 is
 * narrowed to 500 within 100, and where pings apart from it are left for
 * it. Runs that contradict each other change nothing and say so. */
static void test_a_machine_s_clock_is_narrowed_by_its_runs(void) {
  for (int drifted = 0; drifted < 2; drifted++) {
    rig_trace *t0, *t1;
    two_machines(drifted, &t0, &t1);
    cli_handover *h = NULL;
    size_t nh = 0;
    CU_ASSERT_FATAL(cli_trace_handovers(t0, 1, &h, &nh));
    CU_ASSERT_EQUAL_FATAL(nh, 2);
    CU_ASSERT(h[1].run == 1 && h[1].begin == 3000 && h[1].end == 4000);
    CU_ASSERT_PTR_EQUAL(cli_handover_of(h, nh, 1), &h[1]);
    CU_ASSERT_PTR_NULL(cli_handover_of(h, nh, 2));
    const int64_t pings[2] = {450, 5000};
    for (int i = 0; i < 2; i++) {
      int64_t offset = pings[i];
      uint64_t error = i == 0 ? 1000 : 10;
      bool narrowed = cli_trace_narrow(h, nh, t1, &offset, &error);
      CU_ASSERT_EQUAL(narrowed, !drifted);
      CU_ASSERT_EQUAL(offset, drifted ? pings[i] : 500);
      CU_ASSERT_EQUAL(error, drifted ? (i == 0 ? 1000u : 10u) : 100u);
    }
    free(h);
    rig_trace_free(t0);
    rig_trace_free(t1);
  }
}

/* Where the runs bound no one offset, each slice that would leave its
 * hand-over is clamped into it (the drifted run's work, 5000 - 0 ns, ends
 * at its hand-over's 4000), and the file counts and notes it. */
static void test_a_drifted_machine_s_slices_are_clamped_into_their_hand_overs_and_noted(void) {
  rig_trace *t[2];
  two_machines(true, &t[0], &t[1]);
  cli_trace_machine ms[2] = {{"node0", t[0], 0, 0}, {"node1", t[1], 0, 50}};
  char *text = NULL;
  size_t len = 0;
  rig_error err;
  CU_ASSERT_EQUAL_FATAL(cli_trace_text(ms, 2, 0, &text, &len, &err), CLI_EXIT_OK);
  json_t *root = json_loads(text, 0, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(root);
  json_t *other = json_object_get(root, "otherData");
  json_t *m1 = json_array_get(json_object_get(other, "machines"), 1);
  CU_ASSERT_EQUAL(json_integer_value(json_object_get(m1, "clamped")), 1);
  CU_ASSERT_EQUAL(json_integer_value(json_object_get(m1, "offset_ns")), 0);
  const char *note = json_string_value(json_array_get(json_object_get(other, "notes"), 0));
  CU_ASSERT_PTR_NOT_NULL(note);
  if (note)
    CU_ASSERT_STRING_EQUAL(note, "machine 1: 1 of its slices clamped into their hand-overs (its "
                                 "runs bound no one offset: its clock drifted during them)");
  /* Machine 1's work of run 1: from 3700 to 4000 ns, 2.7 to 3 us past the
   * file's first event (1000). */
  size_t i, found = 0;
  json_t *e;
  json_array_foreach(json_object_get(root, "traceEvents"), i, e) {
    json_t *args = json_object_get(e, "args");
    if (json_integer_value(json_object_get(e, "pid")) != 1 ||
        strcmp(json_string_value(json_object_get(e, "name")), "step 0") != 0 ||
        json_integer_value(json_object_get(args, "run")) != 1)
      continue;
    found++;
    CU_ASSERT_DOUBLE_EQUAL(json_real_value(json_object_get(e, "ts")), 2.7, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(json_real_value(json_object_get(e, "dur")), 0.3, 1e-9);
  }
  CU_ASSERT_EQUAL(found, 1);
  json_decref(root);
  free(text);
  rig_trace_free(t[0]);
  rig_trace_free(t[1]);
}

/* A track's rows go by what truly overlaps, whatever order the steps were
 * recorded in: of the work slices [100, 200], [50, 90] (recorded after,
 * begun before) and [150, 300], the second row takes only the third; the
 * submits, [100, 110], [50, 60] and [150, 160], need one row. */
static void test_a_trace_opens_a_track_s_rows_only_for_slices_that_overlap(void) {
  rig_trace_event ev[3] = {{RIG_TRACE_STEP, 0, 0, 0, 100, 110, 200},
                           {RIG_TRACE_STEP, 0, 0, 1, 50, 60, 90},
                           {RIG_TRACE_STEP, 0, 0, 2, 150, 160, 300}};
  rig_trace *t = trace_of("cpu:0", ev, 3);
  cli_trace_machine ms[1] = {{"node0", t, 0, 0}};
  char *text = NULL;
  size_t len = 0;
  rig_error err;
  CU_ASSERT_EQUAL_FATAL(cli_trace_text(ms, 1, 0, &text, &len, &err), CLI_EXIT_OK);
  json_t *root = json_loads(text, 0, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(root);
  char names[256] = "";
  size_t i;
  json_t *e;
  json_array_foreach(json_object_get(root, "traceEvents"), i, e) {
    if (strcmp(json_string_value(json_object_get(e, "name")), "thread_name") != 0) continue;
    size_t at = strlen(names);
    snprintf(names + at, sizeof names - at, "%s;",
             json_string_value(json_object_get(json_object_get(e, "args"), "name")));
  }
  CU_ASSERT_STRING_EQUAL(names, "cpu:0 submit;cpu:0 work;cpu:0 work 2;");
  json_decref(root);
  free(text);
  rig_trace_free(t);
}

/* A --trace that cannot be written (a directory, a missing directory) is
 * refused with exit 2 before the first run (which would fail, exit 1):
 * nothing is printed on stdout and no output written. */
static void test_a_bad_trace_path_is_refused_before_any_run(void) {
  char desc[4096], ok[4096], bad[4096], a1[8400], want[12800];
  write_past_input(desc, sizeof desc);
  tmp_path("trace-ok.bin", ok, sizeof ok);
  const char *dirs[] = {"no-dir/t.json", ""};
  int errs[] = {ENOENT, EISDIR};
  for (size_t i = 0; i < 2; i++) {
    tmp_path(dirs[i], bad, sizeof bad);
    proc p = RUN("run", desc, "--runs", "5", "--ints", "run", "--output",
                 io_arg(0, ok, a1, sizeof a1), "--trace", bad);
    CU_ASSERT_EQUAL(p.code, 2);
    char why[4200];
    snprintf(want, sizeof want, "progrun: cannot write %s: %s\n", bad,
             errs[i] == ENOENT ? no_folder(bad, why, sizeof why) : strerror(errs[i]));
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

static void test_progress_forces_the_line_ended_by_a_line_feed_and_no_progress_suppresses_it(void) {
  char ex[4096];
  example_path(0, ex, sizeof ex);
  /* stdout and stderr are pipes here: only --progress shows the line. */
  proc p = RUN("run", ex, "--runs", "3", "--progress");
  CU_ASSERT_EQUAL(p.code, 0);
  const char *first = "\rprogrun: run 1/3, ";
  CU_ASSERT(strncmp(p.err.p, first, strlen(first)) == 0);
  /* Not on a terminal, it ends with a line feed: stderr ends with a
   * whole line, and the line is in it once (the runs are quicker than
   * its 10 updates a second). */
  size_t n = strlen(p.err.p);
  CU_ASSERT(n > 2 && p.err.p[n - 1] == '\n' && p.err.p[n - 2] != ' ');
  CU_ASSERT(strchr(p.err.p, '\n') == p.err.p + n - 1);
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
  char ex[4096], text[8400], job[4096], want[12800];
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

/* {rank} in an input's path is the machine's index, as in an output's:
 * here machine 0 reads x0.bin, from --input and from a job file's inputs
 * alike; a file it cannot read is told after the option that named it. */
static void test_rank_in_an_input_path_names_the_machine_file(void) {
  char ex[4096], xp[4096], yp[4096], in[4200], out[4200], want[12800], text[8400], job[4096];
  float x[1024], y[1024];
  saxpy_x(x, 1024);
  write_file(tmp_path("rank-x0.bin", xp, sizeof xp), x, sizeof x);
  tmp_path("rank-x{rank}.bin", xp, sizeof xp);
  tmp_path("rank-y{rank}.bin", yp, sizeof yp);
  example_path(0, ex, sizeof ex);
  proc p = RUN("run", ex, "-q", "--ints", "4", "--input", io_arg(0, xp, in, sizeof in), "--output",
               io_arg(1, yp, out, sizeof out));
  CU_ASSERT_EQUAL(p.code, 0);
  CU_ASSERT_STRING_EQUAL(p.err.p, "");
  if (p.code != 0) show("rank input", &p);
  proc_free(&p);
  saxpy_expect(x, 1024, 4, y);
  CU_ASSERT(file_is(tmp_path("rank-y0.bin", yp, sizeof yp), y, sizeof y));
  CU_ASSERT_EQUAL(unlink(yp), 0);

  snprintf(text, sizeof text,
           "{\"machines\": [{\"program\": \"%s\", \"ints\": [4], \"inputs\": {\"0\": "
           "\"rank-x{rank}.bin\"}, \"outputs\": {\"1\": \"rank-y{rank}.bin\"}}]}",
           ex);
  p = run_job_text("rank-in.json", text, job, sizeof job);
  CU_ASSERT_EQUAL(p.code, 0);
  if (p.code != 0) show("rank input, job file", &p);
  proc_free(&p);
  CU_ASSERT(file_is(yp, y, sizeof y));

  tmp_path("rank-none{rank}.bin", xp, sizeof xp);
  p = RUN("run", ex, "--input", io_arg(0, xp, in, sizeof in));
  CU_ASSERT_EQUAL(p.code, 2);
  tmp_path("rank-none0.bin", xp, sizeof xp);
  snprintf(want, sizeof want, "progrun: --input 0=%s: cannot read %s: %s\n", xp, xp,
           strerror(ENOENT));
  CU_ASSERT_STRING_EQUAL(p.err.p, want);
  proc_free(&p);
}

/* An input file shorter than its input runs, its rest zeros, and is
 * warned of once: a truncated file is more often a slip than a wish. */
static void test_a_short_input_file_is_warned_of(void) {
  char ex[4096], xp[4096], in[4200], want[12800];
  float x[4] = {1, 2, 3, 4};
  write_file(tmp_path("short-x.bin", xp, sizeof xp), x, sizeof x);
  proc p = RUN("run", example_path(0, ex, sizeof ex), "-q", "--runs", "2", "--input",
               io_arg(0, xp, in, sizeof in));
  CU_ASSERT_EQUAL(p.code, 0);
  snprintf(want, sizeof want,
           "progrun: warning: --input 0=%s: 16 bytes for an input of 4096; the rest is zeros\n",
           xp);
  CU_ASSERT_STRING_EQUAL(p.err.p, want);
  proc_free(&p);
}

/* A job file of "every" alone gives every machine the same part: it is a
 * job file, checked and run as one. */
static void test_a_job_file_of_every_alone_runs(void) {
  char ex[4096], text[8400], job[4096];
  snprintf(text, sizeof text, "{\"every\": {\"program\": \"%s\", \"ints\": [2]}}",
           example_path(0, ex, sizeof ex));
  proc p = run_job_text("every-alone.json", text, job, sizeof job);
  CU_ASSERT_EQUAL(p.code, 0);
  CU_ASSERT(summary_shape(p.out.p, "runs 1, "));
  if (p.code != 0) show("every alone", &p);
  proc_free(&p);
  p = RUN("check", job);
  CU_ASSERT_EQUAL(p.code, 0);
  CU_ASSERT_STRING_EQUAL(p.out.p, "ok\n");
  proc_free(&p);
}

/* A job file's messages start with its name and say what is wrong: a
 * "program" that is no string, an input's number not in canonical decimal
 * ("00" and "+0" are not input 0). */
static void test_job_file_errors_name_the_file_and_what_is_wrong(void) {
  char ex[4096], text[8400], job[4096], want[12800];
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
  char ex[4096], text[8400], job[4096], want[12800];
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
  char ex[4096], text[8400], job[4096], want[12800];
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
  char path[4096], want[12800];
  static const struct {
    const char *text, *at, *found;
  } cases[] = {
      {"", "1:0", "unexpected token near end of file"},
      {"rig.programX{}", "1:3", "invalid token near 'rig'"},
  };
  for (size_t i = 0; i < 2; i++) {
    write_text(tmp_path("neither.bin", path, sizeof path), cases[i].text);
    proc p = RUN("check", path);
    CU_ASSERT_EQUAL(p.code, 2);
    snprintf(want, sizeof want,
             "progrun: %s:%s: not a program description: neither the bytes' magic nor JSON: %s\n",
             path, cases[i].at, cases[i].found);
    CU_ASSERT_STRING_EQUAL(p.err.p, want);
    proc_free(&p);
  }
}

/* An image the device refuses is named: `image <i>: <device>: <why>`;
 * bytes that are no ELF shared object say so, and why, rather than what
 * the loader makes of them ("file too short"). */
static void test_an_image_a_device_refuses_is_named(void) {
  Elf64_Ehdr rel = {.e_type = ET_REL};
  memcpy(rel.e_ident, ELFMAG, SELFMAG);
  static const struct {
    size_t len;
    const char *why;
  } cases[] = {{2, "2 bytes: no ELF magic"},
               {40, "40 bytes: shorter than an ELF header"},
               {sizeof rel, "64 bytes: an ELF file of another type: link it with -shared"}};
  uint8_t bytes[sizeof rel];
  memcpy(bytes, &rel, sizeof rel);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char path[4096], want[12800];
    rig_desc *d = rig_desc_create();
    rig_desc_add_device(d, rig_host_isa());
    rig_desc_add_image(d, 0, i == 0 ? (const void *)"AB" : bytes, cases[i].len);
    write_desc(d, "short-image.bin", path, sizeof path);
    rig_desc_free(d);
    proc p = RUN("run", path);
    CU_ASSERT_EQUAL(p.code, 1);
    snprintf(want, sizeof want, "progrun: %s: host: image 0: not an ELF shared object (%s)\n", path,
             cases[i].why);
    CU_ASSERT_STRING_EQUAL(p.err.p, want);
    if (strcmp(p.err.p, want) != 0) show("short image", &p);
    proc_free(&p);
  }
}

/* The source tree's examples/saxpy.json names kernels only the build
 * makes: the message says where the build's copy is, beside them. A
 * description with no such copy gets no such hint. */
static void test_a_source_example_points_to_the_builds_copy(void) {
  char src[4096], built[4096], abs[PATH_MAX], want[12800];
  rig_test_source_path("examples/saxpy.json", src, sizeof src);
  CU_ASSERT_PTR_NOT_NULL_FATAL(
      realpath(rig_test_binary_path("examples/saxpy.json", built, sizeof built), abs));
  proc p = RUN("check", src);
  CU_ASSERT_EQUAL(p.code, 2);
  snprintf(want, sizeof want, "; the build's copy has its kernels beside it: %s\n", abs);
  size_t n = strlen(p.err.p), m = strlen(want);
  CU_ASSERT(n > m && strcmp(p.err.p + n - m, want) == 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(p.err.p, "kernels/saxpy.so\": No such file or directory; "));
  if (n <= m || strcmp(p.err.p + n - m, want) != 0) show(src, &p);
  proc_free(&p);

  char lone[4096];
  write_text(tmp_path("lone.json", lone, sizeof lone),
             "{\"format\": 4, \"devices\": [\"x86_64\"], \"images\": [{\"device\": 0, \"binary\": "
             "{\"bytes\": {\"file\": \"missing.so\"}}}], \"inputs\": [], \"steps\": []}");
  p = RUN("check", lone);
  CU_ASSERT_EQUAL(p.code, 2);
  CU_ASSERT_PTR_NULL(strstr(p.err.p, "build's copy"));
  CU_ASSERT_PTR_NOT_NULL(strstr(p.err.p, "No such file or directory\n"));
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
    /* An output's folder is missing: said so, the folder shortened too. */
    const char *reason = i == 0 ? ": No such file or directory\n" : " does not exist\n";
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
 * usage (exit 2, the pointer to the help on stderr) rather than silently one of them:
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
    CU_ASSERT(usage_said(p.err.p, cases[i][0][0] == '-' ? NULL : cases[i][0]));
    if (said[i]) CU_ASSERT(strncmp(p.err.p, said[i], strlen(said[i])) == 0);
    if (p.code != 2) show(cases[i][0], &p);
    proc_free(&p);
  }
  CU_ASSERT_EQUAL(access(a, F_OK), -1);
  CU_ASSERT_EQUAL(access(b, F_OK), -1);
}

/* An option is its whole name, a short one a word of its own: an
 * abbreviation, short ones run together or a value glued onto one are
 * unknown options, said as typed, and "--" makes what follows a word. */
static void test_an_option_is_its_whole_name_and_a_word_of_its_own(void) {
  char ex[4096], a[4096];
  example_path(0, ex, sizeof ex);
  tmp_path("whole-a.bin", a, sizeof a);
  char glued[4096 + 2];
  snprintf(glued, sizeof glued, "-o%s", a);
  const char *const cases[][5] = {
      {"run", ex, "--run", "2", NULL},  {"run", ex, "--prog", NULL}, {"run", ex, "-qh", NULL},
      {"run", ex, "--quiet=yes", NULL}, {"pack", ex, glued, NULL},   {"dot", ex, "--al", NULL},
      {"run", "--", "--runs", NULL},
  };
  char want[6][4200];
  snprintf(want[0], sizeof want[0], "progrun: run: unknown option '--run'\n");
  snprintf(want[1], sizeof want[1], "progrun: run: unknown option '--prog'\n");
  snprintf(want[2], sizeof want[2], "progrun: run: unknown option '-qh'\n");
  snprintf(want[3], sizeof want[3], "progrun: run: unknown option '--quiet=yes'\n");
  snprintf(want[4], sizeof want[4], "progrun: pack: unknown option '%s'\n", glued);
  snprintf(want[5], sizeof want[5], "progrun: dot: unknown option '--al'\n");
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    proc p = run_io(NULL, NULL, cases[i]);
    CU_ASSERT_EQUAL(p.code, 2);
    if (i < 6) {
      CU_ASSERT(usage_said(p.err.p, cases[i][0]));
      CU_ASSERT(strncmp(p.err.p, want[i], strlen(want[i])) == 0);
    } else {
      /* After "--", --runs is the FILE, which is not there. */
      CU_ASSERT(strncmp(p.err.p, "progrun: cannot read --runs: ", 29) == 0);
    }
    if (p.code != 2) show(cases[i][0], &p);
    proc_free(&p);
  }
  CU_ASSERT_EQUAL(access(a, F_OK), -1);
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
  /* The job file named the devices: its field is told, not an option. */
  CU_ASSERT_PTR_NOT_NULL(
      strstr(p.err.p, "failing-devices.json: machines[0].devices: device 0: cpu:0 is "));
  CU_ASSERT_PTR_NULL(strstr(p.err.p, "--devices"));
  if (p.code != 2 || strstr(p.err.p, "--devices")) show("failing devices", &p);
  proc_free(&p);
}

/* stdout a full disk: info, a run's summary, dump and its JSON say they
 * cannot be written, and why (exit 2). */
static void test_info_the_summary_and_dump_say_why_they_cannot_be_written(void) {
  char ex[4096];
  const char *cases[][2] = {
      {"\"$0\" info > /dev/full",
       "progrun: cannot write the information: No space left on device\n"},
      {"\"$0\" \"$1\" --runs 2 > /dev/full",
       "progrun: cannot write the summary: No space left on device\n"},
      {"\"$0\" dump \"$1\" > /dev/full",
       "progrun: cannot write the output: No space left on device\n"},
      {"\"$0\" dump --json \"$1\" > /dev/full",
       "progrun: cannot write the output: No space left on device\n"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *argv[] = {"/bin/sh",
                    "-c",
                    (char *)cases[i][0],
                    (char *)progrun_path(),
                    (char *)example_path(0, ex, sizeof ex),
                    NULL};
    rig_proc p = rig_proc_run(argv, NULL, 60);
    CU_ASSERT_EQUAL(p.code, 2);
    CU_ASSERT_STRING_EQUAL(p.err, cases[i][1]);
    if (p.code != 2 || strcmp(p.err, cases[i][1]) != 0)
      fprintf(stderr, "\n%s: exit %d\n%s\n", cases[i][0], p.code, p.err);
    rig_proc_free(&p);
  }
}

/* ---- files: FIFOs, bounds, all or none, stdout, one file twice ------------- */

/* A description's JSON with one image per name in `files` ({"file": ...},
 * relative to its folder), on the host. */
static void write_file_desc(const char *path, const char *const *files, size_t n) {
  char text[8192];
  int at = snprintf(text, sizeof text,
                    "{\"format\": 4, \"devices\": [\"%s\"], \"memory\": [], \"images\": [",
                    rig_host_isa());
  for (size_t i = 0; i < n; i++)
    at += snprintf(text + at, sizeof text - (size_t)at,
                   "%s{\"device\": 0, \"binary\": {\"bytes\": {\"file\": \"%s\"}, \"holes\": []}}",
                   i ? ", " : "", files[i]);
  snprintf(text + at, sizeof text - (size_t)at, "], \"inputs\": [], \"ints\": 0, \"steps\": []}");
  write_text(path, text);
}

/* A sparse file of `bytes` (it reads as zeros, and takes no disk). */
static void write_sparse(const char *path, off_t bytes) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
  CU_ASSERT_FATAL(fd >= 0);
  CU_ASSERT_EQUAL_FATAL(ftruncate(fd, bytes), 0);
  close(fd);
}

/* Each file a description names is a regular file, read within 1 GiB (all
 * of them together too): a FIFO is refused at once (check and run), not
 * waited on; a larger file is refused unread (exit 2). */
static void test_a_descriptions_files_are_regular_and_within_1_gib(void) {
  char dir[4096], desc[4096], fifo[4096], want[12800];
  CU_ASSERT_EQUAL_FATAL(mkdir(tmp_path("dfiles", dir, sizeof dir), 0777), 0);
  CU_ASSERT_EQUAL_FATAL(mkfifo(tmp_path("dfiles/k.fifo", fifo, sizeof fifo), 0666), 0);
  write_file_desc(tmp_path("dfiles/fifo.json", desc, sizeof desc), (const char *const[]){"k.fifo"},
                  1);
  const char *cmds[] = {"check", "run"};
  for (size_t i = 0; i < 2; i++) {
    proc p = RUN(cmds[i], desc);
    CU_ASSERT_EQUAL(p.code, 2);
    snprintf(want, sizeof want,
             "progrun: %s: images[0].binary.bytes.file: cannot read \"%s\": not a regular file\n",
             desc, fifo);
    CU_ASSERT_STRING_EQUAL(p.err.p, want);
    if (p.code != 2) show("a FIFO in a description", &p);
    proc_free(&p);
  }
  char big[4096], a[4096];
  write_sparse(tmp_path("dfiles/big.bin", big, sizeof big), (off_t)2 << 30);
  write_file_desc(desc, (const char *const[]){"big.bin"}, 1);
  proc p = RUN("check", desc);
  CU_ASSERT_EQUAL(p.code, 2);
  snprintf(want, sizeof want,
           "progrun: %s: images[0].binary.bytes.file: cannot read \"%s\": 2147483648 bytes, more "
           "than the 1 GiB a description's file may hold\n",
           desc, big);
  CU_ASSERT_STRING_EQUAL(p.err.p, want);
  proc_free(&p);
  unlink(big);
  /* Two of 600 MiB: the second takes them past the bound. */
  write_sparse(tmp_path("dfiles/a.bin", a, sizeof a), (off_t)600 << 20);
  write_file_desc(desc, (const char *const[]){"a.bin", "a.bin"}, 2);
  p = RUN("check", desc);
  CU_ASSERT_EQUAL(p.code, 2);
  snprintf(want, sizeof want,
           "progrun: %s: images[1].binary.bytes.file: cannot read \"%s\": its 629145600 bytes take "
           "the description's files past 1 GiB\n",
           desc, a);
  CU_ASSERT_STRING_EQUAL(p.err.p, want);
  proc_free(&p);
  unlink(a);
}

/* Every file run writes, when it is a FIFO no process reads, is refused at
 * once (exit 2, before any run) rather than waited on for ever. */
static void test_a_fifo_no_process_reads_is_refused_at_once(void) {
  char ex[4096], fifo[4096], arg[8400], want[12800];
  example_path(0, ex, sizeof ex);
  CU_ASSERT_EQUAL_FATAL(mkfifo(tmp_path("unread.fifo", fifo, sizeof fifo), 0666), 0);
  const char *opts[] = {"--output", "--trace", "--json", "--csv", "--markdown"};
  snprintf(want, sizeof want, "progrun: cannot write %s: a FIFO no process reads\n", fifo);
  for (size_t i = 0; i < 5; i++) {
    proc p = RUN("run", ex, opts[i], i == 0 ? io_arg(1, fifo, arg, sizeof arg) : fifo);
    CU_ASSERT_EQUAL(p.code, 2);
    CU_ASSERT_STRING_EQUAL(p.err.p, want);
    CU_ASSERT_STRING_EQUAL(p.out.p, "");
    if (p.code != 2) show(opts[i], &p);
    proc_free(&p);
  }
}

/* A description of two host inputs, of 8 and 16 bytes, and no step. */
static const char *write_two_inputs(char *buf, size_t size) {
  rig_desc *d = rig_desc_create();
  rig_desc_add_device(d, rig_host_isa());
  rig_desc_add_input(d, 0, 8);
  rig_desc_add_input(d, 0, 16);
  write_desc(d, "two-inputs.bin", buf, size);
  rig_desc_free(d);
  return buf;
}

/* FILE as a FIFO is read once a process writes it, and refused when none
 * writes within 10 s, rather than waited on for ever. */
static void test_a_fifo_as_file_is_read_or_refused_within_10_s(void) {
  char fifo[4096], want[12800];
  CU_ASSERT_EQUAL_FATAL(mkfifo(tmp_path("desc.fifo", fifo, sizeof fifo), 0666), 0);
  proc p = RUN("check", fifo);
  CU_ASSERT_EQUAL(p.code, 2);
  snprintf(want, sizeof want, "progrun: cannot read %s: a FIFO no process wrote to in 10 s\n",
           fifo);
  CU_ASSERT_STRING_EQUAL(p.err.p, want);
  proc_free(&p);
  /* A writer (here waiting for the reader to open) gives it the bytes. */
  char desc[4096];
  size_t n = 0;
  char *bytes = rig_test_read_file(write_two_inputs(desc, sizeof desc), &n);
  CU_ASSERT_PTR_NOT_NULL_FATAL(bytes);
  pid_t writer = fork();
  CU_ASSERT_FATAL(writer >= 0);
  if (writer == 0) {
    int fd = open(fifo, O_WRONLY);
    _exit(fd >= 0 && write(fd, bytes, n) == (ssize_t)n ? 0 : 1);
  }
  free(bytes);
  p = RUN("check", fifo);
  CU_ASSERT_EQUAL(p.code, 0);
  CU_ASSERT_STRING_EQUAL(p.out.p, "ok\n");
  if (p.code != 0) show("a FIFO written", &p);
  proc_free(&p);
  kill(writer, SIGKILL); /* if it never wrote */
  waitpid(writer, NULL, 0);
}

/* When one file fails to be written after another was (a report to a full
 * device, a second output past the size limit), no file is replaced: the
 * first output keeps its old contents, and no temporary file is left. */
static void test_no_file_is_replaced_when_another_fails(void) {
  char dir[4096], desc[4096], a[4096], b[4096], a0[8400], b1[8400];
  CU_ASSERT_EQUAL_FATAL(mkdir(tmp_path("none", dir, sizeof dir), 0777), 0);
  write_two_inputs(desc, sizeof desc);
  tmp_path("none/a.bin", a, sizeof a);
  io_arg(0, a, a0, sizeof a0);
  const char *reports[] = {"--trace", "--json", "--csv", "--markdown"};
  for (size_t i = 0; i < 4; i++) {
    write_text(a, "old contents");
    proc p = RUN("run", desc, "--output", a0, reports[i], "/dev/full");
    CU_ASSERT_EQUAL(p.code, 2);
    CU_ASSERT_STRING_EQUAL(p.err.p, "progrun: cannot write /dev/full: No space left on device\n");
    if (p.code != 2) show(reports[i], &p);
    proc_free(&p);
    CU_ASSERT(file_is(a, "old contents", 12));
    CU_ASSERT_EQUAL(entries(dir), 1);
  }
  /* Output 0 (8 bytes) fits the limit, output 1 (16) does not. */
  write_text(a, "old contents");
  io_arg(1, tmp_path("none/b.bin", b, sizeof b), b1, sizeof b1);
  child_fsize = 12;
  proc p = RUN("run", desc, "--output", a0, "--output", b1);
  child_fsize = 0;
  CU_ASSERT_EQUAL(p.code, 2);
  CU_ASSERT(strncmp(p.err.p, "progrun: cannot write ", 22) == 0);
  proc_free(&p);
  CU_ASSERT(file_is(a, "old contents", 12));
  CU_ASSERT_EQUAL(access(b, F_OK), -1);
  CU_ASSERT_EQUAL(entries(dir), 1);
}

/* An output (or --trace) on stdout is its bytes and nothing else, through a
 * file (`> file`) as through a pipe: the summary goes to stderr. */
static void test_an_output_on_stdout_is_its_bytes_alone(void) {
  char ex[4096], xp[4096], file[4096], in[4200];
  float x[1024], y[1024];
  saxpy_x(x, 1024);
  saxpy_expect(x, 1024, 4, y);
  write_file(tmp_path("stdout-x.bin", xp, sizeof xp), x, sizeof x);
  example_path(0, ex, sizeof ex);
  io_arg(0, xp, in, sizeof in);
  child_stdout = tmp_path("stdout.bin", file, sizeof file);
  proc p = RUN("run", ex, "--ints", "4", "--input", in, "--output", "1=/dev/stdout");
  child_stdout = NULL;
  CU_ASSERT_EQUAL(p.code, 0);
  CU_ASSERT(file_is(file, y, sizeof y));
  CU_ASSERT(summary_shape(p.err.p, "runs 1, "));
  proc_free(&p);
  p = RUN("run", ex, "--ints", "4", "--input", in, "--output", "1=/dev/stdout");
  CU_ASSERT_EQUAL(p.code, 0);
  CU_ASSERT(p.out.n == sizeof y && memcmp(p.out.p, y, sizeof y) == 0);
  CU_ASSERT(summary_shape(p.err.p, "runs 1, "));
  proc_free(&p);
  p = RUN("run", ex, "--runs", "2", "--trace", "/dev/stdout");
  CU_ASSERT_EQUAL(p.code, 0);
  json_error_t jerr;
  json_t *trace = json_loads(p.out.p, 0, &jerr);
  CU_ASSERT(json_is_array(json_object_get(trace, "traceEvents")));
  json_decref(trace);
  CU_ASSERT(summary_shape(p.err.p, "runs 2, "));
  proc_free(&p);
}

/* A report naming an output's file (by its path, or through a link), or two
 * outputs naming one file, is bad usage (exit 2) before any run (which
 * here would fail, exit 1): no file is written. */
static void test_one_file_named_twice_is_refused_before_any_run(void) {
  char dir[4096], desc[4096], out[4096], link_path[4096], a0[8400], want[12800];
  CU_ASSERT_EQUAL_FATAL(mkdir(tmp_path("twice", dir, sizeof dir), 0777), 0);
  write_past_input(desc, sizeof desc);
  tmp_path("twice/y.bin", out, sizeof out);
  tmp_path("twice/link.json", link_path, sizeof link_path);
  CU_ASSERT_EQUAL_FATAL(symlink("y.bin", link_path), 0);
  io_arg(0, out, a0, sizeof a0);
  const char *reports[] = {"--trace", "--json", "--csv", "--markdown"};
  for (size_t i = 0; i < 4; i++) {
    const char *path = i == 1 ? link_path : out;
    proc p = RUN("run", desc, "--runs", "5", "--ints", "run", "--output", a0, reports[i], path);
    CU_ASSERT_EQUAL(p.code, 2);
    snprintf(want, sizeof want, "progrun: %s %s: the same file as --output 0=%s\n", reports[i],
             path, out);
    CU_ASSERT_STRING_EQUAL(p.err.p, want);
    if (p.code != 2) show(reports[i], &p);
    proc_free(&p);
  }
  proc p = RUN("run", desc, "--runs", "5", "--ints", "run", "--output", a0, "--output", a0);
  CU_ASSERT_EQUAL(p.code, 2);
  snprintf(want, sizeof want, "progrun: --output 0=%s: the same file as --output 0=%s\n", out, out);
  CU_ASSERT_STRING_EQUAL(p.err.p, want);
  proc_free(&p);
  CU_ASSERT_EQUAL(entries(dir), 1); /* the link alone */
}

/* ---- interrupts ------------------------------------------------------------- */

/* SIGINT (or SIGTERM) in the middle of the runs: `interrupted (SIGINT) in
 * run R` on a line of its own, the runs so far summarized, exit 130
 * (143), and no file written. */
static void test_an_interrupt_is_told_with_the_runs_so_far_and_no_file(void) {
  char dir[4096], ex[4096], out[4096], json[4096], o1[8400], want[64];
  CU_ASSERT_EQUAL_FATAL(mkdir(tmp_path("interrupt", dir, sizeof dir), 0777), 0);
  example_path(0, ex, sizeof ex);
  tmp_path("interrupt/y.bin", out, sizeof out);
  tmp_path("interrupt/report.json", json, sizeof json);
  io_arg(1, out, o1, sizeof o1);
  const int sigs[] = {SIGINT, SIGTERM};
  const char *names[] = {"SIGINT", "SIGTERM"};
  for (size_t i = 0; i < 2; i++) {
    write_text(out, "old contents");
    child_signal = sigs[i];
    child_signal_after = "progrun: run ";
    proc p = RUN("run", ex, "--runs", "4611686018427387904", "--progress", "--output", o1, "--json",
                 json);
    child_signal = 0;
    CU_ASSERT_EQUAL(p.code, 128 + sigs[i]);
    snprintf(want, sizeof want, "\nprogrun: interrupted (%s) in run ", names[i]);
    CU_ASSERT_PTR_NOT_NULL(strstr(p.err.p, want));
    unsigned long long runs = 0;
    char start[64];
    CU_ASSERT(sscanf(p.out.p, "runs %llu, ", &runs) == 1 && runs >= 1);
    snprintf(start, sizeof start, "runs %llu, ", runs);
    CU_ASSERT(summary_shape(p.out.p, start));
    if (p.code != 128 + sigs[i] || !summary_shape(p.out.p, start)) show(names[i], &p);
    proc_free(&p);
    CU_ASSERT(file_is(out, "old contents", 12));
    CU_ASSERT_EQUAL(access(json, F_OK), -1);
    CU_ASSERT_EQUAL(entries(dir), 1);
  }
}

/* The times a signal's thread tells (cli_times_told, launcher/progrun/
 * cli_times.c), hidden by a thread that means to free them. */
typedef struct hider {
  _Atomic pid_t tid;
  atomic_bool hidden;
} hider;

static void *hide_times(void *arg) {
  hider *h = arg;
  atomic_store(&h->tid, (pid_t)syscall(SYS_gettid));
  cli_times_show(NULL);
  atomic_store(&h->hidden, true);
  return NULL;
}

/* A signal's thread that tells the runs so far (an agent's at mpirun's
 * SIGCONT) holds the hold: the running thread, leaving, hides its times
 * only once that told is done, so that the told never reads times being
 * freed (issue 36: a leaf leaving a failed job read a machine it had
 * freed, "SIGSEGV at 0x0"); then a told finds none. */
static void test_times_are_hidden_only_after_a_told_under_way(void) {
  cli_times t = {0};
  rig_error err;
  for (uint64_t ns = 1; ns <= 100; ns++) CU_ASSERT_EQUAL(cli_times_add(&t, ns, &err), CLI_EXIT_OK);
  cli_times_show(&t);
  cli_hold(); /* the signal's thread, telling */
  hider h = {0};
  pthread_t th;
  CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, hide_times, &h), 0);
  /* The hiding thread asleep on the hold, the times still shown. */
  rig_wait until = rig_wait_begin(RIG_HANG_S);
  while (!atomic_load(&h.hidden) &&
         !(atomic_load(&h.tid) && rig_thread_asleep_in(0, atomic_load(&h.tid), SYS_futex)) &&
         rig_wait_more(&until)) {
  }
  CU_ASSERT_FALSE(atomic_load(&h.hidden));
  cli_figures f;
  cli_times_told(&f, true);
  CU_ASSERT_EQUAL(f.runs, 100);
  CU_ASSERT_EQUAL(f.min, 1);
  CU_ASSERT_EQUAL(f.max, 100);
  cli_release();
  pthread_join(th, NULL);
  CU_ASSERT_TRUE(atomic_load(&h.hidden));
  cli_times_free(&t); /* what the leaving thread does next */
  cli_times_told(&f, false);
  CU_ASSERT_EQUAL(f.runs, 0);
}

/* ---- a job file here, {rank} here -------------------------------------------- */

/* A job file of more machines than one, run without a launcher, is refused
 * (exit 2) saying how to start it: no machine's part runs. */
static void test_a_job_of_several_machines_without_a_launcher_says_how_to_start_it(void) {
  char ex[4096], text[16800], job[4096], want[12800], y0[4096];
  example_path(0, ex, sizeof ex);
  snprintf(text, sizeof text,
           "{\"machines\": [{\"program\": \"%s\", \"outputs\": {\"1\": \"several-y0.bin\"}},\n"
           "              {\"program\": \"%s\"}, {\"program\": \"%s\"}]}",
           ex, ex, ex);
  proc p = run_job_text("several.json", text, job, sizeof job);
  CU_ASSERT_EQUAL(p.code, 2);
  snprintf(want, sizeof want,
           "progrun: %s: this job has 3 machines: start it with mpirun -n 3 (or mpiexec -n 3, srun "
           "-n 3)\n",
           job);
  CU_ASSERT_STRING_EQUAL(p.err.p, want);
  CU_ASSERT_STRING_EQUAL(p.out.p, "");
  proc_free(&p);
  CU_ASSERT_EQUAL(access(tmp_path("several-y0.bin", y0, sizeof y0), F_OK), -1);
}

/* Without a launcher this machine is machine 0: {rank} in --output is 0. */
static void test_rank_in_an_output_is_0_without_a_launcher(void) {
  char ex[4096], out[4096], arg[8400], y0[4096];
  RUN_EXITS(0, "run", example_path(0, ex, sizeof ex), "-q", "--output",
            io_arg(1, tmp_path("alone-y{rank}.bin", out, sizeof out), arg, sizeof arg));
  CU_ASSERT_EQUAL(access(tmp_path("alone-y0.bin", y0, sizeof y0), F_OK), 0);
  CU_ASSERT_EQUAL(access(out, F_OK), -1);
}

/* ---- reports ------------------------------------------------------------------- */

/* A summary line holds one unit, the one its median is read in: a p99 of
 * 1.8 ms beside a median of 400 us is 1800.0 us. */
static void test_a_summary_line_keeps_the_unit_of_its_median(void) {
  cli_figures f = {.runs = 5,
                   .min = 290300,
                   .median = 400000,
                   .p99 = 1800000,
                   .max = 1800000,
                   .mean = 500000.0,
                   .stddev = 12345.0};
  char line[512];
  cli_summary_line(&f, line, sizeof line);
  CU_ASSERT_STRING_EQUAL(line, "runs 5, min 290.3 us, median 400.0 us, mean 500.0 us, p99 1800.0 "
                               "us, max 1800.0 us, stddev 12.3 us per run\n");
  f = (cli_figures){.runs = 1, .min = 812, .median = 812, .p99 = 812, .max = 812, .mean = 812.0};
  cli_summary_line(&f, line, sizeof line);
  CU_ASSERT_STRING_EQUAL(line, "runs 1, min 812 ns, median 812 ns, mean 812 ns, p99 812 ns, max "
                               "812 ns, stddev 0 ns per run\n");
}

/* --json also gives progrun's version, when the runs began (UTC), each
 * machine's devices; --json-runs every measured run's time, per machine
 * and for the job; --json-runs without --json is bad usage. */
static void test_json_gives_the_version_time_devices_and_every_run(void) {
  char ex[4096], path[4096], cpu[64];
  example_path(0, ex, sizeof ex);
  tmp_path("every-run.json", path, sizeof path);
  RUN_EXITS(0, "run", ex, "--runs", "4", "--warmup", "1", "--json", path, "--json-runs", "-q");
  json_error_t jerr;
  json_t *root = json_load_file(path, 0, &jerr);
  CU_ASSERT_PTR_NOT_NULL_FATAL(root);
  CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(root, "progrun")), RIG_VERSION_STRING);
  const char *when = json_string_value(json_object_get(root, "timestamp"));
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0, used = 0;
  CU_ASSERT(when &&
            sscanf(when, "%4d-%2d-%2dT%2d:%2d:%2dZ%n", &y, &mo, &d, &h, &mi, &s, &used) == 6 &&
            used == 20 && y >= 2024);
  json_t *m0 = json_array_get(json_object_get(root, "machines"), 0);
  json_t *devs = json_object_get(m0, "devices");
  CU_ASSERT_EQUAL(json_array_size(devs), 2);
  snprintf(cpu, sizeof cpu, "cpu-%s", rig_host_isa());
  CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(json_array_get(devs, 0), "name")),
                         "host");
  CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(json_array_get(devs, 0), "arch")),
                         rig_host_isa());
  CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(json_array_get(devs, 1), "name")),
                         "cpu:0");
  CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(json_array_get(devs, 1), "arch")), cpu);
  json_t *objs[] = {m0, json_object_get(root, "job")};
  for (size_t k = 0; k < 2; k++) {
    json_t *each = json_object_get(objs[k], "run_ns");
    CU_ASSERT_EQUAL(json_array_size(each), 3);
    for (size_t r = 0; r < json_array_size(each); r++) {
      json_int_t v = json_integer_value(json_array_get(each, r));
      CU_ASSERT(v >= json_integer_value(json_object_get(objs[k], "min_ns")) &&
                v <= json_integer_value(json_object_get(objs[k], "max_ns")));
    }
  }
  json_decref(root);
  proc p = RUN("run", ex, "--json-runs");
  CU_ASSERT_EQUAL(p.code, 2);
  const char *usage = "progrun: run: --json-runs needs --json PATH\n";
  CU_ASSERT(strncmp(p.err.p, usage, strlen(usage)) == 0);
  proc_free(&p);
  /* Every time is kept until the report: 2^24 of them at most, before any
   * run (with the job's: 8388609 runs on one machine are one too many). */
  p = RUN("run", ex, "--runs", "8388609", "--json", path, "--json-runs");
  CU_ASSERT_EQUAL(p.code, 2);
  usage = "progrun: run: --json-runs keeps every run's time: 8388609 runs measured on 1 machine "
          "(and the job's), more than the 16777216 it keeps\n";
  CU_ASSERT(strncmp(p.err.p, usage, strlen(usage)) == 0);
  CU_ASSERT_STRING_EQUAL(p.out.p, "");
  proc_free(&p);
}

/* --csv and --markdown write the summary's figures as a table, as
 * hyperfine's exports do: CSV in seconds, Markdown in one unit. */
static void test_csv_and_markdown_write_the_summary_table(void) {
  char ex[4096], csv[4096], md[4096], host[256] = "", want[512];
  example_path(0, ex, sizeof ex);
  gethostname(host, sizeof host - 1);
  RUN_EXITS(0, "run", ex, "--runs", "3", "-q", "--csv", tmp_path("table.csv", csv, sizeof csv),
            "--markdown", tmp_path("table.md", md, sizeof md));
  size_t n = 0;
  char *text = rig_test_read_file(csv, &n);
  CU_ASSERT_PTR_NOT_NULL_FATAL(text);
  const char *head = "machine,host,runs,mean,stddev,median,p99,min,max\n";
  CU_ASSERT(strncmp(text, head, strlen(head)) == 0);
  snprintf(want, sizeof want, "0,%s,3,", host);
  const char *row = text + strlen(head);
  CU_ASSERT(strncmp(row, want, strlen(want)) == 0);
  double mean, sd, median, p99, min, max;
  CU_ASSERT(sscanf(row + strlen(want), "%lf,%lf,%lf,%lf,%lf,%lf\n", &mean, &sd, &median, &p99, &min,
                   &max) == 6 &&
            min <= median && median <= p99 && p99 <= max && max < 10.0);
  CU_ASSERT_EQUAL(strchr(row, '\n') + 1, text + n);
  free(text);
  text = rig_test_read_file(md, &n);
  CU_ASSERT_PTR_NOT_NULL_FATAL(text);
  char unit[8] = "";
  CU_ASSERT(sscanf(text, "| Machine | Host | Runs | Mean [%7[a-z]] |", unit) == 1);
  snprintf(want, sizeof want,
           "| Machine | Host | Runs | Mean [%s] | Median [%s] | p99 [%s] | Min [%s] | Max [%s] |\n"
           "|:---|:---|---:|---:|---:|---:|---:|---:|\n| 0 | %s | 3 | ",
           unit, unit, unit, unit, unit, host);
  CU_ASSERT(strncmp(text, want, strlen(want)) == 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(text, " ± "));
  free(text);
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
  char prog[4096], text[8400], job[4096], want[16800], so[4096];
  rig_desc *d = rig_desc_create();
  rig_desc_add_device(d, rig_host_isa());
  /* A real image: check reads its functions too. */
  size_t len = 0;
  void *image =
      rig_test_read_file(rig_test_binary_path("examples/kernels/saxpy.so", so, sizeof so), &len);
  CU_ASSERT_PTR_NOT_NULL_FATAL(image);
  rig_desc_add_image(d, 0, image, len);
  free(image);
  rig_desc_submit *s = rig_desc_add_submit(d, NULL, 0);
  rig_desc_part *p = rig_desc_submit_add_launch(d, s, 0, "saxpy", "\0\0\0\0\0\0\0\0", 8,
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

/* ---- a part's rail map ------------------------------------------------------- */

/* A job file of two ring nodes (examples/ring_node.json: its rail 0 from
 * the left, 1 to the right), machine 0's map `map`, machine 1's its mirror,
 * over `rails` (NULL: a rail each way, ids 1 and 2). */
static const char *ring_job(const char *map, const char *rails, char *job, size_t size) {
  char node[4096], text[16800];
  rig_test_binary_path("examples/ring_node.json", node, sizeof node);
  snprintf(text, sizeof text,
           "{\"machines\": [{\"program\": \"%s\", \"rails\": %s}, {\"program\": \"%s\", "
           "\"rails\": {\"0\": {\"from\": 0}, \"1\": {\"to\": 0}}}], \"rails\": %s}",
           node, map, node,
           rails ? rails
                 : "[{\"id\": 1, \"between\": [0, 1], \"send\": [{\"src\": 0, \"dst\": 0, "
                   "\"length\": 8}]}, {\"id\": 2, \"between\": [1, 0], \"send\": [{\"src\": 0, "
                   "\"dst\": 0, \"length\": 8}]}]");
  write_text(tmp_path("rail-map.json", job, size), text);
  return job;
}

/* Every form of an entry, relative or not, names the rail it means:
 * check passes each map that finds the ring's rails. */
static void test_a_rail_map_names_the_jobs_rails_by_id_or_by_machine(void) {
  static const char *const maps[] = {
      "{\"0\": 2, \"1\": 1}", "{\"0\": {\"from\": 1}, \"1\": {\"to\": 1}}",
      "{\"0\": {\"from\": \"{rank+1}\"}, \"1\": {\"to\": \"{rank-1}\"}}",
      "{\"1\": {\"to\": \"{rank+3}\"}, \"0\": {\"from\": \"{rank-5}\"}}", /* modulo 2 */
  };
  char job[4096];
  for (size_t i = 0; i < sizeof maps / sizeof *maps; i++) {
    proc p = RUN("check", ring_job(maps[i], NULL, job, sizeof job));
    CU_ASSERT_EQUAL(p.code, 0);
    CU_ASSERT_STRING_EQUAL(p.out.p, "ok\n");
    if (p.code != 0) show(maps[i], &p);
    proc_free(&p);
  }
}

/* A map that is malformed, or finds no rail (or two) on its machine, is
 * refused by check: exit 2, the part's rails and the entry named. */
static void test_check_refuses_a_rail_map_naming_the_entry(void) {
  static const char one_way[] = "[{\"id\": 1, \"between\": [0, 1], \"send\": [{\"src\": 0, "
                                "\"dst\": 0, \"length\": 8}]}, {\"id\": 2, \"between\": [0, 1], "
                                "\"send\": [{\"src\": 0, \"dst\": 0, \"length\": 8}]}]";
  static const struct {
    const char *map, *rails, *message;
  } cases[] = {
      {"5", NULL, "machines[0].rails: not an object of the program's rail ids to the job's rails"},
      {"{\"x\": 1}", NULL,
       "machines[0].rails: \"x\" is not a rail's id (0, 1, ... in decimal: the program's)"},
      {"{\"01\": 1}", NULL,
       "machines[0].rails: \"01\" is not a rail's id (0, 1, ... in decimal: the program's)"},
      {"{\"0\": \"left\"}", NULL,
       "machines[0].rails: rail 0: not a rail's id of \"rails\", {\"to\": MACHINE} or "
       "{\"from\": MACHINE}"},
      {"{\"0\": {\"to\": 1, \"from\": 1}}", NULL,
       "machines[0].rails: rail 0: not a rail's id of \"rails\", {\"to\": MACHINE} or "
       "{\"from\": MACHINE}"},
      {"{\"0\": {\"to\": \"{rank*2}\"}}", NULL,
       "machines[0].rails: rail 0: \"to\": not a machine's number, \"{rank}\", \"{rank+K}\" or "
       "\"{rank-K}\""},
      {"{\"0\": 9, \"1\": 1}", NULL, "machines[0].rails: rail 0: no rail 9 in \"rails\""},
      {"{\"0\": {\"from\": 5}, \"1\": 1}", NULL,
       "machines[0].rails: rail 0: machine 5 is not in this job of 2 machines"},
      {"{\"0\": {\"from\": \"{rank}\"}, \"1\": 1}", NULL,
       "machines[0].rails: rail 0: from machine 0 to itself"},
      {"{\"0\": {\"to\": 1}, \"1\": {\"to\": 1}}", one_way,
       "machines[0].rails: rail 0: rails[0] and rails[1] both go from machine 0 to machine 1 "
       "(name one by its id)"},
      {"{\"0\": {\"from\": 1}, \"1\": 1}", one_way,
       "machines[0].rails: rail 0: no rail of \"rails\" goes from machine 1 to machine 0"},
      {"{\"1\": 1}", NULL, "machines[0].program: %s: memory 0: no rail 0 in machines[0].rails"},
  };
  char job[4096], node[4096], msg[8400], want[16800];
  rig_test_binary_path("examples/ring_node.json", node, sizeof node);
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    proc p = RUN("check", ring_job(cases[i].map, cases[i].rails, job, sizeof job));
    CU_ASSERT_EQUAL(p.code, 2);
    CU_ASSERT_STRING_EQUAL(p.out.p, "");
    snprintf(msg, sizeof msg, cases[i].message, node);
    snprintf(want, sizeof want, "progrun: %s: %s\n", job, msg);
    CU_ASSERT_STRING_EQUAL(p.err.p, want);
    if (strcmp(p.err.p, want) != 0) show(cases[i].map, &p);
    proc_free(&p);
  }
}

/* check judges `every` on each machine past `machines` that its rails
 * name, its relative machines modulo the job they fit: a ring of 4 whose
 * nodes skip one finds no rail from machine 1 to machine 3. */
static void test_check_judges_every_rail_map_on_each_machine_its_rails_name(void) {
  char text[16800], job[4096], head[4096], node[4096], want[16800];
  rig_test_binary_path("examples/ring_head.json", head, sizeof head);
  rig_test_binary_path("examples/ring_node.json", node, sizeof node);
  static const char rail[] = "{\"id\": %d, \"between\": [%d, %d], \"send\": [{\"src\": 0, "
                             "\"dst\": 0, \"length\": 8}]}";
  char rails[2048] = "";
  for (int k = 0; k < 4; k++) {
    char one[256];
    snprintf(one, sizeof one, rail, k + 1, k, (k + 1) % 4);
    strcat(rails, k ? ", " : "");
    strcat(rails, one);
  }
  snprintf(text, sizeof text,
           "{\"machines\": [{\"program\": \"%s\", \"rails\": {\"0\": {\"from\": \"{rank-1}\"}, "
           "\"1\": {\"to\": \"{rank+1}\"}}}], \"every\": {\"program\": \"%s\", \"rails\": "
           "{\"0\": {\"from\": \"{rank-1}\"}, \"1\": {\"to\": \"{rank+2}\"}}}, \"rails\": [%s]}",
           head, node, rails);
  write_text(tmp_path("ring-skip.json", job, sizeof job), text);
  proc p = RUN("check", job);
  CU_ASSERT_EQUAL(p.code, 2);
  snprintf(want, sizeof want,
           "progrun: %s: every.rails: rail 1: no rail of \"rails\" goes from machine 1 to "
           "machine 3\n",
           job);
  CU_ASSERT_STRING_EQUAL(p.err.p, want);
  if (strcmp(p.err.p, want) != 0) show(text, &p);
  proc_free(&p);
}

/* run resolves each machine's map before anything runs: on one machine,
 * "{rank+1}" is the machine itself, refused with exit 2. */
static void test_run_refuses_a_rail_map_that_finds_no_rail_on_its_machine(void) {
  char node[4096], text[8400], job[4096], want[16800];
  rig_test_binary_path("examples/ring_node.json", node, sizeof node);
  snprintf(text, sizeof text,
           "{\"every\": {\"program\": \"%s\", \"ints\": [\"run\", \"rank\"], \"rails\": "
           "{\"0\": {\"from\": \"{rank-1}\"}, \"1\": {\"to\": \"{rank+1}\"}}}}",
           node);
  proc p = run_job_text("ring-alone.json", text, job, sizeof job);
  CU_ASSERT_EQUAL(p.code, 2);
  CU_ASSERT_STRING_EQUAL(p.out.p, "");
  snprintf(want, sizeof want, "progrun: %s: every.rails: rail 0: from machine 0 to itself\n", job);
  CU_ASSERT_STRING_EQUAL(p.err.p, want);
  if (strcmp(p.err.p, want) != 0) show(text, &p);
  proc_free(&p);
}

/* dump lists a part's map in the program's order, as the file meant it. */
static void test_dump_lists_a_parts_rail_map(void) {
  char job[4096];
  proc p =
      RUN("dump", ring_job("{\"1\": {\"to\": \"{rank+1}\"}, \"0\": 2}", NULL, job, sizeof job));
  CU_ASSERT_EQUAL(p.code, 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(p.out.p, "\n  rails: 0 rail 2, 1 to {rank+1}\n"));
  CU_ASSERT_PTR_NOT_NULL(strstr(p.out.p, "\n  rails: 0 from machine 0, 1 to machine 0\n"));
  if (p.code != 0) show("dump", &p);
  proc_free(&p);
}

/* ---- the builder, as docs/embedding.md shows it ------------------------------- */

/* examples/embed/describe.c builds saxpy.json's description in C: the two
 * give the same bytes (and check passes both). */
static void test_the_description_built_in_c_is_saxpy_json(void) {
  char json[4096], so[4096], dir[4096];
  size_t tlen = 0;
  char *text = rig_test_read_file(example_path(0, json, sizeof json), &tlen);
  CU_ASSERT_PTR_NOT_NULL_FATAL(text);
  rig_desc *want = NULL;
  rig_error err;
  CU_ASSERT_EQUAL_FATAL(
      rig_desc_of_json(text, tlen, rig_test_binary_path("examples", dir, sizeof dir), &want, &err),
      RIG_OK);
  free(text);
  size_t len = 0;
  void *kernels =
      rig_test_read_file(rig_test_binary_path("examples/kernels/saxpy.so", so, sizeof so), &len);
  CU_ASSERT_PTR_NOT_NULL_FATAL(kernels);
  rig_desc *got = saxpy_description(kernels, len);
  CU_ASSERT_PTR_NOT_NULL_FATAL(got);
  uint8_t *a = NULL, *b = NULL;
  size_t alen = 0, blen = 0;
  CU_ASSERT_EQUAL(rig_desc_to_bytes(want, &a, &alen, &err), RIG_OK);
  CU_ASSERT_EQUAL(rig_desc_to_bytes(got, &b, &blen, &err), RIG_OK);
  CU_ASSERT_EQUAL(alen, blen);
  CU_ASSERT(a && b && alen == blen && memcmp(a, b, alen) == 0);
  CU_ASSERT_EQUAL(rig_desc_check(got, &err), RIG_OK);
  free(a);
  free(b);
  free(kernels);
  rig_desc_free(got);
  rig_desc_free(want);
}

/* ---- dot ------------------------------------------------------------------ */

/* The lines of a graph that are edges drawn (not the invisible ones that
 * only place nodes), in order, joined. */
static void edges_of(const char *graph, char *out, size_t size) {
  out[0] = '\0';
  size_t used = 0;
  for (const char *line = graph; *line;) {
    const char *end = strchr(line, '\n');
    size_t n = end ? (size_t)(end - line) + 1 : strlen(line);
    if (memmem(line, n, " -> ", 4) && !memmem(line, n, "style=invis", 11) && used + n < size) {
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

/* A description of four steps: 0 on cpu writes memory 0; 1 on the host
 * reads it and writes memory 1 (part 0), then reads memory 1 (part 1,
 * Words); 2 moves memory 1 into input 0; 3 on cpu uses memory 0
 * Unordered. */
static const char *dot_sample(char *path, size_t size) {
  rig_desc *d = rig_desc_create();
  rig_desc_add_device(d, "x86_64");
  rig_desc_add_device(d, "cpu-x86_64");
  rig_desc_add_alloc(d, 0, RIG_KIND_PINNED, 64, RIG_COPIES_ONE);
  rig_desc_add_alloc(d, 0, RIG_KIND_PINNED, 64, RIG_COPIES_ONE);
  rig_desc_add_image(d, 0, "\177ELF", 4);
  rig_desc_add_image(d, 1, "\177ELF", 4);
  rig_desc_add_input(d, 0, 64);
  write_launch(d, 1, 1, (int64_t[]){0}, (rig_desc_use[]){RIG_USE_WRITE}, 1);
  write_launch(d, 0, 0, (int64_t[]){0, 1}, (rig_desc_use[]){RIG_USE_READ, RIG_USE_WRITE}, 2);
  rig_desc_submit_add_words(d, &d->steps.items[1].u.submit, rig_desc_view_of(1, 0, 8));
  rig_desc_add_move(d, NULL, rig_desc_slot_memory(1, 0, 64), rig_desc_slot_input(0), 64);
  write_launch(d, 1, 1, (int64_t[]){0}, (rig_desc_use[]){RIG_USE_UNORDERED}, 1);
  write_desc(d, "dot-a.bin", path, size);
  rig_desc_free(d);
  return path;
}

/* With --all, dot draws an edge to each step (each part of a Submit)
 * from every earlier one it follows, time flowing down: another device's
 * conflicting use of the same memory, named with the two uses, or the
 * same device's earlier work ("device order"); a read after a read, or
 * two Unordered uses, draw none. */
static void test_dot_all_draws_what_each_step_follows_and_why(void) {
  char path[4096], got[8192];
  proc p = RUN("dot", "--all", dot_sample(path, sizeof path));
  CU_ASSERT_EQUAL(p.code, 0);
  CU_ASSERT(strncmp(p.out.p, "digraph program {\n", 18) == 0);
  edges_of(p.out.p, got, sizeof got);
  CU_ASSERT_STRING_EQUAL(got, "  s0p0 -> s1p0 [label=\"memory 0: Read after Write\"];\n"
                              "  s0p0 -> s3p0 [label=\"device order\"];\n"
                              "  s1p0 -> s1p1 [label=\"device order\"];\n"
                              "  s1p0 -> s2 [label=\"memory 1: Read after Write\"];\n"
                              "  s1p0 -> s3p0 [label=\"memory 0: Unordered after Read\"];\n");
  if (p.code != 0) show("dot", &p);
  proc_free(&p);

  /* A loop is a cluster; its head reads the flag, which each body step's
   * Unordered use follows; the two Unordered uses do not follow each
   * other. */
  rig_desc *d = rig_desc_create();
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
  p = RUN("dot", "--all", path);
  CU_ASSERT_EQUAL(p.code, 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(p.out.p, "  subgraph cluster_s0 {\n"
                                         "    s0 [label=\"step 0: Loop\\n4 trips\\nuntil byte 0 "
                                         "of memory 0 is 0\", shape=ellipse];\n"));
  edges_of(p.out.p, got, sizeof got);
  CU_ASSERT_STRING_EQUAL(got, "  s0 -> s1p0 [label=\"memory 0: Unordered after Read\"];\n"
                              "  s0 -> s2p0 [label=\"memory 0: Unordered after Read\"];\n");
  proc_free(&p);
}

/* Without --all, an edge that a path through others implies is left out
 * (s0p0 -> s3p0: s3p0 follows s1p0, which follows s0p0); edges between
 * one pair of nodes are one, naming every reason. */
static void test_dot_leaves_out_edges_others_imply(void) {
  char path[4096], got[8192];
  proc p = RUN("dot", dot_sample(path, sizeof path));
  CU_ASSERT_EQUAL(p.code, 0);
  edges_of(p.out.p, got, sizeof got);
  CU_ASSERT_STRING_EQUAL(got, "  s0p0 -> s1p0 [label=\"memory 0: Read after Write\"];\n"
                              "  s1p0 -> s1p1 [label=\"device order\"];\n"
                              "  s1p0 -> s2 [label=\"memory 1: Read after Write\"];\n"
                              "  s1p0 -> s3p0 [label=\"memory 0: Unordered after Read\"];\n");
  proc_free(&p);

  /* Two steps on one device, the second reading what the first wrote. */
  rig_desc *d = rig_desc_create();
  rig_desc_add_device(d, "x86_64");
  rig_desc_add_device(d, "cpu-x86_64");
  rig_desc_add_alloc(d, 0, RIG_KIND_PINNED, 64, RIG_COPIES_ONE);
  rig_desc_add_image(d, 0, "\177ELF", 4);
  rig_desc_add_move(d, NULL, rig_desc_slot_ints(), rig_desc_slot_memory(0, 0, 8), 8);
  write_launch(d, 0, 0, (int64_t[]){0}, (rig_desc_use[]){RIG_USE_WRITE}, 1);
  write_launch(d, 0, 0, (int64_t[]){0}, (rig_desc_use[]){RIG_USE_READ}, 1);
  write_desc(d, "dot-c.bin", path, sizeof path);
  rig_desc_free(d);
  p = RUN("dot", path);
  edges_of(p.out.p, got, sizeof got);
  CU_ASSERT_STRING_EQUAL(got, "  s0 -> s1p0 [label=\"memory 0: Write after Write\"];\n"
                              "  s1p0 -> s2p0 [label=\"device order\"];\n");
  proc_free(&p);
}

/* Nodes say what they are: a Submit of one part is a node naming its
 * device (number and arch) and its kernel; of more, a cluster of its
 * parts under a title node; a Move names its source and destination. */
static void test_dot_names_kernels_devices_and_both_ends_of_a_move(void) {
  char path[4096];
  proc p = RUN("dot", dot_sample(path, sizeof path));
  CU_ASSERT_EQUAL(p.code, 0);
  static const char *const wants[] = {
      "  s0p0 [label=\"step 0: Submit on device 1, cpu-x86_64\\nLaunch k\"];\n",
      "  subgraph cluster_s1 {\n"
      "    s1 [label=\"step 1: Submit on device 0, x86_64\", shape=plaintext];\n"
      "    s1p0 [label=\"0: Launch k\"];\n"
      "    s1p1 [label=\"1: Words memory 1\"];\n",
      "  s2 [label=\"step 2: Move\\nmemory 1 → input 0\\n64 bytes\", style=rounded];\n",
  };
  for (size_t i = 0; i < sizeof wants / sizeof wants[0]; i++) {
    CU_ASSERT_PTR_NOT_NULL(strstr(p.out.p, wants[i]));
    if (!strstr(p.out.p, wants[i])) show(wants[i], &p);
  }
  proc_free(&p);
}

/* dot of a job file: a cluster per machine, each step's node named after
 * its machine and its devices after the job's names for them, and each
 * direction of a rail from the node that sends on it to the node that
 * receives; an edge back to an earlier machine places nothing. */
static void test_dot_of_a_job_file_draws_each_rails_two_directions(void) {
  char path[4096];
  proc p = RUN("dot", rig_test_binary_path("examples/pipeline.json", path, sizeof path));
  CU_ASSERT_EQUAL(p.code, 0);
  CU_ASSERT(strncmp(p.out.p, "digraph job {\n", 14) == 0);
  static const char *const wants[] = {
      "  subgraph cluster_m0 {\n", "  subgraph cluster_m1 {\n",
      "    m1_s0p0 [label=\"step 0: Submit on device 0, ",
      "  m0_s0p0 -> m1_s0p0 [label=\"rail 1 send: 4096 bytes\", style=dashed, color=blue, "
      "fontcolor=blue];\n",
      "  m1_s0p0 -> m0_s0p0 [label=\"rail 1 receive: 8 bytes\", style=dashed, color=blue, "
      "fontcolor=blue, constraint=false];\n"};
  for (size_t i = 0; i < sizeof wants / sizeof wants[0]; i++) {
    CU_ASSERT_PTR_NOT_NULL(strstr(p.out.p, wants[i]));
    if (!strstr(p.out.p, wants[i])) show(wants[i], &p);
  }
  proc_free(&p);

  /* The job's device names; a rail no node uses joins the clusters. */
  char ex[4096], job[4096], text[8400];
  snprintf(text, sizeof text,
           "{\"machines\": [{\"program\": \"%s\", \"devices\": [\"host\", \"cpu:1\"]}], "
           "\"every\": {\"program\": \"%s\"}, \"rails\": [{\"id\": 3, \"between\": [0, 1], "
           "\"send\": [{\"src\": 0, \"dst\": 0, \"length\": 8}]}]}",
           example_path(0, ex, sizeof ex), ex);
  write_text(tmp_path("dot-job.json", job, sizeof job), text);
  p = RUN("dot", job);
  CU_ASSERT_EQUAL(p.code, 0);
  static const char *const more[] = {
      "    m0_s3p0 [label=\"step 3: Submit on cpu:1 (device 1)\\nLaunch saxpy\"];\n",
      "    every_s3p0 [label=\"step 3: Submit on device 1, cpu-",
      "  m0 -> every [label=\"rail 3 send: 8 bytes\", style=dashed, color=blue, "
      "fontcolor=blue, ltail=cluster_m0, lhead=cluster_every];\n"};
  for (size_t i = 0; i < sizeof more / sizeof more[0]; i++) {
    CU_ASSERT_PTR_NOT_NULL(strstr(p.out.p, more[i]));
    if (!strstr(p.out.p, more[i])) show(more[i], &p);
  }
  proc_free(&p);

  /* A rail to a machine no part draws (which check refuses; dot draws
   * what it is given): a node saying so. */
  snprintf(text, sizeof text,
           "{\"machines\": [{\"program\": \"%s\"}], \"rails\": [{\"id\": 4, \"between\": [0, 2], "
           "\"send\": [{\"src\": 0, \"dst\": 0, \"length\": 8}]}]}",
           ex);
  write_text(job, text);
  p = RUN("dot", job);
  CU_ASSERT_EQUAL(p.code, 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(p.out.p, "  m2 [label=\"machine 2: no part of the job\", "
                                         "shape=plaintext];\n"
                                         "  m0 -> m2 [label=\"rail 4 send: 8 bytes\", "
                                         "style=dashed, color=blue, fontcolor=blue, "
                                         "ltail=cluster_m0];\n"));
  proc_free(&p);
}

/* Graphviz draws the graph of every example, description or job file,
 * without a warning. */
static void test_graphviz_renders_every_example(void) {
  const char *dot = getenv("RIG_TEST_DOT");
  if (!dot || !*dot) {
    rig_test_skip(__func__, "no Graphviz dot (install graphviz: scripts/lib/packages.sh)");
    return;
  }
  char dir[4096];
  rig_test_binary_path("examples", dir, sizeof dir);
  DIR *dp = opendir(dir);
  CU_ASSERT_PTR_NOT_NULL_FATAL(dp);
  size_t drawn = 0;
  for (struct dirent *e; (e = readdir(dp));) {
    size_t n = strlen(e->d_name);
    if (n < 5 || strcmp(e->d_name + n - 5, ".json") != 0) continue;
    char script[16384];
    snprintf(script, sizeof script,
             "set -o pipefail; '%s' dot '%s/%s' | '%s' -Tsvg -o /dev/null 2>&1; "
             "echo \"exit $?\"",
             progrun_path(), dir, e->d_name, dot);
    char *out = bash_out(script);
    CU_ASSERT_STRING_EQUAL(out, "exit 0\n");
    if (strcmp(out, "exit 0\n") != 0) fprintf(stderr, "\n%s: %s\n", e->d_name, out);
    free(out);
    drawn++;
  }
  closedir(dp);
  CU_ASSERT(drawn >= 8);
}

/* ---- usage ---------------------------------------------------------------- */

/* progrun --help (-h, help) prints every command's usage on stdout. */
static void test_help_prints_usage_on_stdout(void) {
  static const char *const forms[] = {"--help", "-h", "help"};
  for (size_t i = 0; i < 3; i++) {
    proc p = RUN(forms[i]);
    CU_ASSERT_EQUAL(p.code, 0);
    CU_ASSERT(strncmp(p.out.p, "usage:\n", 7) == 0);
    static const char *const commands[] = {
        "[run] FILE",       "info [--json]",    "check FILE",    "dump FILE [--json]",
        "dot FILE [--all]", "pack FILE -o OUT", "help [COMMAND]"};
    for (size_t c = 0; c < sizeof commands / sizeof commands[0]; c++) {
      char line[64];
      snprintf(line, sizeof line, "\n  progrun %s ", commands[c]);
      CU_ASSERT_PTR_NOT_NULL(strstr(p.out.p, line));
    }
    CU_ASSERT_STRING_EQUAL(p.err.p, "");
    proc_free(&p);
  }
}

/* Each command has a help of its own, the same from `progrun CMD --help`,
 * `progrun CMD -h` and `progrun help CMD`: its synopsis first, each of its
 * options, and not the other commands'. */
static void test_each_command_has_its_own_help(void) {
  static const struct {
    const char *cmd, *synopsis, *option, *foreign;
  } cases[] = {
      {"run", "usage: progrun run FILE [options]\n       progrun FILE [options]\n", "--warmup N",
       "progrun pack"},
      {"info", "usage: progrun info [--json]\n", "--json", "--runs"},
      {"check", "usage: progrun check FILE\n", "-h, --help", "--json"},
      {"dump", "usage: progrun dump FILE [--json]\n", "--json", "--runs"},
      {"dot", "usage: progrun dot FILE [--all]\n", "--all", "--runs"},
      {"pack", "usage: progrun pack FILE -o OUT\n", "-o OUT", "--runs"},
      {"help", "usage: progrun help [COMMAND]\n", "-h, --help", "--runs"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    proc p = RUN(cases[i].cmd, "--help");
    CU_ASSERT_EQUAL(p.code, 0);
    CU_ASSERT_STRING_EQUAL(p.err.p, "");
    CU_ASSERT(strncmp(p.out.p, cases[i].synopsis, strlen(cases[i].synopsis)) == 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(p.out.p, cases[i].option));
    CU_ASSERT_PTR_NULL(strstr(p.out.p, cases[i].foreign));
    CU_ASSERT_PTR_NOT_NULL(strstr(p.out.p, "\nExit status: 0 success"));
    if (strncmp(p.out.p, cases[i].synopsis, strlen(cases[i].synopsis)) != 0) show(cases[i].cmd, &p);
    proc q = RUN("help", cases[i].cmd);
    CU_ASSERT_EQUAL(q.code, 0);
    CU_ASSERT_STRING_EQUAL(q.out.p, p.out.p);
    proc_free(&q);
    q = RUN(cases[i].cmd, "-h");
    CU_ASSERT_STRING_EQUAL(q.out.p, p.out.p);
    proc_free(&q);
    proc_free(&p);
  }
  /* progrun FILE --help is run's. */
  char ex[4096];
  proc p = RUN(example_path(0, ex, sizeof ex), "--help");
  CU_ASSERT_EQUAL(p.code, 0);
  CU_ASSERT(strncmp(p.out.p, "usage: progrun run FILE", 23) == 0);
  proc_free(&p);
  p = RUN("help", "frob");
  CU_ASSERT_EQUAL(p.code, 2);
  CU_ASSERT_STRING_EQUAL(p.err.p, "progrun: help: no command 'frob'\nsee 'progrun help --help'\n");
  proc_free(&p);
}

/* No help line is wider than a terminal's 80 columns. */
static void test_help_fits_80_columns(void) {
  static const char *const cmds[] = {"run", "info", "check", "dump", "dot", "pack", "help", NULL};
  for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
    proc p = cmds[i] ? RUN("help", cmds[i]) : RUN("help");
    size_t widest = 0;
    for (const char *line = p.out.p; *line;) {
      size_t n = strcspn(line, "\n");
      if (n > widest) widest = n;
      line += n + (line[n] != '\0');
    }
    CU_ASSERT(widest <= 80);
    if (widest > 80) show(cmds[i] ? cmds[i] : "help", &p);
    proc_free(&p);
  }
}

static void test_version_is_the_library_version(void) {
  static const char *const forms[] = {"--version", "-V", "version"};
  for (size_t i = 0; i < 3; i++) {
    proc p = RUN(forms[i]);
    CU_ASSERT_EQUAL(p.code, 0);
    CU_ASSERT_STRING_EQUAL(p.out.p, "progrun " RIG_VERSION_STRING "\n");
    CU_ASSERT_STRING_EQUAL(p.err.p, "");
    proc_free(&p);
  }
  proc p = RUN("version", "extra");
  CU_ASSERT_EQUAL(p.code, 2);
  CU_ASSERT(strncmp(p.err.p, "progrun: version: takes nothing, not 'extra'\n", 45) == 0);
  proc_free(&p);
}

/* A usage error is one line of what is wrong and one pointing to the
 * command's help (progrun's own before a command), on stderr: exit 2. */
static void test_bad_usage_is_one_line_and_where_the_help_is(void) {
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
      {"info", "--yaml", NULL},
      {"dot", e, "--some", NULL},
      {"help", "run", "dot", NULL},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    proc p = run_io(NULL, NULL, cases[i]);
    CU_ASSERT_EQUAL(p.code, 2);
    CU_ASSERT_STRING_EQUAL(p.out.p, "");
    /* frobnicate: no command yet. */
    const char *cmd = cases[i][0] && cases[i][0][0] != '-' && i != 1 ? cases[i][0] : NULL;
    CU_ASSERT(usage_said(p.err.p, cmd));
    if (p.code != 2 || !usage_said(p.err.p, cmd))
      show(cases[i][0] ? cases[i][0] : "(no argument)", &p);
    proc_free(&p);
  }
  proc p = RUN("dump");
  CU_ASSERT_STRING_EQUAL(p.err.p, "progrun: dump: no FILE given\nsee 'progrun dump --help'\n");
  proc_free(&p);
}

/* The man page, made from the help at build time, renders without a
 * warning and holds every command's synopsis and every option. */
static void test_the_man_page_holds_every_command_and_option(void) {
  char man[4096], script[8400];
  rig_test_binary_path("share/man/man1/progrun.1", man, sizeof man);
  snprintf(script, sizeof script, "groff -man -Tascii -ww -P-cbou '%s' 2>&1", man);
  char *text = bash_out(script);
  CU_ASSERT_PTR_NOT_NULL_FATAL(text);
  CU_ASSERT_PTR_NULL(strstr(text, "warning"));
  static const char *const wants[] = {"progrun run FILE [options]",
                                      "progrun info [--json]",
                                      "progrun check FILE",
                                      "progrun dump FILE [--json]",
                                      "progrun dot FILE [--all]",
                                      "progrun pack FILE -o OUT",
                                      "--runs N",
                                      "--warmup N",
                                      "--ints LIST",
                                      "--input I=PATH",
                                      "--output I=PATH",
                                      "--devices LIST",
                                      "--json PATH",
                                      "--trace PATH",
                                      "--no-progress",
                                      "-q, --quiet",
                                      "-V, --version",
                                      "EXIT STATUS"};
  for (size_t i = 0; i < sizeof wants / sizeof wants[0]; i++) {
    CU_ASSERT_PTR_NOT_NULL(strstr(text, wants[i]));
    if (!strstr(text, wants[i])) fprintf(stderr, "\nthe man page lacks '%s'\n", wants[i]);
  }
  free(text);
}

/* The bash completion, made from the help: commands, each command's
 * options, commands after help, nothing after an option taking a number,
 * files after one taking a path. */
static void test_bash_completion_offers_commands_options_and_files(void) {
  char completion[4096], script[16384];
  rig_test_binary_path("progrun.bash-completion", completion, sizeof completion);
  snprintf(script, sizeof script,
           "source '%s'\n"
           "t() { COMP_WORDS=(\"$@\"); COMP_CWORD=$(($# - 1)); _progrun; "
           "echo \"${COMPREPLY[*]}\"; }\n"
           "mkdir -p '%s/complete' && cd '%s/complete' && : > pick.json\n"
           "t progrun ru; t progrun run --ru; t progrun dot --a; t progrun help d; "
           "t progrun run pick.json --runs ''; t progrun pick.json --q; "
           "t progrun run pick.json --json pi; t progrun -V\n",
           completion, tmp_dir, tmp_dir);
  char *out = bash_out(script);
  CU_ASSERT_STRING_EQUAL(out, "run\n--runs\n--all\ndump dot\n\n--quiet\npick.json\n-V\n");
  free(out);
}

/* docs/cli.md shows progrun --help and progrun dot --help as progrun
 * prints them, after their command line. */
static void test_cli_md_shows_the_help_as_printed(void) {
  char path[4096];
  size_t len = 0;
  char *doc = rig_test_read_file(rig_test_source_path("docs/cli.md", path, sizeof path), &len);
  CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
  char *text = realloc(doc, len + 1);
  CU_ASSERT_PTR_NOT_NULL_FATAL(text);
  text[len] = '\0';
  static const char *const lines[] = {"$ progrun --help\n", "$ progrun dot --help\n"};
  for (size_t i = 0; i < 2; i++) {
    proc p = i == 0 ? RUN("--help") : RUN("dot", "--help");
    size_t n = strlen(lines[i]) + strlen(p.out.p) + 1;
    char *want = malloc(n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(want);
    snprintf(want, n, "%s%s", lines[i], p.out.p);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, want));
    if (!strstr(text, want)) show(lines[i], &p);
    free(want);
    proc_free(&p);
  }
  free(text);
}

/* A file that cannot be read: its path and the system's reason, exit 2. */
static void test_unreadable_file_names_its_path(void) {
  char missing[4096], want[12800];
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
      {"check finds what a load would refuse without a device",
       test_check_finds_what_a_load_would_refuse_without_a_device},
      {"a file neither bytes nor JSON is not a program description",
       test_a_file_neither_bytes_nor_json_is_not_a_program_description},
      {"info, the summary and dump say why they cannot be written",
       test_info_the_summary_and_dump_say_why_they_cannot_be_written},
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
      {"each command has its own help", test_each_command_has_its_own_help},
      {"help fits 80 columns", test_help_fits_80_columns},
      {"version is the library version", test_version_is_the_library_version},
      {"bad usage is one line and where the help is",
       test_bad_usage_is_one_line_and_where_the_help_is},
      {"the man page holds every command and option",
       test_the_man_page_holds_every_command_and_option},
      {"bash completion offers commands, options and files",
       test_bash_completion_offers_commands_options_and_files},
      {"cli.md shows the help as printed", test_cli_md_shows_the_help_as_printed},
      {"unreadable file names its path", test_unreadable_file_names_its_path},
      {"a repeated option or extra word is bad usage",
       test_a_repeated_option_or_extra_word_is_bad_usage},
      {"an option is its whole name and a word of its own",
       test_an_option_is_its_whole_name_and_a_word_of_its_own},
      CU_TEST_INFO_NULL};
  static CU_TestInfo run[] = {
      {"run saxpy gives checkable output", test_run_saxpy_gives_checkable_output},
      {"run stencil stops at its flag", test_run_stencil_stops_at_its_flag},
      {"run ints take run and rank", test_run_ints_take_run_and_rank},
      {"run devices map and refuse", test_run_devices_map_and_refuse},
      {"run refuses devices the machine lacks", test_run_refuses_devices_the_machine_lacks},
      {"run checks input and output files", test_run_checks_input_and_output_files},
      {"info --json gives one machine here", test_info_json_gives_one_machine_here},
      {"RIG_UCX_TLS takes the place of UCX_TLS for librig",
       test_rig_ucx_tls_takes_the_place_of_ucx_tls_for_librig},
      {"cli.md shows the info block as printed", test_cli_md_shows_the_info_block_as_printed},
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
      {"a source example points to the build's copy",
       test_a_source_example_points_to_the_builds_copy},
      {"a long path keeps the reason", test_a_long_path_keeps_the_reason},
      {"units fit the time", test_units_fit_the_time},
      {"warmup runs are marked in the trace", test_warmup_runs_are_marked_in_the_trace},
      {"warmup runs are left out of the figures", test_warmup_runs_are_left_out_of_the_figures},
      {"warmup of every run is bad usage", test_warmup_of_every_run_is_bad_usage},
      {"json writes the figures of the job and each machine",
       test_json_writes_the_figures_of_the_job_and_each_machine},
      {"json to an unwritable path is refused before any run",
       test_json_to_an_unwritable_path_is_refused_before_any_run},
      {"a machine's clock is narrowed by its runs", test_a_machine_s_clock_is_narrowed_by_its_runs},
      {"a trace opens a track's rows only for slices that overlap",
       test_a_trace_opens_a_track_s_rows_only_for_slices_that_overlap},
      {"a drifted machine's slices are clamped into their hand-overs and noted",
       test_a_drifted_machine_s_slices_are_clamped_into_their_hand_overs_and_noted},
      {"a trace shows every step per device in order with a run counter",
       test_a_trace_shows_every_step_per_device_in_order_with_a_run_counter},
      {"a bad trace path is refused before any run",
       test_a_bad_trace_path_is_refused_before_any_run},
      {"trace without a path or twice is bad usage",
       test_trace_without_a_path_or_twice_is_bad_usage},
      {"progress forces the line, ended by a line feed, and no-progress suppresses it",
       test_progress_forces_the_line_ended_by_a_line_feed_and_no_progress_suppresses_it},
      {"a summary line keeps the unit of its median",
       test_a_summary_line_keeps_the_unit_of_its_median},
      {"json gives the version, time, devices and every run",
       test_json_gives_the_version_time_devices_and_every_run},
      {"csv and markdown write the summary table", test_csv_and_markdown_write_the_summary_table},
      {"rank in an output is 0 without a launcher", test_rank_in_an_output_is_0_without_a_launcher},
      CU_TEST_INFO_NULL};
  static CU_TestInfo files[] = {
      {"a description's files are regular and within 1 GiB",
       test_a_descriptions_files_are_regular_and_within_1_gib},
      {"a FIFO no process reads is refused at once",
       test_a_fifo_no_process_reads_is_refused_at_once},
      {"a FIFO as FILE is read or refused within 10 s",
       test_a_fifo_as_file_is_read_or_refused_within_10_s},
      {"no file is replaced when another fails", test_no_file_is_replaced_when_another_fails},
      {"an output on stdout is its bytes alone", test_an_output_on_stdout_is_its_bytes_alone},
      {"one file named twice is refused before any run",
       test_one_file_named_twice_is_refused_before_any_run},
      {"an interrupt is told with the runs so far and no file",
       test_an_interrupt_is_told_with_the_runs_so_far_and_no_file},
      {"times are hidden only after a told under way",
       test_times_are_hidden_only_after_a_told_under_way},
      CU_TEST_INFO_NULL};
  static CU_TestInfo jobs[] = {
      {"a job file refuses every outputs without rank",
       test_a_job_file_refuses_every_outputs_without_rank},
      {"a job file replaces every rank in a path", test_a_job_file_replaces_every_rank_in_a_path},
      {"rank in an input path names the machine's file",
       test_rank_in_an_input_path_names_the_machine_file},
      {"a short input file is warned of", test_a_short_input_file_is_warned_of},
      {"a job file of every alone runs", test_a_job_file_of_every_alone_runs},
      {"job file errors name the file and what is wrong",
       test_job_file_errors_name_the_file_and_what_is_wrong},
      {"job file rails are checked field by field", test_job_file_rails_are_checked_field_by_field},
      {"a job file rail past the host's room is refused by check and run",
       test_a_job_file_rail_past_the_hosts_room_is_refused_by_check_and_run},
      {"a job file failing here exits with its message",
       test_a_job_file_failing_here_exits_with_its_message},
      {"a job of several machines without a launcher says how to start it",
       test_a_job_of_several_machines_without_a_launcher_says_how_to_start_it},
      {"check passes the example job files", test_check_passes_the_example_job_files},
      {"check of a job file names the file and the JSON path",
       test_check_of_a_job_file_names_the_file_and_the_json_path},
      {"check of a job file finds a Ready of a rail the machine lacks",
       test_check_of_a_job_file_finds_a_ready_of_a_rail_the_machine_lacks},
      {"dump lists a job file's machines and rails",
       test_dump_lists_a_job_files_machines_and_rails},
      {"dump of a job file names the program it cannot read",
       test_dump_of_a_job_file_names_the_program_it_cannot_read},
      {"a rail map names the job's rails by id or by machine",
       test_a_rail_map_names_the_jobs_rails_by_id_or_by_machine},
      {"check refuses a rail map naming the entry", test_check_refuses_a_rail_map_naming_the_entry},
      {"check judges every rail map on each machine its rails name",
       test_check_judges_every_rail_map_on_each_machine_its_rails_name},
      {"run refuses a rail map that finds no rail on its machine",
       test_run_refuses_a_rail_map_that_finds_no_rail_on_its_machine},
      {"dump lists a part's rail map", test_dump_lists_a_parts_rail_map},
      CU_TEST_INFO_NULL};
  rig_test_add_suite("cli: check", check);
  rig_test_add_suite("cli: dump", dump);
  rig_test_add_suite("cli: pack", pack);
  rig_test_add_suite("cli: run", run);
  rig_test_add_suite("cli: usage", usage);
  rig_test_add_suite("cli: files", files);
  static CU_TestInfo dot[] = {
      {"dot --all draws what each step follows and why",
       test_dot_all_draws_what_each_step_follows_and_why},
      {"dot leaves out edges others imply", test_dot_leaves_out_edges_others_imply},
      {"dot names kernels, devices and both ends of a move",
       test_dot_names_kernels_devices_and_both_ends_of_a_move},
      {"dot of a job file draws each rail's two directions",
       test_dot_of_a_job_file_draws_each_rails_two_directions},
      {"Graphviz renders every example", test_graphviz_renders_every_example},
      CU_TEST_INFO_NULL};
  rig_test_add_suite("cli: job files", jobs);
  rig_test_add_suite("cli: dot", dot);
  static CU_TestInfo builder[] = {
      {"the description built in C is saxpy.json", test_the_description_built_in_c_is_saxpy_json},
      CU_TEST_INFO_NULL};
  rig_test_add_suite("cli: builder", builder);
}

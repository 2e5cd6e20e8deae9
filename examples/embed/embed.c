/* embed.c: an MPI application that embeds a rig job (docs/embedding.md).
 *
 * Every rank starts the job over MPI_COMM_WORLD. Rank 0, the controller,
 * loads the saxpy description (examples/saxpy.json: the host and a CPU
 * device) on machine 1's devices through their proxies, fills machine 1's
 * input x with its own bytes, runs the program three times, reads y back
 * and checks it. Every other rank serves the job on a thread of its own
 * while its main thread takes part in the application's own collectives,
 * MPI_THREAD_MULTIPLE making the two safe side by side. Then every rank
 * closes the job and finalizes MPI.
 *
 * Usage: mpirun -n 2 embed PATH/saxpy.json
 *        mpirun -n 2 embed PATH/kernels/saxpy.so
 * The second builds the same description in C (describe.c) around the
 * kernels' bytes. Prints "embed: ok" on rank 0 when y is as computed
 * here. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include <rig/rig_job.h>
#include <rig/rig_program.h>

#include "describe.h"

enum { N = 1024, TRIPS = 4, RUNS = 3 };

static void die(const char *what, rig_status st, const rig_error *err) {
  fprintf(stderr, "embed: %s: %s: %s\n", what, rig_status_name(st), err->message);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

#define CHECK(what, call)                                                                          \
  do {                                                                                             \
    rig_status st_ = (call);                                                                       \
    if (st_ != RIG_OK) die(what, st_, &err);                                                       \
  } while (0)

/* The whole of a file, NUL-terminated; *len its length. */
static char *read_text(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 4096, n = 0;
  char *text = malloc(cap);
  for (size_t got; text && (got = fread(text + n, 1, cap - n - 1, f)) > 0;) {
    n += got;
    if (cap - n - 1 == 0) {
      char *more = realloc(text, cap *= 2);
      if (!more) free(text);
      text = more;
    }
  }
  fclose(f);
  if (text) text[n] = '\0';
  *len = n;
  return text;
}

/* The description at `path`: JSON text, its {"file": ...} paths read
 * relative to the JSON file's directory (as progrun reads them), or the
 * kernels' .so, around which describe.c builds the same description. */
static rig_desc *load_description(const char *path) {
  size_t len = 0;
  char *text = read_text(path, &len);
  if (!text) {
    fprintf(stderr, "embed: cannot read %s: %s\n", path, strerror(errno));
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  size_t n = strlen(path);
  if (n > 3 && strcmp(path + n - 3, ".so") == 0) {
    rig_desc *d = saxpy_description(text, len);
    free(text);
    if (!d) {
      fprintf(stderr, "embed: out of memory\n");
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return d;
  }
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (slash)
    *slash = '\0';
  else
    snprintf(dir, sizeof dir, ".");
  rig_desc *d = NULL;
  rig_error err;
  CHECK(path, rig_desc_of_json(text, len, dir, &d, &err));
  free(text);
  return d;
}

/* The controller's part: the program on machine 1, fed, run and read back.
 * Returns the sum of y, which the application then reduces. */
static double control(rig_job *job, const char *path) {
  rig_error err;
  const rig_machine *m1 = rig_job_machine(job, 1);
  printf("embed: %zu machines; machine 1 is rank %d on %s with %zu devices\n",
         rig_job_machines(job), m1->rank, m1->host, m1->ndevices);

  /* Machine 1's host and cpu:0, as this process's proxy devices: the
   * description's device 0 (the host ISA) and device 1 (cpu-<ISA>). */
  rig_desc *d = load_description(path);
  rig_device *devs[2] = {rig_job_device(job, 1, 0), rig_job_device_named(job, 1, "cpu:0")};
  if (!devs[0] || !devs[1]) {
    fprintf(stderr, "embed: machine 1 has no host or no cpu:0\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  rig_program *p = NULL;
  CHECK("rig_program_load", rig_program_load(d, devs, 2, NULL, &p, &err));
  rig_desc_free(d); /* the program keeps its own copy */

  /* Its inputs: buffers of machine 1's host memory, made through the proxy.
   * x is written from here (staged and copied over the job); y is written
   * by every run. */
  float x[N];
  for (int i = 0; i < N; i++) x[i] = (float)(i % 17 - 3);
  rig_buffer *inputs[2] = {NULL, NULL};
  for (int i = 0; i < 2; i++)
    CHECK("rig_buffer_create",
          rig_buffer_create(devs[0], RIG_KIND_PINNED, sizeof x, &inputs[i], &err));
  CHECK("rig_buffer_write", rig_buffer_write(inputs[0], 0, x, sizeof x, &err));

  /* The runs: int 0 is the loop's trips (int 1, the trip, the loop's own). */
  int64_t ints[1] = {TRIPS};
  size_t npoints = 0;
  rig_point *points = rig_program_step_points(p, &npoints);
  rig_frame f = {.inputs = inputs,
                 .ninputs = 2,
                 .ints = ints,
                 .nints = 1,
                 .step_points = points,
                 .nstep_points = npoints};
  rig_point ends[2];
  size_t nends = 0;
  for (int run = 0; run < RUNS; run++) {
    CHECK("rig_program_run", rig_program_run(p, &f, NULL, 0, ends, &nends, &err));
    for (size_t e = 0; e < nends; e++) CHECK("rig_point_wait", rig_point_wait(ends[e], &err));
  }

  /* y back to this process, after the last run's writes. */
  float y[N];
  CHECK("rig_buffer_read", rig_buffer_read(inputs[1], 0, y, sizeof y, &err));

  /* What each run computes: y = x, then each trip t: y = 2x + y, x = 1.5x
   * + t. Every value is a small multiple of 1/16: exact in float. */
  double sum = 0;
  int bad = 0;
  for (int i = 0; i < N; i++) {
    double xi = i % 17 - 3, yi = xi;
    for (int t = 0; t < TRIPS; t++) {
      yi = 2 * xi + yi;
      xi = 1.5 * xi + t;
    }
    if ((double)y[i] != yi && bad++ == 0)
      fprintf(stderr, "embed: y[%d] = %g, not %g\n", i, (double)y[i], yi);
    sum += y[i];
  }
  printf("embed: machine 1 ran saxpy %d times: y[0..3] = %g %g %g %g\n", RUNS, (double)y[0],
         (double)y[1], (double)y[2], (double)y[3]);

  free(points);
  rig_buffer_release(inputs[0]);
  rig_buffer_release(inputs[1]);
  rig_program_release(p);
  if (bad) {
    fprintf(stderr, "embed: %d of %d values differ\n", bad, N);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return sum;
}

/* An agent's serving thread: rig_job_serve returns once the controller
 * closes the job (or the job fails). */
typedef struct serving {
  rig_job *job;
  rig_status status;
  rig_error err;
} serving;

static void *serve(void *arg) {
  serving *s = arg;
  s->status = rig_job_serve(s->job, &s->err);
  return NULL;
}

int main(int argc, char **argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc != 2 || size < 2) {
    if (rank == 0)
      fprintf(stderr, "usage: mpirun -n 2 %s PATH/saxpy.json | PATH/kernels/saxpy.so\n", argv[0]);
    MPI_Finalize();
    return 2;
  }

  /* Collective: every rank describes its machine. Refused (RIG_EJOB)
   * unless MPI granted MPI_THREAD_MULTIPLE. */
  rig_job *job = NULL;
  rig_error err;
  CHECK("rig_job_start", rig_job_start(MPI_COMM_WORLD, &job, &err));

  double mine = 0, total = 0;
  if (rank == 0) {
    mine = control(job, argv[1]);
    /* The application's own collective, on its own communicator: the
     * agents' main threads are waiting in it while their serving threads
     * did the work above. */
    MPI_Allreduce(&mine, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    printf("embed: the ranks' sum is %g\n", total);
    CHECK("rig_job_close", rig_job_close(job, &err));
    printf("embed: ok\n");
  } else {
    serving s = {.job = job};
    pthread_t thread;
    if (pthread_create(&thread, NULL, serve, &s) != 0) {
      fprintf(stderr, "embed: rank %d: no serving thread\n", rank);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Allreduce(&mine, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    pthread_join(thread, NULL);
    if (s.status != RIG_OK) die("rig_job_serve", s.status, &s.err);
    CHECK("rig_job_close", rig_job_close(job, &err));
  }
  MPI_Finalize();
  return 0;
}

/* run_file.c: a description run on this machine in one call
 * (docs/embedding.md, "Run a description in one call"): what
 * `progrun run FILE --runs 3 --ints 4 --input 0=IN --output 1=OUT` does,
 * from C. FILE is read as progrun reads it (JSON, its {"file": ...} paths
 * relative to its folder), its devices mapped by arch, input 0 read from
 * IN (zeros past its end), and input 1's bytes written to OUT after the
 * last run, whole or not at all. */
#include <inttypes.h>
#include <stdio.h>

#include <rig/rig_run.h>

enum { RUNS = 3 };

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s FILE IN OUT\n", argv[0]);
    return 2;
  }
  rig_run_int ints[] = {rig_run_number(4)}; /* int 0: saxpy's trips */
  rig_run_io inputs[] = {{0, argv[2]}}, outputs[] = {{1, argv[3]}};
  uint64_t times[RUNS];
  rig_run_options o = {.size = sizeof o,
                       .runs = RUNS,
                       .ints = ints,
                       .nints = 1,
                       .inputs = inputs,
                       .ninputs = 1,
                       .outputs = outputs,
                       .noutputs = 1,
                       .times = times,
                       .ntimes = RUNS};
  rig_error err;
  rig_status st = rig_run_file(argv[1], &o, &err);
  if (st != RIG_OK) {
    /* "input 0=x.bin: cannot read x.bin: No such file or directory" */
    fprintf(stderr, "run_file: %s (%s)\n", err.message, rig_status_name(st));
    return 1;
  }
  for (int r = 0; r < RUNS; r++) printf("run %d: %" PRIu64 " ns\n", r, times[r]);
  return 0;
}

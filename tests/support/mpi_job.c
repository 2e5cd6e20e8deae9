/* What the job suites (test_job, test_express) share: a job started and
 * closed with every status checked, the test kernels, zeroed host memory. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rig_mpi_test.h"

static void *kernels;
static size_t kernels_len;

const void *rig_test_kernels(size_t *len) {
  if (!kernels) {
    const char *path = getenv("RIG_TEST_KERNELS");
    CU_ASSERT_PTR_NOT_NULL_FATAL(path);
    kernels = rig_test_read_file(path, &kernels_len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(kernels);
  }
  *len = kernels_len;
  return kernels;
}

int64_t rig_test_add_kernels(rig_desc *d, int64_t device) {
  size_t len;
  const void *k = rig_test_kernels(&len);
  return rig_desc_add_image(d, device, k, len);
}

rig_job *rig_test_job_start_ok(void) {
  rig_job *job = rig_test_job_start();
  CU_ASSERT_PTR_NOT_NULL_FATAL(job);
  size_t len;
  rig_test_kernels(&len);
  return job;
}

void rig_test_job_close_ok(rig_job *job) {
  rig_error err;
  rig_status st = rig_job_close(job, &err);
  if (st != RIG_OK) fprintf(stderr, "close: %s\n", err.message);
  CU_ASSERT_EQUAL(st, RIG_OK);
}

rig_buffer *rig_test_host_buffer(size_t n) {
  rig_buffer *b = NULL;
  CU_ASSERT_EQUAL_FATAL(rig_buffer_create(rig_host(), RIG_KIND_PINNED, n, &b, NULL), RIG_OK);
  memset(rig_buffer_host(b), 0, n);
  return b;
}

const char *rig_test_label(rig_job *job, size_t m, char *buf, size_t n) {
  const rig_machine *first = rig_job_machine(job, 0);
  bool one_host = true;
  for (size_t k = 1; k < rig_job_machines(job); k++)
    one_host &= strcmp(rig_job_machine(job, k)->host, first->host) == 0;
  if (one_host)
    snprintf(buf, n, "machine %zu", m);
  else
    snprintf(buf, n, "machine %zu (%s)", m, rig_job_machine(job, m)->host);
  return buf;
}

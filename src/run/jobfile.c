/* A job file told from a description (rig_run_is_jobfile): progrun runs
 * one as an MPI job, and a caller that runs descriptions (rig_run_file,
 * Python's `python -m rig run`) refuses it by name. */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run_internal.h"

bool rig_run_is_jobfile(const char *path, size_t *machines) {
  if (machines) *machines = 0;
  /* Only a regular file is looked into: reading a pipe (/dev/stdin) here
   * would take the description from the reader that needs it. One that
   * cannot be read is no job file, and the reading as a description says
   * why. */
  struct stat st;
  int fd;
  if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || run_open_read(path, &fd, &st) != 0)
    return false;
  uint8_t *text = NULL;
  size_t len = 0;
  int e = S_ISREG(st.st_mode) && (uint64_t)st.st_size <= RIG_RUN_MAX_DESC
              ? run_read_fd(fd, (size_t)st.st_size + 1, &text, &len)
              : EFBIG;
  close(fd);
  if (e) return false;
  json_error_t je;
  json_t *root = json_loadb((const char *)text, len, JSON_DISABLE_EOF_CHECK, &je);
  free(text);
  json_t *listed = json_object_get(root, "machines"), *every = json_object_get(root, "every");
  bool is = json_is_object(root) && (listed || every);
  if (is && machines && json_is_array(listed) && !every) *machines = json_array_size(listed);
  json_decref(root);
  return is;
}

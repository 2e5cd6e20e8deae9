/* errors.c: cuGetErrorName for every code the double can answer. Part of a
 * test double of the CUDA driver API, for the tests only. */
#include "fakecuda_internal.h"

#define NAME(code)                                                                                 \
  { code, #code }
static const struct {
  CUresult code;
  const char *name;
} names[] = {
    NAME(CUDA_SUCCESS),
    NAME(CUDA_ERROR_INVALID_VALUE),
    NAME(CUDA_ERROR_OUT_OF_MEMORY),
    NAME(CUDA_ERROR_NOT_INITIALIZED),
    NAME(CUDA_ERROR_NO_DEVICE),
    NAME(CUDA_ERROR_INVALID_DEVICE),
    NAME(CUDA_ERROR_INVALID_IMAGE),
    NAME(CUDA_ERROR_INVALID_CONTEXT),
    NAME(CUDA_ERROR_INVALID_HANDLE),
    NAME(CUDA_ERROR_NOT_FOUND),
    NAME(CUDA_ERROR_NOT_READY),
    NAME(CUDA_ERROR_ILLEGAL_ADDRESS),
    NAME(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED),
    NAME(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED),
    NAME(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED),
    NAME(CUDA_ERROR_LAUNCH_FAILED),
    NAME(CUDA_ERROR_NOT_SUPPORTED),
    NAME(CUDA_ERROR_UNKNOWN),
};
#undef NAME

/* Like the driver's, it needs no cuInit. */
CUresult fc_GetErrorName(CUresult error, const char **name) {
  if (!name) return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    if (names[i].code == error) {
      *name = names[i].name;
      return fc_ok(FC_IX_GetErrorName);
    }
  }
  *name = NULL;
  return CUDA_ERROR_INVALID_VALUE;
}

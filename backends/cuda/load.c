/* libcuda, loaded at run time: dlopen of RIG_CUDA_LIBRARY or
 * libcuda.so.1, then every entry point of cuda_api.h by dlsym of its
 * versioned name (an older name where the driver predates it). Nothing of
 * CUDA is needed to build, and a machine without it only says why. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/env.h"
#include "cuda_internal.h"

rig_cuda_api rig_cu;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static rig_status loaded;
static rig_error load_err;

static void *find(void *dl, const char *const *names, size_t n, const char **missing) {
  for (size_t i = 0; i < n; i++) {
    void *f = dlsym(dl, names[i]);
    if (f) return f;
  }
  *missing = names[0];
  return NULL;
}

static void load(void) {
  const char *lib = rig_env_get()->cuda_library;
  const char *name = *lib ? lib : "libcuda.so.1";
  /* RTLD_LOCAL: the driver's names stay out of the process's namespace. */
  void *dl = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (!dl) {
    loaded = rig_error_set(&load_err, RIG_EREFUSED, "no driver (%s not found)", name);
    return;
  }
  const char *missing = NULL;
#define RIG_CUDA_FIND(ret, field, names, params)                                                   \
  do {                                                                                             \
    static const char *const n_[] = {RIG_CUDA_NAMES names};                                        \
    void *f_ = find(dl, n_, sizeof n_ / sizeof *n_, &missing);                                     \
    memcpy(&rig_cu.field, &f_, sizeof f_);                                                         \
  } while (0);
#define RIG_CUDA_NAMES(...) __VA_ARGS__
  RIG_CUDA_FUNCTIONS(RIG_CUDA_FIND)
#undef RIG_CUDA_NAMES
#undef RIG_CUDA_FIND
  if (missing) {
    /* The driver stays loaded: dlclose of libcuda is not safe to undo. */
    loaded =
        rig_error_set(&load_err, RIG_EREFUSED, "%s has no %s (a driver too old)", name, missing);
    return;
  }
  CUresult r = rig_cu.Init(0);
  if (r == CUDA_ERROR_NO_DEVICE) {
    loaded = rig_error_set(&load_err, RIG_EREFUSED, "no GPU (cuInit: CUDA_ERROR_NO_DEVICE)");
    return;
  }
  if (r != CUDA_SUCCESS) {
    loaded = rig_error_set(&load_err, RIG_EREFUSED, "the driver failed: cuInit: %s",
                           rig_cuda_error_name(r));
    return;
  }
  loaded = RIG_OK;
}

rig_status rig_cuda_load(rig_error *err) {
  pthread_once(&once, load);
  if (loaded != RIG_OK && err) *err = load_err;
  return loaded;
}

const char *rig_cuda_error_name(CUresult r) {
  const char *s = NULL;
  if (rig_cu.GetErrorName && rig_cu.GetErrorName(r, &s) == CUDA_SUCCESS && s) return s;
  /* The toolkit's stub answers cuInit this way, and names nothing. */
  if (r == 34) return "CUDA_ERROR_STUB_LIBRARY";
  static _Thread_local char code[32];
  snprintf(code, sizeof code, "CUDA error %d", r);
  return code;
}

/* Images: cubin, fatbin or PTX by cuModuleLoadData; functions found
 * eagerly by name, each allowed the dynamic shared memory the GPU opts
 * in to, beside its static shared memory. */
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"

typedef struct cuda_image {
  CUmodule mod;
} cuda_image;

rig_status cuda_image_load(void *st, const void *bytes, size_t len, void **image, rig_error *err) {
  cuda_gpu *g = st;
  /* PTX is text the driver reads up to its NUL, which a file need not have. */
  unsigned char *copy = malloc(len + 1);
  cuda_image *im = malloc(sizeof *im);
  if (!copy || !im) {
    free(copy);
    free(im);
    return rig_error_set(err, RIG_ENOMEM, "%s: out of memory for an image", g->name);
  }
  memcpy(copy, bytes, len);
  copy[len] = 0;
  cuda_enter(g);
  CUresult r = rig_cu.ModuleLoadData(&im->mod, copy);
  cuda_leave();
  free(copy);
  if (r != CUDA_SUCCESS) {
    free(im);
    return rig_error_set(err, RIG_EREFUSED, "%s: cuModuleLoadData: %s", g->name,
                         rig_cuda_error_name(r));
  }
  *image = im;
  return RIG_OK;
}

rig_status cuda_image_entry(void *st, void *image, const char *name, size_t len, rig_entry *out,
                            rig_error *err) {
  cuda_gpu *g = st;
  cuda_image *im = image;
  char cname[256];
  if (len >= sizeof cname || memchr(name, 0, len))
    return rig_error_set(err, RIG_EREFUSED, "%s: no function \"%.*s\"", g->name,
                         (int)(len > 200 ? 200 : len), name);
  memcpy(cname, name, len);
  cname[len] = 0;
  cuda_enter(g);
  CUfunction fn;
  int threads = 0, fixed = 0;
  CUresult r = rig_cu.ModuleGetFunction(&fn, im->mod, cname);
  if (r == CUDA_SUCCESS)
    r = rig_cu.FuncGetAttribute(&threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, fn);
  if (r == CUDA_SUCCESS)
    r = rig_cu.FuncGetAttribute(&fixed, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn);
  uint32_t optin = rig_device_facts_of(g->dev)->max_shared;
  if (r == CUDA_SUCCESS && (uint32_t)fixed < optin)
    r = rig_cu.FuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                (int)(optin - (uint32_t)fixed));
  cuda_leave();
  if (r == CUDA_ERROR_NOT_FOUND)
    return rig_error_set(err, RIG_EREFUSED, "%s: no function \"%s\"", g->name, cname);
  if (r != CUDA_SUCCESS)
    return rig_error_set(err, RIG_EREFUSED, "%s: function \"%s\": %s", g->name, cname,
                         rig_cuda_error_name(r));
  out->value = (uint64_t)(uintptr_t)fn;
  out->max_threads = threads > 0 ? (uint32_t)threads : 0;
  return RIG_OK;
}

void cuda_image_unload(void *st, void *image) {
  cuda_gpu *g = st;
  cuda_image *im = image;
  cuda_enter(g);
  CUresult r = rig_cu.ModuleUnload(im->mod);
  cuda_leave();
  if (r != CUDA_SUCCESS && !rig_device_is_lost(g->dev, NULL))
    cuda_fail(g, "cuModuleUnload", r, NULL);
  free(im);
}

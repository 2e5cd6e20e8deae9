/* module.c: modules and functions. Part of a test double of the CUDA driver
 * API, for the tests only. A module image of the double is an ELF shared
 * object for this host (a real cubin, ELF for machine 190, or PTX text is
 * CUDA_ERROR_INVALID_IMAGE); it is loaded from a memfd, which stays open
 * while the module is loaded. A kernel is a host function of type
 * rig_launch_fn; `const unsigned <kernel>_max_threads` lowers its
 * CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fakecuda_internal.h"

#if defined(__x86_64__)
#define HOST_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define HOST_MACHINE EM_AARCH64
#else
#error "fakecuda: unknown host machine"
#endif

#define MAX_IMAGE ((uint64_t)256 << 20)

struct CUmod_st {
  struct CUmod_st *next; /* live modules, under fc_lock */
  struct CUctx_st *ctx;
  unsigned gen; /* of ctx, when loaded */
  void *handle;
  int fd;
  struct CUfunc_st *functions;
};

static struct CUmod_st *modules;

/* The image's length from its ELF header, 0 when it is not a shared object
 * for this host. The magic is read byte by byte first, so that a short PTX
 * string is not read past its end. */
static uint64_t image_length(const unsigned char *p) {
  for (int i = 0; i < SELFMAG; i++)
    if (p[i] != (unsigned char)ELFMAG[i]) return 0;
  Elf64_Ehdr h;
  memcpy(&h, p, sizeof h);
  if (h.e_ident[EI_CLASS] != ELFCLASS64 || h.e_ident[EI_DATA] != ELFDATA2LSB) return 0;
  if (h.e_type != ET_DYN || h.e_machine != HOST_MACHINE) return 0;
  uint64_t len = h.e_shoff + (uint64_t)h.e_shnum * h.e_shentsize;
  uint64_t ph = h.e_phoff + (uint64_t)h.e_phnum * h.e_phentsize;
  if (ph > len) len = ph;
  if (len < sizeof h || len > MAX_IMAGE || h.e_shoff > MAX_IMAGE || h.e_phoff > MAX_IMAGE) return 0;
  return len;
}

static bool write_all(int fd, const unsigned char *p, size_t n) {
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w <= 0) return false;
    p += w;
    n -= (size_t)w;
  }
  return true;
}

CUresult fc_ModuleLoadData(CUmodule *module, const void *image) {
  pthread_mutex_lock(&fc_lock);
  struct CUctx_st *ctx = NULL;
  CUresult r = fc_current(&ctx);
  if (!r && (!module || !image)) r = CUDA_ERROR_INVALID_VALUE;
  uint64_t len = 0;
  if (!r && !(len = image_length(image))) r = CUDA_ERROR_INVALID_IMAGE;
  struct CUmod_st *m = NULL;
  if (!r && !(m = calloc(1, sizeof *m))) r = CUDA_ERROR_OUT_OF_MEMORY;
  if (!r) {
    m->fd = memfd_create("fakecuda-module", MFD_CLOEXEC);
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", m->fd);
    bool written = m->fd >= 0 && write_all(m->fd, image, len);
    if (written && !(m->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL)))
      fprintf(stderr, "fakecuda: cuModuleLoadData: %s\n", dlerror());
    if (!m->handle) {
      if (m->fd >= 0) close(m->fd);
      free(m);
      r = CUDA_ERROR_INVALID_IMAGE;
    }
  }
  if (!r) {
    m->ctx = ctx;
    m->gen = ctx->gen;
    m->next = modules;
    modules = m;
    fc_live_add(FC_LIVE_MODULES, 1);
    *module = m;
  }
  pthread_mutex_unlock(&fc_lock);
  return r ? r : fc_ok(FC_IX_ModuleLoadData);
}

static struct CUmod_st **find_module(CUmodule module) {
  for (struct CUmod_st **p = &modules; *p; p = &(*p)->next)
    if (*p == module) return fc_alive(module->ctx, module->gen) ? p : NULL;
  return NULL;
}

/* Its functions go with it. Kernels already queued keep their function
 * pointer; running them after the unload is the caller's bug, as on a GPU. */
CUresult fc_ModuleUnload(CUmodule module) {
  pthread_mutex_lock(&fc_lock);
  struct CUctx_st *ctx = NULL;
  CUresult r = fc_current(&ctx);
  struct CUmod_st **p = NULL;
  if (!r && !(p = find_module(module))) r = CUDA_ERROR_INVALID_HANDLE;
  if (!r && module->ctx != ctx) r = CUDA_ERROR_INVALID_CONTEXT;
  if (!r) {
    *p = module->next;
    while (module->functions) {
      struct CUfunc_st *f = module->functions;
      module->functions = f->next;
      free(f->name);
      free(f);
    }
    dlclose(module->handle);
    close(module->fd);
    free(module);
    fc_live_add(FC_LIVE_MODULES, -1);
  }
  pthread_mutex_unlock(&fc_lock);
  return r ? r : fc_ok(FC_IX_ModuleUnload);
}

CUresult fc_ModuleGetFunction(CUfunction *fn, CUmodule module, const char *name) {
  pthread_mutex_lock(&fc_lock);
  struct CUctx_st *ctx = NULL;
  CUresult r = fc_current(&ctx);
  if (!r && (!fn || !name)) r = CUDA_ERROR_INVALID_VALUE;
  if (!r && !find_module(module)) r = CUDA_ERROR_INVALID_HANDLE;
  if (!r && module->ctx != ctx) r = CUDA_ERROR_INVALID_CONTEXT;
  struct CUfunc_st *f = NULL;
  if (!r) {
    /* The same handle for the same name, as the driver gives. */
    for (f = module->functions; f && strcmp(f->name, name) != 0; f = f->next) {
    }
  }
  if (!r && !f) {
    void *sym = dlsym(module->handle, name);
    char bound[512];
    snprintf(bound, sizeof bound, "%s_max_threads", name);
    const unsigned *max = dlsym(module->handle, bound);
    if (!sym) {
      r = CUDA_ERROR_NOT_FOUND;
    } else if (max && (*max == 0 || *max > FC_MAX_THREADS)) {
      r = CUDA_ERROR_INVALID_IMAGE;
    } else if (!(f = calloc(1, sizeof *f)) || !(f->name = strdup(name))) {
      free(f);
      f = NULL;
      r = CUDA_ERROR_OUT_OF_MEMORY;
    } else {
      f->module = module;
      f->fn = (rig_launch_fn *)sym;
      f->max_threads = max ? *max : FC_MAX_THREADS;
      f->max_dynamic_shared = FC_SHARED;
      f->next = module->functions;
      module->functions = f;
    }
  }
  if (!r) *fn = f;
  pthread_mutex_unlock(&fc_lock);
  return r ? r : fc_ok(FC_IX_ModuleGetFunction);
}

bool fc_function_valid(struct CUfunc_st *f) {
  for (struct CUmod_st *m = modules; m; m = m->next)
    for (struct CUfunc_st *g = fc_alive(m->ctx, m->gen) ? m->functions : NULL; g; g = g->next)
      if (g == f) return true;
  return false;
}

struct CUctx_st *fc_function_context(struct CUfunc_st *f) {
  return f->module->ctx;
}

/* A function's context must be current, and well. */
static CUresult function_call(struct CUfunc_st *f) {
  struct CUctx_st *ctx = NULL;
  CUresult r = fc_current(&ctx);
  if (!r && !fc_function_valid(f)) r = CUDA_ERROR_INVALID_HANDLE;
  if (!r && f->module->ctx != ctx) r = CUDA_ERROR_INVALID_CONTEXT;
  return r;
}

CUresult fc_FuncGetAttribute(int *value, int attribute, CUfunction fn) {
  pthread_mutex_lock(&fc_lock);
  CUresult r = function_call(fn);
  if (!r && !value) r = CUDA_ERROR_INVALID_VALUE;
  if (!r) {
    switch (attribute) {
      case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
        *value = (int)fn->max_threads;
        break;
      case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES:
        *value = 0;
        break;
      case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
        *value = (int)fn->max_dynamic_shared;
        break;
      default:
        r = CUDA_ERROR_INVALID_VALUE;
    }
  }
  pthread_mutex_unlock(&fc_lock);
  return r ? r : fc_ok(FC_IX_FuncGetAttribute);
}

/* Only the dynamic shared memory limit is settable here, up to the opt-in
 * limit (the function's static shared memory is 0). */
CUresult fc_FuncSetAttribute(CUfunction fn, int attribute, int value) {
  pthread_mutex_lock(&fc_lock);
  CUresult r = function_call(fn);
  if (!r && (attribute != CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES || value < 0 ||
             value > FC_SHARED_OPTIN))
    r = CUDA_ERROR_INVALID_VALUE;
  if (!r) fn->max_dynamic_shared = (unsigned)value;
  pthread_mutex_unlock(&fc_lock);
  return r ? r : fc_ok(FC_IX_FuncSetAttribute);
}

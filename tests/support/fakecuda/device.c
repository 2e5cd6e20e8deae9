/* device.c: cuInit, the devices and their attributes, primary contexts, the
 * thread's context stack, peers. Part of a test double of the CUDA driver
 * API, for the tests only: FAKECUDA_DEVICES (0 to 3; default 1) says
 * how many devices it has, FAKECUDA_PEER=1 lets them reach each other. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakecuda_internal.h"

static _Atomic bool initialized;
static int devices; /* set before initialized */
static struct CUctx_st contexts[FC_MAX_DEVICES];

/* Bus ids not in ordinal order, so that a backend ordering by them is
 * tested. */
static const char *const bus_ids[FC_MAX_DEVICES] = {"0000:41:00.0", "0000:01:00.0", "0000:81:00.0"};

#define STACK_DEPTH 64
static _Thread_local struct CUctx_st *stack[STACK_DEPTH];
static _Thread_local int depth;

bool fc_initialized(void) {
  return initialized;
}

CUresult fc_current(struct CUctx_st **ctx) {
  if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (depth == 0 || stack[depth - 1]->refs == 0) return CUDA_ERROR_INVALID_CONTEXT;
  *ctx = stack[depth - 1];
  return atomic_load(&(*ctx)->error);
}

CUresult fc_Init(unsigned int flags) {
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  const char *env = getenv("FAKECUDA_DEVICES");
  int n = 1;
  if (env && *env) {
    if (env[0] < '0' || env[0] > '0' + FC_MAX_DEVICES || env[1]) {
      fprintf(stderr, "fakecuda: FAKECUDA_DEVICES=%s: must be 0 to %d\n", env, FC_MAX_DEVICES);
      return CUDA_ERROR_INVALID_VALUE;
    }
    n = env[0] - '0';
  }
  /* What the driver answers on a machine without a GPU. */
  if (n == 0) return CUDA_ERROR_NO_DEVICE;
  pthread_mutex_lock(&fc_lock);
  if (!initialized) {
    devices = n;
    for (int d = 0; d < n; d++) contexts[d].dev = d;
    fc_memory_init(n);
    initialized = true;
  }
  pthread_mutex_unlock(&fc_lock);
  return fc_ok(FC_IX_Init);
}

/* Like the driver's, it needs no cuInit. */
CUresult fc_DriverGetVersion(int *version) {
  if (!version) return CUDA_ERROR_INVALID_VALUE;
  *version = 13000;
  return fc_ok(FC_IX_DriverGetVersion);
}

static CUresult check_device(CUdevice dev) {
  if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
  return dev >= 0 && dev < devices ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

CUresult fc_DeviceGetCount(int *count) {
  if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (!count) return CUDA_ERROR_INVALID_VALUE;
  *count = devices;
  return fc_ok(FC_IX_DeviceGetCount);
}

CUresult fc_DeviceGet(CUdevice *device, int ordinal) {
  CUresult r = check_device(ordinal);
  if (r) return r;
  if (!device) return CUDA_ERROR_INVALID_VALUE;
  *device = ordinal;
  return fc_ok(FC_IX_DeviceGet);
}

static CUresult copy_string(char *out, int len, const char *s) {
  if (!out || len <= 0) return CUDA_ERROR_INVALID_VALUE;
  snprintf(out, (size_t)len, "%s", s);
  return CUDA_SUCCESS;
}

CUresult fc_DeviceGetName(char *name, int len, CUdevice dev) {
  CUresult r = check_device(dev);
  if (!r) r = copy_string(name, len, "fakecuda (a test double of an sm_90 GPU)");
  return r ? r : fc_ok(FC_IX_DeviceGetName);
}

CUresult fc_DeviceGetPCIBusId(char *id, int len, CUdevice dev) {
  CUresult r = check_device(dev);
  if (!r) r = copy_string(id, len, bus_ids[dev]);
  return r ? r : fc_ok(FC_IX_DeviceGetPCIBusId);
}

CUresult fc_DeviceGetAttribute(int *value, int attribute, CUdevice dev) {
  CUresult r = check_device(dev);
  if (r) return r;
  if (!value) return CUDA_ERROR_INVALID_VALUE;
  switch (attribute) {
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
      *value = FC_MAX_THREADS;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
      *value = FC_SHARED;
      break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
      *value = 132;
      break;
    case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY:
      *value = 1;
      break;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING:
      *value = 1;
      break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
      *value = 9;
      break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
      *value = 0;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
      *value = FC_SHARED_OPTIN;
      break;
    case CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS:
      *value = 1;
      break;
    /* The limits launch.c checks. */
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y:
      *value = 1024;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z:
      *value = 64;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X:
      *value = 0x7fffffff;
      break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z:
      *value = 65535;
      break;
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
  return fc_ok(FC_IX_DeviceGetAttribute);
}

CUresult fc_DeviceTotalMem(size_t *bytes, CUdevice dev) {
  CUresult r = check_device(dev);
  if (r) return r;
  if (!bytes) return CUDA_ERROR_INVALID_VALUE;
  *bytes = FC_TOTAL_MEM;
  return fc_ok(FC_IX_DeviceTotalMem);
}

static bool peer_possible(CUdevice dev, CUdevice peer) {
  const char *env = getenv("FAKECUDA_PEER");
  return dev != peer && env && strcmp(env, "1") == 0;
}

CUresult fc_DeviceCanAccessPeer(int *can, CUdevice dev, CUdevice peer) {
  CUresult r = check_device(dev);
  if (!r) r = check_device(peer);
  if (r) return r;
  if (!can) return CUDA_ERROR_INVALID_VALUE;
  *can = peer_possible(dev, peer);
  return fc_ok(FC_IX_DeviceCanAccessPeer);
}

CUresult fc_DevicePrimaryCtxRetain(CUcontext *ctx, CUdevice dev) {
  pthread_mutex_lock(&fc_lock);
  CUresult r = check_device(dev);
  if (!r && !ctx) r = CUDA_ERROR_INVALID_VALUE;
  if (!r) {
    contexts[dev].refs++;
    *ctx = &contexts[dev];
  }
  pthread_mutex_unlock(&fc_lock);
  return r ? r : fc_ok(FC_IX_DevicePrimaryCtxRetain);
}

/* The last release ends the context: its sticky error and peer access go
 * (a later retain starts afresh), and the handles of what was made in it
 * go stale (fc_alive). */
CUresult fc_DevicePrimaryCtxRelease(CUdevice dev) {
  pthread_mutex_lock(&fc_lock);
  CUresult r = check_device(dev);
  if (!r && contexts[dev].refs == 0) r = CUDA_ERROR_INVALID_CONTEXT;
  if (!r && --contexts[dev].refs == 0) {
    atomic_store(&contexts[dev].error, CUDA_SUCCESS);
    contexts[dev].gen++;
    memset(contexts[dev].peer, 0, sizeof contexts[dev].peer);
  }
  pthread_mutex_unlock(&fc_lock);
  return r ? r : fc_ok(FC_IX_DevicePrimaryCtxRelease);
}

static bool is_context(CUcontext ctx) {
  for (int d = 0; d < devices; d++)
    if (ctx == &contexts[d]) return true;
  return false;
}

CUresult fc_CtxPushCurrent(CUcontext ctx) {
  pthread_mutex_lock(&fc_lock);
  CUresult r = initialized ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED;
  if (!r && (!is_context(ctx) || ctx->refs == 0)) r = CUDA_ERROR_INVALID_CONTEXT;
  if (!r && depth == STACK_DEPTH) r = CUDA_ERROR_UNKNOWN;
  if (!r) stack[depth++] = ctx;
  pthread_mutex_unlock(&fc_lock);
  return r ? r : fc_ok(FC_IX_CtxPushCurrent);
}

CUresult fc_CtxPopCurrent(CUcontext *ctx) {
  if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (depth == 0) return CUDA_ERROR_INVALID_CONTEXT;
  struct CUctx_st *top = stack[--depth];
  if (ctx) *ctx = top;
  return fc_ok(FC_IX_CtxPopCurrent);
}

CUresult fc_CtxEnablePeerAccess(CUcontext peer, unsigned int flags) {
  pthread_mutex_lock(&fc_lock);
  struct CUctx_st *ctx = NULL;
  CUresult r = fc_current(&ctx);
  if (!r && flags != 0) r = CUDA_ERROR_INVALID_VALUE;
  if (!r && (!is_context(peer) || peer->refs == 0)) r = CUDA_ERROR_INVALID_CONTEXT;
  if (!r && !peer_possible(ctx->dev, peer->dev)) r = CUDA_ERROR_INVALID_DEVICE;
  if (!r && ctx->peer[peer->dev]) r = CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
  if (!r) ctx->peer[peer->dev] = true;
  pthread_mutex_unlock(&fc_lock);
  return r ? r : fc_ok(FC_IX_CtxEnablePeerAccess);
}

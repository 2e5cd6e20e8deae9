/* cuda_api.h: the subset of the CUDA driver API the cuda backend calls,
 * declared here so that nothing of CUDA is needed at build time (libcuda
 * is loaded at run time: load.c). Types, values and signatures are the
 * driver API's (CUDA 12/13 ABI); the test double tests/support/fakecuda
 * implements exactly this list. */
#ifndef RIG_CUDA_API_H
#define RIG_CUDA_API_H

#include <stddef.h>
#include <stdint.h>

typedef int CUresult;
typedef int CUdevice;
typedef uint64_t CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUkern_st *CUkernel;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphNode_st *CUgraphNode;
typedef struct CUgraphExec_st *CUgraphExec;
typedef void (*CUhostFn)(void *user);

/* Results the backend tells apart (the rest it names by cuGetErrorName). */
enum {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_INVALID_IMAGE = 200,
  CUDA_ERROR_INVALID_CONTEXT = 201,
  CUDA_ERROR_INVALID_HANDLE = 400,
  CUDA_ERROR_NOT_FOUND = 500,
  CUDA_ERROR_NOT_READY = 600,
  CUDA_ERROR_ILLEGAL_ADDRESS = 700,
  CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED = 704,
  CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED = 712,
  CUDA_ERROR_LAUNCH_FAILED = 719,
  CUDA_ERROR_NOT_SUPPORTED = 801,
  CUDA_ERROR_UNKNOWN = 999,
};

/* CUdevice_attribute values. */
enum {
  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
  CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X = 2,
  CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y = 3,
  CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z = 4,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y = 6,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z = 7,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY = 19,
  CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING = 41,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
  CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS = 122,
};

/* CUfunction_attribute values. */
enum {
  CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
  CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
};

#define CU_MEMHOSTALLOC_PORTABLE       0x01u
#define CU_MEMHOSTALLOC_DEVICEMAP      0x02u
#define CU_MEMHOSTREGISTER_PORTABLE    0x01u
#define CU_MEMHOSTREGISTER_DEVICEMAP   0x02u
#define CU_STREAM_NON_BLOCKING         0x01u
#define CU_STREAM_WAIT_VALUE_GEQ       0x00u
#define CU_STREAM_WRITE_VALUE_DEFAULT  0x00u
#define CU_LAUNCH_PARAM_END            ((void *)0x00)
#define CU_LAUNCH_PARAM_BUFFER_POINTER ((void *)0x01)
#define CU_LAUNCH_PARAM_BUFFER_SIZE    ((void *)0x02)

/* CUDA_KERNEL_NODE_PARAMS_v2; its first ten fields are the v1 struct, so
 * it also serves the v1 entry points of older drivers. */
typedef struct CUDA_KERNEL_NODE_PARAMS {
  CUfunction func;
  unsigned int gridDimX, gridDimY, gridDimZ;
  unsigned int blockDimX, blockDimY, blockDimZ;
  unsigned int sharedMemBytes;
  void **kernelParams;
  void **extra;
  CUkernel kern;
  CUcontext ctx;
} CUDA_KERNEL_NODE_PARAMS;

/* The symbol table: CUDA_FN(return, field, symbol names tried in order
 * (newest ABI first), parameters). */
#define RIG_CUDA_FUNCTIONS(CUDA_FN)                                                                \
  CUDA_FN(CUresult, Init, ("cuInit"), (unsigned int flags))                                        \
  CUDA_FN(CUresult, GetErrorName, ("cuGetErrorName"), (CUresult error, const char **name))         \
  CUDA_FN(CUresult, DriverGetVersion, ("cuDriverGetVersion"), (int *version))                      \
  CUDA_FN(CUresult, DeviceGetCount, ("cuDeviceGetCount"), (int *count))                            \
  CUDA_FN(CUresult, DeviceGet, ("cuDeviceGet"), (CUdevice * device, int ordinal))                  \
  CUDA_FN(CUresult, DeviceGetName, ("cuDeviceGetName"), (char *name, int len, CUdevice dev))       \
  CUDA_FN(CUresult, DeviceGetAttribute, ("cuDeviceGetAttribute"),                                  \
          (int *value, int attribute, CUdevice dev))                                               \
  CUDA_FN(CUresult, DeviceGetPCIBusId, ("cuDeviceGetPCIBusId"), (char *id, int len, CUdevice dev)) \
  CUDA_FN(CUresult, DeviceTotalMem, ("cuDeviceTotalMem_v2"), (size_t * bytes, CUdevice dev))       \
  CUDA_FN(CUresult, DeviceCanAccessPeer, ("cuDeviceCanAccessPeer"),                                \
          (int *can, CUdevice dev, CUdevice peer))                                                 \
  CUDA_FN(CUresult, DevicePrimaryCtxRetain, ("cuDevicePrimaryCtxRetain"),                          \
          (CUcontext * ctx, CUdevice dev))                                                         \
  CUDA_FN(CUresult, DevicePrimaryCtxRelease, ("cuDevicePrimaryCtxRelease_v2"), (CUdevice dev))     \
  CUDA_FN(CUresult, CtxPushCurrent, ("cuCtxPushCurrent_v2"), (CUcontext ctx))                      \
  CUDA_FN(CUresult, CtxPopCurrent, ("cuCtxPopCurrent_v2"), (CUcontext * ctx))                      \
  CUDA_FN(CUresult, CtxEnablePeerAccess, ("cuCtxEnablePeerAccess"),                                \
          (CUcontext peer, unsigned int flags))                                                    \
  CUDA_FN(CUresult, StreamCreate, ("cuStreamCreate"), (CUstream * stream, unsigned int flags))     \
  CUDA_FN(CUresult, StreamDestroy, ("cuStreamDestroy_v2"), (CUstream stream))                      \
  CUDA_FN(CUresult, StreamQuery, ("cuStreamQuery"), (CUstream stream))                             \
  CUDA_FN(CUresult, StreamSynchronize, ("cuStreamSynchronize"), (CUstream stream))                 \
  CUDA_FN(CUresult, StreamWriteValue64, ("cuStreamWriteValue64_v2", "cuStreamWriteValue64"),       \
          (CUstream stream, CUdeviceptr addr, uint64_t value, unsigned int flags))                 \
  CUDA_FN(CUresult, StreamWaitValue64, ("cuStreamWaitValue64_v2", "cuStreamWaitValue64"),          \
          (CUstream stream, CUdeviceptr addr, uint64_t value, unsigned int flags))                 \
  CUDA_FN(CUresult, LaunchHostFunc, ("cuLaunchHostFunc"),                                          \
          (CUstream stream, CUhostFn fn, void *user))                                              \
  CUDA_FN(CUresult, MemAlloc, ("cuMemAlloc_v2"), (CUdeviceptr * ptr, size_t bytes))                \
  CUDA_FN(CUresult, MemFree, ("cuMemFree_v2"), (CUdeviceptr ptr))                                  \
  CUDA_FN(CUresult, MemHostAlloc, ("cuMemHostAlloc"),                                              \
          (void **ptr, size_t bytes, unsigned int flags))                                          \
  CUDA_FN(CUresult, MemFreeHost, ("cuMemFreeHost"), (void *ptr))                                   \
  CUDA_FN(CUresult, MemHostGetDevicePointer, ("cuMemHostGetDevicePointer_v2"),                     \
          (CUdeviceptr * dptr, void *ptr, unsigned int flags))                                     \
  CUDA_FN(CUresult, MemHostRegister, ("cuMemHostRegister_v2"),                                     \
          (void *ptr, size_t bytes, unsigned int flags))                                           \
  CUDA_FN(CUresult, MemHostUnregister, ("cuMemHostUnregister"), (void *ptr))                       \
  CUDA_FN(CUresult, MemcpyAsync, ("cuMemcpyAsync"),                                                \
          (CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream))                       \
  CUDA_FN(CUresult, MemcpyHtoDAsync, ("cuMemcpyHtoDAsync_v2"),                                     \
          (CUdeviceptr dst, const void *src, size_t bytes, CUstream stream))                       \
  CUDA_FN(CUresult, ModuleLoadData, ("cuModuleLoadData"), (CUmodule * module, const void *image))  \
  CUDA_FN(CUresult, ModuleUnload, ("cuModuleUnload"), (CUmodule module))                           \
  CUDA_FN(CUresult, ModuleGetFunction, ("cuModuleGetFunction"),                                    \
          (CUfunction * fn, CUmodule module, const char *name))                                    \
  CUDA_FN(CUresult, FuncGetAttribute, ("cuFuncGetAttribute"),                                      \
          (int *value, int attribute, CUfunction fn))                                              \
  CUDA_FN(CUresult, FuncSetAttribute, ("cuFuncSetAttribute"),                                      \
          (CUfunction fn, int attribute, int value))                                               \
  CUDA_FN(CUresult, LaunchKernel, ("cuLaunchKernel"),                                              \
          (CUfunction fn, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,      \
           unsigned int by, unsigned int bz, unsigned int shared, CUstream stream, void **params,  \
           void **extra))                                                                          \
  CUDA_FN(CUresult, GraphCreate, ("cuGraphCreate"), (CUgraph * graph, unsigned int flags))         \
  CUDA_FN(CUresult, GraphAddKernelNode, ("cuGraphAddKernelNode_v2", "cuGraphAddKernelNode"),       \
          (CUgraphNode * node, CUgraph graph, const CUgraphNode *deps, size_t ndeps,               \
           const CUDA_KERNEL_NODE_PARAMS *params))                                                 \
  CUDA_FN(CUresult, GraphInstantiateWithFlags, ("cuGraphInstantiateWithFlags"),                    \
          (CUgraphExec * exec, CUgraph graph, unsigned long long flags))                           \
  CUDA_FN(CUresult, GraphLaunch, ("cuGraphLaunch"), (CUgraphExec exec, CUstream stream))           \
  CUDA_FN(CUresult, GraphExecKernelNodeSetParams,                                                  \
          ("cuGraphExecKernelNodeSetParams_v2", "cuGraphExecKernelNodeSetParams"),                 \
          (CUgraphExec exec, CUgraphNode node, const CUDA_KERNEL_NODE_PARAMS *params))             \
  CUDA_FN(CUresult, GraphExecDestroy, ("cuGraphExecDestroy"), (CUgraphExec exec))                  \
  CUDA_FN(CUresult, GraphDestroy, ("cuGraphDestroy"), (CUgraph graph))

#endif

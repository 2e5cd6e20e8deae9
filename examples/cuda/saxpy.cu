// The GPU kernels of examples/cuda/saxpy.json (built to
// cuda/kernels/saxpy.cubin where nvcc is found): kernels/saxpy.c's saxpy,
// in CUDA C. The parameter block is the same bytes: { const float *x;
// float *y; float a; uint32_t n }. Built with -fmad=false, so that its
// results equal the host's bit for bit.
#include <stdint.h>

extern "C" __global__ void saxpy(const float *x, float *y, float a, uint32_t n) {
  uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
  for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    y[i] = a * x[i] + y[i];
}

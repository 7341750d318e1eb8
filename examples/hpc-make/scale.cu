// CUDA source in the same executable as the MLIR bundles: compiled with -fgpu-rdc --offload-new-driver,
// its device bitcode joins theirs in one device link (LTO) at the final clang link.
#include <cuda_runtime.h>

extern "C" __global__ void cu_scale(float *v, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] *= s;
}

extern "C" int cu_scale_on_gpu(float *host, float s, int n) {
  float *device = nullptr;
  size_t bytes = n * sizeof(float);
  if (cudaMalloc(&device, bytes) != cudaSuccess) return 1;
  cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice);
  cu_scale<<<(n + 255) / 256, 256>>>(device, s, n);
  cudaMemcpy(host, device, bytes, cudaMemcpyDeviceToHost);
  cudaFree(device);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

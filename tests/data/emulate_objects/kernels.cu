// CUDA C++ linked beside an MLIR bundle and run under --emulate (tests/emulator/test_emulate_cuda_objects.py):
// clang's own device bitcode (shared memory, a barrier, a warp shuffle, atomics, printf) retargeted to
// the CPU, launched with <<<>>>, a device function that an MLIR kernel (twice.mlir) calls, and a <<<>>>
// launch of that MLIR kernel.
#include <cuda_runtime.h>
#include <cstdio>

extern "C" __device__ float cu_twice_plus_one(float x) { return 2.0f * x + 1.0f; }

__device__ unsigned cu_threads_seen;

// Each block of 64 threads reverses its 64 elements through shared memory and adds lane 0's input of
// its warp (a shuffle); every thread counts itself.
extern "C" __global__ void cu_block_reverse(const int *in, int *out) {
  __shared__ int tile[64];
  int base = blockIdx.x * 64;
  int t = threadIdx.x;
  tile[t] = in[base + t];
  __syncthreads();
  int lane0 = __shfl_sync(0xffffffffu, tile[t], 0);
  out[base + t] = tile[63 - t] + lane0;
  atomicAdd(&cu_threads_seen, 1u);
  if (blockIdx.x == 1 && t == 0) printf("cu_block_reverse: block %d of %d\n", blockIdx.x, gridDim.x);
}

extern "C" __global__ void cu_read_seen(unsigned *seen) { *seen = cu_threads_seen; }

// Returns the number of wrong elements (-1: a runtime call failed).
extern "C" int cu_reverse(int blocks) {
  int n = blocks * 64;
  int *host = new int[n], *in = nullptr, *out = nullptr;
  for (int i = 0; i < n; ++i) host[i] = 3 * i;
  if (cudaMalloc(&in, n * sizeof(int)) != cudaSuccess || cudaMalloc(&out, n * sizeof(int)) != cudaSuccess) return -1;
  cudaMemcpy(in, host, n * sizeof(int), cudaMemcpyHostToDevice);
  cu_block_reverse<<<blocks, 64>>>(in, out);
  if (cudaDeviceSynchronize() != cudaSuccess) return -1;
  cudaMemcpy(host, out, n * sizeof(int), cudaMemcpyDeviceToHost);
  unsigned *seen_on_device = nullptr, seen = 0;
  cudaMalloc(&seen_on_device, sizeof seen);
  cu_read_seen<<<1, 1>>>(seen_on_device);
  cudaMemcpy(&seen, seen_on_device, sizeof seen, cudaMemcpyDeviceToHost);
  int wrong = seen != unsigned(n);
  for (int i = 0; i < n; ++i) {
    int block = i / 64, t = i % 64, lane0 = block * 64 + (t / 32) * 32;
    wrong += host[i] != 3 * (block * 64 + 63 - t) + 3 * lane0;
  }
  cudaFree(in);
  cudaFree(out);
  cudaFree(seen_on_device);
  delete[] host;
  return wrong;
}

// twice.mlir's kernel, with the arguments its lowering passes: a memref<?xf32> as (allocated, aligned,
// offset, size, stride), then the index n.
extern "C" __global__ void twice(float *allocated, float *aligned, long offset, long size, long stride, long n);

// Launches twice.mlir's kernel with <<<>>>: the number of wrong elements (-1: a runtime call failed).
extern "C" int cu_launch_twice(int n) {
  float *y = nullptr, *host = new float[n];
  if (cudaMalloc(&y, n * sizeof(float)) != cudaSuccess) return -1;
  twice<<<(n + 31) / 32, 32>>>(y, y, 0, n, 1, n);
  if (cudaGetLastError() != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess) return -1;
  cudaMemcpy(host, y, n * sizeof(float), cudaMemcpyDeviceToHost);
  int wrong = 0;
  for (int i = 0; i < n; ++i) wrong += host[i] != 2.0f * i + 1.0f;
  cudaFree(y);
  delete[] host;
  return wrong;
}

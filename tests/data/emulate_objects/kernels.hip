// HIP C++ linked beside an MLIR bundle for gfx90a and run under --emulate (tests/emulator/test_emulate_cuda_objects.py).
// Compiled with -nogpuinc -nogpulib (no ROCm headers on the test machines): the few runtime declarations
// hip_runtime.h would give are written out.
#define __global__ __attribute__((global))

typedef struct { unsigned x, y, z; } dim3;
extern "C" int hipLaunchKernel(const void *, dim3, dim3, void **, unsigned long, void *);
extern "C" int __hipPushCallConfiguration(dim3, dim3, unsigned long, void *);
extern "C" int __hipPopCallConfiguration(dim3 *, dim3 *, unsigned long *, void **);
extern "C" int hipMalloc(void **, unsigned long);
extern "C" int hipMemcpy(void *, const void *, unsigned long, int);
extern "C" int hipFree(void *);
extern "C" int hipDeviceSynchronize(void);

// v[i] = 3 * i + 1 over blocks of 64 work-items.
extern "C" __global__ void hip_fill(int *v, int n) {
  int i = __builtin_amdgcn_workgroup_id_x() * 64 + __builtin_amdgcn_workitem_id_x();
  if (i < n) v[i] = 3 * i + 1;
}

// The number of wrong elements (-1: a runtime call failed).
extern "C" int hip_fill_check(int n) {
  int *device = 0, *host = new int[n];
  if (hipMalloc((void **)&device, n * sizeof(int))) return -1;
  hip_fill<<<dim3{unsigned(n + 63) / 64, 1, 1}, dim3{64, 1, 1}, 0, 0>>>(device, n);
  if (hipDeviceSynchronize()) return -1;
  hipMemcpy(host, device, n * sizeof(int), 2 /* hipMemcpyDeviceToHost */);
  int wrong = 0;
  for (int i = 0; i < n; ++i) wrong += host[i] != 3 * i + 1;
  hipFree(device);
  delete[] host;
  return wrong;
}

// One executable: a CUDA source (scale.cu) and two MLIR programs (saxpy.mlir, cube.mlir), whose host
// functions are plain C functions after lowering (scalars in, i32 out: index is int64_t).
#include <cstdint>
#include <cstdio>

extern "C" int cu_scale_on_gpu(float *host, float s, int n);
extern "C" int32_t mlir_saxpy(float a, int64_t n);  // number of wrong elements
extern "C" int32_t mlir_cube(int64_t n);            // number of wrong elements

int main() {
  float v[256];
  for (int i = 0; i < 256; ++i) v[i] = float(i);
  int scale_status = cu_scale_on_gpu(v, 2.0f, 256);
  bool scale_ok = scale_status == 0 && v[3] == 6.0f && v[255] == 510.0f;
  int32_t saxpy_errors = mlir_saxpy(2.0f, 1024);
  int32_t cube_errors = mlir_cube(512);
  std::printf("scale.cu: %s\n", scale_ok ? "ok" : "MISMATCH");
  std::printf("saxpy.mlir: %s (%d wrong)\n", saxpy_errors == 0 ? "ok" : "MISMATCH", saxpy_errors);
  std::printf("cube.mlir: %s (%d wrong)\n", cube_errors == 0 ? "ok" : "MISMATCH", cube_errors);
  return scale_ok && saxpy_errors == 0 && cube_errors == 0 ? 0 : 1;
}

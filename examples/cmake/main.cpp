// Calls the host function of vadd.mlir (a plain C function after lowering: index is int64_t).
#include <cstdint>
#include <cstdio>

extern "C" int32_t mlir_vadd(int64_t n);

int main() {
  int32_t wrong = mlir_vadd(1000);
  std::printf("vadd.mlir: %s (%d wrong)\n", wrong == 0 ? "ok" : "MISMATCH", wrong);
  return wrong == 0 ? 0 : 1;
}

// A C++ main (std::vector and std::string: the C++ runtime) over kernels.cu and twice.mlir.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

extern "C" int cu_reverse(int blocks);
extern "C" int cu_launch_twice(int n);
extern "C" int32_t mlir_twice(int64_t n);

int main() {
  std::vector<std::string> lines;
  int reverse_wrong = cu_reverse(3);
  lines.push_back("kernels.cu: " + std::to_string(reverse_wrong) + " wrong");
  int32_t twice_wrong = mlir_twice(100);
  lines.push_back("twice.mlir: " + std::to_string(twice_wrong) + " wrong");
  int launched_wrong = cu_launch_twice(77);
  lines.push_back("twice.mlir from kernels.cu: " + std::to_string(launched_wrong) + " wrong");
  for (const std::string &line : lines) std::printf("%s\n", line.c_str());
  return reverse_wrong == 0 && twice_wrong == 0 && launched_wrong == 0 ? 0 : 1;
}

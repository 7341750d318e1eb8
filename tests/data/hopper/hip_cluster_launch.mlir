// A cluster launch of a plain kernel: HIP has no thread-block clusters, so a gfx target refuses it.
module attributes {gpu.container_module} {
  func.func @main() {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c64 = arith.constant 64 : index
    gpu.launch_func @m::@plain clusters in (%c2, %c1, %c1) blocks in (%c2, %c1, %c1) threads in (%c64, %c1, %c1)
    return
  }
  gpu.module @m {
    gpu.func @plain() kernel {
      gpu.return
    }
  }
}

// linalg.fill inside a kernel: no device lowering handles it.
module attributes {gpu.container_module} {
  gpu.module @bad {
    gpu.func @fill(%a: memref<16xf32>) kernel {
      %c = arith.constant 1.0 : f32
      linalg.fill ins(%c : f32) outs(%a : memref<16xf32>)
      gpu.return
    }
  }
}

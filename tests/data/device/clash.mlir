// Two gpu.modules define the same kernel name: one image per target cannot hold both.
module attributes {gpu.container_module} {
  gpu.module @first {
    gpu.func @scale(%a: memref<?xf32>) kernel {
      gpu.return
    }
  }
  gpu.module @second {
    gpu.func @scale(%a: memref<?xf32>) kernel {
      gpu.return
    }
  }
}

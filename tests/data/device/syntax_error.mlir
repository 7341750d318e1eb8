module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k(%a: memref<?xf32>) kernel {
      %t = gpu.thread_id q
      gpu.return
    }
  }
}

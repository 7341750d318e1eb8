// One f32 sqrt and one f32 division: the float-control tests read their PTX instructions.
module attributes {gpu.container_module} {
  gpu.module @float_controls {
    gpu.func @sqrt_div(%a: memref<?xf32>) kernel {
      %t = gpu.thread_id x
      %v = memref.load %a[%t] : memref<?xf32>
      %s = math.sqrt %v : f32
      %d = arith.divf %s, %v : f32
      memref.store %d, %a[%t] : memref<?xf32>
      gpu.return
    }
  }
}

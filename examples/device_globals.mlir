// Device globals: a mutable table and a constant coefficient array in the gpu.module. Each gets an
// offload entry (size > 0) so the runtime registers it with __cudaRegisterVar / __hipRegisterVar.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    memref.global "public" @table : memref<16xf32> = dense<0.0>
    memref.global "public" constant @coeffs : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
    gpu.func @lookup(%out: memref<?xf32>) kernel {
      %i = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %t = memref.get_global @table : memref<16xf32>
      %c = memref.get_global @coeffs : memref<4xf32>
      %v = memref.load %t[%i] : memref<16xf32>
      %w = memref.load %c[%c0] : memref<4xf32>
      %s = arith.addf %v, %w : f32
      memref.store %s, %out[%i] : memref<?xf32>
      gpu.return
    }
  }
  func.func @main() -> i32 {
    %c1 = arith.constant 1 : index
    %n = arith.constant 16 : index
    %out = gpu.alloc (%n) : memref<?xf32>
    gpu.launch_func @kernels::@lookup blocks in (%c1, %c1, %c1) threads in (%n, %c1, %c1)
        args(%out : memref<?xf32>)
    gpu.dealloc %out : memref<?xf32>
    %zero = arith.constant 0 : i32
    return %zero : i32
  }
}

// c = a + b on the GPU. The host function is called from main.cpp as
//   int32_t mlir_vadd(int64_t n)   -> number of wrong elements (0 on a GPU)
module attributes {gpu.container_module} {
  gpu.module @vadd_kernels {
    gpu.func @vadd(%a: memref<?xf32>, %b: memref<?xf32>, %c: memref<?xf32>, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %av = memref.load %a[%i] : memref<?xf32>
        %bv = memref.load %b[%i] : memref<?xf32>
        %s = arith.addf %av, %bv : f32
        memref.store %s, %c[%i] : memref<?xf32>
      }
      gpu.return
    }
  }

  func.func @mlir_vadd(%n: index) -> i32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %c63 = arith.constant 63 : index
    %two = arith.constant 2.0 : f32
    %ha = memref.alloc(%n) : memref<?xf32>
    %hc = memref.alloc(%n) : memref<?xf32>
    scf.for %i = %c0 to %n step %c1 {
      %i32 = arith.index_cast %i : index to i32
      %f = arith.sitofp %i32 : i32 to f32
      memref.store %f, %ha[%i] : memref<?xf32>
    }
    %a = gpu.alloc (%n) : memref<?xf32>
    %c = gpu.alloc (%n) : memref<?xf32>
    gpu.memcpy %a, %ha : memref<?xf32>, memref<?xf32>
    %padded = arith.addi %n, %c63 : index
    %blocks = arith.divui %padded, %c64 : index
    gpu.launch_func @vadd_kernels::@vadd blocks in (%blocks, %c1, %c1) threads in (%c64, %c1, %c1)
        args(%a : memref<?xf32>, %a : memref<?xf32>, %c : memref<?xf32>, %n : index)
    gpu.memcpy %hc, %c : memref<?xf32>, memref<?xf32>
    gpu.dealloc %a : memref<?xf32>
    gpu.dealloc %c : memref<?xf32>
    %errors = scf.for %i = %c0 to %n step %c1 iter_args(%count = %c0) -> (index) {
      %av = memref.load %ha[%i] : memref<?xf32>
      %v = memref.load %hc[%i] : memref<?xf32>
      %want = arith.mulf %av, %two : f32
      %same = arith.cmpf oeq, %v, %want : f32
      %next = arith.addi %count, %c1 : index
      %r = arith.select %same, %count, %next : index
      scf.yield %r : index
    }
    memref.dealloc %ha : memref<?xf32>
    memref.dealloc %hc : memref<?xf32>
    %result = arith.index_cast %errors : index to i32
    return %result : i32
  }
}

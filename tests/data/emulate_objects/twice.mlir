// An MLIR kernel that calls a CUDA device function defined in kernels.cu (cu_twice_plus_one): the device
// code of both joins in one link, on a GPU (clang's device LTO) and under --emulate. Called from main.cpp as
//   int32_t mlir_twice(int64_t n)   -> number of wrong elements
module attributes {gpu.container_module} {
  gpu.module @twice_kernels {
    llvm.func @cu_twice_plus_one(f32) -> f32

    gpu.func @twice(%y: memref<?xf32>, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %i32 = arith.index_cast %i : index to i32
        %x = arith.sitofp %i32 : i32 to f32
        %r = llvm.call @cu_twice_plus_one(%x) : (f32) -> f32
        memref.store %r, %y[%i] : memref<?xf32>
      }
      gpu.return
    }
  }

  func.func @mlir_twice(%n: index) -> i32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %c31 = arith.constant 31 : index
    %hy = memref.alloc(%n) : memref<?xf32>
    %y = gpu.alloc (%n) : memref<?xf32>
    %padded = arith.addi %n, %c31 : index
    %blocks = arith.divui %padded, %c32 : index
    gpu.launch_func @twice_kernels::@twice blocks in (%blocks, %c1, %c1) threads in (%c32, %c1, %c1)
        args(%y : memref<?xf32>, %n : index)
    gpu.memcpy %hy, %y : memref<?xf32>, memref<?xf32>
    gpu.dealloc %y : memref<?xf32>
    %one = arith.constant 1.0 : f32
    %two = arith.constant 2.0 : f32
    %errors = scf.for %i = %c0 to %n step %c1 iter_args(%count = %c0) -> (index) {
      %v = memref.load %hy[%i] : memref<?xf32>
      %i32 = arith.index_cast %i : index to i32
      %x = arith.sitofp %i32 : i32 to f32
      %twice = arith.mulf %x, %two : f32
      %want = arith.addf %twice, %one : f32
      %same = arith.cmpf oeq, %v, %want : f32
      %next = arith.addi %count, %c1 : index
      %c = arith.select %same, %count, %next : index
      scf.yield %c : index
    }
    memref.dealloc %hy : memref<?xf32>
    %result = arith.index_cast %errors : index to i32
    return %result : i32
  }
}

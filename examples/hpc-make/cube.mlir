// y = helper_cube(x) on the GPU: helper_cube is a CUDA device function from helpers.cu, linked into
// this program's device image from helpers.bc (link-bitcode in mlir-offload.toml). Called from main.cpp as
//   int32_t mlir_cube(int64_t n)   -> number of wrong elements (0 on a GPU)
module attributes {gpu.container_module} {
  gpu.module @cube_kernels {
    llvm.func @helper_cube(f32) -> f32

    gpu.func @cube(%x: memref<?xf32>, %y: memref<?xf32>, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %xv = memref.load %x[%i] : memref<?xf32>
        %r = llvm.call @helper_cube(%xv) : (f32) -> f32
        memref.store %r, %y[%i] : memref<?xf32>
      }
      gpu.return
    }
  }

  func.func @mlir_cube(%n: index) -> i32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c128 = arith.constant 128 : index
    %c127 = arith.constant 127 : index
    %hx = memref.alloc(%n) : memref<?xf32>
    %hy = memref.alloc(%n) : memref<?xf32>
    scf.for %i = %c0 to %n step %c1 {
      %i32 = arith.index_cast %i : index to i32
      %f = arith.sitofp %i32 : i32 to f32
      memref.store %f, %hx[%i] : memref<?xf32>
    }
    %x = gpu.alloc (%n) : memref<?xf32>
    %y = gpu.alloc (%n) : memref<?xf32>
    gpu.memcpy %x, %hx : memref<?xf32>, memref<?xf32>
    %padded = arith.addi %n, %c127 : index
    %blocks = arith.divui %padded, %c128 : index
    gpu.launch_func @cube_kernels::@cube blocks in (%blocks, %c1, %c1) threads in (%c128, %c1, %c1)
        args(%x : memref<?xf32>, %y : memref<?xf32>, %n : index)
    gpu.memcpy %hy, %y : memref<?xf32>, memref<?xf32>
    gpu.dealloc %x : memref<?xf32>
    gpu.dealloc %y : memref<?xf32>
    %errors = scf.for %i = %c0 to %n step %c1 iter_args(%count = %c0) -> (index) {
      %xv = memref.load %hx[%i] : memref<?xf32>
      %v = memref.load %hy[%i] : memref<?xf32>
      %sq = arith.mulf %xv, %xv : f32
      %want = arith.mulf %sq, %xv : f32
      %same = arith.cmpf oeq, %v, %want : f32
      %next = arith.addi %count, %c1 : index
      %c = arith.select %same, %count, %next : index
      scf.yield %c : index
    }
    memref.dealloc %hx : memref<?xf32>
    memref.dealloc %hy : memref<?xf32>
    %result = arith.index_cast %errors : index to i32
    return %result : i32
  }
}

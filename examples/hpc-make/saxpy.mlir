// y = a * x + y on the GPU; the host function is called from main.cpp as
//   int32_t mlir_saxpy(float a, int64_t n)   -> number of wrong elements (0 on a GPU)
module attributes {gpu.container_module} {
  gpu.module @saxpy_kernels {
    gpu.func @saxpy(%a: f32, %x: memref<?xf32>, %y: memref<?xf32>, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %xv = memref.load %x[%i] : memref<?xf32>
        %yv = memref.load %y[%i] : memref<?xf32>
        %ax = arith.mulf %a, %xv : f32
        %r = arith.addf %ax, %yv : f32
        memref.store %r, %y[%i] : memref<?xf32>
      }
      gpu.return
    }
  }

  func.func @mlir_saxpy(%a: f32, %n: index) -> i32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c256 = arith.constant 256 : index
    %c255 = arith.constant 255 : index
    %one = arith.constant 1.0 : f32
    %hx = memref.alloc(%n) : memref<?xf32>
    %hy = memref.alloc(%n) : memref<?xf32>
    scf.for %i = %c0 to %n step %c1 {
      %i32 = arith.index_cast %i : index to i32
      %f = arith.sitofp %i32 : i32 to f32
      memref.store %f, %hx[%i] : memref<?xf32>
      memref.store %one, %hy[%i] : memref<?xf32>
    }
    %x = gpu.alloc (%n) : memref<?xf32>
    %y = gpu.alloc (%n) : memref<?xf32>
    gpu.memcpy %x, %hx : memref<?xf32>, memref<?xf32>
    gpu.memcpy %y, %hy : memref<?xf32>, memref<?xf32>
    %padded = arith.addi %n, %c255 : index
    %blocks = arith.divui %padded, %c256 : index
    gpu.launch_func @saxpy_kernels::@saxpy blocks in (%blocks, %c1, %c1) threads in (%c256, %c1, %c1)
        args(%a : f32, %x : memref<?xf32>, %y : memref<?xf32>, %n : index)
    gpu.memcpy %hy, %y : memref<?xf32>, memref<?xf32>
    gpu.dealloc %x : memref<?xf32>
    gpu.dealloc %y : memref<?xf32>
    %errors = scf.for %i = %c0 to %n step %c1 iter_args(%count = %c0) -> (index) {
      %i32 = arith.index_cast %i : index to i32
      %xf = arith.sitofp %i32 : i32 to f32
      %v = memref.load %hy[%i] : memref<?xf32>
      %ax = arith.mulf %a, %xf : f32
      %want = arith.addf %ax, %one : f32
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

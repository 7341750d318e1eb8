// A second program with a kernel named like examples/saxpy.mlir's, and no main: linked beside it,
// the kernel names collide unless one of them is compiled with --symbol-prefix.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @saxpy(%a: f32, %x: memref<?xf32>, %y: memref<?xf32>, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %xv = memref.load %x[%i] : memref<?xf32>
        %ax = arith.mulf %a, %xv : f32
        memref.store %ax, %y[%i] : memref<?xf32>
      }
      gpu.return
    }
  }

  func.func @scale(%a: f32, %x: memref<?xf32>, %y: memref<?xf32>) {
    %c1 = arith.constant 1 : index
    %c0 = arith.constant 0 : index
    %n = memref.dim %x, %c0 : memref<?xf32>
    gpu.launch_func @kernels::@saxpy blocks in (%c1, %c1, %c1) threads in (%n, %c1, %c1)
        args(%a : f32, %x : memref<?xf32>, %y : memref<?xf32>, %n : index)
    return
  }
}

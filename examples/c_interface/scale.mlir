// A library of GPU functions for C and C++ callers: no func.func @main, so the program's main is the
// C caller's (main.c). llvm.emit_c_interface gives @scale a C entry `_mlir_ciface_scale` that takes
// each memref as a pointer to its descriptor {allocated, aligned, offset, sizes[rank], strides[rank]}.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @scale_kernel(%factor: f32, %data: memref<?xf32>, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %v = memref.load %data[%i] : memref<?xf32>
        %r = arith.mulf %v, %factor : f32
        memref.store %r, %data[%i] : memref<?xf32>
      }
      gpu.return
    }
  }

  // data[i] *= factor for every element, on the GPU (the host memory is copied there and back).
  func.func @scale(%factor: f32, %host: memref<?xf32>) attributes {llvm.emit_c_interface} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c128 = arith.constant 128 : index
    %n = memref.dim %host, %c0 : memref<?xf32>
    %device = gpu.alloc (%n) : memref<?xf32>
    gpu.memcpy %device, %host : memref<?xf32>, memref<?xf32>
    %c127 = arith.constant 127 : index
    %rounded = arith.addi %n, %c127 : index
    %blocks = arith.divui %rounded, %c128 : index
    gpu.launch_func @kernels::@scale_kernel blocks in (%blocks, %c1, %c1) threads in (%c128, %c1, %c1)
        args(%factor : f32, %device : memref<?xf32>, %n : index)
    gpu.memcpy %host, %device : memref<?xf32>, memref<?xf32>
    gpu.dealloc %device : memref<?xf32>
    return
  }
}

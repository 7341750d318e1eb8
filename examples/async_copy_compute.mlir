// Copy in, compute, copy out, all queued on one stream with async tokens; the host waits once.
// Expected output on a GPU: "x[0] = 0.0", "x[3] = 9.0", "x[511] = 261121.0".
module attributes {gpu.container_module} {
  llvm.mlir.global internal constant @fmt("x[%d] = %.1f\0A\00") {addr_space = 0 : i32}
  llvm.func @printf(!llvm.ptr, ...) -> i32

  gpu.module @square_kernels {
    gpu.func @square(%x: memref<?xf32>, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %v = memref.load %x[%i] : memref<?xf32>
        %s = arith.mulf %v, %v : f32
        memref.store %s, %x[%i] : memref<?xf32>
      }
      gpu.return
    }
  }

  func.func @main() -> i32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %n = arith.constant 512 : index
    %last = arith.constant 511 : index
    %threads = arith.constant 128 : index
    %blocks = arith.constant 4 : index
    %h = memref.alloc(%n) : memref<?xf32>
    scf.for %i = %c0 to %n step %c1 {
      %i32 = arith.index_cast %i : index to i32
      %f = arith.sitofp %i32 : i32 to f32
      memref.store %f, %h[%i] : memref<?xf32>
    }
    %t0 = gpu.wait async
    %x, %t1 = gpu.alloc async [%t0] (%n) : memref<?xf32>
    %t2 = gpu.memcpy async [%t1] %x, %h : memref<?xf32>, memref<?xf32>
    %t3 = gpu.launch_func async [%t2] @square_kernels::@square blocks in (%blocks, %c1, %c1)
        threads in (%threads, %c1, %c1) args(%x : memref<?xf32>, %n : index)
    %t4 = gpu.memcpy async [%t3] %h, %x : memref<?xf32>, memref<?xf32>
    %t5 = gpu.dealloc async [%t4] %x : memref<?xf32>
    gpu.wait [%t5]
    %fmt = llvm.mlir.addressof @fmt : !llvm.ptr
    %idx = memref.alloca() : memref<3xindex>
    memref.store %c0, %idx[%c0] : memref<3xindex>
    memref.store %c3, %idx[%c1] : memref<3xindex>
    %c2 = arith.constant 2 : index
    memref.store %last, %idx[%c2] : memref<3xindex>
    scf.for %k = %c0 to %c3 step %c1 {
      %i = memref.load %idx[%k] : memref<3xindex>
      %i32 = arith.index_cast %i : index to i32
      %v = memref.load %h[%i] : memref<?xf32>
      %d = arith.extf %v : f32 to f64
      llvm.call @printf(%fmt, %i32, %d) vararg(!llvm.func<i32 (ptr, ...)>) : (!llvm.ptr, i32, f64) -> i32
    }
    memref.dealloc %h : memref<?xf32>
    %rc = arith.constant 0 : i32
    return %rc : i32
  }
}

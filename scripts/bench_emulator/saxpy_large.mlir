// Benchmark program: y = a * x + y over 2^24 elements (65536 blocks of 256 threads), checked on the host.
module attributes {gpu.container_module} {
  llvm.mlir.global internal constant @ok("saxpy 2^24: ok\0A\00") {addr_space = 0 : i32}
  llvm.mlir.global internal constant @bad("saxpy 2^24: MISMATCH\0A\00") {addr_space = 0 : i32}
  llvm.func @printf(!llvm.ptr, ...) -> i32

  gpu.module @kernels {
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

  func.func @main() -> i32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = arith.constant 16777216 : index
    %threads = arith.constant 256 : index
    %blocks = arith.constant 65536 : index
    %a = arith.constant 2.0 : f32
    %one = arith.constant 1.0 : f32
    %hx = memref.alloc(%n) : memref<?xf32>
    %hy = memref.alloc(%n) : memref<?xf32>
    %c1023 = arith.constant 1023 : index
    scf.for %i = %c0 to %n step %c1 {
      %m = arith.andi %i, %c1023 : index
      %i32 = arith.index_cast %m : index to i32
      %f = arith.sitofp %i32 : i32 to f32
      memref.store %f, %hx[%i] : memref<?xf32>
      memref.store %one, %hy[%i] : memref<?xf32>
    }
    %x = gpu.alloc (%n) : memref<?xf32>
    %y = gpu.alloc (%n) : memref<?xf32>
    gpu.memcpy %x, %hx : memref<?xf32>, memref<?xf32>
    gpu.memcpy %y, %hy : memref<?xf32>, memref<?xf32>
    gpu.launch_func @kernels::@saxpy blocks in (%blocks, %c1, %c1) threads in (%threads, %c1, %c1)
        args(%a : f32, %x : memref<?xf32>, %y : memref<?xf32>, %n : index)
    gpu.memcpy %hy, %y : memref<?xf32>, memref<?xf32>
    %errors = scf.for %i = %c0 to %n step %c1 iter_args(%count = %c0) -> (index) {
      %m = arith.andi %i, %c1023 : index
      %i32 = arith.index_cast %m : index to i32
      %xf = arith.sitofp %i32 : i32 to f32
      %ax = arith.mulf %a, %xf : f32
      %want = arith.addf %ax, %one : f32
      %v = memref.load %hy[%i] : memref<?xf32>
      %same = arith.cmpf oeq, %v, %want : f32
      %next = arith.addi %count, %c1 : index
      %c = arith.select %same, %count, %next : index
      scf.yield %c : index
    }
    %good = arith.cmpi eq, %errors, %c0 : index
    %okp = llvm.mlir.addressof @ok : !llvm.ptr
    %badp = llvm.mlir.addressof @bad : !llvm.ptr
    %msg = arith.select %good, %okp, %badp : !llvm.ptr
    llvm.call @printf(%msg) vararg(!llvm.func<i32 (ptr, ...)>) : (!llvm.ptr) -> i32
    %zero = arith.constant 0 : i32
    %two = arith.constant 2 : i32
    %rc = arith.select %good, %zero, %two : i32
    gpu.dealloc %x : memref<?xf32>
    gpu.dealloc %y : memref<?xf32>
    return %rc : i32
  }
}

// Benchmark program: C = A * B for 512x512 f32 matrices, 16x16 tiles staged through workgroup memory
// with two barriers per tile step (1024 blocks of 256 threads); a few entries checked on the host.
module attributes {gpu.container_module} {
  llvm.mlir.global internal constant @ok("matmul 512: ok\0A\00") {addr_space = 0 : i32}
  llvm.mlir.global internal constant @bad("matmul 512: MISMATCH\0A\00") {addr_space = 0 : i32}
  llvm.func @printf(!llvm.ptr, ...) -> i32

  gpu.module @kernels {
    gpu.func @matmul(%a: memref<512x512xf32>, %b: memref<512x512xf32>, %c: memref<512x512xf32>)
        workgroup(%ta : memref<16x16xf32, #gpu.address_space<workgroup>>,
                  %tb : memref<16x16xf32, #gpu.address_space<workgroup>>) kernel {
      %c0 = arith.constant 0 : index
      %c16 = arith.constant 16 : index
      %c512 = arith.constant 512 : index
      %tx = gpu.thread_id x
      %ty = gpu.thread_id y
      %bx = gpu.block_id x
      %by = gpu.block_id y
      %row0 = arith.muli %by, %c16 : index
      %row = arith.addi %row0, %ty : index
      %col0 = arith.muli %bx, %c16 : index
      %col = arith.addi %col0, %tx : index
      %zero = arith.constant 0.0 : f32
      %sum = scf.for %k0 = %c0 to %c512 step %c16 iter_args(%acc = %zero) -> (f32) {
        %ka = arith.addi %k0, %tx : index
        %kb = arith.addi %k0, %ty : index
        %va = memref.load %a[%row, %ka] : memref<512x512xf32>
        %vb = memref.load %b[%kb, %col] : memref<512x512xf32>
        memref.store %va, %ta[%ty, %tx] : memref<16x16xf32, #gpu.address_space<workgroup>>
        memref.store %vb, %tb[%ty, %tx] : memref<16x16xf32, #gpu.address_space<workgroup>>
        gpu.barrier
        %c1 = arith.constant 1 : index
        %part = scf.for %kk = %c0 to %c16 step %c1 iter_args(%s = %acc) -> (f32) {
          %x = memref.load %ta[%ty, %kk] : memref<16x16xf32, #gpu.address_space<workgroup>>
          %y = memref.load %tb[%kk, %tx] : memref<16x16xf32, #gpu.address_space<workgroup>>
          %p = arith.mulf %x, %y : f32
          %s2 = arith.addf %s, %p : f32
          scf.yield %s2 : f32
        }
        gpu.barrier
        scf.yield %part : f32
      }
      memref.store %sum, %c[%row, %col] : memref<512x512xf32>
      gpu.return
    }
  }

  func.func @main() -> i32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c7 = arith.constant 7 : index
    %c16 = arith.constant 16 : index
    %c32 = arith.constant 32 : index
    %c512 = arith.constant 512 : index
    %ha = memref.alloc() : memref<512x512xf32>
    %hb = memref.alloc() : memref<512x512xf32>
    %hc = memref.alloc() : memref<512x512xf32>
    // a[i][j] = (i + j) % 7, b[i][j] = (i * 3 + j) % 5: small integers, so every sum is exact in f32.
    %c3 = arith.constant 3 : index
    %c5 = arith.constant 5 : index
    scf.for %i = %c0 to %c512 step %c1 {
      scf.for %j = %c0 to %c512 step %c1 {
        %s = arith.addi %i, %j : index
        %m = arith.remui %s, %c7 : index
        %mi = arith.index_cast %m : index to i32
        %mf = arith.sitofp %mi : i32 to f32
        memref.store %mf, %ha[%i, %j] : memref<512x512xf32>
        %i3 = arith.muli %i, %c3 : index
        %t = arith.addi %i3, %j : index
        %n = arith.remui %t, %c5 : index
        %ni = arith.index_cast %n : index to i32
        %nf = arith.sitofp %ni : i32 to f32
        memref.store %nf, %hb[%i, %j] : memref<512x512xf32>
      }
    }
    %a = gpu.alloc () : memref<512x512xf32>
    %b = gpu.alloc () : memref<512x512xf32>
    %c = gpu.alloc () : memref<512x512xf32>
    gpu.memcpy %a, %ha : memref<512x512xf32>, memref<512x512xf32>
    gpu.memcpy %b, %hb : memref<512x512xf32>, memref<512x512xf32>
    gpu.launch_func @kernels::@matmul blocks in (%c32, %c32, %c1) threads in (%c16, %c16, %c1)
        args(%a : memref<512x512xf32>, %b : memref<512x512xf32>, %c : memref<512x512xf32>)
    gpu.memcpy %hc, %c : memref<512x512xf32>, memref<512x512xf32>
    // Check rows 0, 7, ..., 511 in full against a host dot product.
    %c73 = arith.constant 73 : index
    %errors = scf.for %i = %c0 to %c512 step %c73 iter_args(%e0 = %c0) -> (index) {
      %er = scf.for %j = %c0 to %c512 step %c1 iter_args(%e1 = %e0) -> (index) {
        %zero = arith.constant 0.0 : f32
        %want = scf.for %k = %c0 to %c512 step %c1 iter_args(%s = %zero) -> (f32) {
          %x = memref.load %ha[%i, %k] : memref<512x512xf32>
          %y = memref.load %hb[%k, %j] : memref<512x512xf32>
          %p = arith.mulf %x, %y : f32
          %s2 = arith.addf %s, %p : f32
          scf.yield %s2 : f32
        }
        %got = memref.load %hc[%i, %j] : memref<512x512xf32>
        %same = arith.cmpf oeq, %got, %want : f32
        %next = arith.addi %e1, %c1 : index
        %r = arith.select %same, %e1, %next : index
        scf.yield %r : index
      }
      scf.yield %er : index
    }
    %good = arith.cmpi eq, %errors, %c0 : index
    %okp = llvm.mlir.addressof @ok : !llvm.ptr
    %badp = llvm.mlir.addressof @bad : !llvm.ptr
    %msg = arith.select %good, %okp, %badp : !llvm.ptr
    llvm.call @printf(%msg) vararg(!llvm.func<i32 (ptr, ...)>) : (!llvm.ptr) -> i32
    %zero32 = arith.constant 0 : i32
    %two = arith.constant 2 : i32
    %rc = arith.select %good, %zero32, %two : i32
    gpu.dealloc %a : memref<512x512xf32>
    gpu.dealloc %b : memref<512x512xf32>
    gpu.dealloc %c : memref<512x512xf32>
    return %rc : i32
  }
}

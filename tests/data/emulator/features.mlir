// Launch features under emulation: a 3-D grid (every thread writes its global coordinates), dynamic
// workgroup memory (each block reverses its slice through it), atomics on global and workgroup memory
// from many blocks (a histogram), and gpu.printf.
module attributes {gpu.container_module} {
  llvm.mlir.global internal constant @fmt_grid("grid: %d bad of %d\0A\00") {addr_space = 0 : i32}
  llvm.mlir.global internal constant @fmt_rev("reverse: %d bad of %d\0A\00") {addr_space = 0 : i32}
  llvm.mlir.global internal constant @fmt_hist("bin %d: %d\0A\00") {addr_space = 0 : i32}
  llvm.func @printf(!llvm.ptr, ...) -> i32

  gpu.module @kernels {
    // out[((z * Y + y) * X + x)] = x + 1000 * y + 1000000 * z over the whole grid (global ids).
    gpu.func @grid3d(%out: memref<?xi32>) kernel {
      %x = gpu.global_id x
      %y = gpu.global_id y
      %z = gpu.global_id z
      %bx = gpu.block_dim x
      %by = gpu.block_dim y
      %gx = gpu.grid_dim x
      %gy = gpu.grid_dim y
      %sx = arith.muli %bx, %gx : index
      %sy = arith.muli %by, %gy : index
      %zy = arith.muli %z, %sy : index
      %zyy = arith.addi %zy, %y : index
      %row = arith.muli %zyy, %sx : index
      %at = arith.addi %row, %x : index
      %c1000 = arith.constant 1000 : index
      %c1000000 = arith.constant 1000000 : index
      %vy = arith.muli %y, %c1000 : index
      %vz = arith.muli %z, %c1000000 : index
      %v0 = arith.addi %x, %vy : index
      %v = arith.addi %v0, %vz : index
      %vi = arith.index_cast %v : index to i32
      memref.store %vi, %out[%at] : memref<?xi32>
      gpu.return
    }
    // Each block reverses its blockDim-long slice of `data` through dynamic workgroup memory.
    gpu.func @reverse(%data: memref<?xf32>) kernel {
      %t = gpu.thread_id x
      %n = gpu.block_dim x
      %i = gpu.global_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %raw = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %shm = memref.view %raw[%c0][%n] : memref<?xi8, #gpu.address_space<workgroup>> to memref<?xf32, #gpu.address_space<workgroup>>
      %v = memref.load %data[%i] : memref<?xf32>
      memref.store %v, %shm[%t] : memref<?xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %last = arith.subi %n, %c1 : index
      %mirror = arith.subi %last, %t : index
      %w = memref.load %shm[%mirror] : memref<?xf32, #gpu.address_space<workgroup>>
      memref.store %w, %data[%i] : memref<?xf32>
      gpu.return
    }
    // hist[v % 16] += 1 for every value: per-block counts in workgroup memory, then added to the global bins.
    gpu.func @histogram(%values: memref<?xi32>, %hist: memref<16xi32>)
        workgroup(%local : memref<16xi32, #gpu.address_space<workgroup>>) kernel {
      %t = gpu.thread_id x
      %i = gpu.global_id x
      %c16 = arith.constant 16 : index
      %zero = arith.constant 0 : i32
      %one = arith.constant 1 : i32
      %c16i = arith.constant 16 : i32
      %small = arith.cmpi ult, %t, %c16 : index
      scf.if %small {
        memref.store %zero, %local[%t] : memref<16xi32, #gpu.address_space<workgroup>>
      }
      gpu.barrier
      %v = memref.load %values[%i] : memref<?xi32>
      %bin = arith.remui %v, %c16i : i32
      %b = arith.index_cast %bin : i32 to index
      %old = memref.atomic_rmw addi %one, %local[%b] : (i32, memref<16xi32, #gpu.address_space<workgroup>>) -> i32
      gpu.barrier
      scf.if %small {
        %count = memref.load %local[%t] : memref<16xi32, #gpu.address_space<workgroup>>
        %g = memref.atomic_rmw addi %count, %hist[%t] : (i32, memref<16xi32>) -> i32
      }
      gpu.return
    }
    gpu.func @hello(%scale: f32) kernel {
      %t = gpu.thread_id x
      %b = gpu.block_id x
      %ti = arith.index_cast %t : index to i32
      %bi = arith.index_cast %b : index to i32
      %f = arith.sitofp %ti : i32 to f32
      %s = arith.mulf %f, %scale : f32
      gpu.printf "hello from block %d thread %d: %f\n", %bi, %ti, %s : i32, i32, f32
      gpu.return
    }
  }

  func.func @main() -> i32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %zero = arith.constant 0 : i32
    // 3-D grid: blocks (2, 3, 4) of threads (4, 2, 3): X = 8, Y = 6, Z = 12.
    %cells = arith.constant 576 : index
    %g = gpu.alloc (%cells) : memref<?xi32>
    gpu.launch_func @kernels::@grid3d blocks in (%c2, %c3, %c4) threads in (%c4, %c2, %c3) args(%g : memref<?xi32>)
    %hg = memref.alloc(%cells) : memref<?xi32>
    gpu.memcpy %hg, %g : memref<?xi32>, memref<?xi32>
    %c8 = arith.constant 8 : index
    %c6 = arith.constant 6 : index
    %c12 = arith.constant 12 : index
    %c1000 = arith.constant 1000 : index
    %c1000000 = arith.constant 1000000 : index
    %bad = scf.for %z = %c0 to %c12 step %c1 iter_args(%bz = %c0) -> (index) {
      %r1 = scf.for %y = %c0 to %c6 step %c1 iter_args(%by = %bz) -> (index) {
        %r2 = scf.for %x = %c0 to %c8 step %c1 iter_args(%bx = %by) -> (index) {
          %zy = arith.muli %z, %c6 : index
          %zyy = arith.addi %zy, %y : index
          %row = arith.muli %zyy, %c8 : index
          %at = arith.addi %row, %x : index
          %got = memref.load %hg[%at] : memref<?xi32>
          %vy = arith.muli %y, %c1000 : index
          %vz = arith.muli %z, %c1000000 : index
          %v0 = arith.addi %x, %vy : index
          %v = arith.addi %v0, %vz : index
          %want = arith.index_cast %v : index to i32
          %same = arith.cmpi eq, %got, %want : i32
          %next = arith.addi %bx, %c1 : index
          %r = arith.select %same, %bx, %next : index
          scf.yield %r : index
        }
        scf.yield %r2 : index
      }
      scf.yield %r1 : index
    }
    %fg = llvm.mlir.addressof @fmt_grid : !llvm.ptr
    %badi = arith.index_cast %bad : index to i32
    %cellsi = arith.index_cast %cells : index to i32
    llvm.call @printf(%fg, %badi, %cellsi) vararg(!llvm.func<i32 (ptr, ...)>) : (!llvm.ptr, i32, i32) -> i32

    // Reverse 4 slices of 128 through 512 bytes of dynamic workgroup memory each.
    %n = arith.constant 512 : index
    %hd = memref.alloc(%n) : memref<?xf32>
    scf.for %i = %c0 to %n step %c1 {
      %ii = arith.index_cast %i : index to i32
      %f = arith.sitofp %ii : i32 to f32
      memref.store %f, %hd[%i] : memref<?xf32>
    }
    %d = gpu.alloc (%n) : memref<?xf32>
    gpu.memcpy %d, %hd : memref<?xf32>, memref<?xf32>
    %shared = arith.constant 512 : i32
    gpu.launch_func @kernels::@reverse blocks in (%c4, %c1, %c1) threads in (%c128, %c1, %c1)
        dynamic_shared_memory_size %shared args(%d : memref<?xf32>)
    gpu.memcpy %hd, %d : memref<?xf32>, memref<?xf32>
    %rbad = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %c0) -> (index) {
      %blk = arith.divui %i, %c128 : index
      %in = arith.remui %i, %c128 : index
      %base = arith.muli %blk, %c128 : index
      %c127 = arith.constant 127 : index
      %m = arith.subi %c127, %in : index
      %src = arith.addi %base, %m : index
      %srci = arith.index_cast %src : index to i32
      %want = arith.sitofp %srci : i32 to f32
      %got = memref.load %hd[%i] : memref<?xf32>
      %same = arith.cmpf oeq, %got, %want : f32
      %next = arith.addi %acc, %c1 : index
      %r = arith.select %same, %acc, %next : index
      scf.yield %r : index
    }
    %fr = llvm.mlir.addressof @fmt_rev : !llvm.ptr
    %rbadi = arith.index_cast %rbad : index to i32
    %ni = arith.index_cast %n : index to i32
    llvm.call @printf(%fr, %rbadi, %ni) vararg(!llvm.func<i32 (ptr, ...)>) : (!llvm.ptr, i32, i32) -> i32

    // Histogram of i * 7 for i < 64 * 128 over 64 blocks.
    %m = arith.constant 8192 : index
    %hv = memref.alloc(%m) : memref<?xi32>
    %c7 = arith.constant 7 : i32
    scf.for %i = %c0 to %m step %c1 {
      %ii = arith.index_cast %i : index to i32
      %v = arith.muli %ii, %c7 : i32
      memref.store %v, %hv[%i] : memref<?xi32>
    }
    %vals = gpu.alloc (%m) : memref<?xi32>
    %hist = gpu.alloc () : memref<16xi32>
    gpu.memcpy %vals, %hv : memref<?xi32>, memref<?xi32>
    gpu.memset %hist, %zero : memref<16xi32>, i32
    gpu.launch_func @kernels::@histogram blocks in (%c64, %c1, %c1) threads in (%c128, %c1, %c1)
        args(%vals : memref<?xi32>, %hist : memref<16xi32>)
    %hh = memref.alloc() : memref<16xi32>
    gpu.memcpy %hh, %hist : memref<16xi32>, memref<16xi32>
    %fh = llvm.mlir.addressof @fmt_hist : !llvm.ptr
    scf.for %i = %c0 to %c16 step %c1 {
      %ii = arith.index_cast %i : index to i32
      %v = memref.load %hh[%i] : memref<16xi32>
      llvm.call @printf(%fh, %ii, %v) vararg(!llvm.func<i32 (ptr, ...)>) : (!llvm.ptr, i32, i32) -> i32
    }

    %scale = arith.constant 0.5 : f32
    gpu.launch_func @kernels::@hello blocks in (%c2, %c1, %c1) threads in (%c3, %c1, %c1) args(%scale : f32)
    gpu.wait
    %r = arith.constant 0 : i32
    return %r : i32
  }
}

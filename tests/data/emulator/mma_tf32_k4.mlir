// mma.sync m16n8k4 on tf32 (nvgpu.mma.sync with tf32Enabled, sm_80): each lane loads its fragments from
// global memory by the PTX layout (A: (g,t) (g+8,t); B: (t,g); C and D: (g,2t..) (g+8,2t..),
// g = lane / 4, t = lane % 4); D = A * B + C printed, over the first 4 columns of A and rows of B.
module attributes {gpu.container_module} {
  llvm.mlir.global internal constant @fmt("d[%d][%d] = %.1f\0A\00") {addr_space = 0 : i32}
  llvm.func @printf(!llvm.ptr, ...) -> i32

  gpu.module @kernels {
    gpu.func @mma(%a: memref<16x8xf32>, %b: memref<8x8xf32>, %c: memref<16x8xf32>, %d: memref<16x8xf32>) kernel {
      %lane = gpu.thread_id x
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c4 = arith.constant 4 : index
      %c8 = arith.constant 8 : index
      %g = arith.divui %lane, %c4 : index
      %t = arith.remui %lane, %c4 : index
      %g8 = arith.addi %g, %c8 : index
      %col = arith.muli %t, %c2 : index
      %col1 = arith.addi %col, %c1 : index
      %a0 = memref.load %a[%g, %t] : memref<16x8xf32>
      %a1 = memref.load %a[%g8, %t] : memref<16x8xf32>
      %b0 = memref.load %b[%t, %g] : memref<8x8xf32>
      %c00 = memref.load %c[%g, %col] : memref<16x8xf32>
      %c01 = memref.load %c[%g, %col1] : memref<16x8xf32>
      %c10 = memref.load %c[%g8, %col] : memref<16x8xf32>
      %c11 = memref.load %c[%g8, %col1] : memref<16x8xf32>
      %fa = vector.from_elements %a0, %a1 : vector<2x1xf32>
      %fb = vector.from_elements %b0 : vector<1x1xf32>
      %fc = vector.from_elements %c00, %c01, %c10, %c11 : vector<2x2xf32>
      %fd = nvgpu.mma.sync(%fa, %fb, %fc) {mmaShape = [16, 8, 4], tf32Enabled} : (vector<2x1xf32>, vector<1x1xf32>, vector<2x2xf32>) -> vector<2x2xf32>
      %d00 = vector.extract %fd[0, 0] : f32 from vector<2x2xf32>
      %d01 = vector.extract %fd[0, 1] : f32 from vector<2x2xf32>
      %d10 = vector.extract %fd[1, 0] : f32 from vector<2x2xf32>
      %d11 = vector.extract %fd[1, 1] : f32 from vector<2x2xf32>
      memref.store %d00, %d[%g, %col] : memref<16x8xf32>
      memref.store %d01, %d[%g, %col1] : memref<16x8xf32>
      memref.store %d10, %d[%g8, %col] : memref<16x8xf32>
      memref.store %d11, %d[%g8, %col1] : memref<16x8xf32>
      gpu.return
    }
  }

  func.func @main() -> i32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %c5 = arith.constant 5 : index
    %c7 = arith.constant 7 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %c32 = arith.constant 32 : index
    %ha = memref.alloc() : memref<16x8xf32>
    %hb = memref.alloc() : memref<8x8xf32>
    %hc = memref.alloc() : memref<16x8xf32>
    // a[i][k] = (i + 2k) % 7, b[k][j] = (3k + j) % 5, c[i][j] = i - j
    scf.for %i = %c0 to %c16 step %c1 {
      scf.for %j = %c0 to %c8 step %c1 {
        %j2 = arith.addi %j, %j : index
        %s = arith.addi %i, %j2 : index
        %m = arith.remui %s, %c7 : index
        %mi = arith.index_cast %m : index to i32
        %mf = arith.sitofp %mi : i32 to f32
        memref.store %mf, %ha[%i, %j] : memref<16x8xf32>
        %ii = arith.index_cast %i : index to i32
        %ji = arith.index_cast %j : index to i32
        %diff = arith.subi %ii, %ji : i32
        %df = arith.sitofp %diff : i32 to f32
        memref.store %df, %hc[%i, %j] : memref<16x8xf32>
      }
    }
    scf.for %k = %c0 to %c8 step %c1 {
      scf.for %j = %c0 to %c8 step %c1 {
        %k3 = arith.muli %k, %c3 : index
        %s = arith.addi %k3, %j : index
        %m = arith.remui %s, %c5 : index
        %mi = arith.index_cast %m : index to i32
        %mf = arith.sitofp %mi : i32 to f32
        memref.store %mf, %hb[%k, %j] : memref<8x8xf32>
      }
    }
    %a = gpu.alloc () : memref<16x8xf32>
    %b = gpu.alloc () : memref<8x8xf32>
    %c = gpu.alloc () : memref<16x8xf32>
    %d = gpu.alloc () : memref<16x8xf32>
    gpu.memcpy %a, %ha : memref<16x8xf32>, memref<16x8xf32>
    gpu.memcpy %b, %hb : memref<8x8xf32>, memref<8x8xf32>
    gpu.memcpy %c, %hc : memref<16x8xf32>, memref<16x8xf32>
    gpu.launch_func @kernels::@mma blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1)
        args(%a : memref<16x8xf32>, %b : memref<8x8xf32>, %c : memref<16x8xf32>, %d : memref<16x8xf32>)
    gpu.memcpy %hc, %d : memref<16x8xf32>, memref<16x8xf32>
    %fmt = llvm.mlir.addressof @fmt : !llvm.ptr
    scf.for %i = %c0 to %c16 step %c1 {
      scf.for %j = %c0 to %c8 step %c1 {
        %v = memref.load %hc[%i, %j] : memref<16x8xf32>
        %dv = arith.extf %v : f32 to f64
        %ii = arith.index_cast %i : index to i32
        %ji = arith.index_cast %j : index to i32
        llvm.call @printf(%fmt, %ii, %ji, %dv) vararg(!llvm.func<i32 (ptr, ...)>) : (!llvm.ptr, i32, i32, f64) -> i32
      }
    }
    %z = arith.constant 0 : i32
    return %z : i32
  }
}

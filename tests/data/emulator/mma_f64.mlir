// mma.sync m8n8k4 on f64 (nvgpu.mma.sync, sm_80): each lane loads its A, B and C fragments straight from
// global memory by the PTX layout (A[g][t], B[t][g], C[g][2t..2t+1] with g = lane / 4, t = lane % 4),
// multiplies, and stores its part of D = A * B + C; D printed.
module attributes {gpu.container_module} {
  llvm.mlir.global internal constant @fmt("d[%d][%d] = %.2f\0A\00") {addr_space = 0 : i32}
  llvm.func @printf(!llvm.ptr, ...) -> i32

  gpu.module @kernels {
    gpu.func @mma(%a: memref<8x4xf64>, %b: memref<4x8xf64>, %c: memref<8x8xf64>, %d: memref<8x8xf64>) kernel {
      %lane = gpu.thread_id x
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c4 = arith.constant 4 : index
      %g = arith.divui %lane, %c4 : index
      %t = arith.remui %lane, %c4 : index
      %col = arith.muli %t, %c2 : index
      %col1 = arith.addi %col, %c1 : index
      %av = memref.load %a[%g, %t] : memref<8x4xf64>
      %bv = memref.load %b[%t, %g] : memref<4x8xf64>
      %c0v = memref.load %c[%g, %col] : memref<8x8xf64>
      %c1v = memref.load %c[%g, %col1] : memref<8x8xf64>
      %fa = vector.broadcast %av : f64 to vector<1x1xf64>
      %fb = vector.broadcast %bv : f64 to vector<1x1xf64>
      %fc0 = vector.from_elements %c0v, %c1v : vector<1x2xf64>
      %fd = nvgpu.mma.sync(%fa, %fb, %fc0) {mmaShape = [8, 8, 4]} : (vector<1x1xf64>, vector<1x1xf64>, vector<1x2xf64>) -> vector<1x2xf64>
      %d0 = vector.extract %fd[0, 0] : f64 from vector<1x2xf64>
      %d1 = vector.extract %fd[0, 1] : f64 from vector<1x2xf64>
      memref.store %d0, %d[%g, %col] : memref<8x8xf64>
      memref.store %d1, %d[%g, %col1] : memref<8x8xf64>
      gpu.return
    }
  }

  func.func @main() -> i32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %c32 = arith.constant 32 : index
    %ha = memref.alloc() : memref<8x4xf64>
    %hb = memref.alloc() : memref<4x8xf64>
    %hc = memref.alloc() : memref<8x8xf64>
    %quarter = arith.constant 0.25 : f64
    // a[i][k] = i + k / 4, b[k][j] = k - j, c[i][j] = i * j / 4
    scf.for %i = %c0 to %c8 step %c1 {
      %ii = arith.index_cast %i : index to i64
      %fi = arith.sitofp %ii : i64 to f64
      scf.for %k = %c0 to %c4 step %c1 {
        %kk = arith.index_cast %k : index to i64
        %fk = arith.sitofp %kk : i64 to f64
        %q = arith.mulf %fk, %quarter : f64
        %v = arith.addf %fi, %q : f64
        memref.store %v, %ha[%i, %k] : memref<8x4xf64>
        %w = arith.subf %fk, %fi : f64
        memref.store %w, %hb[%k, %i] : memref<4x8xf64>
      }
      scf.for %j = %c0 to %c8 step %c1 {
        %jj = arith.index_cast %j : index to i64
        %fj = arith.sitofp %jj : i64 to f64
        %p = arith.mulf %fi, %fj : f64
        %pq = arith.mulf %p, %quarter : f64
        memref.store %pq, %hc[%i, %j] : memref<8x8xf64>
      }
    }
    %a = gpu.alloc () : memref<8x4xf64>
    %b = gpu.alloc () : memref<4x8xf64>
    %c = gpu.alloc () : memref<8x8xf64>
    %d = gpu.alloc () : memref<8x8xf64>
    gpu.memcpy %a, %ha : memref<8x4xf64>, memref<8x4xf64>
    gpu.memcpy %b, %hb : memref<4x8xf64>, memref<4x8xf64>
    gpu.memcpy %c, %hc : memref<8x8xf64>, memref<8x8xf64>
    gpu.launch_func @kernels::@mma blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1)
        args(%a : memref<8x4xf64>, %b : memref<4x8xf64>, %c : memref<8x8xf64>, %d : memref<8x8xf64>)
    gpu.memcpy %hc, %d : memref<8x8xf64>, memref<8x8xf64>
    %fmt = llvm.mlir.addressof @fmt : !llvm.ptr
    scf.for %i = %c0 to %c8 step %c1 {
      scf.for %j = %c0 to %c8 step %c1 {
        %v = memref.load %hc[%i, %j] : memref<8x8xf64>
        %ii = arith.index_cast %i : index to i32
        %ji = arith.index_cast %j : index to i32
        llvm.call @printf(%fmt, %ii, %ji, %v) vararg(!llvm.func<i32 (ptr, ...)>) : (!llvm.ptr, i32, i32, f64) -> i32
      }
    }
    %z = arith.constant 0 : i32
    return %z : i32
  }
}

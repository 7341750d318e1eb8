// Tensor cores through gpu.subgroup_mma on f64 (wmma m8n8k4, sm_80): D = A * B + C for an 8x4 A, a 4x8 B
// and an 8x8 C, loaded, multiplied and stored by one warp; D printed.
module attributes {gpu.container_module} {
  llvm.mlir.global internal constant @fmt("d[%d][%d] = %.2f\0A\00") {addr_space = 0 : i32}
  llvm.func @printf(!llvm.ptr, ...) -> i32

  gpu.module @kernels {
    gpu.func @wmma(%a: memref<8x4xf64>, %b: memref<4x8xf64>, %c: memref<8x8xf64>) kernel {
      %c0 = arith.constant 0 : index
      %fa = gpu.subgroup_mma_load_matrix %a[%c0, %c0] {leadDimension = 4 : index} : memref<8x4xf64> -> !gpu.mma_matrix<8x4xf64, "AOp">
      %fb = gpu.subgroup_mma_load_matrix %b[%c0, %c0] {leadDimension = 8 : index} : memref<4x8xf64> -> !gpu.mma_matrix<4x8xf64, "BOp">
      %fc = gpu.subgroup_mma_load_matrix %c[%c0, %c0] {leadDimension = 8 : index} : memref<8x8xf64> -> !gpu.mma_matrix<8x8xf64, "COp">
      %fd = gpu.subgroup_mma_compute %fa, %fb, %fc : !gpu.mma_matrix<8x4xf64, "AOp">, !gpu.mma_matrix<4x8xf64, "BOp"> -> !gpu.mma_matrix<8x8xf64, "COp">
      gpu.subgroup_mma_store_matrix %fd, %c[%c0, %c0] {leadDimension = 8 : index} : !gpu.mma_matrix<8x8xf64, "COp">, memref<8x8xf64>
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
    %half = arith.constant 0.5 : f64
    // a[i][k] = i * 0.5 + k, b[k][j] = j - 2k, c[i][j] = i + j * 0.5
    scf.for %i = %c0 to %c8 step %c1 {
      %ii = arith.index_cast %i : index to i64
      %fi = arith.sitofp %ii : i64 to f64
      %hi = arith.mulf %fi, %half : f64
      scf.for %k = %c0 to %c4 step %c1 {
        %kk = arith.index_cast %k : index to i64
        %fk = arith.sitofp %kk : i64 to f64
        %v = arith.addf %hi, %fk : f64
        memref.store %v, %ha[%i, %k] : memref<8x4xf64>
        %k2 = arith.addf %fk, %fk : f64
        %w = arith.subf %fi, %k2 : f64
        memref.store %w, %hb[%k, %i] : memref<4x8xf64>
      }
      scf.for %j = %c0 to %c8 step %c1 {
        %jj = arith.index_cast %j : index to i64
        %fj = arith.sitofp %jj : i64 to f64
        %hj = arith.mulf %fj, %half : f64
        %v = arith.addf %fi, %hj : f64
        memref.store %v, %hc[%i, %j] : memref<8x8xf64>
      }
    }
    %a = gpu.alloc () : memref<8x4xf64>
    %b = gpu.alloc () : memref<4x8xf64>
    %c = gpu.alloc () : memref<8x8xf64>
    gpu.memcpy %a, %ha : memref<8x4xf64>, memref<8x4xf64>
    gpu.memcpy %b, %hb : memref<4x8xf64>, memref<4x8xf64>
    gpu.memcpy %c, %hc : memref<8x8xf64>, memref<8x8xf64>
    gpu.launch_func @kernels::@wmma blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1)
        args(%a : memref<8x4xf64>, %b : memref<4x8xf64>, %c : memref<8x8xf64>)
    gpu.memcpy %hc, %c : memref<8x8xf64>, memref<8x8xf64>
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

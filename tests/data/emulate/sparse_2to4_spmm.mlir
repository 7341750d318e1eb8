// cuSPARSELt's 2:4 SpMM through the gpu dialect (async, f16): A 32x32 made 2:4 by gpu.create_2to4_spmat
// {PRUNE_AND_CHECK} (each group of 4 along a row keeps its 2 largest magnitudes; A is already 2:4 here, so
// pruning keeps it, whatever the tie rule), the three buffers gpu.spmm_buffer_size asks for, then
// C = A B + C (alpha = beta = 1). Printed: C's row sums and its first row, as f32.
//   A[i][k] = (3i + k) % 5 + 1 where k % 4 is i % 4 or (i + 2) % 4, else 0; B[k][j] = (k + 2j) % 3 - 1;
//   C = 1 (expected values from numpy)
// ARCHS: sm_80
// WRONG: B[k][j] = (k + j) % 3 - 1
// WRONG-FROM:       %bk = arith.addi %k, %j2 : index
// WRONG-TO:       %bk = arith.addi %k, %j : index
// CHECK: [32,  27,  32,  31,  32,  30,  32,  29,  32,  28,  32,  27,  32,  31,  32,  30,  32,  29,  32,  28,  32,  27,  32,  31,  32,  30,  32,  29,  32,  28,  32,  27]
// CHECK: [0,  2,  1,  0,  2,  1,  0,  2,  1,  0,  2,  1,  0,  2,  1,  0,  2,  1,  0,  2,  1,  0,  2,  1,  0,  2,  1,  0,  2,  1,  0,  2]
module {
  func.func private @printMemrefF32(memref<*xf32>)
  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    %c5 = arith.constant 5 : index
    %n = arith.constant 32 : index
    %zero = arith.constant 0.0 : f16
    %one = arith.constant 1.0 : f16
    %a = memref.alloc() : memref<32x32xf16>
    %b = memref.alloc() : memref<32x32xf16>
    %c = memref.alloc() : memref<32x32xf16>
    scf.for %i = %c0 to %n step %c1 {
      scf.for %k = %c0 to %n step %c1 {
        %i3 = arith.muli %i, %c3 : index
        %s = arith.addi %i3, %k : index
        %m = arith.remui %s, %c5 : index
        %v1 = arith.addi %m, %c1 : index
        %vi = arith.index_cast %v1 : index to i32
        %vf = arith.sitofp %vi : i32 to f16
        %kk = arith.remui %k, %c4 : index
        %ii = arith.remui %i, %c4 : index
        %i2 = arith.addi %i, %c2 : index
        %ii2 = arith.remui %i2, %c4 : index
        %p = arith.cmpi eq, %kk, %ii : index
        %q = arith.cmpi eq, %kk, %ii2 : index
        %keep = arith.ori %p, %q : i1
        %av = arith.select %keep, %vf, %zero : f16
        memref.store %av, %a[%i, %k] : memref<32x32xf16>
        %j = arith.addi %i, %c0 : index
        %j2 = arith.muli %j, %c2 : index
        %bk = arith.addi %k, %j2 : index
        %bm = arith.remui %bk, %c3 : index
        %bmi = arith.index_cast %bm : index to i32
        %bmf = arith.sitofp %bmi : i32 to f16
        %bv = arith.subf %bmf, %one : f16
        memref.store %bv, %b[%k, %j] : memref<32x32xf16>
        memref.store %one, %c[%i, %k] : memref<32x32xf16>
      }
    }
    %t0 = gpu.wait async
    %da, %t1 = gpu.alloc async [%t0] () : memref<32x32xf16>
    %db, %t2 = gpu.alloc async [%t1] () : memref<32x32xf16>
    %dc, %t3 = gpu.alloc async [%t2] () : memref<32x32xf16>
    %t4 = gpu.memcpy async [%t3] %da, %a : memref<32x32xf16>, memref<32x32xf16>
    %t5 = gpu.memcpy async [%t4] %db, %b : memref<32x32xf16>, memref<32x32xf16>
    %t6 = gpu.memcpy async [%t5] %dc, %c : memref<32x32xf16>, memref<32x32xf16>
    %sa, %t7 = gpu.create_2to4_spmat async [%t6] {PRUNE_AND_CHECK} %n, %n, %da : memref<32x32xf16>
    %mb, %t8 = gpu.create_dn_tensor async [%t7] %db, %n, %n : index, index into memref<32x32xf16>
    %mc, %t9 = gpu.create_dn_tensor async [%t8] %dc, %n, %n : index, index into memref<32x32xf16>
    %s1, %s2, %s3, %t10 = gpu.spmm_buffer_size async [%t9] %sa, %mb, %mc : index, index, index into f16
    %w1, %t11 = gpu.alloc async [%t10] (%s1) : memref<?xf16>
    %w2, %t12 = gpu.alloc async [%t11] (%s2) : memref<?xf16>
    %w3, %t13 = gpu.alloc async [%t12] (%s3) : memref<?xf16>
    %t14 = gpu.spmm async [%t13] %sa, %mb, %mc, %w1, %w2, %w3 : memref<?xf16>, memref<?xf16>, memref<?xf16> into f16
    %t15 = gpu.destroy_sp_mat async [%t14] %sa
    %t16 = gpu.destroy_dn_tensor async [%t15] %mb
    %t17 = gpu.destroy_dn_tensor async [%t16] %mc
    %t18 = gpu.memcpy async [%t17] %c, %dc : memref<32x32xf16>, memref<32x32xf16>
    gpu.wait [%t18]
    %sums = memref.alloc() : memref<32xf32>
    %row0 = memref.alloc() : memref<32xf32>
    %fz = arith.constant 0.0 : f32
    scf.for %i = %c0 to %n step %c1 {
      %total = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %fz) -> (f32) {
        %v = memref.load %c[%i, %j] : memref<32x32xf16>
        %w = arith.extf %v : f16 to f32
        %next = arith.addf %acc, %w : f32
        scf.yield %next : f32
      }
      memref.store %total, %sums[%i] : memref<32xf32>
      %v0 = memref.load %c[%c0, %i] : memref<32x32xf16>
      %w0 = arith.extf %v0 : f16 to f32
      memref.store %w0, %row0[%i] : memref<32xf32>
    }
    %us = memref.cast %sums : memref<32xf32> to memref<*xf32>
    call @printMemrefF32(%us) : (memref<*xf32>) -> ()
    %ur = memref.cast %row0 : memref<32xf32> to memref<*xf32>
    call @printMemrefF32(%ur) : (memref<*xf32>) -> ()
    return
  }
}

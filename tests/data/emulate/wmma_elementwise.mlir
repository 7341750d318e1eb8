// Element-wise ops on WMMA fragments that MLIR 22's NVVM lowering aborts on (`subf`, `negatef`), which
// mlir-offload rewrites on the fragments (x * -1, a + b * -1): convert-vector-to-gpu turns the vector
// program into gpu.subgroup_mma_*, then F = -((A * B + C) - C) = -(A * B), with A[i][k] = (3i + k) mod 7 - 3,
// B[k][j] = (kj + 1) mod 5 - 2, C[i][j] = (i + 2j) mod 3, all f16 and exact. Zeros of A * B print as -0.
// ARCHS: sm_80
// PASS-PIPELINE: builtin.module(convert-vector-to-gpu)
// WRONG: the negation dropped (F = D - C)
// WRONG-FROM:     %f = arith.negf %e : vector<16x16xf16>
// WRONG-TO:     %f = arith.addf %e, %e : vector<16x16xf16>
// CHECK: data =
// CHECK-NEXT: [-5, -9, -3, -2, 4, -5, -9, -3, -2, 4, -5, -9, -3, -2, 4, -5]
// CHECK-NEXT: [1, -6, 7, 15, -7, 1, -6, 7, 15, -7, 1, -6, 7, 15, -7, 1]
// CHECK-NEXT: [-0, 4, 3, -3, -4, -0, 4, 3, -3, -4, -0, 4, 3, -3, -4, -0]
// CHECK-NEXT: [-1, 7, -15, -7, 6, -1, 7, -15, -7, 6, -1, 7, -15, -7, 6, -1]
// CHECK-NEXT: [5, -4, 2, 3, 9, 5, -4, 2, 3, 9, 5, -4, 2, 3, 9, 5]
// CHECK-NEXT: [-3, 6, 5, -1, -2, -3, 6, 5, -1, -2, -3, 6, 5, -1, -2, -3]
// CHECK-NEXT: [3, 2, 1, -5, -6, 3, 2, 1, -5, -6, 3, 2, 1, -5, -6, 3]
// CHECK-NEXT: [-5, -9, -3, -2, 4, -5, -9, -3, -2, 4, -5, -9, -3, -2, 4, -5]
// CHECK-NEXT: [1, -6, 7, 15, -7, 1, -6, 7, 15, -7, 1, -6, 7, 15, -7, 1]
// CHECK-NEXT: [-0, 4, 3, -3, -4, -0, 4, 3, -3, -4, -0, 4, 3, -3, -4, -0]
// CHECK-NEXT: [-1, 7, -15, -7, 6, -1, 7, -15, -7, 6, -1, 7, -15, -7, 6, -1]
// CHECK-NEXT: [5, -4, 2, 3, 9, 5, -4, 2, 3, 9, 5, -4, 2, 3, 9, 5]
// CHECK-NEXT: [-3, 6, 5, -1, -2, -3, 6, 5, -1, -2, -3, 6, 5, -1, -2, -3]
// CHECK-NEXT: [3, 2, 1, -5, -6, 3, 2, 1, -5, -6, 3, 2, 1, -5, -6, 3]
// CHECK-NEXT: [-5, -9, -3, -2, 4, -5, -9, -3, -2, 4, -5, -9, -3, -2, 4, -5]
// CHECK-NEXT: [1, -6, 7, 15, -7, 1, -6, 7, 15, -7, 1, -6, 7, 15, -7, 1]
#lhs = affine_map<(m, n, k) -> (m, k)>
#rhs = affine_map<(m, n, k) -> (k, n)>
#acc = affine_map<(m, n, k) -> (m, n)>
module attributes {gpu.container_module} {
  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c5 = arith.constant 5 : index
    %c7 = arith.constant 7 : index
    %c16 = arith.constant 16 : index
    %c32 = arith.constant 32 : index
    %ha = memref.alloc() : memref<16x16xf16>
    %hb = memref.alloc() : memref<16x16xf16>
    %hc = memref.alloc() : memref<16x16xf16>
    %out = memref.alloc() : memref<16x16xf32>
    scf.for %i = %c0 to %c16 step %c1 {
      scf.for %j = %c0 to %c16 step %c1 {
        %i3 = arith.muli %i, %c3 : index
        %a0 = arith.addi %i3, %j : index
        %a1 = arith.remui %a0, %c7 : index
        %a2 = arith.subi %a1, %c3 : index
        %ij = arith.muli %i, %j : index
        %b0 = arith.addi %ij, %c1 : index
        %b1 = arith.remui %b0, %c5 : index
        %b2 = arith.subi %b1, %c2 : index
        %j2 = arith.muli %j, %c2 : index
        %k0 = arith.addi %i, %j2 : index
        %k1 = arith.remui %k0, %c3 : index
        %av = arith.index_cast %a2 : index to i32
        %bv = arith.index_cast %b2 : index to i32
        %cv = arith.index_cast %k1 : index to i32
        %af = arith.sitofp %av : i32 to f16
        %bf = arith.sitofp %bv : i32 to f16
        %cf = arith.sitofp %cv : i32 to f16
        memref.store %af, %ha[%i, %j] : memref<16x16xf16>
        memref.store %bf, %hb[%i, %j] : memref<16x16xf16>
        memref.store %cf, %hc[%i, %j] : memref<16x16xf16>
      }
    }
    %da = gpu.alloc () : memref<16x16xf16>
    %db = gpu.alloc () : memref<16x16xf16>
    %dc = gpu.alloc () : memref<16x16xf16>
    gpu.memcpy %da, %ha : memref<16x16xf16>, memref<16x16xf16>
    gpu.memcpy %db, %hb : memref<16x16xf16>, memref<16x16xf16>
    gpu.memcpy %dc, %hc : memref<16x16xf16>, memref<16x16xf16>
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%nx = %c32, %ny = %c1, %nz = %c1) {
      %zero = arith.constant 0.0 : f16
      %a = vector.transfer_read %da[%c0, %c0], %zero {in_bounds = [true, true]} : memref<16x16xf16>, vector<16x16xf16>
      %b = vector.transfer_read %db[%c0, %c0], %zero {in_bounds = [true, true]} : memref<16x16xf16>, vector<16x16xf16>
      %c = vector.transfer_read %dc[%c0, %c0], %zero {in_bounds = [true, true]} : memref<16x16xf16>, vector<16x16xf16>
      %d = vector.contract {indexing_maps = [#lhs, #rhs, #acc], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %a, %b, %c : vector<16x16xf16>, vector<16x16xf16> into vector<16x16xf16>
      %e = arith.subf %d, %c : vector<16x16xf16>
      %f = arith.negf %e : vector<16x16xf16>
      vector.transfer_write %f, %dc[%c0, %c0] {in_bounds = [true, true]} : vector<16x16xf16>, memref<16x16xf16>
      gpu.terminator
    }
    gpu.memcpy %hc, %dc : memref<16x16xf16>, memref<16x16xf16>
    scf.for %i = %c0 to %c16 step %c1 {
      scf.for %j = %c0 to %c16 step %c1 {
        %h = memref.load %hc[%i, %j] : memref<16x16xf16>
        %w = arith.extf %h : f16 to f32
        memref.store %w, %out[%i, %j] : memref<16x16xf32>
      }
    }
    %u = memref.cast %out : memref<16x16xf32> to memref<*xf32>
    call @printMemrefF32(%u) : (memref<*xf32>) -> ()
    return
  }
  func.func private @printMemrefF32(memref<*xf32>)
}

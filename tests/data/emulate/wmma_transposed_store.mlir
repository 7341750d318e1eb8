// A transposed vector.transfer_write of a WMMA fragment, which MLIR 22's convert-vector-to-gpu leaves as
// vector ops: mlir-offload has the pass convert it untransposed and makes the resulting
// gpu.subgroup_mma_store_matrix column-major (`transpose`). T = A * A + A with A[i][j] = (7i + 3j) mod 11 - 5
// (f16, exact) is stored transposed into columns 8..23 of a 16x24 buffer (leadDimension 24) filled with 0.5:
// out[c][8 + r] = T[r][c]; columns 0..7 keep 0.5.
// ARCHS: sm_80
// PASS-PIPELINE: builtin.module(convert-vector-to-gpu)
// WRONG: the store without its transposition
// WRONG-FROM:       vector.transfer_write %t, %dout[%c0, %c8] {in_bounds = [true, true], permutation_map = #transposed} : vector<16x16xf16>, memref<16x24xf16>
// WRONG-TO:       vector.transfer_write %t, %dout[%c0, %c8] {in_bounds = [true, true]} : vector<16x16xf16>, memref<16x24xf16>
// CHECK: data =
// CHECK-NEXT: [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 20, 6, 2, 30, 2, 6, 20, 0, 12, 12, 0, 20, 6, 2, 30, 2]
// CHECK-NEXT: [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 2, 30, 2, 6, 20, 0, 12, 12, 0, 20, 6, 2, 30, 2, 6, 20]
// CHECK-NEXT: [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 2, 6, 20, 0, 12, 12, 0, 20, 6, 2, 30, 2, 6, 20, 0, 12]
// CHECK-NEXT: [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 20, 0, 12, 12, 0, 20, 6, 2, 30, 2, 6, 20, 0, 12, 12, 0]
// CHECK-NEXT: [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 12, 12, 0, 20, 6, 2, 30, 2, 6, 20, 0, 12, 12, 0, 20, 6]
// CHECK-NEXT: [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0, 20, 6, 2, 30, 2, 6, 20, 0, 12, 12, 0, 20, 6, 2, 30]
// CHECK-NEXT: [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 6, 2, 30, 2, 6, 20, 0, 12, 12, 0, 20, 6, 2, 30, 2, 6]
// CHECK-NEXT: [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 30, 2, 6, 20, 0, 12, 12, 0, 20, 6, 2, 30, 2, 6, 20, 0]
// CHECK-NEXT: [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 6, 20, 0, 12, 12, 0, 20, 6, 2, 30, 2, 6, 20, 0, 12, 12]
// CHECK-NEXT: [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0, 12, 12, 0, 20, 6, 2, 30, 2, 6, 20, 0, 12, 12, 0, 20]
// CHECK-NEXT: [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 12, 0, 20, 6, 2, 30, 2, 6, 20, 0, 12, 12, 0, 20, 6, 2]
// CHECK-NEXT: [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 20, 6, 2, 30, 2, 6, 20, 0, 12, 12, 0, 20, 6, 2, 30, 2]
// CHECK-NEXT: [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 2, 30, 2, 6, 20, 0, 12, 12, 0, 20, 6, 2, 30, 2, 6, 20]
// CHECK-NEXT: [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 2, 6, 20, 0, 12, 12, 0, 20, 6, 2, 30, 2, 6, 20, 0, 12]
// CHECK-NEXT: [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 20, 0, 12, 12, 0, 20, 6, 2, 30, 2, 6, 20, 0, 12, 12, 0]
// CHECK-NEXT: [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 12, 12, 0, 20, 6, 2, 30, 2, 6, 20, 0, 12, 12, 0, 20, 6]
#transposed = affine_map<(d0, d1) -> (d1, d0)>
module attributes {gpu.container_module} {
  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %c5 = arith.constant 5 : index
    %c7 = arith.constant 7 : index
    %c8 = arith.constant 8 : index
    %c11 = arith.constant 11 : index
    %c16 = arith.constant 16 : index
    %c24 = arith.constant 24 : index
    %c32 = arith.constant 32 : index
    %half = arith.constant 0.5 : f16
    %ha = memref.alloc() : memref<16x16xf16>
    %hout = memref.alloc() : memref<16x24xf16>
    %out = memref.alloc() : memref<16x24xf32>
    scf.for %i = %c0 to %c16 step %c1 {
      scf.for %j = %c0 to %c16 step %c1 {
        %i7 = arith.muli %i, %c7 : index
        %j3 = arith.muli %j, %c3 : index
        %a0 = arith.addi %i7, %j3 : index
        %a1 = arith.remui %a0, %c11 : index
        %a2 = arith.subi %a1, %c5 : index
        %av = arith.index_cast %a2 : index to i32
        %af = arith.sitofp %av : i32 to f16
        memref.store %af, %ha[%i, %j] : memref<16x16xf16>
      }
      scf.for %j = %c0 to %c24 step %c1 {
        memref.store %half, %hout[%i, %j] : memref<16x24xf16>
      }
    }
    %da = gpu.alloc () : memref<16x16xf16>
    %dout = gpu.alloc () : memref<16x24xf16>
    gpu.memcpy %da, %ha : memref<16x16xf16>, memref<16x16xf16>
    gpu.memcpy %dout, %hout : memref<16x24xf16>, memref<16x24xf16>
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%nx = %c32, %ny = %c1, %nz = %c1) {
      %zero = arith.constant 0.0 : f16
      %a = vector.transfer_read %da[%c0, %c0], %zero {in_bounds = [true, true]} : memref<16x16xf16>, vector<16x16xf16>
      %s = arith.mulf %a, %a : vector<16x16xf16>
      %t = arith.addf %s, %a : vector<16x16xf16>
      vector.transfer_write %t, %dout[%c0, %c8] {in_bounds = [true, true], permutation_map = #transposed} : vector<16x16xf16>, memref<16x24xf16>
      gpu.terminator
    }
    gpu.memcpy %hout, %dout : memref<16x24xf16>, memref<16x24xf16>
    scf.for %i = %c0 to %c16 step %c1 {
      scf.for %j = %c0 to %c24 step %c1 {
        %h = memref.load %hout[%i, %j] : memref<16x24xf16>
        %w = arith.extf %h : f16 to f32
        memref.store %w, %out[%i, %j] : memref<16x24xf32>
      }
    }
    %u = memref.cast %out : memref<16x24xf32> to memref<*xf32>
    call @printMemrefF32(%u) : (memref<*xf32>) -> ()
    return
  }
  func.func private @printMemrefF32(memref<*xf32>)
}

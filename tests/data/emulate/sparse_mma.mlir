// 2:4 structured-sparse tensor-core MMA (nvgpu.mma.sp.sync m16n8k32, f16 x f16 + f32): one warp computes
// D = A * B + C with A 16x32 stored compressed (16x16: two kept values of each group of four) and its
// metadata (2-bit positions, 16 bits per row and half of k), each lane assembling its fragments from the PTX
// ISA's layouts; with sparsity selector 0 only lanes 4g and 4g+1 hold metadata, the other lanes pass 0xffff
// (all positions 3), which the instruction must ignore. Every group keeps a different pair of positions
// ((r + 5g) mod 6 of the six pairs); values are small integers, so the f32 result is exact. The CHECK lines
// were computed in Python from the uncompressed A.
// ARCHS: sm_80
// WRONG: sparsity selector 1, which takes the metadata from lanes 4g+2 and 4g+3
// WRONG-FROM:     %d = nvgpu.mma.sp.sync (%a, %b, %c) metadata (%m) {mmaShape = [16, 8, 32]} : (vector<4x2xf16>, vector<4x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
// WRONG-TO:     %d = nvgpu.mma.sp.sync (%a, %b, %c) metadata (%m) {mmaShape = [16, 8, 32], sparsitySelector = 1 : i32} : (vector<4x2xf16>, vector<4x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
// CHECK: data =
// CHECK-NEXT: [-16, 20, 14, -13, -9, 20, -7, -13]
// CHECK-NEXT: [-23, -5, 13, 6, -18, 0, 39, -24]
// CHECK-NEXT: [2, 15, -4, -12, 22, 21, -33, 1]
// CHECK-NEXT: [39, 9, -38, 6, 8, -1, -13, 38]
// CHECK-NEXT: [-23, -7, 23, 4, 2, -10, 20, -20]
// CHECK-NEXT: [5, 26, -9, -6, -6, 15, -13, 4]
// CHECK-NEXT: [-32, -11, 27, 27, -22, 13, 9, -33]
// CHECK-NEXT: [3, 2, -16, 8, 32, 10, -29, 2]
// CHECK-NEXT: [-6, -29, 25, 23, -4, -20, 20, -3]
// CHECK-NEXT: [-32, 11, 12, -26, 3, 25, 19, -33]
// CHECK-NEXT: [-12, -8, 6, 17, -14, 4, 18, -13]
// CHECK-NEXT: [-14, 30, 22, -28, -1, 22, -21, -15]
// CHECK-NEXT: [11, -1, 8, 17, 15, -25, -16, 14]
// CHECK-NEXT: [7, -5, 4, -12, -3, 6, 15, 6]
// CHECK-NEXT: [-28, 21, -4, -18, 10, 24, 6, -29]
// CHECK-NEXT: [0, -18, 31, -18, -25, 20, 20, -1]
module attributes {gpu.container_module} {
  memref.global "private" constant @packed : memref<16x16xf16> = dense<[[-4.0, 1.0, -1.0, 4.0, 2.0, -2.0, -4.0, 1.0, -1.0, 4.0, 2.0, -2.0, -4.0, 1.0, -1.0, 4.0], [3.0, -1.0, -3.0, 2.0, 0.0, -4.0, 3.0, -1.0, -3.0, 2.0, 0.0, -4.0, 3.0, -1.0, -3.0, 2.0], [1.0, -3.0, 4.0, 0.0, -2.0, 3.0, 1.0, -3.0, 4.0, 0.0, -2.0, 3.0, 1.0, -3.0, 4.0, 0.0], [-1.0, 4.0, 2.0, -2.0, -4.0, 1.0, -1.0, 4.0, 2.0, -2.0, -4.0, 1.0, -1.0, 4.0, 2.0, -2.0], [-3.0, 2.0, 0.0, -4.0, 3.0, -1.0, -3.0, 2.0, 0.0, -4.0, 3.0, -1.0, -3.0, 2.0, 0.0, -4.0], [4.0, 0.0, -2.0, 3.0, 1.0, -3.0, 4.0, 0.0, -2.0, 3.0, 1.0, -3.0, 4.0, 0.0, -2.0, 3.0], [2.0, -2.0, -4.0, 1.0, -1.0, 4.0, 2.0, -2.0, -4.0, 1.0, -1.0, 4.0, 2.0, -2.0, -4.0, 1.0], [0.0, -4.0, 3.0, -1.0, -3.0, 2.0, 0.0, -4.0, 3.0, -1.0, -3.0, 2.0, 0.0, -4.0, 3.0, -1.0], [-2.0, 3.0, 1.0, -3.0, 4.0, 0.0, -2.0, 3.0, 1.0, -3.0, 4.0, 0.0, -2.0, 3.0, 1.0, -3.0], [-4.0, 1.0, -1.0, 4.0, 2.0, -2.0, -4.0, 1.0, -1.0, 4.0, 2.0, -2.0, -4.0, 1.0, -1.0, 4.0], [3.0, -1.0, -3.0, 2.0, 0.0, -4.0, 3.0, -1.0, -3.0, 2.0, 0.0, -4.0, 3.0, -1.0, -3.0, 2.0], [1.0, -3.0, 4.0, 0.0, -2.0, 3.0, 1.0, -3.0, 4.0, 0.0, -2.0, 3.0, 1.0, -3.0, 4.0, 0.0], [-1.0, 4.0, 2.0, -2.0, -4.0, 1.0, -1.0, 4.0, 2.0, -2.0, -4.0, 1.0, -1.0, 4.0, 2.0, -2.0], [-3.0, 2.0, 0.0, -4.0, 3.0, -1.0, -3.0, 2.0, 0.0, -4.0, 3.0, -1.0, -3.0, 2.0, 0.0, -4.0], [4.0, 0.0, -2.0, 3.0, 1.0, -3.0, 4.0, 0.0, -2.0, 3.0, 1.0, -3.0, 4.0, 0.0, -2.0, 3.0], [2.0, -2.0, -4.0, 1.0, -1.0, 4.0, 2.0, -2.0, -4.0, 1.0, -1.0, 4.0, 2.0, -2.0, -4.0, 1.0]]>
  memref.global "private" constant @meta : memref<16x2xi16> = dense<[[-25116, -7028], [-8632, 18633], [-7028, -29539], [18633, -13858], [-29539, -25116], [-13858, -8632], [-25116, -7028], [-8632, 18633], [-7028, -29539], [18633, -13858], [-29539, -25116], [-13858, -8632], [-25116, -7028], [-8632, 18633], [-7028, -29539], [18633, -13858]]>
  memref.global "private" constant @bmat : memref<32x8xf16> = dense<[[-3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0], [0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0], [3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0], [-1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0], [2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0], [-2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0], [1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0], [-3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0], [0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0], [3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0], [-1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0], [2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0], [-2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0], [1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0], [-3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0], [0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0], [3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0], [-1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0], [2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0], [-2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0], [1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0], [-3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0], [0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0], [3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0], [-1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0], [2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0], [-2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0], [1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0], [-3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0, -3.0], [0.0, -2.0, 3.0, 1.0, -1.0, -3.0, 2.0, 0.0], [3.0, 1.0, -1.0, -3.0, 2.0, 0.0, -2.0, 3.0], [-1.0, -3.0, 2.0, 0.0, -2.0, 3.0, 1.0, -1.0]]>
  memref.global "private" constant @cmat : memref<16x8xf32> = dense<[[0.0, 1.0, 2.0, 3.0, 0.0, 1.0, 2.0, 3.0], [1.0, 2.0, 3.0, 0.0, 1.0, 2.0, 3.0, 0.0], [2.0, 3.0, 0.0, 1.0, 2.0, 3.0, 0.0, 1.0], [3.0, 0.0, 1.0, 2.0, 3.0, 0.0, 1.0, 2.0], [0.0, 1.0, 2.0, 3.0, 0.0, 1.0, 2.0, 3.0], [1.0, 2.0, 3.0, 0.0, 1.0, 2.0, 3.0, 0.0], [2.0, 3.0, 0.0, 1.0, 2.0, 3.0, 0.0, 1.0], [3.0, 0.0, 1.0, 2.0, 3.0, 0.0, 1.0, 2.0], [0.0, 1.0, 2.0, 3.0, 0.0, 1.0, 2.0, 3.0], [1.0, 2.0, 3.0, 0.0, 1.0, 2.0, 3.0, 0.0], [2.0, 3.0, 0.0, 1.0, 2.0, 3.0, 0.0, 1.0], [3.0, 0.0, 1.0, 2.0, 3.0, 0.0, 1.0, 2.0], [0.0, 1.0, 2.0, 3.0, 0.0, 1.0, 2.0, 3.0], [1.0, 2.0, 3.0, 0.0, 1.0, 2.0, 3.0, 0.0], [2.0, 3.0, 0.0, 1.0, 2.0, 3.0, 0.0, 1.0], [3.0, 0.0, 1.0, 2.0, 3.0, 0.0, 1.0, 2.0]]>
  gpu.module @k {
    gpu.func @sparse_mma(%pa: memref<16x16xf16>, %pm: memref<16x2xi16>, %pb: memref<32x8xf16>, %pc: memref<16x8xf32>, %pd: memref<16x8xf32>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c4 = arith.constant 4 : index
      %c8 = arith.constant 8 : index
      %c16 = arith.constant 16 : index
      %c24 = arith.constant 24 : index
      %lane = gpu.thread_id x
      %g = arith.divui %lane, %c4 : index
      %t = arith.remui %lane, %c4 : index
      %t2 = arith.muli %t, %c2 : index
      %t21 = arith.addi %t2, %c1 : index
      %g8 = arith.addi %g, %c8 : index
      %t28 = arith.addi %t2, %c8 : index
      %t218 = arith.addi %t21, %c8 : index
      %a00 = memref.load %pa[%g, %t2] : memref<16x16xf16>
      %a01 = memref.load %pa[%g, %t21] : memref<16x16xf16>
      %a10 = memref.load %pa[%g8, %t2] : memref<16x16xf16>
      %a11 = memref.load %pa[%g8, %t21] : memref<16x16xf16>
      %a20 = memref.load %pa[%g, %t28] : memref<16x16xf16>
      %a21 = memref.load %pa[%g, %t218] : memref<16x16xf16>
      %a30 = memref.load %pa[%g8, %t28] : memref<16x16xf16>
      %a31 = memref.load %pa[%g8, %t218] : memref<16x16xf16>
      %a = vector.from_elements %a00, %a01, %a10, %a11, %a20, %a21, %a30, %a31 : vector<4x2xf16>
      %bk01 = arith.addi %t2, %c1 : index
      %b00 = memref.load %pb[%t2, %g] : memref<32x8xf16>
      %b01 = memref.load %pb[%bk01, %g] : memref<32x8xf16>
      %bk1 = arith.addi %t2, %c8 : index
      %bk11 = arith.addi %bk1, %c1 : index
      %b10 = memref.load %pb[%bk1, %g] : memref<32x8xf16>
      %b11 = memref.load %pb[%bk11, %g] : memref<32x8xf16>
      %bk2 = arith.addi %t2, %c16 : index
      %bk21 = arith.addi %bk2, %c1 : index
      %b20 = memref.load %pb[%bk2, %g] : memref<32x8xf16>
      %b21 = memref.load %pb[%bk21, %g] : memref<32x8xf16>
      %bk3 = arith.addi %t2, %c24 : index
      %bk31 = arith.addi %bk3, %c1 : index
      %b30 = memref.load %pb[%bk3, %g] : memref<32x8xf16>
      %b31 = memref.load %pb[%bk31, %g] : memref<32x8xf16>
      %b = vector.from_elements %b00, %b01, %b10, %b11, %b20, %b21, %b30, %b31 : vector<4x2xf16>
      %c00v = memref.load %pc[%g, %t2] : memref<16x8xf32>
      %c01v = memref.load %pc[%g, %t21] : memref<16x8xf32>
      %c10v = memref.load %pc[%g8, %t2] : memref<16x8xf32>
      %c11v = memref.load %pc[%g8, %t21] : memref<16x8xf32>
      %c = vector.from_elements %c00v, %c01v, %c10v, %c11v : vector<2x2xf32>
      %half = arith.minui %t, %c1 : index
      %m0 = memref.load %pm[%g, %half] : memref<16x2xi16>
      %m1 = memref.load %pm[%g8, %half] : memref<16x2xi16>
      %junk = arith.constant -1 : i16
      %holder = arith.cmpi ult, %t, %c2 : index
      %mm0 = arith.select %holder, %m0, %junk : i16
      %mm1 = arith.select %holder, %m1, %junk : i16
      %m = vector.from_elements %mm0, %mm1 : vector<2xi16>
      %d = nvgpu.mma.sp.sync (%a, %b, %c) metadata (%m) {mmaShape = [16, 8, 32]} : (vector<4x2xf16>, vector<4x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
      %d00 = vector.extract %d[0, 0] : f32 from vector<2x2xf32>
      memref.store %d00, %pd[%g, %t2] : memref<16x8xf32>
      %d01 = vector.extract %d[0, 1] : f32 from vector<2x2xf32>
      memref.store %d01, %pd[%g, %t21] : memref<16x8xf32>
      %d10 = vector.extract %d[1, 0] : f32 from vector<2x2xf32>
      memref.store %d10, %pd[%g8, %t2] : memref<16x8xf32>
      %d11 = vector.extract %d[1, 1] : f32 from vector<2x2xf32>
      memref.store %d11, %pd[%g8, %t21] : memref<16x8xf32>
      gpu.return
    }
  }
  func.func @main() {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %h_packed = memref.get_global @packed : memref<16x16xf16>
    %d_packed = gpu.alloc () : memref<16x16xf16>
    gpu.memcpy %d_packed, %h_packed : memref<16x16xf16>, memref<16x16xf16>
    %h_meta = memref.get_global @meta : memref<16x2xi16>
    %d_meta = gpu.alloc () : memref<16x2xi16>
    gpu.memcpy %d_meta, %h_meta : memref<16x2xi16>, memref<16x2xi16>
    %h_bmat = memref.get_global @bmat : memref<32x8xf16>
    %d_bmat = gpu.alloc () : memref<32x8xf16>
    gpu.memcpy %d_bmat, %h_bmat : memref<32x8xf16>, memref<32x8xf16>
    %h_cmat = memref.get_global @cmat : memref<16x8xf32>
    %d_cmat = gpu.alloc () : memref<16x8xf32>
    gpu.memcpy %d_cmat, %h_cmat : memref<16x8xf32>, memref<16x8xf32>
    %d_out = gpu.alloc () : memref<16x8xf32>
    gpu.launch_func @k::@sparse_mma blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1) args(%d_packed : memref<16x16xf16>, %d_meta : memref<16x2xi16>, %d_bmat : memref<32x8xf16>, %d_cmat : memref<16x8xf32>, %d_out : memref<16x8xf32>)
    %out = memref.alloc() : memref<16x8xf32>
    gpu.memcpy %out, %d_out : memref<16x8xf32>, memref<16x8xf32>
    %u = memref.cast %out : memref<16x8xf32> to memref<*xf32>
    call @printMemrefF32(%u) : (memref<*xf32>) -> ()
    return
  }
  func.func private @printMemrefF32(memref<*xf32>)
}

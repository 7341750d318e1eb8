// cuSPARSE's SpMM on a BSR matrix (2x2 blocks stored row-major, f32, i32 positions and coordinates,
// synchronous ops): C = A B + C with A 4x4 of three nonzero blocks, B 4x2 and C 4x2 row-major.
//   A = [[1 2 0 1] [3 4 1 0] [0 0 5 6] [0 0 7 8]], B = [[1 2] [3 4] [5 6] [7 8]], C = 0.5
//   A B + C = [[14.5 18.5] [20.5 28.5] [67.5 78.5] [91.5 106.5]]
// ARCHS: sm_80
// WRONG: the second block row's block sits in block column 0 instead of 1
// WRONG-FROM:   memref.global "private" constant @crd : memref<3xi32> = dense<[0, 1, 1]>
// WRONG-TO:   memref.global "private" constant @crd : memref<3xi32> = dense<[0, 1, 0]>
// CHECK: [14.5,   18.5],
// CHECK-NEXT: [20.5,   28.5],
// CHECK-NEXT: [67.5,   78.5],
// CHECK-NEXT: [91.5,   106.5]
module {
  memref.global "private" constant @pos : memref<3xi32> = dense<[0, 2, 3]>
  memref.global "private" constant @crd : memref<3xi32> = dense<[0, 1, 1]>
  memref.global "private" constant @val : memref<12xf32> = dense<[1.0, 2.0, 3.0, 4.0, 0.0, 1.0, 1.0, 0.0, 5.0, 6.0, 7.0, 8.0]>
  memref.global "private" constant @b : memref<4x2xf32> = dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]>
  memref.global "private" constant @c : memref<4x2xf32> = dense<0.5>
  func.func private @printMemrefF32(memref<*xf32>)
  func.func @main() {
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    %pos = memref.get_global @pos : memref<3xi32>
    %crd = memref.get_global @crd : memref<3xi32>
    %val = memref.get_global @val : memref<12xf32>
    %b = memref.get_global @b : memref<4x2xf32>
    %c = memref.get_global @c : memref<4x2xf32>
    %dpos = gpu.alloc () : memref<3xi32>
    %dcrd = gpu.alloc () : memref<3xi32>
    %dval = gpu.alloc () : memref<12xf32>
    %db = gpu.alloc () : memref<4x2xf32>
    %dc = gpu.alloc () : memref<4x2xf32>
    gpu.memcpy %dpos, %pos : memref<3xi32>, memref<3xi32>
    gpu.memcpy %dcrd, %crd : memref<3xi32>, memref<3xi32>
    gpu.memcpy %dval, %val : memref<12xf32>, memref<12xf32>
    gpu.memcpy %db, %b : memref<4x2xf32>, memref<4x2xf32>
    gpu.memcpy %dc, %c : memref<4x2xf32>, memref<4x2xf32>
    %a = gpu.create_bsr %c2, %c2, %c3, %c2, %c2, %dpos, %dcrd, %dval : memref<3xi32>, memref<3xi32>, memref<12xf32>
    %mb = gpu.create_dn_tensor %db, %c4, %c2 : index, index into memref<4x2xf32>
    %mc = gpu.create_dn_tensor %dc, %c4, %c2 : index, index into memref<4x2xf32>
    %bytes = gpu.spmm_buffer_size %a, %mb, %mc : index into f32
    %buffer = gpu.alloc (%bytes) : memref<?xi8>
    gpu.spmm %a, %mb, %mc, %buffer : memref<?xi8> into f32
    gpu.destroy_sp_mat %a
    gpu.destroy_dn_tensor %mb
    gpu.destroy_dn_tensor %mc
    %hc = memref.alloc() : memref<4x2xf32>
    gpu.memcpy %hc, %dc : memref<4x2xf32>, memref<4x2xf32>
    %uc = memref.cast %hc : memref<4x2xf32> to memref<*xf32>
    call @printMemrefF32(%uc) : (memref<*xf32>) -> ()
    return
  }
}

// cuSPARSE's SpMM through the gpu dialect, synchronous ops: C = op(A) B + C with A a 3x4 COO matrix of f64
// values and index (64-bit) coordinates, taken transposed (modeA = TRANSPOSE), B 3x2 and C 4x2 row-major;
// gpu.spmat_get_size reads A's size back. Also SpMV on the same matrix, not transposed.
//   A = [[0 2 0 0] [-1 0 0 4] [0 0 3.5 1]], B = [[1 2] [3 4] [5 6]], C = ones(4, 2)
//   A^T B + C = [[-2 -3] [3 5] [18.5 22] [18 23]]; A [1 1 1 1] + [0.5 0.5 0.5] = [2.5 3.5 5]
// ARCHS: sm_80
// WRONG: A's last value is 2 instead of 1
// WRONG-FROM:   memref.global "private" constant @val : memref<5xf64> = dense<[2.0, -1.0, 4.0, 3.5, 1.0]>
// WRONG-TO:   memref.global "private" constant @val : memref<5xf64> = dense<[2.0, -1.0, 4.0, 3.5, 2.0]>
// CHECK: [3,  4,  5]
// CHECK: [-2,   -3],
// CHECK-NEXT: [3,   5],
// CHECK-NEXT: [18.5,   22],
// CHECK-NEXT: [18,   23]
// CHECK: [2.5,  3.5,  5]
module {
  memref.global "private" constant @rows : memref<5xindex> = dense<[0, 1, 1, 2, 2]>
  memref.global "private" constant @cols : memref<5xindex> = dense<[1, 0, 3, 2, 3]>
  memref.global "private" constant @val : memref<5xf64> = dense<[2.0, -1.0, 4.0, 3.5, 1.0]>
  memref.global "private" constant @b : memref<3x2xf64> = dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]>
  memref.global "private" constant @c : memref<4x2xf64> = dense<1.0>
  memref.global "private" constant @x : memref<4xf64> = dense<1.0>
  memref.global "private" constant @y : memref<3xf64> = dense<0.5>
  func.func private @printMemrefF64(memref<*xf64>)
  func.func private @printMemrefI64(memref<*xi64>)
  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    %c5 = arith.constant 5 : index
    %rows = memref.get_global @rows : memref<5xindex>
    %cols = memref.get_global @cols : memref<5xindex>
    %val = memref.get_global @val : memref<5xf64>
    %b = memref.get_global @b : memref<3x2xf64>
    %c = memref.get_global @c : memref<4x2xf64>
    %x = memref.get_global @x : memref<4xf64>
    %y = memref.get_global @y : memref<3xf64>
    %drows = gpu.alloc () : memref<5xindex>
    %dcols = gpu.alloc () : memref<5xindex>
    %dval = gpu.alloc () : memref<5xf64>
    %db = gpu.alloc () : memref<3x2xf64>
    %dc = gpu.alloc () : memref<4x2xf64>
    %dx = gpu.alloc () : memref<4xf64>
    %dy = gpu.alloc () : memref<3xf64>
    gpu.memcpy %drows, %rows : memref<5xindex>, memref<5xindex>
    gpu.memcpy %dcols, %cols : memref<5xindex>, memref<5xindex>
    gpu.memcpy %dval, %val : memref<5xf64>, memref<5xf64>
    gpu.memcpy %db, %b : memref<3x2xf64>, memref<3x2xf64>
    gpu.memcpy %dc, %c : memref<4x2xf64>, memref<4x2xf64>
    gpu.memcpy %dx, %x : memref<4xf64>, memref<4xf64>
    gpu.memcpy %dy, %y : memref<3xf64>, memref<3xf64>
    %a = gpu.create_coo %c3, %c4, %c5, %drows, %dcols, %dval : memref<5xindex>, memref<5xindex>, memref<5xf64>
    %r, %n, %nnz = gpu.spmat_get_size %a
    %size = memref.alloc() : memref<3xi64>
    %r64 = arith.index_cast %r : index to i64
    %n64 = arith.index_cast %n : index to i64
    %nnz64 = arith.index_cast %nnz : index to i64
    memref.store %r64, %size[%c0] : memref<3xi64>
    memref.store %n64, %size[%c1] : memref<3xi64>
    memref.store %nnz64, %size[%c2] : memref<3xi64>
    %us = memref.cast %size : memref<3xi64> to memref<*xi64>
    call @printMemrefI64(%us) : (memref<*xi64>) -> ()
    %mb = gpu.create_dn_tensor %db, %c3, %c2 : index, index into memref<3x2xf64>
    %mc = gpu.create_dn_tensor %dc, %c4, %c2 : index, index into memref<4x2xf64>
    %bytes = gpu.spmm_buffer_size %a, %mb, %mc {modeA = #gpu<mat_transpose_mode TRANSPOSE>} : index into f64
    %buffer = gpu.alloc (%bytes) : memref<?xi8>
    gpu.spmm %a, %mb, %mc, %buffer {modeA = #gpu<mat_transpose_mode TRANSPOSE>} : memref<?xi8> into f64
    %vx = gpu.create_dn_tensor %dx, %c4 : index into memref<4xf64>
    %vy = gpu.create_dn_tensor %dy, %c3 : index into memref<3xf64>
    %bytes2 = gpu.spmv_buffer_size %a, %vx, %vy into f64
    %buffer2 = gpu.alloc (%bytes2) : memref<?xi8>
    gpu.spmv %a, %vx, %vy, %buffer2 : memref<?xi8> into f64
    gpu.destroy_dn_tensor %vx
    gpu.destroy_dn_tensor %vy
    gpu.destroy_dn_tensor %mb
    gpu.destroy_dn_tensor %mc
    gpu.destroy_sp_mat %a
    %hc = memref.alloc() : memref<4x2xf64>
    %hy = memref.alloc() : memref<3xf64>
    gpu.memcpy %hc, %dc : memref<4x2xf64>, memref<4x2xf64>
    gpu.memcpy %hy, %dy : memref<3xf64>, memref<3xf64>
    %uc = memref.cast %hc : memref<4x2xf64> to memref<*xf64>
    call @printMemrefF64(%uc) : (memref<*xf64>) -> ()
    %uy = memref.cast %hy : memref<3xf64> to memref<*xf64>
    call @printMemrefF64(%uy) : (memref<*xf64>) -> ()
    return
  }
}

// cuSPARSE's SpMV on a CSC matrix (f64, i32 positions and coordinates; synchronous ops), then SDDMM (async,
// f32): C = (A B) at C's nonzeros + C, with C a 2x3 CSR matrix (its pattern (0,0) (0,2) (1,1), ones).
//   CSC A = [[1 0 2] [0 3 0] [4 0 5]], x = [1 2 3], y = [1 1 1]  ->  y = [8 7 20]
//   dense A2 = [[1 2] [3 4]], B2 = [[1 0 2] [0 1 3]]: A2 B2 = [[1 2 8] [3 4 18]]  ->  C values [2 9 5]
// ARCHS: sm_80
// WRONG: the CSC matrix's column positions put its third entry in column 3 instead of 2
// WRONG-FROM:   memref.global "private" constant @colpos : memref<4xi32> = dense<[0, 2, 3, 5]>
// WRONG-TO:   memref.global "private" constant @colpos : memref<4xi32> = dense<[0, 2, 2, 5]>
// CHECK: [8,  7,  20]
// CHECK: [2,  9,  5]
module {
  memref.global "private" constant @colpos : memref<4xi32> = dense<[0, 2, 3, 5]>
  memref.global "private" constant @rowidx : memref<5xi32> = dense<[0, 2, 1, 0, 2]>
  memref.global "private" constant @val : memref<5xf64> = dense<[1.0, 4.0, 3.0, 2.0, 5.0]>
  memref.global "private" constant @x : memref<3xf64> = dense<[1.0, 2.0, 3.0]>
  memref.global "private" constant @y : memref<3xf64> = dense<1.0>
  memref.global "private" constant @cpos : memref<3xi32> = dense<[0, 2, 3]>
  memref.global "private" constant @ccrd : memref<3xi32> = dense<[0, 2, 1]>
  memref.global "private" constant @cval : memref<3xf32> = dense<1.0>
  memref.global "private" constant @a2 : memref<2x2xf32> = dense<[[1.0, 2.0], [3.0, 4.0]]>
  memref.global "private" constant @b2 : memref<2x3xf32> = dense<[[1.0, 0.0, 2.0], [0.0, 1.0, 3.0]]>
  func.func private @printMemrefF64(memref<*xf64>)
  func.func private @printMemrefF32(memref<*xf32>)
  func.func @main() {
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c5 = arith.constant 5 : index
    %colpos = memref.get_global @colpos : memref<4xi32>
    %rowidx = memref.get_global @rowidx : memref<5xi32>
    %val = memref.get_global @val : memref<5xf64>
    %x = memref.get_global @x : memref<3xf64>
    %y = memref.get_global @y : memref<3xf64>
    %dpos = gpu.alloc () : memref<4xi32>
    %didx = gpu.alloc () : memref<5xi32>
    %dval = gpu.alloc () : memref<5xf64>
    %dx = gpu.alloc () : memref<3xf64>
    %dy = gpu.alloc () : memref<3xf64>
    gpu.memcpy %dpos, %colpos : memref<4xi32>, memref<4xi32>
    gpu.memcpy %didx, %rowidx : memref<5xi32>, memref<5xi32>
    gpu.memcpy %dval, %val : memref<5xf64>, memref<5xf64>
    gpu.memcpy %dx, %x : memref<3xf64>, memref<3xf64>
    gpu.memcpy %dy, %y : memref<3xf64>, memref<3xf64>
    %a = gpu.create_csc %c3, %c3, %c5, %dpos, %didx, %dval : memref<4xi32>, memref<5xi32>, memref<5xf64>
    %vx = gpu.create_dn_tensor %dx, %c3 : index into memref<3xf64>
    %vy = gpu.create_dn_tensor %dy, %c3 : index into memref<3xf64>
    %bytes = gpu.spmv_buffer_size %a, %vx, %vy into f64
    %buffer = gpu.alloc (%bytes) : memref<?xi8>
    gpu.spmv %a, %vx, %vy, %buffer : memref<?xi8> into f64
    gpu.destroy_sp_mat %a
    gpu.destroy_dn_tensor %vx
    gpu.destroy_dn_tensor %vy
    %hy = memref.alloc() : memref<3xf64>
    gpu.memcpy %hy, %dy : memref<3xf64>, memref<3xf64>
    %uy = memref.cast %hy : memref<3xf64> to memref<*xf64>
    call @printMemrefF64(%uy) : (memref<*xf64>) -> ()

    %cpos = memref.get_global @cpos : memref<3xi32>
    %ccrd = memref.get_global @ccrd : memref<3xi32>
    %cval = memref.get_global @cval : memref<3xf32>
    %a2 = memref.get_global @a2 : memref<2x2xf32>
    %b2 = memref.get_global @b2 : memref<2x3xf32>
    %t0 = gpu.wait async
    %dcpos, %t1 = gpu.alloc async [%t0] () : memref<3xi32>
    %dccrd, %t2 = gpu.alloc async [%t1] () : memref<3xi32>
    %dcval, %t3 = gpu.alloc async [%t2] () : memref<3xf32>
    %da2, %t4 = gpu.alloc async [%t3] () : memref<2x2xf32>
    %db2, %t5 = gpu.alloc async [%t4] () : memref<2x3xf32>
    %t6 = gpu.memcpy async [%t5] %dcpos, %cpos : memref<3xi32>, memref<3xi32>
    %t7 = gpu.memcpy async [%t6] %dccrd, %ccrd : memref<3xi32>, memref<3xi32>
    %t8 = gpu.memcpy async [%t7] %dcval, %cval : memref<3xf32>, memref<3xf32>
    %t9 = gpu.memcpy async [%t8] %da2, %a2 : memref<2x2xf32>, memref<2x2xf32>
    %t10 = gpu.memcpy async [%t9] %db2, %b2 : memref<2x3xf32>, memref<2x3xf32>
    %mc, %t11 = gpu.create_csr async [%t10] %c2, %c3, %c3, %dcpos, %dccrd, %dcval : memref<3xi32>, memref<3xi32>, memref<3xf32>
    %ma, %t12 = gpu.create_dn_tensor async [%t11] %da2, %c2, %c2 : index, index into memref<2x2xf32>
    %mb, %t13 = gpu.create_dn_tensor async [%t12] %db2, %c2, %c3 : index, index into memref<2x3xf32>
    %bytes2, %t14 = gpu.sddmm_buffer_size async [%t13] %ma, %mb, %mc into f32
    %buffer2, %t15 = gpu.alloc async [%t14] (%bytes2) : memref<?xi8>
    %t16 = gpu.sddmm async [%t15] %ma, %mb, %mc, %buffer2 : memref<?xi8> into f32
    %t17 = gpu.destroy_sp_mat async [%t16] %mc
    %t18 = gpu.destroy_dn_tensor async [%t17] %ma
    %t19 = gpu.destroy_dn_tensor async [%t18] %mb
    %hc = memref.alloc() : memref<3xf32>
    %t20 = gpu.memcpy async [%t19] %hc, %dcval : memref<3xf32>, memref<3xf32>
    gpu.wait [%t20]
    %uc = memref.cast %hc : memref<3xf32> to memref<*xf32>
    call @printMemrefF32(%uc) : (memref<*xf32>) -> ()
    return
  }
}

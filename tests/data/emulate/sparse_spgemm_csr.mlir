// cuSPARSE's SpGEMM through the gpu dialect (async, CSR, f32, i32 indices): C = A A with the library's
// protocol: work estimation and compute, each first asked for its buffer size with an empty buffer, then
// run with the buffer allocated; C's size read with gpu.spmat_get_size, its arrays allocated for that many
// nonzeros and handed over with gpu.set_csr_pointers; gpu.spgemm_copy fills them.
//   A = [[1 0 2] [0 3 0] [4 0 5]]: A A = [[9 0 12] [0 9 0] [24 0 33]]
// ARCHS: sm_80 gfx90a
// WRONG: A's last value is 6 instead of 5
// WRONG-FROM:   memref.global "private" constant @val : memref<5xf32> = dense<[1.0, 2.0, 3.0, 4.0, 5.0]>
// WRONG-TO:   memref.global "private" constant @val : memref<5xf32> = dense<[1.0, 2.0, 3.0, 4.0, 6.0]>
// CHECK: [3,  3,  5]
// CHECK: [0,  2,  3,  5]
// CHECK: [0,  2,  1,  0,  2]
// CHECK: [9,  12,  9,  24,  33]
module {
  memref.global "private" constant @pos : memref<4xi32> = dense<[0, 2, 3, 5]>
  memref.global "private" constant @crd : memref<5xi32> = dense<[0, 2, 1, 0, 2]>
  memref.global "private" constant @val : memref<5xf32> = dense<[1.0, 2.0, 3.0, 4.0, 5.0]>
  func.func private @printMemrefF32(memref<*xf32>)
  func.func private @printMemrefI32(memref<*xi32>)
  func.func private @printMemrefI64(memref<*xi64>)
  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    %c5 = arith.constant 5 : index
    %pos = memref.get_global @pos : memref<4xi32>
    %crd = memref.get_global @crd : memref<5xi32>
    %val = memref.get_global @val : memref<5xf32>
    %t0 = gpu.wait async
    %dpos, %t1 = gpu.alloc async [%t0] () : memref<4xi32>
    %dcrd, %t2 = gpu.alloc async [%t1] () : memref<5xi32>
    %dval, %t3 = gpu.alloc async [%t2] () : memref<5xf32>
    %t4 = gpu.memcpy async [%t3] %dpos, %pos : memref<4xi32>, memref<4xi32>
    %t5 = gpu.memcpy async [%t4] %dcrd, %crd : memref<5xi32>, memref<5xi32>
    %t6 = gpu.memcpy async [%t5] %dval, %val : memref<5xf32>, memref<5xf32>
    %cpos, %t7 = gpu.alloc async [%t6] () : memref<4xi32>
    %empty_crd, %t8 = gpu.alloc async [%t7] () : memref<0xi32>
    %empty_val, %t9 = gpu.alloc async [%t8] () : memref<0xf32>
    %a, %t10 = gpu.create_csr async [%t9] %c3, %c3, %c5, %dpos, %dcrd, %dval : memref<4xi32>, memref<5xi32>, memref<5xf32>
    %b, %t11 = gpu.create_csr async [%t10] %c3, %c3, %c5, %dpos, %dcrd, %dval : memref<4xi32>, memref<5xi32>, memref<5xf32>
    %c, %t12 = gpu.create_csr async [%t11] %c3, %c3, %c0, %cpos, %empty_crd, %empty_val : memref<4xi32>, memref<0xi32>, memref<0xf32>
    %descr, %t13 = gpu.spgemm_create_descr async [%t12]
    %none, %t14 = gpu.alloc async [%t13] () : memref<0xi8>
    %bytes1, %t15 = gpu.spgemm_work_estimation_or_compute async [%t14]{WORK_ESTIMATION} %a, %b, %c, %descr, %c0, %none : f32 into memref<0xi8>
    %buffer1, %t16 = gpu.alloc async [%t15] (%bytes1) : memref<?xi8>
    %bytes1b, %t17 = gpu.spgemm_work_estimation_or_compute async [%t16]{WORK_ESTIMATION} %a, %b, %c, %descr, %bytes1, %buffer1 : f32 into memref<?xi8>
    %bytes2, %t18 = gpu.spgemm_work_estimation_or_compute async [%t17]{COMPUTE} %a, %b, %c, %descr, %c0, %none : f32 into memref<0xi8>
    %buffer2, %t19 = gpu.alloc async [%t18] (%bytes2) : memref<?xi8>
    %bytes2b, %t20 = gpu.spgemm_work_estimation_or_compute async [%t19]{COMPUTE} %a, %b, %c, %descr, %bytes2, %buffer2 : f32 into memref<?xi8>
    %rows, %cols, %nnz, %t21 = gpu.spmat_get_size async [%t20] %c
    %ccrd, %t22 = gpu.alloc async [%t21] (%nnz) : memref<?xi32>
    %cval, %t23 = gpu.alloc async [%t22] (%nnz) : memref<?xf32>
    %t24 = gpu.set_csr_pointers async [%t23] %c, %cpos, %ccrd, %cval : memref<4xi32>, memref<?xi32>, memref<?xf32>
    %t25 = gpu.spgemm_copy async [%t24] %a, %b, %c, %descr : f32
    %t26 = gpu.spgemm_destroy_descr async [%t25] %descr
    %t27 = gpu.destroy_sp_mat async [%t26] %a
    %t28 = gpu.destroy_sp_mat async [%t27] %b
    %t29 = gpu.destroy_sp_mat async [%t28] %c
    %hpos = memref.alloc() : memref<4xi32>
    %hcrd = memref.alloc(%nnz) : memref<?xi32>
    %hval = memref.alloc(%nnz) : memref<?xf32>
    %t30 = gpu.memcpy async [%t29] %hpos, %cpos : memref<4xi32>, memref<4xi32>
    %t31 = gpu.memcpy async [%t30] %hcrd, %ccrd : memref<?xi32>, memref<?xi32>
    %t32 = gpu.memcpy async [%t31] %hval, %cval : memref<?xf32>, memref<?xf32>
    gpu.wait [%t32]
    %size = memref.alloc() : memref<3xi64>
    %r64 = arith.index_cast %rows : index to i64
    %n64 = arith.index_cast %cols : index to i64
    %z64 = arith.index_cast %nnz : index to i64
    memref.store %r64, %size[%c0] : memref<3xi64>
    memref.store %n64, %size[%c1] : memref<3xi64>
    memref.store %z64, %size[%c2] : memref<3xi64>
    %us = memref.cast %size : memref<3xi64> to memref<*xi64>
    call @printMemrefI64(%us) : (memref<*xi64>) -> ()
    %up = memref.cast %hpos : memref<4xi32> to memref<*xi32>
    call @printMemrefI32(%up) : (memref<*xi32>) -> ()
    %uc = memref.cast %hcrd : memref<?xi32> to memref<*xi32>
    call @printMemrefI32(%uc) : (memref<*xi32>) -> ()
    %uv = memref.cast %hval : memref<?xf32> to memref<*xf32>
    call @printMemrefF32(%uv) : (memref<*xf32>) -> ()
    return
  }
}

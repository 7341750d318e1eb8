// cuSPARSE's SpMV through the gpu dialect, async: y = A x + y (upstream's alpha = beta = 1) with A a 3x4
// CSR matrix of f32 values and i32 positions and coordinates, every op on one token chain (a stream), the
// buffer the size query asked for allocated in between. No device code: the program is host operations.
//   A = [[1 0 2 0] [0 0 0 3] [4 5 0 0]], x = [1 2 3 4], y = [10 10 10]  ->  y = [17 22 24]
// ARCHS: sm_80 gfx90a
// WRONG: the matrix's second coordinate names column 3 instead of 2
// WRONG-FROM:   memref.global "private" constant @crd : memref<5xi32> = dense<[0, 2, 3, 0, 1]>
// WRONG-TO:   memref.global "private" constant @crd : memref<5xi32> = dense<[0, 3, 3, 0, 1]>
// CHECK: [17,  22,  24]
module {
  memref.global "private" constant @pos : memref<4xi32> = dense<[0, 2, 3, 5]>
  memref.global "private" constant @crd : memref<5xi32> = dense<[0, 2, 3, 0, 1]>
  memref.global "private" constant @val : memref<5xf32> = dense<[1.0, 2.0, 3.0, 4.0, 5.0]>
  memref.global "private" constant @x : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
  memref.global "private" constant @y : memref<3xf32> = dense<10.0>
  func.func private @printMemrefF32(memref<*xf32>)
  func.func @main() {
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    %c5 = arith.constant 5 : index
    %pos = memref.get_global @pos : memref<4xi32>
    %crd = memref.get_global @crd : memref<5xi32>
    %val = memref.get_global @val : memref<5xf32>
    %x = memref.get_global @x : memref<4xf32>
    %y0 = memref.get_global @y : memref<3xf32>
    %y = memref.alloc() : memref<3xf32>
    %t0 = gpu.wait async
    %dpos, %t1 = gpu.alloc async [%t0] () : memref<4xi32>
    %dcrd, %t2 = gpu.alloc async [%t1] () : memref<5xi32>
    %dval, %t3 = gpu.alloc async [%t2] () : memref<5xf32>
    %dx, %t4 = gpu.alloc async [%t3] () : memref<4xf32>
    %dy, %t5 = gpu.alloc async [%t4] () : memref<3xf32>
    %t6 = gpu.memcpy async [%t5] %dpos, %pos : memref<4xi32>, memref<4xi32>
    %t7 = gpu.memcpy async [%t6] %dcrd, %crd : memref<5xi32>, memref<5xi32>
    %t8 = gpu.memcpy async [%t7] %dval, %val : memref<5xf32>, memref<5xf32>
    %t9 = gpu.memcpy async [%t8] %dx, %x : memref<4xf32>, memref<4xf32>
    %t10 = gpu.memcpy async [%t9] %dy, %y0 : memref<3xf32>, memref<3xf32>
    %a, %t11 = gpu.create_csr async [%t10] %c3, %c4, %c5, %dpos, %dcrd, %dval : memref<4xi32>, memref<5xi32>, memref<5xf32>
    %vx, %t12 = gpu.create_dn_tensor async [%t11] %dx, %c4 : index into memref<4xf32>
    %vy, %t13 = gpu.create_dn_tensor async [%t12] %dy, %c3 : index into memref<3xf32>
    %bytes, %t14 = gpu.spmv_buffer_size async [%t13] %a, %vx, %vy into f32
    %buffer, %t15 = gpu.alloc async [%t14] (%bytes) : memref<?xi8>
    %t16 = gpu.spmv async [%t15] %a, %vx, %vy, %buffer : memref<?xi8> into f32
    %t17 = gpu.destroy_sp_mat async [%t16] %a
    %t18 = gpu.destroy_dn_tensor async [%t17] %vx
    %t19 = gpu.destroy_dn_tensor async [%t18] %vy
    %t20 = gpu.memcpy async [%t19] %y, %dy : memref<3xf32>, memref<3xf32>
    %t21 = gpu.dealloc async [%t20] %buffer : memref<?xi8>
    gpu.wait [%t21]
    %u = memref.cast %y : memref<3xf32> to memref<*xf32>
    call @printMemrefF32(%u) : (memref<*xf32>) -> ()
    return
  }
}

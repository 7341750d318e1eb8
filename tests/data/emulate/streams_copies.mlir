// Copies and sets queued on a stream keep the stream's order: on one stream, a set of a device buffer
// (bytes 0x01: 16843009 per i32), a kernel that first polls a host_shared zero 2^26 times and then adds i, a
// device-to-device copy, a kernel adding 100, and a copy into host_shared memory; then a copy into
// ordinary host memory. A copy that ran when it was issued, or beside the slow kernel, would see the
// buffer before the kernel wrote it.
// ARCHS: sm_80 gfx90a
// WRONG: the device-to-device copy waits for the set only, not for the slow kernel
// WRONG-FROM:     %t3 = gpu.memcpy async [%t2] %d2, %d1 : memref<8xi32>, memref<8xi32>
// WRONG-TO:     %t3 = gpu.memcpy async [%t1] %d2, %d1 : memref<8xi32>, memref<8xi32>
// CHECK: sizes = [8] strides = [1] data =
// CHECK-NEXT: [16843109,  16843110,  16843111,  16843112,  16843113,  16843114,  16843115,  16843116]
// CHECK: sizes = [8] strides = [1] data =
// CHECK-NEXT: [16843109,  16843110,  16843111,  16843112,  16843113,  16843114,  16843115,  16843116]
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @slow_add_index(%a: memref<8xi32>, %scratch: memref<i32>) kernel {
      %t = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %zero = arith.constant 0 : i32
      %one = arith.constant 1 : i32
      %polls = arith.constant 67108864 : i32
      %first = arith.cmpi eq, %t, %c0 : index
      scf.if %first {
        %n = scf.while (%i = %zero) : (i32) -> i32 {
          %now = memref.atomic_rmw addi %zero, %scratch[] : (i32, memref<i32>) -> i32
          %unset = arith.cmpi eq, %now, %zero : i32
          %patient = arith.cmpi slt, %i, %polls : i32
          %more = arith.andi %unset, %patient : i1
          scf.condition(%more) %i : i32
        } do {
        ^bb0(%i: i32):
          %next = arith.addi %i, %one : i32
          scf.yield %next : i32
        }
      }
      %x = memref.load %a[%t] : memref<8xi32>
      %i = arith.index_cast %t : index to i32
      %y = arith.addi %x, %i : i32
      memref.store %y, %a[%t] : memref<8xi32>
      gpu.return
    }
    gpu.func @add_100(%a: memref<8xi32>) kernel {
      %t = gpu.thread_id x
      %hundred = arith.constant 100 : i32
      %x = memref.load %a[%t] : memref<8xi32>
      %y = arith.addi %x, %hundred : i32
      memref.store %y, %a[%t] : memref<8xi32>
      gpu.return
    }
  }
  func.func private @printMemrefI32(memref<*xi32>)
  func.func @main() {
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %ones = arith.constant 16843009 : i32
    %zero = arith.constant 0 : i32
    %scratch = gpu.alloc host_shared () : memref<i32>
    memref.store %zero, %scratch[] : memref<i32>
    %shared = gpu.alloc host_shared () : memref<8xi32>
    %host = memref.alloc() : memref<8xi32>
    %t0 = gpu.wait async
    %d1, %t0a = gpu.alloc async [%t0] () : memref<8xi32>
    %d2, %t0b = gpu.alloc async [%t0a] () : memref<8xi32>
    %t1 = gpu.memset async [%t0b] %d1, %ones : memref<8xi32>, i32
    %t2 = gpu.launch_func async [%t1] @k::@slow_add_index blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%d1 : memref<8xi32>, %scratch : memref<i32>)
    %t3 = gpu.memcpy async [%t2] %d2, %d1 : memref<8xi32>, memref<8xi32>
    %t4 = gpu.launch_func async [%t3] @k::@add_100 blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%d2 : memref<8xi32>)
    %t5 = gpu.memcpy async [%t4] %shared, %d2 : memref<8xi32>, memref<8xi32>
    %t6 = gpu.memcpy async [%t5] %host, %d2 : memref<8xi32>, memref<8xi32>
    gpu.wait [%t6]
    %us = memref.cast %shared : memref<8xi32> to memref<*xi32>
    call @printMemrefI32(%us) : (memref<*xi32>) -> ()
    %uh = memref.cast %host : memref<8xi32> to memref<*xi32>
    call @printMemrefI32(%uh) : (memref<*xi32>) -> ()
    return
  }
}

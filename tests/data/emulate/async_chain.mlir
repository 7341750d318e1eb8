// Async chains of GPU work. Host async dialect: one body copies h (h[i] = 3i + 1) to the device, two
// bodies fork from it (b = 2h on one copy, c = h + 7 on another), a fourth joins them (r = b * c) and
// copies r back. Then gpu async tokens: a copy, a kernel adding i, and the copy back, each depending
// on the previous token, waited for once at the end.
// ARCHS: sm_80 gfx90a
// WRONG: the join runs on the fork's input instead of waiting for the doubling
// WRONG-FROM:     %t3 = async.execute [%t1, %t2] (%f1 as %b : !async.value<memref<?xi32>>, %f2 as %c : !async.value<memref<?xi32>>) {
// WRONG-TO:     %t3 = async.execute [%t2] (%f0 as %b : !async.value<memref<?xi32>>, %f2 as %c : !async.value<memref<?xi32>>) {
// CHECK: [16,  88,  196,  340,  520,  736,  988,  1276,  1600,  1960,  2356,  2788,  3256,  3760,  4300,  4876]
// CHECK: [16,  89,  198,  343,  524,  741,  994,  1283,  1608,  1969,  2366,  2799,  3268,  3773,  4314,  4891]
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @twice(%a: memref<?xi32>) kernel {
      %t = gpu.thread_id x
      %x = memref.load %a[%t] : memref<?xi32>
      %y = arith.addi %x, %x : i32
      memref.store %y, %a[%t] : memref<?xi32>
      gpu.return
    }
    gpu.func @add7(%a: memref<?xi32>) kernel {
      %t = gpu.thread_id x
      %x = memref.load %a[%t] : memref<?xi32>
      %seven = arith.constant 7 : i32
      %y = arith.addi %x, %seven : i32
      memref.store %y, %a[%t] : memref<?xi32>
      gpu.return
    }
    gpu.func @times(%a: memref<?xi32>, %b: memref<?xi32>) kernel {
      %t = gpu.thread_id x
      %x = memref.load %a[%t] : memref<?xi32>
      %y = memref.load %b[%t] : memref<?xi32>
      %z = arith.muli %x, %y : i32
      memref.store %z, %a[%t] : memref<?xi32>
      gpu.return
    }
    gpu.func @add_index(%a: memref<?xi32>) kernel {
      %t = gpu.thread_id x
      %x = memref.load %a[%t] : memref<?xi32>
      %i = arith.index_cast %t : index to i32
      %y = arith.addi %x, %i : i32
      memref.store %y, %a[%t] : memref<?xi32>
      gpu.return
    }
  }
  func.func private @printMemrefI32(memref<*xi32>)
  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %n = arith.constant 16 : index
    %h = memref.alloc(%n) : memref<?xi32>
    scf.for %i = %c0 to %n step %c1 {
      %m = arith.muli %i, %c3 : index
      %v1 = arith.addi %m, %c1 : index
      %v = arith.index_cast %v1 : index to i32
      memref.store %v, %h[%i] : memref<?xi32>
    }
    %t0, %f0 = async.execute () -> !async.value<memref<?xi32>> {
      %d = gpu.alloc(%n) : memref<?xi32>
      gpu.memcpy %d, %h : memref<?xi32>, memref<?xi32>
      async.yield %d : memref<?xi32>
    }
    %t1, %f1 = async.execute [%t0] (%f0 as %d : !async.value<memref<?xi32>>) -> !async.value<memref<?xi32>> {
      %b = gpu.alloc(%n) : memref<?xi32>
      gpu.memcpy %b, %d : memref<?xi32>, memref<?xi32>
      gpu.launch_func @k::@twice blocks in (%c1, %c1, %c1) threads in (%n, %c1, %c1) args(%b : memref<?xi32>)
      async.yield %b : memref<?xi32>
    }
    %t2, %f2 = async.execute [%t0] (%f0 as %d : !async.value<memref<?xi32>>) -> !async.value<memref<?xi32>> {
      %c = gpu.alloc(%n) : memref<?xi32>
      gpu.memcpy %c, %d : memref<?xi32>, memref<?xi32>
      gpu.launch_func @k::@add7 blocks in (%c1, %c1, %c1) threads in (%n, %c1, %c1) args(%c : memref<?xi32>)
      async.yield %c : memref<?xi32>
    }
    %t3 = async.execute [%t1, %t2] (%f1 as %b : !async.value<memref<?xi32>>, %f2 as %c : !async.value<memref<?xi32>>) {
      gpu.launch_func @k::@times blocks in (%c1, %c1, %c1) threads in (%n, %c1, %c1) args(%b : memref<?xi32>, %c : memref<?xi32>)
      gpu.memcpy %h, %b : memref<?xi32>, memref<?xi32>
      async.yield
    }
    async.await %t3 : !async.token
    %u = memref.cast %h : memref<?xi32> to memref<*xi32>
    call @printMemrefI32(%u) : (memref<*xi32>) -> ()
    // The same data through a chain of gpu async tokens.
    %start = gpu.wait async
    %d, %made = gpu.alloc async [%start] (%n) : memref<?xi32>
    %copied = gpu.memcpy async [%made] %d, %h : memref<?xi32>, memref<?xi32>
    %added = gpu.launch_func async [%copied] @k::@add_index blocks in (%c1, %c1, %c1) threads in (%n, %c1, %c1) args(%d : memref<?xi32>)
    %back = gpu.memcpy async [%added] %h, %d : memref<?xi32>, memref<?xi32>
    gpu.wait [%back]
    call @printMemrefI32(%u) : (memref<*xi32>) -> ()
    return
  }
}

// Host memory the device reads and writes in place: a host memref registered with gpu.host_register
// (and unregistered after), passed to the kernel as it is; the kernel adds i*i to each of its 20
// elements (10 + i), with no copy in either direction. Also gpu.alloc host_shared memory read by the
// host right after the kernel, once the launch was waited for.
// ARCHS: sm_80 gfx90a
// WRONG: the kernel adds i instead of i*i
// WRONG-FROM:       %sq = arith.muli %i, %i : i32
// WRONG-TO:       %sq = arith.addi %i, %c0_i32 : i32
// CHECK: [10,  12,  16,  22,  30,  40,  52,  66,  82,  100,  120,  142,  166,  192,  220,  250,  282,  316,  352,  390]
// CHECK: [0,  1,  4,  9,  16,  25,  36,  49,  64,  81,  100,  121,  144,  169,  196,  225,  256,  289,  324,  361]
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @add_squares(%a: memref<?xi32>) kernel {
      %t = gpu.thread_id x
      %c0_i32 = arith.constant 0 : i32
      %i = arith.index_cast %t : index to i32
      %sq = arith.muli %i, %i : i32
      %x = memref.load %a[%t] : memref<?xi32>
      %y = arith.addi %x, %sq : i32
      memref.store %y, %a[%t] : memref<?xi32>
      gpu.return
    }
  }
  func.func private @printMemrefI32(memref<*xi32>)
  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c10 = arith.constant 10 : index
    %n = arith.constant 20 : index
    %h = memref.alloc(%n) : memref<?xi32>
    scf.for %i = %c0 to %n step %c1 {
      %v = arith.addi %i, %c10 : index
      %w = arith.index_cast %v : index to i32
      memref.store %w, %h[%i] : memref<?xi32>
    }
    %u = memref.cast %h : memref<?xi32> to memref<*xi32>
    gpu.host_register %u : memref<*xi32>
    gpu.launch_func @k::@add_squares blocks in (%c1, %c1, %c1) threads in (%n, %c1, %c1) args(%h : memref<?xi32>)
    call @printMemrefI32(%u) : (memref<*xi32>) -> ()
    gpu.host_unregister %u : memref<*xi32>
    %s = gpu.alloc host_shared (%n) : memref<?xi32>
    %zero = arith.constant 0 : i32
    scf.for %i = %c0 to %n step %c1 {
      memref.store %zero, %s[%i] : memref<?xi32>
    }
    gpu.launch_func @k::@add_squares blocks in (%c1, %c1, %c1) threads in (%n, %c1, %c1) args(%s : memref<?xi32>)
    %us = memref.cast %s : memref<?xi32> to memref<*xi32>
    call @printMemrefI32(%us) : (memref<*xi32>) -> ()
    gpu.dealloc %s : memref<?xi32>
    memref.dealloc %h : memref<?xi32>
    return
  }
}

// Device globals in the gpu.module: a mutable @counters (zero-initialized) that one launch fills with
// atomics and a later launch reads, and a constant @weights with an initializer. Three blocks of 32
// threads each add (t mod 4) + 1 to counters[block]; then out[i] = counters[i] * weights[i] + i.
// ARCHS: sm_80 gfx90a
// WRONG: the second launch reads a weight one place further
// WRONG-FROM:       %w = memref.load %weights[%i] : memref<4xi32>
// WRONG-TO:       %w = memref.load %weights[%next] : memref<4xi32>
// CHECK: [240,  -159,  1602,  3]
module attributes {gpu.container_module} {
  gpu.module @k {
    memref.global "public" @counters : memref<4xi32> = dense<0>
    memref.global "public" constant @weights : memref<4xi32> = dense<[3, -2, 20, 7]>
    gpu.func @count() kernel {
      %c4 = arith.constant 4 : index
      %one = arith.constant 1 : i32
      %t = gpu.thread_id x
      %b = gpu.block_id x
      %m = arith.remui %t, %c4 : index
      %mi = arith.index_cast %m : index to i32
      %v = arith.addi %mi, %one : i32
      %counters = memref.get_global @counters : memref<4xi32>
      %old = memref.atomic_rmw addi %v, %counters[%b] : (i32, memref<4xi32>) -> i32
      gpu.return
    }
    gpu.func @weigh(%out: memref<?xi32>) kernel {
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %i = gpu.thread_id x
      %i1 = arith.addi %i, %c1 : index
      %next = arith.remui %i1, %c4 : index
      %counters = memref.get_global @counters : memref<4xi32>
      %weights = memref.get_global @weights : memref<4xi32>
      %c = memref.load %counters[%i] : memref<4xi32>
      %w = memref.load %weights[%i] : memref<4xi32>
      %p = arith.muli %c, %w : i32
      %ii = arith.index_cast %i : index to i32
      %r = arith.addi %p, %ii : i32
      memref.store %r, %out[%i] : memref<?xi32>
      gpu.return
    }
  }
  func.func private @printMemrefI32(memref<*xi32>)
  func.func @main() {
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    %c32 = arith.constant 32 : index
    gpu.launch_func @k::@count blocks in (%c3, %c1, %c1) threads in (%c32, %c1, %c1)
    %out = gpu.alloc(%c4) : memref<?xi32>
    gpu.launch_func @k::@weigh blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%out : memref<?xi32>)
    %h = memref.alloc(%c4) : memref<?xi32>
    gpu.memcpy %h, %out : memref<?xi32>, memref<?xi32>
    %u = memref.cast %h : memref<?xi32> to memref<*xi32>
    call @printMemrefI32(%u) : (memref<*xi32>) -> ()
    gpu.dealloc %out : memref<?xi32>
    return
  }
}

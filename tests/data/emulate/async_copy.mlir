// Asynchronous copies into workgroup memory (nvgpu.device_async_copy, cp.async on sm_80): each of the
// 32 threads of a block copies 16 bytes (4 f32) of its block's 128-element slice of x (x[i] = 7i mod 23),
// commits them as a group and waits for it; after a barrier every thread reads a rotated element
// (out[i] = 2 * slice[(i + 5) mod 128]). Two blocks, each its own workgroup memory.
// ARCHS: sm_80
// WRONG: the barrier after the wait removed, so threads read other threads' copies too early
// WRONG-FROM:       nvgpu.device_async_wait %group
// WRONG-FROM:       gpu.barrier
// WRONG-TO:       nvgpu.device_async_wait %group
// CHECK: [24,  38,  6,  20,  34,  2,  16,  30]
// CHECK: [0,  14,  28,  44,  12,  26,  40,  8]
// CHECK: checksum: 5608
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @rotate(%x: memref<?xf32>, %out: memref<?xf32>)
        workgroup(%slice: memref<128xf32, #gpu.address_space<workgroup>>) kernel {
      %c0_idx = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %c5 = arith.constant 5 : index
      %c128 = arith.constant 128 : index
      %tid = gpu.thread_id x
      %bid = gpu.block_id x
      %base = arith.muli %bid, %c128 : index
      %mine = arith.muli %tid, %c4 : index
      %src = arith.addi %base, %mine : index
      %token = nvgpu.device_async_copy %x[%src], %slice[%mine], 4 : memref<?xf32> to memref<128xf32, #gpu.address_space<workgroup>>
      %group = nvgpu.device_async_create_group %token
      nvgpu.device_async_wait %group
      gpu.barrier
      scf.for %k = %c0_idx to %c4 step %c1 {
        %i = arith.addi %mine, %k : index
        %j0 = arith.addi %i, %c5 : index
        %j = arith.remui %j0, %c128 : index
        %v = memref.load %slice[%j] : memref<128xf32, #gpu.address_space<workgroup>>
        %two = arith.constant 2.0 : f32
        %w = arith.mulf %v, %two : f32
        %at = arith.addi %base, %i : index
        memref.store %w, %out[%at] : memref<?xf32>
      }
      gpu.return
    }
  }
  func.func private @printMemrefF32(memref<*xf32>)
  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c7 = arith.constant 7 : index
    %c23 = arith.constant 23 : index
    %c32 = arith.constant 32 : index
    %n = arith.constant 256 : index
    %hx = memref.alloc(%n) : memref<?xf32>
    scf.for %i = %c0 to %n step %c1 {
      %p = arith.muli %i, %c7 : index
      %m = arith.remui %p, %c23 : index
      %mi = arith.index_cast %m : index to i32
      %f = arith.sitofp %mi : i32 to f32
      memref.store %f, %hx[%i] : memref<?xf32>
    }
    %x = gpu.alloc(%n) : memref<?xf32>
    %out = gpu.alloc(%n) : memref<?xf32>
    gpu.memcpy %x, %hx : memref<?xf32>, memref<?xf32>
    gpu.launch_func @k::@rotate blocks in (%c2, %c1, %c1) threads in (%c32, %c1, %c1)
        args(%x : memref<?xf32>, %out : memref<?xf32>)
    %h = memref.alloc(%n) : memref<?xf32>
    gpu.memcpy %h, %out : memref<?xf32>, memref<?xf32>
    %head = memref.subview %h[0] [8] [1] : memref<?xf32> to memref<8xf32, strided<[1]>>
    %uh = memref.cast %head : memref<8xf32, strided<[1]>> to memref<*xf32>
    call @printMemrefF32(%uh) : (memref<*xf32>) -> ()
    %tail = memref.subview %h[248] [8] [1] : memref<?xf32> to memref<8xf32, strided<[1], offset: 248>>
    %ut = memref.cast %tail : memref<8xf32, strided<[1], offset: 248>> to memref<*xf32>
    call @printMemrefF32(%ut) : (memref<*xf32>) -> ()
    %zero = arith.constant 0.0 : f32
    %sum = scf.for %i = %c0 to %n step %c1 iter_args(%s = %zero) -> (f32) {
      %v = memref.load %h[%i] : memref<?xf32>
      %t = arith.addf %s, %v : f32
      scf.yield %t : f32
    }
    vector.print str "checksum: "
    vector.print %sum : f32
    return
  }
}

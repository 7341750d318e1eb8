// Dynamic workgroup memory (gpu.dynamic_shared_memory, sized by the launch's dynamic_shared_memory_size):
// each block of 64 threads stages its slice of x (x[i] = 5i mod 17) there, waits at a barrier, and
// writes it back reversed within the block, times 2, plus the block id. Three blocks, each its own copy.
// ARCHS: sm_80 gfx90a
// WRONG: the barrier between staging and reading removed
// WRONG-FROM:       memref.store %v, %stage[%tid] : memref<?xi32, #gpu.address_space<workgroup>>
// WRONG-FROM:       gpu.barrier
// WRONG-TO:       memref.store %v, %stage[%tid] : memref<?xi32, #gpu.address_space<workgroup>>
// CHECK: [18,  8,  32,  22,  12,  2,  26,  16]
// CHECK: [26,  16,  6,  30,  20,  10,  34,  24]
// CHECK: wrong elements: 0
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @reverse(%x: memref<?xi32>, %out: memref<?xi32>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %tid = gpu.thread_id x
      %bid = gpu.block_id x
      %bdim = gpu.block_dim x
      %bytes = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %stage = memref.view %bytes[%c0][%bdim] : memref<?xi8, #gpu.address_space<workgroup>> to memref<?xi32, #gpu.address_space<workgroup>>
      %base = arith.muli %bid, %bdim : index
      %i = arith.addi %base, %tid : index
      %v = memref.load %x[%i] : memref<?xi32>
      memref.store %v, %stage[%tid] : memref<?xi32, #gpu.address_space<workgroup>>
      gpu.barrier
      %last = arith.subi %bdim, %c1 : index
      %mirror = arith.subi %last, %tid : index
      %w = memref.load %stage[%mirror] : memref<?xi32, #gpu.address_space<workgroup>>
      %two = arith.constant 2 : i32
      %w2 = arith.muli %w, %two : i32
      %b = arith.index_cast %bid : index to i32
      %r = arith.addi %w2, %b : i32
      memref.store %r, %out[%i] : memref<?xi32>
      gpu.return
    }
  }
  func.func private @printMemrefI32(memref<*xi32>)
  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c5 = arith.constant 5 : index
    %c17 = arith.constant 17 : index
    %c64 = arith.constant 64 : index
    %c184 = arith.constant 184 : index
    %n = arith.constant 192 : index
    %hx = memref.alloc(%n) : memref<?xi32>
    scf.for %i = %c0 to %n step %c1 {
      %p = arith.muli %i, %c5 : index
      %m = arith.remui %p, %c17 : index
      %v = arith.index_cast %m : index to i32
      memref.store %v, %hx[%i] : memref<?xi32>
    }
    %x = gpu.alloc(%n) : memref<?xi32>
    %out = gpu.alloc(%n) : memref<?xi32>
    gpu.memcpy %x, %hx : memref<?xi32>, memref<?xi32>
    %shared = arith.constant 256 : i32
    gpu.launch_func @k::@reverse blocks in (%c3, %c1, %c1) threads in (%c64, %c1, %c1)
        dynamic_shared_memory_size %shared args(%x : memref<?xi32>, %out : memref<?xi32>)
    %hout = memref.alloc(%n) : memref<?xi32>
    gpu.memcpy %hout, %out : memref<?xi32>, memref<?xi32>
    %head = memref.subview %hout[0] [8] [1] : memref<?xi32> to memref<8xi32, strided<[1]>>
    %uh = memref.cast %head : memref<8xi32, strided<[1]>> to memref<*xi32>
    call @printMemrefI32(%uh) : (memref<*xi32>) -> ()
    %tail = memref.subview %hout[184] [8] [1] : memref<?xi32> to memref<8xi32, strided<[1], offset: 184>>
    %ut = memref.cast %tail : memref<8xi32, strided<[1], offset: 184>> to memref<*xi32>
    call @printMemrefI32(%ut) : (memref<*xi32>) -> ()
    %wrong = scf.for %i = %c0 to %n step %c1 iter_args(%count = %c0) -> (index) {
      %b = arith.divui %i, %c64 : index
      %t = arith.remui %i, %c64 : index
      %base = arith.muli %b, %c64 : index
      %end = arith.addi %base, %c64 : index
      %e1 = arith.subi %end, %c1 : index
      %src = arith.subi %e1, %t : index
      %v = memref.load %hx[%src] : memref<?xi32>
      %two = arith.constant 2 : i32
      %v2 = arith.muli %v, %two : i32
      %bi = arith.index_cast %b : index to i32
      %want = arith.addi %v2, %bi : i32
      %got = memref.load %hout[%i] : memref<?xi32>
      %same = arith.cmpi eq, %got, %want : i32
      %next = arith.addi %count, %c1 : index
      %r = arith.select %same, %count, %next : index
      scf.yield %r : index
    }
    vector.print str "wrong elements: "
    %w = arith.index_cast %wrong : index to i64
    vector.print %w : i64
    gpu.dealloc %x : memref<?xi32>
    gpu.dealloc %out : memref<?xi32>
    return
  }
}

// Dynamic workgroup memory and a private array: each block of 32 threads stages x in dynamic workgroup
// memory (128 bytes, sized by the launch), every thread keeps a private table of 8 partial sums and
// writes out[i] = x[31 - t] + table[t mod 8]. Each BUG overruns one of the two.
// ARCHS: sm_80 gfx90a
// CHECK: sum: 2240
// BUG dynamic: the mirror index one past the staged values
// BUG dynamic FROM:       %mirror = arith.subi %c31, %tid : index
// BUG dynamic TO:       %mirror = arith.subi %c32, %tid : index
// BUG dynamic REPORT: FILE:@stage_read:12: error: memcheck: out-of-bounds access: read of 4 bytes in kernel 'mix', block (0,0,0), thread (0,0,0): offset 128 of dynamic workgroup memory (128 bytes)
// BUG private: the private table read past its 8 entries (thread 31 runs on first after the barrier it released; on gfx90a the optimizer keeps the table in registers, leaving no memory access)
// BUG private ARCHS: sm_80
// BUG private FROM:       %slot = arith.remui %tid, %c8 : index
// BUG private TO:       %slot = arith.addi %c8, %tid : index
// BUG private REPORT: FILE:@table_read:12: error: memcheck: out-of-bounds access: read of 4 bytes in kernel 'mix', block (0,0,0), thread (31,0,0): offset 156 of private array (32 bytes)
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @mix(%x: memref<?xi32>, %out: memref<?xi32>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c8 = arith.constant 8 : index
      %c31 = arith.constant 31 : index
      %c32 = arith.constant 32 : index
      %tid = gpu.thread_id x
      %bid = gpu.block_id x
      %bdim = gpu.block_dim x
      %bytes = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %stage = memref.view %bytes[%c0][%bdim] : memref<?xi8, #gpu.address_space<workgroup>> to memref<?xi32, #gpu.address_space<workgroup>>
      %row = arith.muli %bid, %bdim : index
      %i = arith.addi %row, %tid : index
      %v = memref.load %x[%i] : memref<?xi32>
      memref.store %v, %stage[%tid] : memref<?xi32, #gpu.address_space<workgroup>>
      gpu.barrier
      %table = memref.alloca() : memref<8xi32>
      scf.for %k = %c0 to %c8 step %c1 {
        %kk = arith.index_cast %k : index to i32
        memref.store %kk, %table[%k] : memref<8xi32>
      }
      %mirror = arith.subi %c31, %tid : index
      %w = memref.load %stage[%mirror] : memref<?xi32, #gpu.address_space<workgroup>> // @stage_read
      %slot = arith.remui %tid, %c8 : index
      %t = memref.load %table[%slot] : memref<8xi32> // @table_read
      %r = arith.addi %w, %t : i32
      memref.store %r, %out[%i] : memref<?xi32>
      gpu.return
    }
  }
  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c32 = arith.constant 32 : index
    %n = arith.constant 64 : index
    %hx = memref.alloc(%n) : memref<?xi32>
    scf.for %i = %c0 to %n step %c1 {
      %v = arith.index_cast %i : index to i32
      memref.store %v, %hx[%i] : memref<?xi32>
    }
    %x = gpu.alloc(%n) : memref<?xi32>
    %out = gpu.alloc(%n) : memref<?xi32>
    gpu.memcpy %x, %hx : memref<?xi32>, memref<?xi32>
    %shared = arith.constant 128 : i32
    gpu.launch_func @k::@mix blocks in (%c2, %c1, %c1) threads in (%c32, %c1, %c1)
        dynamic_shared_memory_size %shared args(%x : memref<?xi32>, %out : memref<?xi32>)
    %hout = memref.alloc(%n) : memref<?xi32>
    gpu.memcpy %hout, %out : memref<?xi32>, memref<?xi32>
    %zero = arith.constant 0 : i32
    %sum = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (i32) {
      %v = memref.load %hout[%i] : memref<?xi32>
      %next = arith.addi %acc, %v : i32
      scf.yield %next : i32
    }
    gpu.dealloc %x : memref<?xi32>
    gpu.dealloc %out : memref<?xi32>
    vector.print str "sum: "
    vector.print %sum : i32
    return
  }
}

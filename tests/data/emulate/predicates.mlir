// Predicates (i1) through memory: a kernel loads and stores memref<?xi1> elements in global and in
// workgroup memory, and the host reads them back as i1. 2 blocks of 40 threads; thread i of block b,
// global index g = 40*b + i: p(i) = ((i + b) mod 3 == 0) goes to workgroup memory; after a barrier the
// thread reads its right neighbour's p((i + 1) mod 40), xors it with the host's input in[g] = (g mod 4 == 1)
// and stores that to out[g]. The host prints out as 0/1 and counts the set ones.
// ARCHS: sm_80 gfx90a
// WRONG: the left neighbour's predicate instead of the right one's
// WRONG-FROM:       %next = arith.addi %tid, %c1 : index
// WRONG-TO:       %next = arith.addi %tid, %c39 : index
// CHECK: [0,  1,  1,  0,  0,  0,  0,  0,  1,  1,  0,  1,  0,  1,  1,  0,  0,  0,  0,  0,  1,  1,  0,  1,  0,  1,  1,  0,  0,  0,  0,  0,  1,  1,  0,  1,  0,  1,  1,  1,  0,  0,  0,  0,  1,  1,  0,  1,  0,  1,  1,  0,  0,  0,  0,  0,  1,  1,  0,  1,  0,  1,  1,  0,  0,  0,  0,  0,  1,  1,  0,  1,  0,  1,  1,  0,  0,  0,  0,  0]
// CHECK: set: 33
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @neighbours(%in: memref<?xi1>, %out: memref<?xi1>)
        workgroup(%p: memref<40xi1, #gpu.address_space<workgroup>>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c3 = arith.constant 3 : index
      %c39 = arith.constant 39 : index
      %c40 = arith.constant 40 : index
      %tid = gpu.thread_id x
      %bid = gpu.block_id x
      %ib = arith.addi %tid, %bid : index
      %r = arith.remui %ib, %c3 : index
      %mine = arith.cmpi eq, %r, %c0 : index
      memref.store %mine, %p[%tid] : memref<40xi1, #gpu.address_space<workgroup>>
      gpu.barrier
      %next = arith.addi %tid, %c1 : index
      %wrapped = arith.remui %next, %c40 : index
      %theirs = memref.load %p[%wrapped] : memref<40xi1, #gpu.address_space<workgroup>>
      %base = arith.muli %bid, %c40 : index
      %g = arith.addi %base, %tid : index
      %given = memref.load %in[%g] : memref<?xi1>
      %result = arith.xori %theirs, %given : i1
      memref.store %result, %out[%g] : memref<?xi1>
      gpu.return
    }
  }
  func.func private @printMemrefI32(memref<*xi32>)
  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c40 = arith.constant 40 : index
    %n = arith.constant 80 : index
    %hin = memref.alloc(%n) : memref<?xi1>
    scf.for %g = %c0 to %n step %c1 {
      %m = arith.remui %g, %c4 : index
      %bit = arith.cmpi eq, %m, %c1 : index
      memref.store %bit, %hin[%g] : memref<?xi1>
    }
    %in = gpu.alloc(%n) : memref<?xi1>
    %out = gpu.alloc(%n) : memref<?xi1>
    gpu.memcpy %in, %hin : memref<?xi1>, memref<?xi1>
    gpu.launch_func @k::@neighbours blocks in (%c2, %c1, %c1) threads in (%c40, %c1, %c1)
        args(%in : memref<?xi1>, %out : memref<?xi1>)
    %hout = memref.alloc(%n) : memref<?xi1>
    gpu.memcpy %hout, %out : memref<?xi1>, memref<?xi1>
    %shown = memref.alloc(%n) : memref<?xi32>
    %set = scf.for %g = %c0 to %n step %c1 iter_args(%count = %c0) -> (index) {
      %bit = memref.load %hout[%g] : memref<?xi1>
      %v = arith.extui %bit : i1 to i32
      memref.store %v, %shown[%g] : memref<?xi32>
      %more = arith.addi %count, %c1 : index
      %c = arith.select %bit, %more, %count : index
      scf.yield %c : index
    }
    %u = memref.cast %shown : memref<?xi32> to memref<*xi32>
    call @printMemrefI32(%u) : (memref<*xi32>) -> ()
    vector.print str "set: "
    %s = arith.index_cast %set : index to i64
    vector.print %s : i64
    gpu.dealloc %in : memref<?xi1>
    gpu.dealloc %out : memref<?xi1>
    return
  }
}

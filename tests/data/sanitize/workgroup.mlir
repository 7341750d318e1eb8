// Workgroup memory and barriers: each of 2 blocks of 64 threads writes its slot of a 64-element workgroup
// buffer, waits at a barrier and reads its left neighbour's slot (thread 0 its own); out[i] holds what it
// read plus 1000 times the block id. Each BUG plants one error in that kernel.
// ARCHS: sm_80 gfx90a
// CHECK: sum: 67906
// BUG race: the barrier removed: thread 1 reads what thread 0 wrote, unordered
// BUG race FROM:       gpu.barrier // @barrier
// BUG race TO:       %nobarrier = arith.constant 0 : index
// BUG race REPORT: FILE:@read:12: error: racecheck: read-after-write hazard on workgroup variable '__wg_neighbours_0' at offset 0 in kernel 'neighbours', block (0,0,0), thread (1,0,0): thread (0,0,0) accessed it at FILE:@write:9 with no barrier between
// BUG overrun: the right neighbour read instead: thread 63 reads past the buffer
// BUG overrun FROM:       %slot = arith.select %isfirst, %tid, %left : index
// BUG overrun TO:       %slot = arith.addi %tid, %c1 : index
// BUG overrun REPORT: FILE:@read:12: error: memcheck: out-of-bounds access: read of 4 bytes in kernel 'neighbours', block (0,0,0), thread (63,0,0): offset 256 of workgroup variable '__wg_neighbours_0' (256 bytes)
// BUG unwritten: thread 5 skips its write; thread 6 reads its slot
// BUG unwritten FROM:       %writes = arith.constant true
// BUG unwritten TO:       %writes = arith.cmpi ne, %tid, %c5 : index
// BUG unwritten REPORT: FILE:@read:12: error: initcheck: uninitialized read of 4 bytes of workgroup variable '__wg_neighbours_0' at offset 20 in kernel 'neighbours', block (0,0,0), thread (6,0,0): never written in this block
// BUG divergent: the upper half of the block waits at a barrier in a loop instead
// BUG divergent FROM:       %upper = arith.constant false
// BUG divergent TO:       %upper = arith.cmpi uge, %tid, %c32 : index
// BUG divergent REPORT: FILE:@other:11: error: synccheck: divergent barriers in kernel 'neighbours', block (0,0,0), thread (32,0,0) waits here while thread (0,0,0) waits at FILE:@barrier:9
// BUG exits: threads 48 and up leave before the barrier
// BUG exits FROM:       %leaves = arith.constant false
// BUG exits TO:       %leaves = arith.cmpi uge, %tid, %c48 : index
// BUG exits REPORT: FILE:@barrier:9: error: synccheck: barrier skipped in kernel 'neighbours', block (0,0,0), thread (63,0,0) exited while 48 other thread(s) of its block wait at this barrier
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @neighbours(%out: memref<?xi32>) workgroup(%slots: memref<64xi32, #gpu.address_space<workgroup>>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c5 = arith.constant 5 : index
      %c32 = arith.constant 32 : index
      %c48 = arith.constant 48 : index
      %c1000 = arith.constant 1000 : i32
      %tid = gpu.thread_id x
      %bid = gpu.block_id x
      %bdim = gpu.block_dim x
      %leaves = arith.constant false
      cf.cond_br %leaves, ^exit, ^work
    ^work:
      %writes = arith.constant true
      scf.if %writes {
        %v = arith.index_cast %tid : index to i32
        memref.store %v, %slots[%tid] : memref<64xi32, #gpu.address_space<workgroup>> // @write
      }
      %upper = arith.constant false
      scf.if %upper {
        %rounds = arith.divui %bdim, %c32 : index
        scf.for %round = %c0 to %rounds step %c1 {
          gpu.barrier // @other
        }
      } else {
        gpu.barrier // @barrier
      }
      %left = arith.subi %tid, %c1 : index
      %isfirst = arith.cmpi ult, %tid, %c1 : index
      %slot = arith.select %isfirst, %tid, %left : index
      %w = memref.load %slots[%slot] : memref<64xi32, #gpu.address_space<workgroup>> // @read
      %b = arith.index_cast %bid : index to i32
      %base = arith.muli %b, %c1000 : i32
      %r = arith.addi %w, %base : i32
      %row = arith.muli %bid, %bdim : index
      %i = arith.addi %row, %tid : index
      memref.store %r, %out[%i] : memref<?xi32>
      cf.br ^exit
    ^exit:
      gpu.return
    }
  }
  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c64 = arith.constant 64 : index
    %n = arith.constant 128 : index
    %c0i = arith.constant 0 : i32
    %out = gpu.alloc(%n) : memref<?xi32>
    gpu.memset %out, %c0i : memref<?xi32>, i32
    gpu.launch_func @k::@neighbours blocks in (%c2, %c1, %c1) threads in (%c64, %c1, %c1) args(%out : memref<?xi32>)
    %hout = memref.alloc(%n) : memref<?xi32>
    gpu.memcpy %hout, %out : memref<?xi32>, memref<?xi32>
    %zero = arith.constant 0 : i32
    %sum = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (i32) {
      %v = memref.load %hout[%i] : memref<?xi32>
      %next = arith.addi %acc, %v : i32
      scf.yield %next : i32
    }
    gpu.dealloc %out : memref<?xi32>
    memref.dealloc %hout : memref<?xi32>
    vector.print str "sum: "
    vector.print %sum : i32
    return
  }
}

// Global memory shared by blocks: thread 0 of each of 8 blocks adds its block id + 1 to one counter with
// an atomic; each thread also writes its own element of out. The BUG makes the counter a plain load and
// store: blocks race on it (on a GPU, updates are lost). Every thread of a block (one warp) also stores the
// block id to flags[block]: the lanes of one warp storing at one op are one instruction, no race.
// ARCHS: sm_80 gfx90a
// CHECK: counter: 36
// BUG plain: the atomic add replaced by a plain load, add and store
// BUG plain FROM:         %old = memref.atomic_rmw addi %add, %counter[%c0] : (i32, memref<?xi32>) -> i32
// BUG plain TO:         %old = memref.load %counter[%c0] : memref<?xi32> // @plain
// BUG plain TO:         %new = arith.addi %old, %add : i32
// BUG plain TO:         memref.store %new, %counter[%c0] : memref<?xi32>
// BUG flags: every block stores its id to flags[0]: blocks race on it
// BUG flags FROM:       memref.store %bv, %flags[%bid] : memref<?xi32> // @flag
// BUG flags TO:       memref.store %bv, %flags[%c0] : memref<?xi32> // @flag
// BUG flags REPORT: FILE:@flag:7: error: racecheck: write-after-write hazard on device buffer #3 (32 bytes, allocated at FILE:@alloc_flags:14) at offset 0 in kernel 'count', block (1,0,0), thread (0,0,0): thread (31,0,0) of block (0,0,0) accessed it earlier in this launch, unordered (another block, or no barrier between)
// BUG plain REPORT: FILE:@plain:16: error: racecheck: read-after-write hazard on device buffer #1 (4 bytes, allocated at FILE:@alloc_counter:16) at offset 0 in kernel 'count', block (1,0,0), thread (0,0,0): thread (0,0,0) of block (0,0,0) accessed it earlier in this launch, unordered (another block, or no barrier between)
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @count(%counter: memref<?xi32>, %out: memref<?xi32>, %flags: memref<?xi32>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %tid = gpu.thread_id x
      %bid = gpu.block_id x
      %bdim = gpu.block_dim x
      %first = arith.cmpi eq, %tid, %c0 : index
      scf.if %first {
        %b = arith.addi %bid, %c1 : index
        %add = arith.index_cast %b : index to i32
        %old = memref.atomic_rmw addi %add, %counter[%c0] : (i32, memref<?xi32>) -> i32
      }
      %row = arith.muli %bid, %bdim : index
      %i = arith.addi %row, %tid : index
      %v = arith.index_cast %i : index to i32
      memref.store %v, %out[%i] : memref<?xi32>
      %bv = arith.index_cast %bid : index to i32
      memref.store %bv, %flags[%bid] : memref<?xi32> // @flag
      gpu.return
    }
  }
  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c32 = arith.constant 32 : index
    %n = arith.constant 256 : index
    %zero = arith.constant 0 : i32
    %counter = gpu.alloc(%c1) : memref<?xi32> // @alloc_counter
    %out = gpu.alloc(%n) : memref<?xi32>
    %flags = gpu.alloc(%c8) : memref<?xi32> // @alloc_flags
    gpu.memset %counter, %zero : memref<?xi32>, i32
    gpu.launch_func @k::@count blocks in (%c8, %c1, %c1) threads in (%c32, %c1, %c1)
        args(%counter : memref<?xi32>, %out : memref<?xi32>, %flags : memref<?xi32>)
    %h = memref.alloc(%c1) : memref<?xi32>
    gpu.memcpy %h, %counter : memref<?xi32>, memref<?xi32>
    %total = memref.load %h[%c0] : memref<?xi32>
    gpu.dealloc %counter : memref<?xi32>
    gpu.dealloc %out : memref<?xi32>
    gpu.dealloc %flags : memref<?xi32>
    memref.dealloc %h : memref<?xi32>
    vector.print str "counter: "
    vector.print %total : i32
    return
  }
}

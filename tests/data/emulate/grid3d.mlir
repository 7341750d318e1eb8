// A 3-D grid (2, 3, 4) of 3-D blocks (4, 2, 3): every thread writes 7 * its linear id mod 1000 at its
// linear id (x fastest, then y, then z, blocks likewise), after checking that gpu.grid_dim and
// gpu.block_dim report the launch; the host counts wrong slots and unvisited ones.
// ARCHS: sm_80 gfx90a
// WRONG: y and z of the thread swapped in the linear id
// WRONG-FROM:       %tzy = arith.muli %tz, %bdy : index
// WRONG-TO:       %tzy = arith.muli %ty, %bdy : index
// CHECK: slots: 576
// CHECK: wrong slots: 0
// CHECK: checksum: 285200
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @ids(%out: memref<?xi32>) kernel {
      %tx = gpu.thread_id x
      %ty = gpu.thread_id y
      %tz = gpu.thread_id z
      %bx = gpu.block_id x
      %by = gpu.block_id y
      %bz = gpu.block_id z
      %bdx = gpu.block_dim x
      %bdy = gpu.block_dim y
      %bdz = gpu.block_dim z
      %gdx = gpu.grid_dim x
      %gdy = gpu.grid_dim y
      %gdz = gpu.grid_dim z
      %tzy = arith.muli %tz, %bdy : index
      %tzy2 = arith.addi %tzy, %ty : index
      %tzyx = arith.muli %tzy2, %bdx : index
      %local = arith.addi %tzyx, %tx : index
      %bzy = arith.muli %bz, %gdy : index
      %bzy2 = arith.addi %bzy, %by : index
      %bzyx = arith.muli %bzy2, %gdx : index
      %block = arith.addi %bzyx, %bx : index
      %bxy = arith.muli %bdx, %bdy : index
      %size = arith.muli %bxy, %bdz : index
      %start = arith.muli %block, %size : index
      %linear = arith.addi %start, %local : index
      %c7 = arith.constant 7 : index
      %c1000 = arith.constant 1000 : index
      %m = arith.muli %linear, %c7 : index
      %r = arith.remui %m, %c1000 : index
      %v = arith.index_cast %r : index to i32
      // A launch the kernel does not see as launched marks its slot -1.
      %c2 = arith.constant 2 : index
      %c3 = arith.constant 3 : index
      %c4 = arith.constant 4 : index
      %g1 = arith.cmpi eq, %gdx, %c2 : index
      %g2 = arith.cmpi eq, %gdy, %c3 : index
      %g3 = arith.cmpi eq, %gdz, %c4 : index
      %b1 = arith.cmpi eq, %bdx, %c4 : index
      %b2 = arith.cmpi eq, %bdy, %c2 : index
      %b3 = arith.cmpi eq, %bdz, %c3 : index
      %a1 = arith.andi %g1, %g2 : i1
      %a2 = arith.andi %a1, %g3 : i1
      %a3 = arith.andi %a2, %b1 : i1
      %a4 = arith.andi %a3, %b2 : i1
      %a5 = arith.andi %a4, %b3 : i1
      %none = arith.constant -1 : i32
      %w = arith.select %a5, %v, %none : i32
      memref.store %w, %out[%linear] : memref<?xi32>
      gpu.return
    }
  }
  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    %c7 = arith.constant 7 : index
    %c1000 = arith.constant 1000 : index
    %n = arith.constant 576 : index
    %unset = arith.constant -2 : i32
    %d = gpu.alloc(%n) : memref<?xi32>
    gpu.memset %d, %unset : memref<?xi32>, i32
    gpu.launch_func @k::@ids blocks in (%c2, %c3, %c4) threads in (%c4, %c2, %c3) args(%d : memref<?xi32>)
    %h = memref.alloc(%n) : memref<?xi32>
    gpu.memcpy %h, %d : memref<?xi32>, memref<?xi32>
    %zero = arith.constant 0 : i64
    %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%wrong = %c0, %sum = %zero) -> (index, i64) {
      %m = arith.muli %i, %c7 : index
      %e = arith.remui %m, %c1000 : index
      %want = arith.index_cast %e : index to i32
      %got = memref.load %h[%i] : memref<?xi32>
      %same = arith.cmpi eq, %got, %want : i32
      %more = arith.addi %wrong, %c1 : index
      %w = arith.select %same, %wrong, %more : index
      %g64 = arith.extsi %got : i32 to i64
      %s = arith.addi %sum, %g64 : i64
      scf.yield %w, %s : index, i64
    }
    vector.print str "slots: "
    %ni = arith.index_cast %n : index to i64
    vector.print %ni : i64
    vector.print str "wrong slots: "
    %wi = arith.index_cast %r#0 : index to i64
    vector.print %wi : i64
    vector.print str "checksum: "
    vector.print %r#1 : i64
    gpu.dealloc %d : memref<?xi32>
    return
  }
}

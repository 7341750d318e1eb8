// Atomic histograms of key(i) = (i*i + i/3) mod 16 for i < 5000, by 6 blocks of 128 threads in a
// grid-stride loop: once with atomics on global memory, once per block in workgroup memory (atomics
// there, a barrier, then one global atomic add per bin and block). The host counts the keys itself.
// ARCHS: sm_80 gfx90a
// WRONG: the barrier between counting in workgroup memory and merging into global memory removed
// WRONG-FROM:       gpu.barrier
// WRONG-FROM:       scf.if %owner {
// WRONG-FROM:         %count
// WRONG-TO:       scf.if %owner {
// WRONG-TO:         %count
// CHECK: [417,  210,  416,  209,  417,  208,  417,  208,  416,  208,  418,  208,  416,  208,  416,  208]
// CHECK: [417,  210,  416,  209,  417,  208,  417,  208,  416,  208,  418,  208,  416,  208,  416,  208]
// CHECK: wrong bins: 0
module attributes {gpu.container_module} {
  gpu.module @k {
    func.func @key(%i: index) -> index {
      %c3 = arith.constant 3 : index
      %c16 = arith.constant 16 : index
      %sq = arith.muli %i, %i : index
      %third = arith.divui %i, %c3 : index
      %s = arith.addi %sq, %third : index
      %k = arith.remui %s, %c16 : index
      return %k : index
    }
    gpu.func @global_bins(%bins: memref<?xi32>, %n: index) kernel {
      %start = gpu.global_id x
      %bdim = gpu.block_dim x
      %gdim = gpu.grid_dim x
      %stride = arith.muli %bdim, %gdim : index
      %one = arith.constant 1 : i32
      scf.for %i = %start to %n step %stride {
        %key = func.call @key(%i) : (index) -> index
        %old = memref.atomic_rmw addi %one, %bins[%key] : (i32, memref<?xi32>) -> i32
      }
      gpu.return
    }
    gpu.func @block_bins(%bins: memref<?xi32>, %n: index)
        workgroup(%local: memref<16xi32, #gpu.address_space<workgroup>>) kernel {
      %c16 = arith.constant 16 : index
      %zero = arith.constant 0 : i32
      %one = arith.constant 1 : i32
      %tid = gpu.thread_id x
      %owner = arith.cmpi ult, %tid, %c16 : index
      scf.if %owner {
        memref.store %zero, %local[%tid] : memref<16xi32, #gpu.address_space<workgroup>>
      }
      gpu.barrier
      %start = gpu.global_id x
      %bdim = gpu.block_dim x
      %gdim = gpu.grid_dim x
      %stride = arith.muli %bdim, %gdim : index
      scf.for %i = %start to %n step %stride {
        %key = func.call @key(%i) : (index) -> index
        %old = memref.atomic_rmw addi %one, %local[%key] : (i32, memref<16xi32, #gpu.address_space<workgroup>>) -> i32
      }
      gpu.barrier
      scf.if %owner {
        %count = memref.load %local[%tid] : memref<16xi32, #gpu.address_space<workgroup>>
        %old = memref.atomic_rmw addi %count, %bins[%tid] : (i32, memref<?xi32>) -> i32
      }
      gpu.return
    }
  }
  func.func private @printMemrefI32(memref<*xi32>)
  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %c6 = arith.constant 6 : index
    %c16 = arith.constant 16 : index
    %c128 = arith.constant 128 : index
    %n = arith.constant 5000 : index
    %zero = arith.constant 0 : i32
    %one = arith.constant 1 : i32
    %g1 = gpu.alloc(%c16) : memref<?xi32>
    %g2 = gpu.alloc(%c16) : memref<?xi32>
    gpu.memset %g1, %zero : memref<?xi32>, i32
    gpu.memset %g2, %zero : memref<?xi32>, i32
    gpu.launch_func @k::@global_bins blocks in (%c6, %c1, %c1) threads in (%c128, %c1, %c1)
        args(%g1 : memref<?xi32>, %n : index)
    gpu.launch_func @k::@block_bins blocks in (%c6, %c1, %c1) threads in (%c128, %c1, %c1)
        args(%g2 : memref<?xi32>, %n : index)
    %h1 = memref.alloc(%c16) : memref<?xi32>
    %h2 = memref.alloc(%c16) : memref<?xi32>
    gpu.memcpy %h1, %g1 : memref<?xi32>, memref<?xi32>
    gpu.memcpy %h2, %g2 : memref<?xi32>, memref<?xi32>
    %u1 = memref.cast %h1 : memref<?xi32> to memref<*xi32>
    %u2 = memref.cast %h2 : memref<?xi32> to memref<*xi32>
    call @printMemrefI32(%u1) : (memref<*xi32>) -> ()
    call @printMemrefI32(%u2) : (memref<*xi32>) -> ()
    // The host's own count, then the bins of either histogram that differ from it.
    %want = memref.alloc(%c16) : memref<?xi32>
    scf.for %b = %c0 to %c16 step %c1 {
      memref.store %zero, %want[%b] : memref<?xi32>
    }
    scf.for %i = %c0 to %n step %c1 {
      %sq = arith.muli %i, %i : index
      %third = arith.divui %i, %c3 : index
      %s = arith.addi %sq, %third : index
      %key = arith.remui %s, %c16 : index
      %old = memref.load %want[%key] : memref<?xi32>
      %new = arith.addi %old, %one : i32
      memref.store %new, %want[%key] : memref<?xi32>
    }
    %wrong = scf.for %b = %c0 to %c16 step %c1 iter_args(%count = %c0) -> (index) {
      %w = memref.load %want[%b] : memref<?xi32>
      %a = memref.load %h1[%b] : memref<?xi32>
      %c = memref.load %h2[%b] : memref<?xi32>
      %ok1 = arith.cmpi eq, %a, %w : i32
      %ok2 = arith.cmpi eq, %c, %w : i32
      %ok = arith.andi %ok1, %ok2 : i1
      %next = arith.addi %count, %c1 : index
      %r = arith.select %ok, %count, %next : index
      scf.yield %r : index
    }
    vector.print str "wrong bins: "
    %wr = arith.index_cast %wrong : index to i64
    vector.print %wr : i64
    gpu.dealloc %g1 : memref<?xi32>
    gpu.dealloc %g2 : memref<?xi32>
    return
  }
}

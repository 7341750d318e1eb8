// A cluster reduction through distributed shared memory: 8 blocks of 64 threads in clusters of 4. Each
// block sums its 64 inputs (x[i] = 7i mod 13) in its own shared memory, then thread 0 stores the block's
// partial into slot `rank` of rank 0's shared memory (mapa: a remote store); after a cluster barrier, rank 0
// adds its four slots into out[cluster], and every block reads slot (rank + 1) mod 4 of rank 0 back (a
// remote load); a second cluster barrier keeps rank 0's shared memory alive until all have read.
// Expected (computed in Python): partials 384 378 385 379 | 386 380 387 381, totals 1526 and 1534.
// ARCHS: sm_90a
// WRONG: mapa to the block's own rank instead of rank 0 (each block stores into and reads its own slots)
// WRONG-FROM:       %rank0_slots = nvvm.mapa %slots_ptr, %zero_i32 : !llvm.ptr<3> -> !llvm.ptr<7>
// WRONG-TO:       %rank0_slots = nvvm.mapa %slots_ptr, %rank_i32 : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK: sizes = [2]
// CHECK-NEXT: [1526, 1534]
// CHECK: sizes = [8]
// CHECK-NEXT: [378, 385, 379, 384, 380, 387, 381, 386]
module attributes {gpu.container_module} {
  gpu.module @k {
    memref.global "private" @vals : memref<64xf32, 3> {alignment = 16 : i64}
    memref.global "private" @slots : memref<4xf32, 3> {alignment = 16 : i64}
    gpu.func @reduce(%in: memref<512xf32>, %out: memref<2xf32>, %back: memref<8xf32>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %c64 = arith.constant 64 : index
      %zero = arith.constant 0.0 : f32
      %tid = gpu.thread_id x
      %bid = gpu.block_id x
      %rank = gpu.cluster_block_id x
      %cluster = gpu.cluster_id x
      %vals = memref.get_global @vals : memref<64xf32, 3>
      %slots = memref.get_global @slots : memref<4xf32, 3>
      %base = arith.muli %bid, %c64 : index
      %i = arith.addi %base, %tid : index
      %x = memref.load %in[%i] : memref<512xf32>
      memref.store %x, %vals[%tid] : memref<64xf32, 3>
      gpu.barrier
      %leader = arith.cmpi eq, %tid, %c0 : index
      %rank_i32 = index.casts %rank : index to i32
      %zero_i32 = arith.constant 0 : i32
      %slots_index = memref.extract_aligned_pointer_as_index %slots : memref<4xf32, 3> -> index
      %slots_i64 = arith.index_cast %slots_index : index to i64
      %slots_ptr = llvm.inttoptr %slots_i64 : i64 to !llvm.ptr<3>
      %rank0_slots = nvvm.mapa %slots_ptr, %zero_i32 : !llvm.ptr<3> -> !llvm.ptr<7>
      scf.if %leader {
        %partial = scf.for %j = %c0 to %c64 step %c1 iter_args(%acc = %zero) -> (f32) {
          %v = memref.load %vals[%j] : memref<64xf32, 3>
          %s = arith.addf %acc, %v : f32
          scf.yield %s : f32
        }
        %mine = llvm.getelementptr %rank0_slots[%rank_i32] : (!llvm.ptr<7>, i32) -> !llvm.ptr<7>, f32
        llvm.store %partial, %mine : f32, !llvm.ptr<7>
      }
      nvvm.cluster.arrive
      nvvm.cluster.wait
      %first = arith.cmpi eq, %rank, %c0 : index
      %sums = arith.andi %leader, %first : i1
      scf.if %sums {
        %total = scf.for %j = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> (f32) {
          %v = memref.load %slots[%j] : memref<4xf32, 3>
          %s = arith.addf %acc, %v : f32
          scf.yield %s : f32
        }
        memref.store %total, %out[%cluster] : memref<2xf32>
      }
      scf.if %leader {
        %next = arith.addi %rank, %c1 : index
        %wrapped = arith.remui %next, %c4 : index
        %next_i32 = index.casts %wrapped : index to i32
        %there = llvm.getelementptr %rank0_slots[%next_i32] : (!llvm.ptr<7>, i32) -> !llvm.ptr<7>, f32
        %v = llvm.load %there : !llvm.ptr<7> -> f32
        memref.store %v, %back[%bid] : memref<8xf32>
      }
      nvvm.cluster.arrive.relaxed
      nvvm.cluster.wait
      gpu.return
    }
  }
  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c7 = arith.constant 7 : index
    %c8 = arith.constant 8 : index
    %c13 = arith.constant 13 : index
    %c64 = arith.constant 64 : index
    %c512 = arith.constant 512 : index
    %host = memref.alloc() : memref<512xf32>
    scf.for %i = %c0 to %c512 step %c1 {
      %m = arith.muli %i, %c7 : index
      %r = arith.remui %m, %c13 : index
      %ri = arith.index_cast %r : index to i32
      %f = arith.sitofp %ri : i32 to f32
      memref.store %f, %host[%i] : memref<512xf32>
    }
    %in = gpu.alloc () : memref<512xf32>
    %out = gpu.alloc () : memref<2xf32>
    %back = gpu.alloc () : memref<8xf32>
    gpu.memcpy %in, %host : memref<512xf32>, memref<512xf32>
    gpu.launch_func @k::@reduce clusters in (%c4, %c1, %c1) blocks in (%c8, %c1, %c1) threads in (%c64, %c1, %c1) args(%in : memref<512xf32>, %out : memref<2xf32>, %back : memref<8xf32>)
    %hout = memref.alloc() : memref<2xf32>
    %hback = memref.alloc() : memref<8xf32>
    gpu.memcpy %hout, %out : memref<2xf32>, memref<2xf32>
    gpu.memcpy %hback, %back : memref<8xf32>, memref<8xf32>
    %t = memref.cast %hout : memref<2xf32> to memref<*xf32>
    %b = memref.cast %hback : memref<8xf32> to memref<*xf32>
    call @printMemrefF32(%t) : (memref<*xf32>) -> ()
    call @printMemrefF32(%b) : (memref<*xf32>) -> ()
    return
  }
  func.func private @printMemrefF32(memref<*xf32>)
}

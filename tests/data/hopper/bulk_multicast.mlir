// cp.async.bulk without a tensor map and multicast copies in a cluster of two blocks (4 blocks in all).
// Phase 0: rank 0 multicasts a bulk copy of 256 bytes (in[64 * cluster ..], i32) into `got` of both blocks
// (mask 0b11); phase 1: rank 1 multicasts a 1-D TMA tile of 64 elements (in[256 + 64 * cluster ..]) into
// `tile` of both blocks. Each block's leader expects the bytes on its own mbarrier, waits, then copies
// both buffers back to out[block] with cp.async.bulk shared to global (bulk group commit and wait).
// in[i] = 3i + 1; expected (computed in Python): out[b] = in[64c .. 64c + 63] then in[256 + 64c ..], c =
// b / 2; the CHECK lines hold each block's sums of the two halves: 6112 and 55264, 18400 and 67552. The
// bulk copy completes on an mbarrier of the program's own (nvvm.mbarrier ops), the TMA tile on nvgpu's.
// ARCHS: sm_90a
// WRONG: the TMA tile multicast from the block's own coordinates shifted by one element
// WRONG-FROM:         %start = arith.addi %start0, %c256 : index
// WRONG-TO:         %start = arith.addi %start0, %c257 : index
// CHECK: sizes = [4, 2]
// CHECK-NEXT: [6112,   55264]
// CHECK-NEXT: [6112,   55264]
// CHECK-NEXT: [18400,   67552]
// CHECK-NEXT: [18400,   67552]
!barriers = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
!map = !nvgpu.tensormap.descriptor<tensor = memref<64xi32, 3>, swizzle = none, l2promo = none, oob = zero, interleave = none>
module attributes {gpu.container_module} {
  memref.global "private" @got : memref<64xi32, 3> {alignment = 128 : i64}
  memref.global "private" @tile : memref<64xi32, 3> {alignment = 128 : i64}
  memref.global "private" @bulkbar : memref<1xi64, 3> {alignment = 8 : i64}
  func.func private @printMemrefI32(memref<*xi32>)
  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c64 = arith.constant 64 : index
    %c384 = arith.constant 384 : index
    %host = memref.alloc() : memref<384xi32>
    scf.for %i = %c0 to %c384 step %c1 {
      %i32 = arith.index_cast %i : index to i32
      %three = arith.constant 3 : i32
      %one = arith.constant 1 : i32
      %t = arith.muli %i32, %three : i32
      %v = arith.addi %t, %one : i32
      memref.store %v, %host[%i] : memref<384xi32>
    }
    %in = gpu.alloc () : memref<384xi32>
    %out = gpu.alloc () : memref<4x128xi32>
    gpu.memcpy %in, %host : memref<384xi32>, memref<384xi32>
    %unranked = memref.cast %in : memref<384xi32> to memref<*xi32>
    %tmap = nvgpu.tma.create.descriptor %unranked box[%c64] : memref<*xi32> -> !map
    gpu.launch clusters(%cx, %cy, %cz) in (%sx = %c2, %sy = %c1, %sz = %c1) blocks(%bx, %by, %bz) in (%gx = %c4, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%nx = %c64, %ny = %c1, %nz = %c1) {
      %c128 = arith.constant 128 : index
      %c256 = arith.constant 256 : index
      %c257 = arith.constant 257 : index
      %ticks = arith.constant 10000000 : index
      %false = arith.constant false
      %size = arith.constant 256 : i32
      %mask = arith.constant 3 : i16
      %got = memref.get_global @got : memref<64xi32, 3>
      %tile = memref.get_global @tile : memref<64xi32, 3>
      %bar = nvgpu.mbarrier.create -> !barriers
      %rank = gpu.cluster_block_id x
      %cluster = gpu.cluster_id x
      %leader = arith.cmpi eq, %tx, %c0 : index
      %bulkbar = memref.get_global @bulkbar : memref<1xi64, 3>
      %bar_index = memref.extract_aligned_pointer_as_index %bulkbar : memref<1xi64, 3> -> index
      %bar_i64 = arith.index_cast %bar_index : index to i64
      %bar_ptr = llvm.inttoptr %bar_i64 : i64 to !llvm.ptr<3>
      %one_i32 = arith.constant 1 : i32
      %zero_i32 = arith.constant 0 : i32
      %ticks_i32 = arith.constant 10000000 : i32
      scf.if %leader {
        nvvm.mbarrier.init %bar_ptr, %one_i32 : !llvm.ptr<3>, i32
        nvgpu.mbarrier.init %bar[%c1], %c1 : !barriers
        nvvm.mbarrier.arrive.expect_tx %bar_ptr, %size : !llvm.ptr<3>, i32
        nvgpu.mbarrier.arrive.expect_tx %bar[%c1], %c256 : !barriers
      }
      nvvm.cluster.arrive
      nvvm.cluster.wait
      %got_index = memref.extract_aligned_pointer_as_index %got : memref<64xi32, 3> -> index
      %got_i64 = arith.index_cast %got_index : index to i64
      %got_ptr = llvm.inttoptr %got_i64 : i64 to !llvm.ptr<3>
      %tile_index = memref.extract_aligned_pointer_as_index %tile : memref<64xi32, 3> -> index
      %tile_i64 = arith.index_cast %tile_index : index to i64
      %tile_ptr = llvm.inttoptr %tile_i64 : i64 to !llvm.ptr<3>
      %zero = arith.constant 0 : i32
      %got_cluster = nvvm.mapa %got_ptr, %zero : !llvm.ptr<3> -> !llvm.ptr<7>
      %first = arith.cmpi eq, %rank, %c0 : index
      %second = arith.cmpi eq, %rank, %c1 : index
      %sends_bulk = arith.andi %leader, %first : i1
      %sends_tile = arith.andi %leader, %second : i1
      scf.if %sends_bulk {
        %start = arith.muli %cluster, %c64 : index
        %src_index = memref.extract_aligned_pointer_as_index %in : memref<384xi32> -> index
        %src_i64 = arith.index_cast %src_index : index to i64
        %start_i64 = arith.index_cast %start : index to i64
        %four = arith.constant 4 : i64
        %bytes = arith.muli %start_i64, %four : i64
        %src_at = arith.addi %src_i64, %bytes : i64
        %src = llvm.inttoptr %src_at : i64 to !llvm.ptr<1>
        nvvm.cp.async.bulk.shared.cluster.global %got_cluster, %src, %bar_ptr, %size multicast_mask = %mask : !llvm.ptr<7>, !llvm.ptr<1>
      }
      scf.if %sends_tile {
        %start0 = arith.muli %cluster, %c64 : index
        %start = arith.addi %start0, %c256 : index
        nvgpu.tma.async.load %tmap[%start], %bar[%c1] to %tile multicast_mask = %mask : !map, !barriers -> memref<64xi32, 3>
      }
      nvvm.mbarrier.try_wait.parity %bar_ptr, %zero_i32, %ticks_i32 : !llvm.ptr<3>, i32, i32
      nvgpu.mbarrier.try_wait.parity %bar[%c1], %false, %ticks : !barriers
      scf.if %leader {
        %dst_index = memref.extract_aligned_pointer_as_index %out : memref<4x128xi32> -> index
        %dst_i64 = arith.index_cast %dst_index : index to i64
        %row = arith.muli %bx, %c128 : index
        %row_i64 = arith.index_cast %row : index to i64
        %four = arith.constant 4 : i64
        %row_bytes = arith.muli %row_i64, %four : i64
        %dst0_at = arith.addi %dst_i64, %row_bytes : i64
        %half = arith.constant 256 : i64
        %dst1_at = arith.addi %dst0_at, %half : i64
        %dst0 = llvm.inttoptr %dst0_at : i64 to !llvm.ptr<1>
        %dst1 = llvm.inttoptr %dst1_at : i64 to !llvm.ptr<1>
        nvvm.cp.async.bulk.global.shared.cta %dst0, %got_ptr, %size : !llvm.ptr<1>, !llvm.ptr<3>
        nvvm.cp.async.bulk.global.shared.cta %dst1, %tile_ptr, %size : !llvm.ptr<1>, !llvm.ptr<3>
        nvvm.cp.async.bulk.commit.group
        nvvm.cp.async.bulk.wait_group 0 {read}
      }
      nvvm.cluster.arrive
      nvvm.cluster.wait
      gpu.terminator
    }
    %h = memref.alloc() : memref<4x128xi32>
    gpu.memcpy %h, %out : memref<4x128xi32>, memref<4x128xi32>
    %sums = memref.alloc() : memref<4x2xi32>
    scf.for %b = %c0 to %c4 step %c1 {
      scf.for %half = %c0 to %c2 step %c1 {
        %z = arith.constant 0 : i32
        %base = arith.muli %half, %c64 : index
        %s = scf.for %j = %c0 to %c64 step %c1 iter_args(%acc = %z) -> (i32) {
          %k = arith.addi %base, %j : index
          %v = memref.load %h[%b, %k] : memref<4x128xi32>
          %n = arith.addi %acc, %v : i32
          scf.yield %n : i32
        }
        memref.store %s, %sums[%b, %half] : memref<4x2xi32>
      }
    }
    %u = memref.cast %sums : memref<4x2xi32> to memref<*xi32>
    call @printMemrefI32(%u) : (memref<*xi32>) -> ()
    return
  }
}

// nvvm.elect.sync and MLIR 22's predicated nvvm.mbarrier.arrive.expect_tx (inline PTX "@p mbarrier...."):
// two warps each elect one lane (the lowest of the full warp), which alone arrives on an mbarrier expecting
// two arrivals; every thread waits for the phase, then the elected lanes record their lane and count
// themselves. Expected: lanes [0, 0], 2 elected, and every thread saw the phase complete (64).
// ARCHS: sm_90a
// WRONG: lane 3 of each warp chosen instead of the elected lane
// WRONG-FROM:       %elected = nvvm.elect.sync -> i1
// WRONG-TO:       %lane_in_warp = arith.remui %tid, %c32 : index
// WRONG-TO:       %elected = arith.cmpi eq, %lane_in_warp, %c3 : index
// CHECK: [0, 0, 2, 64]
module attributes {gpu.container_module} {
  gpu.module @k {
    memref.global "private" @barrier : memref<1xi64, 3> {alignment = 8 : i64}
    gpu.func @elect(%out: memref<4xi32>) kernel {
      %c0 = arith.constant 0 : index
      %c2 = arith.constant 2 : index
      %c3 = arith.constant 3 : index
      %c32 = arith.constant 32 : index
      %zero = arith.constant 0 : i32
      %one = arith.constant 1 : i32
      %two = arith.constant 2 : i32
      %ticks = arith.constant 1000000 : i32
      %tid = gpu.thread_id x
      %g = memref.get_global @barrier : memref<1xi64, 3>
      %gi = memref.extract_aligned_pointer_as_index %g : memref<1xi64, 3> -> index
      %g64 = arith.index_cast %gi : index to i64
      %bar = llvm.inttoptr %g64 : i64 to !llvm.ptr<3>
      %first = arith.cmpi eq, %tid, %c0 : index
      scf.if %first {
        nvvm.mbarrier.init %bar, %two : !llvm.ptr<3>, i32
      }
      gpu.barrier
      %elected = nvvm.elect.sync -> i1
      nvvm.mbarrier.arrive.expect_tx %bar, %zero, predicate = %elected : !llvm.ptr<3>, i32, i1
      nvvm.mbarrier.try_wait.parity %bar, %zero, %ticks : !llvm.ptr<3>, i32, i32
      %seen = memref.atomic_rmw addi %one, %out[%c3] : (i32, memref<4xi32>) -> i32
      scf.if %elected {
        %warp = arith.divui %tid, %c32 : index
        %lane = arith.remui %tid, %c32 : index
        %lane32 = arith.index_cast %lane : index to i32
        memref.store %lane32, %out[%warp] : memref<4xi32>
        %count = memref.atomic_rmw addi %one, %out[%c2] : (i32, memref<4xi32>) -> i32
      }
      gpu.return
    }
  }
  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c64 = arith.constant 64 : index
    %minus = arith.constant -1 : i32
    %zero = arith.constant 0 : i32
    %h = memref.alloc() : memref<4xi32>
    memref.store %minus, %h[%c0] : memref<4xi32>
    memref.store %minus, %h[%c1] : memref<4xi32>
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    memref.store %zero, %h[%c2] : memref<4xi32>
    memref.store %zero, %h[%c3] : memref<4xi32>
    %d = gpu.alloc () : memref<4xi32>
    gpu.memcpy %d, %h : memref<4xi32>, memref<4xi32>
    gpu.launch_func @k::@elect blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1) args(%d : memref<4xi32>)
    gpu.memcpy %h, %d : memref<4xi32>, memref<4xi32>
    %u = memref.cast %h : memref<4xi32> to memref<*xi32>
    call @printMemrefI32(%u) : (memref<*xi32>) -> ()
    return
  }
  func.func private @printMemrefI32(memref<*xi32>)
}

// Warp shuffles: each of 2 blocks of 64 threads sums tid + 1 over its 32-lane group with a butterfly of
// gpu.shuffle xor (offsets 16, 8, 4, 2, 1, width 32); out[i] holds its group's sum. Each BUG plants one
// error in the shuffles.
// ARCHS: sm_80 gfx90a
// CHECK: sum: 264192
// BUG inactive: lanes 16 to 31 of each group skip the shuffles: lane 0's partner (lane 16) has exited
// BUG inactive FROM:       %active = arith.constant true
// BUG inactive TO:       %active = arith.cmpi ult, %lane, %c16 : index
// BUG inactive REPORT: FILE:@shuffle:23: error: synccheck: inactive source lane in kernel 'butterfly', block (0,0,0), thread (0,0,0): it reads thread (16,0,0), which has exited
// BUG mask: shfl.sync with the mask 0xffff, executed by all 32 lanes of the warp
// BUG mask ARCHS: sm_80
// BUG mask FROM:         %s16, %ok16 = gpu.shuffle xor %v, %c16i, %c32i : i32 // @shuffle
// BUG mask TO:         %half = arith.constant 65535 : i32
// BUG mask TO:         %s16 = nvvm.shfl.sync bfly %half, %v, %c16i, %c31i : i32 -> i32 // @mask
// BUG mask REPORT: FILE:@mask:16: error: synccheck: shuffle mask leaves out an executing lane in kernel 'butterfly', block (0,0,0), thread (0,0,0): its mask 0x0000ffff leaves out thread (16,0,0), which executes this shuffle and whose value it reads
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @butterfly(%out: memref<?xi32>) kernel {
      %c1 = arith.constant 1 : index
      %c16 = arith.constant 16 : index
      %c32 = arith.constant 32 : index
      %c1i = arith.constant 1 : i32
      %c2i = arith.constant 2 : i32
      %c4i = arith.constant 4 : i32
      %c8i = arith.constant 8 : i32
      %c16i = arith.constant 16 : i32
      %c31i = arith.constant 31 : i32
      %c32i = arith.constant 32 : i32
      %tid = gpu.thread_id x
      %bid = gpu.block_id x
      %bdim = gpu.block_dim x
      %row = arith.muli %bid, %bdim : index
      %i = arith.addi %row, %tid : index
      %lane = arith.remui %tid, %c32 : index
      %i1 = arith.addi %i, %c1 : index
      %v = arith.index_cast %i1 : index to i32
      %active = arith.constant true
      scf.if %active {
        %s16, %ok16 = gpu.shuffle xor %v, %c16i, %c32i : i32 // @shuffle
        %a16 = arith.addi %v, %s16 : i32
        %s8, %ok8 = gpu.shuffle xor %a16, %c8i, %c32i : i32
        %a8 = arith.addi %a16, %s8 : i32
        %s4, %ok4 = gpu.shuffle xor %a8, %c4i, %c32i : i32
        %a4 = arith.addi %a8, %s4 : i32
        %s2, %ok2 = gpu.shuffle xor %a4, %c2i, %c32i : i32
        %a2 = arith.addi %a4, %s2 : i32
        %s1, %ok1 = gpu.shuffle xor %a2, %c1i, %c32i : i32
        %a1 = arith.addi %a2, %s1 : i32
        memref.store %a1, %out[%i] : memref<?xi32>
      }
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
    gpu.launch_func @k::@butterfly blocks in (%c2, %c1, %c1) threads in (%c64, %c1, %c1) args(%out : memref<?xi32>)
    %hout = memref.alloc(%n) : memref<?xi32>
    gpu.memcpy %hout, %out : memref<?xi32>, memref<?xi32>
    %zero = arith.constant 0 : i32
    %sum = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %zero) -> (i32) {
      %x = memref.load %hout[%j] : memref<?xi32>
      %next = arith.addi %acc, %x : i32
      scf.yield %next : i32
    }
    gpu.dealloc %out : memref<?xi32>
    memref.dealloc %hout : memref<?xi32>
    vector.print str "sum: "
    vector.print %sum : i32
    return
  }
}

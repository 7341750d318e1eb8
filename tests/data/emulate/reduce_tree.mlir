// Shared-memory tree reduction: each block of 128 threads sums its 128 inputs in workgroup memory,
// halving the active threads in a loop with a gpu.barrier after every step; x[i] = i*i mod 97.
// The host sums the same slices and counts the blocks that differ.
// ARCHS: sm_80 gfx90a
// WRONG: the barrier inside the halving loop removed
// WRONG-FROM:           memref.store %sum, %s[%tid] : memref<128xi32, #gpu.address_space<workgroup>>
// WRONG-FROM:         }
// WRONG-FROM:         gpu.barrier
// WRONG-TO:           memref.store %sum, %s[%tid] : memref<128xi32, #gpu.address_space<workgroup>>
// WRONG-TO:         }
// CHECK: [5963,  6384,  6247,  5843,  6336,  6271,  5745,  6504]
// CHECK-NEXT: wrong blocks: 0
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @block_sums(%x: memref<?xi32>, %out: memref<?xi32>)
        workgroup(%s: memref<128xi32, #gpu.address_space<workgroup>>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c7 = arith.constant 7 : index
      %c64 = arith.constant 64 : index
      %tid = gpu.thread_id x
      %bid = gpu.block_id x
      %bdim = gpu.block_dim x
      %base = arith.muli %bid, %bdim : index
      %i = arith.addi %base, %tid : index
      %v = memref.load %x[%i] : memref<?xi32>
      memref.store %v, %s[%tid] : memref<128xi32, #gpu.address_space<workgroup>>
      gpu.barrier
      scf.for %step = %c0 to %c7 step %c1 {
        %half = arith.shrui %c64, %step : index
        %active = arith.cmpi ult, %tid, %half : index
        scf.if %active {
          %j = arith.addi %tid, %half : index
          %a = memref.load %s[%tid] : memref<128xi32, #gpu.address_space<workgroup>>
          %b = memref.load %s[%j] : memref<128xi32, #gpu.address_space<workgroup>>
          %sum = arith.addi %a, %b : i32
          memref.store %sum, %s[%tid] : memref<128xi32, #gpu.address_space<workgroup>>
        }
        gpu.barrier
      }
      %first = arith.cmpi eq, %tid, %c0 : index
      scf.if %first {
        %total = memref.load %s[%c0] : memref<128xi32, #gpu.address_space<workgroup>>
        memref.store %total, %out[%bid] : memref<?xi32>
      }
      gpu.return
    }
  }
  func.func private @printMemrefI32(memref<*xi32>)
  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c97 = arith.constant 97 : index
    %blocks = arith.constant 8 : index
    %threads = arith.constant 128 : index
    %n = arith.constant 1024 : index
    %hx = memref.alloc(%n) : memref<?xi32>
    scf.for %i = %c0 to %n step %c1 {
      %sq = arith.muli %i, %i : index
      %r = arith.remui %sq, %c97 : index
      %v = arith.index_cast %r : index to i32
      memref.store %v, %hx[%i] : memref<?xi32>
    }
    %hout = memref.alloc(%blocks) : memref<?xi32>
    %x = gpu.alloc(%n) : memref<?xi32>
    %out = gpu.alloc(%blocks) : memref<?xi32>
    gpu.memcpy %x, %hx : memref<?xi32>, memref<?xi32>
    gpu.launch_func @k::@block_sums blocks in (%blocks, %c1, %c1) threads in (%threads, %c1, %c1)
        args(%x : memref<?xi32>, %out : memref<?xi32>)
    gpu.memcpy %hout, %out : memref<?xi32>, memref<?xi32>
    %u = memref.cast %hout : memref<?xi32> to memref<*xi32>
    call @printMemrefI32(%u) : (memref<*xi32>) -> ()
    %zero = arith.constant 0 : i32
    %wrong = scf.for %b = %c0 to %blocks step %c1 iter_args(%count = %c0) -> (index) {
      %start = arith.muli %b, %threads : index
      %stop = arith.addi %start, %threads : index
      %want = scf.for %i = %start to %stop step %c1 iter_args(%acc = %zero) -> (i32) {
        %v = memref.load %hx[%i] : memref<?xi32>
        %next = arith.addi %acc, %v : i32
        scf.yield %next : i32
      }
      %got = memref.load %hout[%b] : memref<?xi32>
      %same = arith.cmpi eq, %got, %want : i32
      %plus = arith.addi %count, %c1 : index
      %c = arith.select %same, %count, %plus : index
      scf.yield %c : index
    }
    vector.print str "wrong blocks: "
    %w = arith.index_cast %wrong : index to i64
    vector.print %w : i64
    gpu.dealloc %x : memref<?xi32>
    gpu.dealloc %out : memref<?xi32>
    memref.dealloc %hx : memref<?xi32>
    memref.dealloc %hout : memref<?xi32>
    return
  }
}

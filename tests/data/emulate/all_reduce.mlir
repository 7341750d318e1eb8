// gpu.all_reduce (add, maxsi, minsi, and, or, xor on i32; add on f32) over blocks of 96 threads, which
// are neither a power of two nor a whole number of 64-lane wavefronts. v = (37*t + 11*block) mod 101 + 1;
// the and reduces v + 1023. Every thread must see the block's result: the host counts the threads
// whose results differ from thread 0's.
// ARCHS: sm_80 gfx90a
// WRONG: the sum reduces max instead of add
// WRONG-FROM: %sum = gpu.all_reduce add %v uniform {
// WRONG-TO: %sum = gpu.all_reduce maxsi %v uniform {
// CHECK: [4893,  101,  1,  1024,  127,  37,  4939,  101,  1,  1024,  127,  55]
// CHECK: [2446.5,  2469.5]
// CHECK: threads that disagree: 0
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @reduce(%out: memref<?xi32>, %halves: memref<?xf32>, %disagree: memref<?xi32>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c6 = arith.constant 6 : index
      %tid = gpu.thread_id x
      %bid = gpu.block_id x
      %t = arith.index_cast %tid : index to i32
      %b = arith.index_cast %bid : index to i32
      %k37 = arith.constant 37 : i32
      %k11 = arith.constant 11 : i32
      %k101 = arith.constant 101 : i32
      %one = arith.constant 1 : i32
      %k1023 = arith.constant 1023 : i32
      %t37 = arith.muli %t, %k37 : i32
      %b11 = arith.muli %b, %k11 : i32
      %s = arith.addi %t37, %b11 : i32
      %m = arith.remui %s, %k101 : i32
      %v = arith.addi %m, %one : i32
      %w = arith.addi %v, %k1023 : i32
      %sum = gpu.all_reduce add %v uniform {
      } : (i32) -> (i32)
      %max = gpu.all_reduce maxsi %v uniform {
      } : (i32) -> (i32)
      %min = gpu.all_reduce minsi %v uniform {
      } : (i32) -> (i32)
      %and = gpu.all_reduce and %w uniform {
      } : (i32) -> (i32)
      %or = gpu.all_reduce or %v uniform {
      } : (i32) -> (i32)
      %xor = gpu.all_reduce xor %v uniform {
      } : (i32) -> (i32)
      %f = arith.sitofp %v : i32 to f32
      %half = arith.constant 0.5 : f32
      %fh = arith.mulf %f, %half : f32
      %fsum = gpu.all_reduce add %fh uniform {
      } : (f32) -> (f32)
      %base = arith.muli %bid, %c6 : index
      %is0 = arith.cmpi eq, %tid, %c0 : index
      scf.if %is0 {
        %a0 = arith.addi %base, %c0 : index
        memref.store %sum, %out[%a0] : memref<?xi32>
        %a1 = arith.addi %a0, %c1 : index
        memref.store %max, %out[%a1] : memref<?xi32>
        %a2 = arith.addi %a1, %c1 : index
        memref.store %min, %out[%a2] : memref<?xi32>
        %a3 = arith.addi %a2, %c1 : index
        memref.store %and, %out[%a3] : memref<?xi32>
        %a4 = arith.addi %a3, %c1 : index
        memref.store %or, %out[%a4] : memref<?xi32>
        %a5 = arith.addi %a4, %c1 : index
        memref.store %xor, %out[%a5] : memref<?xi32>
        memref.store %fsum, %halves[%bid] : memref<?xf32>
      }
      gpu.barrier
      // Every other thread compares its results with thread 0's.
      %a0 = arith.addi %base, %c0 : index
      %s0 = memref.load %out[%a0] : memref<?xi32>
      %a1 = arith.addi %a0, %c1 : index
      %s1 = memref.load %out[%a1] : memref<?xi32>
      %a2 = arith.addi %a1, %c1 : index
      %s2 = memref.load %out[%a2] : memref<?xi32>
      %a3 = arith.addi %a2, %c1 : index
      %s3 = memref.load %out[%a3] : memref<?xi32>
      %a4 = arith.addi %a3, %c1 : index
      %s4 = memref.load %out[%a4] : memref<?xi32>
      %a5 = arith.addi %a4, %c1 : index
      %s5 = memref.load %out[%a5] : memref<?xi32>
      %h0 = memref.load %halves[%bid] : memref<?xf32>
      %e0 = arith.cmpi eq, %s0, %sum : i32
      %e1 = arith.cmpi eq, %s1, %max : i32
      %e2 = arith.cmpi eq, %s2, %min : i32
      %e3 = arith.cmpi eq, %s3, %and : i32
      %e4 = arith.cmpi eq, %s4, %or : i32
      %e5 = arith.cmpi eq, %s5, %xor : i32
      %e6 = arith.cmpf oeq, %h0, %fsum : f32
      %x1 = arith.andi %e0, %e1 : i1
      %x2 = arith.andi %x1, %e2 : i1
      %x3 = arith.andi %x2, %e3 : i1
      %x4 = arith.andi %x3, %e4 : i1
      %x5 = arith.andi %x4, %e5 : i1
      %x6 = arith.andi %x5, %e6 : i1
      %agree = arith.extui %x6 : i1 to i32
      %differs = arith.subi %one, %agree : i32
      %old = memref.atomic_rmw addi %differs, %disagree[%c0] : (i32, memref<?xi32>) -> i32
      gpu.return
    }
  }
  func.func private @printMemrefI32(memref<*xi32>)
  func.func private @printMemrefF32(memref<*xf32>)
  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c12 = arith.constant 12 : index
    %c96 = arith.constant 96 : index
    %zero = arith.constant 0 : i32
    %out = gpu.alloc(%c12) : memref<?xi32>
    %halves = gpu.alloc(%c2) : memref<?xf32>
    %disagree = gpu.alloc(%c1) : memref<?xi32>
    gpu.memset %disagree, %zero : memref<?xi32>, i32
    gpu.launch_func @k::@reduce blocks in (%c2, %c1, %c1) threads in (%c96, %c1, %c1)
        args(%out : memref<?xi32>, %halves : memref<?xf32>, %disagree : memref<?xi32>)
    %hout = memref.alloc(%c12) : memref<?xi32>
    %hhalves = memref.alloc(%c2) : memref<?xf32>
    %hdisagree = memref.alloc(%c1) : memref<?xi32>
    gpu.memcpy %hout, %out : memref<?xi32>, memref<?xi32>
    gpu.memcpy %hhalves, %halves : memref<?xf32>, memref<?xf32>
    gpu.memcpy %hdisagree, %disagree : memref<?xi32>, memref<?xi32>
    %u = memref.cast %hout : memref<?xi32> to memref<*xi32>
    call @printMemrefI32(%u) : (memref<*xi32>) -> ()
    %uh = memref.cast %hhalves : memref<?xf32> to memref<*xf32>
    call @printMemrefF32(%uh) : (memref<*xf32>) -> ()
    vector.print str "threads that disagree: "
    %dis = memref.load %hdisagree[%c0] : memref<?xi32>
    vector.print %dis : i32
    gpu.dealloc %out : memref<?xi32>
    gpu.dealloc %halves : memref<?xf32>
    gpu.dealloc %disagree : memref<?xi32>
    return
  }
}

// Kernels on two streams run at the same time, as on a GPU: each kernel arrives at a host_shared
// counter and then waits for the other kernel's arrival. The wait is bounded (2^27 polls), so a
// runtime that ran the streams one after the other would not hang: the first kernel gives up and
// records 0 in its slot of `met` instead of 1.
// ARCHS: sm_80 gfx90a
// WRONG: the second launch waits for the first (one stream after the other): the first kernel gives up
// WRONG-FROM:     %r1 = gpu.launch_func async [%s1] @k::@meet blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%counter : memref<i32>, %met : memref<2xi32>, %c1 : index)
// WRONG-TO:     %r1 = gpu.launch_func async [%r0] @k::@meet blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%counter : memref<i32>, %met : memref<2xi32>, %c1 : index)
// CHECK: sizes = [2] strides = [1] data =
// CHECK-NEXT: [1,  1]
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @meet(%counter: memref<i32>, %met: memref<2xi32>, %slot: index) kernel {
      %zero = arith.constant 0 : i32
      %one = arith.constant 1 : i32
      %both = arith.constant 2 : i32
      %polls = arith.constant 134217728 : i32
      %arrived = memref.atomic_rmw addi %one, %counter[] : (i32, memref<i32>) -> i32
      %seen:2 = scf.while (%i = %zero) : (i32) -> (i32, i32) {
        %now = memref.atomic_rmw addi %zero, %counter[] : (i32, memref<i32>) -> i32
        %waiting = arith.cmpi slt, %now, %both : i32
        %patient = arith.cmpi slt, %i, %polls : i32
        %again = arith.andi %waiting, %patient : i1
        scf.condition(%again) %now, %i : i32, i32
      } do {
      ^bb0(%now: i32, %i: i32):
        %next = arith.addi %i, %one : i32
        scf.yield %next : i32
      }
      %ok = arith.cmpi sge, %seen#0, %both : i32
      %flag = arith.extui %ok : i1 to i32
      memref.store %flag, %met[%slot] : memref<2xi32>
      gpu.return
    }
  }
  func.func private @printMemrefI32(memref<*xi32>)
  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %zero = arith.constant 0 : i32
    %counter = gpu.alloc host_shared () : memref<i32>
    memref.store %zero, %counter[] : memref<i32>
    %met = gpu.alloc host_shared () : memref<2xi32>
    memref.store %zero, %met[%c0] : memref<2xi32>
    memref.store %zero, %met[%c1] : memref<2xi32>
    %s0 = gpu.wait async
    %s1 = gpu.wait async
    %r0 = gpu.launch_func async [%s0] @k::@meet blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%counter : memref<i32>, %met : memref<2xi32>, %c0 : index)
    %r1 = gpu.launch_func async [%s1] @k::@meet blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%counter : memref<i32>, %met : memref<2xi32>, %c1 : index)
    gpu.wait [%r0, %r1]
    %u = memref.cast %met : memref<2xi32> to memref<*xi32>
    call @printMemrefI32(%u) : (memref<*xi32>) -> ()
    return
  }
}

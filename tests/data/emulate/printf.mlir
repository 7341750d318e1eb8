// gpu.printf from the device: thread 0 of each of three blocks prints its block id, an f32 and an i64;
// one thread of block 1 prints a hex value, and i8/i16/i1 values (promoted to int as C varargs are).
// Blocks print in any order, so the lines are CHECK-DAG.
// The host prints after waiting for the kernel.
// ARCHS: sm_80 gfx90a
// WRONG: the printed value is the thread id instead of the block id
// WRONG-FROM:       gpu.printf "block %d: half %f, big %lld\n", %b32, %half, %big : i32, f32, i64
// WRONG-TO:       gpu.printf "block %d: half %f, big %lld\n", %t32, %half, %big : i32, f32, i64
// CHECK-DAG: block 0: half 0.000000, big 1000000000000
// CHECK-DAG: block 1: half 0.500000, big 1000000000001
// CHECK-DAG: block 2: half 1.000000, big 1000000000002
// CHECK-DAG: thread 5 of block 1 says 0xbeef
// CHECK-DAG: narrow: -5 -300 1
// CHECK: host: done
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @talk() kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c5 = arith.constant 5 : index
      %t = gpu.thread_id x
      %b = gpu.block_id x
      %t32 = arith.index_cast %t : index to i32
      %b32 = arith.index_cast %b : index to i32
      %bf = arith.sitofp %b32 : i32 to f32
      %k = arith.constant 0.5 : f32
      %half = arith.mulf %bf, %k : f32
      %b64 = arith.extsi %b32 : i32 to i64
      %base = arith.constant 1000000000000 : i64
      %big = arith.addi %base, %b64 : i64
      %first = arith.cmpi eq, %t, %c0 : index
      scf.if %first {
        gpu.printf "block %d: half %f, big %lld\n", %b32, %half, %big : i32, f32, i64
      }
      %is5 = arith.cmpi eq, %t, %c5 : index
      %is1 = arith.cmpi eq, %b, %c1 : index
      %both = arith.andi %is5, %is1 : i1
      scf.if %both {
        %beef = arith.constant 48879 : i32
        gpu.printf "thread %d of block %d says 0x%x\n", %t32, %b32, %beef : i32, i32, i32
        %m5 = arith.constant -5 : i8
        %m300 = arith.constant -300 : i16
        %yes = arith.constant true
        gpu.printf "narrow: %d %d %d\n", %m5, %m300, %yes : i8, i16, i1
      }
      gpu.return
    }
  }
  func.func @main() {
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %c32 = arith.constant 32 : index
    gpu.launch_func @k::@talk blocks in (%c3, %c1, %c1) threads in (%c32, %c1, %c1)
    %done = gpu.wait async
    gpu.wait [%done]
    vector.print str "host: done\n"
    return
  }
}

// Ordering across streams by events: a kernel on a second stream depends on a kernel on the first
// (`gpu.wait async [%w]`: an event recorded on the first stream, waited for by the second). The writer
// first watches, for 2^27 polls, a host_shared flag the reader sets when it starts, and records in
// `early` whether it saw it: a reader that did not wait would run beside the writer (streams run
// concurrently) and be seen. Then the writer stores 3i+1 and the reader doubles it into `out`.
// ARCHS: sm_80 gfx90a
// WRONG: the reader's stream does not wait for the writer
// WRONG-FROM:     %s1 = gpu.wait async [%w]
// WRONG-TO:     %s1 = gpu.wait async
// CHECK: sizes = [1] strides = [1] data =
// CHECK-NEXT: [0]
// CHECK: sizes = [16] strides = [1] data =
// CHECK-NEXT: [2,  8,  14,  20,  26,  32,  38,  44,  50,  56,  62,  68,  74,  80,  86,  92]
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @write(%data: memref<16xi32>, %started: memref<i32>, %early: memref<1xi32>) kernel {
      %t = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %zero = arith.constant 0 : i32
      %one = arith.constant 1 : i32
      %three = arith.constant 3 : i32
      %polls = arith.constant 134217728 : i32
      %first = arith.cmpi eq, %t, %c0 : index
      scf.if %first {
        %seen:2 = scf.while (%i = %zero) : (i32) -> (i32, i32) {
          %now = memref.atomic_rmw addi %zero, %started[] : (i32, memref<i32>) -> i32
          %unseen = arith.cmpi eq, %now, %zero : i32
          %patient = arith.cmpi slt, %i, %polls : i32
          %again = arith.andi %unseen, %patient : i1
          scf.condition(%again) %now, %i : i32, i32
        } do {
        ^bb0(%now: i32, %i: i32):
          %next = arith.addi %i, %one : i32
          scf.yield %next : i32
        }
        memref.store %seen#0, %early[%c0] : memref<1xi32>
      }
      %i = arith.index_cast %t : index to i32
      %m = arith.muli %i, %three : i32
      %v = arith.addi %m, %one : i32
      memref.store %v, %data[%t] : memref<16xi32>
      gpu.return
    }
    gpu.func @double(%data: memref<16xi32>, %started: memref<i32>, %out: memref<16xi32>) kernel {
      %t = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %one = arith.constant 1 : i32
      %first = arith.cmpi eq, %t, %c0 : index
      scf.if %first {
        %old = memref.atomic_rmw assign %one, %started[] : (i32, memref<i32>) -> i32
      }
      %x = memref.load %data[%t] : memref<16xi32>
      %y = arith.addi %x, %x : i32
      memref.store %y, %out[%t] : memref<16xi32>
      gpu.return
    }
  }
  func.func private @printMemrefI32(memref<*xi32>)
  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %zero = arith.constant 0 : i32
    %started = gpu.alloc host_shared () : memref<i32>
    memref.store %zero, %started[] : memref<i32>
    %early = gpu.alloc host_shared () : memref<1xi32>
    memref.store %zero, %early[%c0] : memref<1xi32>
    %out = gpu.alloc host_shared () : memref<16xi32>
    %a0 = gpu.wait async
    %data, %a1 = gpu.alloc async [%a0] () : memref<16xi32>
    %w = gpu.launch_func async [%a1] @k::@write blocks in (%c1, %c1, %c1) threads in (%c16, %c1, %c1) args(%data : memref<16xi32>, %started : memref<i32>, %early : memref<1xi32>)
    %s1 = gpu.wait async [%w]
    %r = gpu.launch_func async [%s1] @k::@double blocks in (%c1, %c1, %c1) threads in (%c16, %c1, %c1) args(%data : memref<16xi32>, %started : memref<i32>, %out : memref<16xi32>)
    gpu.wait [%r, %w]
    %ue = memref.cast %early : memref<1xi32> to memref<*xi32>
    call @printMemrefI32(%ue) : (memref<*xi32>) -> ()
    %uo = memref.cast %out : memref<16xi32> to memref<*xi32>
    call @printMemrefI32(%uo) : (memref<*xi32>) -> ()
    return
  }
}

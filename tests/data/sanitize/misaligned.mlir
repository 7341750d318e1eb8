// f64 values read through a view of a byte buffer at a byte offset the host passes: 8 in the program as
// written; the BUG passes 4, so every f64 access is 4 bytes off its natural alignment (on a GPU, a
// misaligned address error; on the host it would silently work).
// ARCHS: sm_80 gfx90a
// CHECK: sum: 4032
// BUG misaligned: the view starts 4 bytes in
// BUG misaligned FROM:     %offset = arith.constant 8 : index
// BUG misaligned TO:     %offset = arith.constant 4 : index
// BUG misaligned REPORT: FILE:@read:12: error: memcheck: misaligned access: read of 8 bytes in kernel 'twice', block (0,0,0), thread (0,0,0): address % 8 is 4 (needs 8-byte alignment)
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @twice(%bytes: memref<?xi8>, %offset: index, %out: memref<?xf64>) kernel {
      %c64 = arith.constant 64 : index
      %tid = gpu.thread_id x
      %values = memref.view %bytes[%offset][%c64] : memref<?xi8> to memref<?xf64>
      %v = memref.load %values[%tid] : memref<?xf64> // @read
      %two = arith.constant 2.0 : f64
      %w = arith.mulf %v, %two : f64
      memref.store %w, %out[%tid] : memref<?xf64>
      gpu.return
    }
  }
  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c64 = arith.constant 64 : index
    %c528 = arith.constant 528 : index
    %hv = memref.alloc(%c64) : memref<?xf64>
    scf.for %i = %c0 to %c64 step %c1 {
      %ii = arith.index_cast %i : index to i32
      %f = arith.sitofp %ii : i32 to f64
      memref.store %f, %hv[%i] : memref<?xf64>
    }
    %bytes = gpu.alloc(%c528) : memref<?xi8>
    %offset = arith.constant 8 : index
    %dst = memref.view %bytes[%c8][%c64] : memref<?xi8> to memref<?xf64>
    gpu.memcpy %dst, %hv : memref<?xf64>, memref<?xf64>
    %out = gpu.alloc(%c64) : memref<?xf64>
    gpu.launch_func @k::@twice blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1)
        args(%bytes : memref<?xi8>, %offset : index, %out : memref<?xf64>)
    %hout = memref.alloc(%c64) : memref<?xf64>
    gpu.memcpy %hout, %out : memref<?xf64>, memref<?xf64>
    %zero = arith.constant 0.0 : f64
    %sum = scf.for %i = %c0 to %c64 step %c1 iter_args(%acc = %zero) -> (f64) {
      %v = memref.load %hout[%i] : memref<?xf64>
      %next = arith.addf %acc, %v : f64
      scf.yield %next : f64
    }
    gpu.dealloc %bytes : memref<?xi8>
    gpu.dealloc %out : memref<?xf64>
    %si = arith.fptosi %sum : f64 to i64
    vector.print str "sum: "
    vector.print %si : i64
    return
  }
}

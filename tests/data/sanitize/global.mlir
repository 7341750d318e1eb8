// Device buffers: out[i] = a[i] + b[i] + 100 / d over 1001 elements (4004 bytes each: 12 bytes short of a
// multiple of 16) in blocks of 256 threads, then out copied back and summed on the host. Each BUG turns
// one line into a planted error that --sanitize must report on the line of the op that makes it.
// ARCHS: sm_80 gfx90a
// CHECK: sum: 1526525
// BUG padding: the store one element past the end (into the allocation's padding)
// BUG padding FROM:       memref.store %r, %out[%i] : memref<?xf32>
// BUG padding TO:       memref.store %r, %out[%next] : memref<?xf32>
// BUG padding REPORT: FILE:@BUG:9: error: memcheck: out-of-bounds access: write of 4 bytes in kernel 'add', block (3,0,0), thread (232,0,0): offset 4004 of device buffer #3 (4004 bytes, allocated at FILE:@alloc_out:12)
// BUG negative: x[-1]
// BUG negative FROM:       %va = memref.load %a[%i] : memref<?xf32>
// BUG negative TO:       %va = memref.load %a[%previous] : memref<?xf32>
// BUG negative REPORT: FILE:@BUG:15: error: memcheck: out-of-bounds access: read of 4 bytes in kernel 'add', block (0,0,0), thread (0,0,0): offset -4 of device buffer #1 (4004 bytes, allocated at FILE:@alloc_a:10)
// BUG wild: an index a mebibyte away (past the guard pages, into whatever lies there)
// BUG wild FROM:       %vb = memref.load %b[%i] : memref<?xf32>
// BUG wild TO:       %vb = memref.load %b[%far] : memref<?xf32>
// BUG wild REPORT: FILE:@BUG:15: error: memcheck: out-of-bounds access: read of 4 bytes in kernel 'add', block (0,0,0), thread (0,0,0): offset 1048576 of device buffer #2 (4004 bytes, allocated at FILE:@alloc_b:10)
// BUG freed: a freed before the launch
// BUG freed FROM:     %t0 = arith.constant 0 : index
// BUG freed TO:     gpu.dealloc %a : memref<?xf32>
// BUG freed REPORT: FILE:@load_a:15: error: memcheck: use after free: read of 4 bytes in kernel 'add', block (0,0,0), thread (0,0,0): offset 0 of device buffer #1 (4004 bytes, allocated at FILE:@alloc_a:10, freed at FILE:@BUG:5)
// BUG double: b freed twice
// BUG double FROM:     %t1 = arith.constant 1 : index
// BUG double TO:     gpu.dealloc %b : memref<?xf32>
// BUG double REPORT: FILE:@free_b:5: error: memcheck: double free of device buffer #2 (4004 bytes, allocated at FILE:@alloc_b:10, freed at FILE:@BUG:5)
// BUG divide: a zero divisor
// BUG divide FROM:     %d = arith.constant 4 : index
// BUG divide TO:     %d = arith.constant 0 : index
// BUG divide REPORT: FILE:@divide:14: error: memcheck: integer division by zero in kernel 'add', block (0,0,0), thread (0,0,0)
// BUG unwritten: b never copied to the device
// BUG unwritten FROM:     gpu.memcpy %b, %hb : memref<?xf32>, memref<?xf32>
// BUG unwritten TO:     %unwritten = arith.constant 0 : index
// BUG unwritten REPORT: FILE:@load_b:15: error: initcheck: uninitialized read of 4 bytes in kernel 'add', block (0,0,0), thread (0,0,0): offset 0 of device buffer #2 (4004 bytes, allocated at FILE:@alloc_b:10) was never written
// BUG copy: 8008 bytes copied into the 4004-byte buffer a
// BUG copy FROM:     gpu.memcpy %a, %ha : memref<?xf32>, memref<?xf32>
// BUG copy TO:     gpu.memcpy %a, %hbig : memref<?xf32>, memref<?xf32>
// BUG copy REPORT: FILE:@BUG:5: error: memcheck: out-of-bounds host transfer: copy of 8008 bytes at offset 0 overflows its destination device buffer #1 (4004 bytes, allocated at FILE:@alloc_a:10)
// BUG leak: out never freed
// BUG leak FROM:     gpu.dealloc %out : memref<?xf32>
// BUG leak TO:     %leak = arith.constant 0 : index
// BUG leak REPORT: FILE:@alloc_out:12: error: leakcheck: device buffer #3 (4004 bytes) allocated here was never freed
// BUG leak FLAGS: --sanitize=all
// BUG hostcopy: out (4004 bytes) copied back into a host memref of 4 elements
// BUG hostcopy FROM:     %hout = memref.alloc(%n) : memref<?xf32>
// BUG hostcopy TO:     %hout = memref.alloc(%c4) : memref<?xf32>
// BUG hostcopy REPORT: FILE:@copy_out:5: error: memcheck: out-of-bounds host transfer: copy of 4004 bytes overflows its destination memref (16 bytes)
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @add(%a: memref<?xf32>, %b: memref<?xf32>, %out: memref<?xf32>, %n: index, %d: index) kernel {
      %c1 = arith.constant 1 : index
      %c100 = arith.constant 100 : index
      %c262144 = arith.constant 262144 : index
      %bid = gpu.block_id x
      %bdim = gpu.block_dim x
      %tid = gpu.thread_id x
      %base = arith.muli %bid, %bdim : index
      %i = arith.addi %base, %tid : index
      %next = arith.addi %i, %c1 : index
      %previous = arith.subi %i, %c1 : index
      %far = arith.addi %i, %c262144 : index
      %inside = arith.cmpi ult, %i, %n : index
      scf.if %inside {
        %va = memref.load %a[%i] : memref<?xf32> // @load_a
        %vb = memref.load %b[%i] : memref<?xf32> // @load_b
        %q = arith.divui %c100, %d : index // @divide
        %qi = arith.index_cast %q : index to i32
        %qf = arith.sitofp %qi : i32 to f32
        %s = arith.addf %va, %vb : f32
        %r = arith.addf %s, %qf : f32
        memref.store %r, %out[%i] : memref<?xf32>
      }
      gpu.return
    }
  }
  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c256 = arith.constant 256 : index
    %n = arith.constant 1001 : index
    %n2 = arith.constant 2002 : index
    %ha = memref.alloc(%n) : memref<?xf32>
    %hb = memref.alloc(%n) : memref<?xf32>
    %hbig = memref.alloc(%n2) : memref<?xf32>
    scf.for %i = %c0 to %n step %c1 {
      %ii = arith.index_cast %i : index to i32
      %f = arith.sitofp %ii : i32 to f32
      %two = arith.constant 2.0 : f32
      %g = arith.mulf %f, %two : f32
      memref.store %f, %ha[%i] : memref<?xf32>
      memref.store %g, %hb[%i] : memref<?xf32>
    }
    scf.for %i = %c0 to %n2 step %c1 {
      %zero = arith.constant 0.0 : f32
      memref.store %zero, %hbig[%i] : memref<?xf32>
    }
    %a = gpu.alloc(%n) : memref<?xf32> // @alloc_a
    %b = gpu.alloc(%n) : memref<?xf32> // @alloc_b
    %out = gpu.alloc(%n) : memref<?xf32> // @alloc_out
    gpu.memcpy %a, %ha : memref<?xf32>, memref<?xf32>
    gpu.memcpy %b, %hb : memref<?xf32>, memref<?xf32>
    %t0 = arith.constant 0 : index
    %d = arith.constant 4 : index
    gpu.launch_func @k::@add blocks in (%c4, %c1, %c1) threads in (%c256, %c1, %c1)
        args(%a : memref<?xf32>, %b : memref<?xf32>, %out : memref<?xf32>, %n : index, %d : index)
    %hout = memref.alloc(%n) : memref<?xf32>
    gpu.memcpy %hout, %out : memref<?xf32>, memref<?xf32> // @copy_out
    %zero = arith.constant 0.0 : f32
    %sum = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32) {
      %v = memref.load %hout[%i] : memref<?xf32>
      %next = arith.addf %acc, %v : f32
      scf.yield %next : f32
    }
    %t1 = arith.constant 1 : index
    gpu.dealloc %a : memref<?xf32>
    gpu.dealloc %b : memref<?xf32> // @free_b
    gpu.dealloc %out : memref<?xf32>
    %si = arith.fptosi %sum : f32 to i64
    vector.print str "sum: "
    vector.print %si : i64
    return
  }
}

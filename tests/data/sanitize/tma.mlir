// Operations the runtime carries out on Hopper (sm_90a): a TMA load brings rows 16..31 of a 32x32 f32 matrix
// (element (i, j) = 32 i + j) into a 2048-byte workgroup tile carved from a 4096-byte workgroup array by
// memref.view, completing on an mbarrier; after the wait, thread t of 64 reads tile[t mod 16][8 (t / 16)]
// (written by the copy, not by a thread: initcheck sees the TMA's writes, racecheck leaves the mbarrier's
// ordering alone) and stores it; the host's sum is 48896. Each BUG makes the copy reach memory it must not.
// ARCHS: sm_90a
// CHECK: sum: 48896
// BUG box: the tile placed 3072 bytes into the array: the box's last 1024 bytes lie past the workgroup memory
// BUG box FROM:       %tile = memref.view %smem[%c0][] : memref<4096xi8, 3> to memref<16x32xf32, 3>
// BUG box TO:       %tile = memref.view %smem[%c3072][] : memref<4096xi8, 3> to memref<16x32xf32, 3>
// BUG box REPORT: FILE:@load:9: error: memcheck: out-of-bounds access: write of 4 bytes in kernel 'main_kernel', block (0,0,0), thread (0,0,0): offset 4112 of workgroup memory (4112 bytes)
// BUG uninit: the threads read 16 rows further, in the half of the array the copy never wrote
// BUG uninit FROM:       %v = memref.load %tile[%r, %col] : memref<16x32xf32, 3>
// BUG uninit TO:       %r2 = arith.addi %r, %c16 : index
// BUG uninit TO:       %v = memref.load %tile[%r2, %col] : memref<16x32xf32, 3> // @read
// BUG uninit REPORT: FILE:@read:12: error: initcheck: uninitialized read of 4 bytes of workgroup variable 'smem' at offset 2048 in kernel 'main_kernel', block (0,0,0), thread (0,0,0): never written in this block
!map = !nvgpu.tensormap.descriptor<tensor = memref<16x32xf32, 3>, swizzle = none, l2promo = none, oob = zero, interleave = none>
!barriers = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
module attributes {gpu.container_module} {
  memref.global "private" @smem : memref<4096xi8, 3> {alignment = 1024 : i64}
  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %host = memref.alloc() : memref<32x32xf32>
    scf.for %i = %c0 to %c32 step %c1 {
      scf.for %j = %c0 to %c32 step %c1 {
        %i32 = arith.muli %i, %c32 : index
        %e = arith.addi %i32, %j : index
        %ei = arith.index_cast %e : index to i32
        %ef = arith.sitofp %ei : i32 to f32
        memref.store %ef, %host[%i, %j] : memref<32x32xf32>
      }
    }
    %dev = gpu.alloc () : memref<32x32xf32>
    %out = gpu.alloc () : memref<64xf32>
    gpu.memcpy %dev, %host : memref<32x32xf32>, memref<32x32xf32>
    %unranked = memref.cast %dev : memref<32x32xf32> to memref<*xf32>
    %map = nvgpu.tma.create.descriptor %unranked box[%c16, %c32] : memref<*xf32> -> !map
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%nx = %c64, %ny = %c1, %nz = %c1) {
      %c3072 = arith.constant 3072 : index
      %bytes = arith.constant 2048 : index
      %ticks = arith.constant 10000000 : index
      %parity = arith.constant false
      %smem = memref.get_global @smem : memref<4096xi8, 3>
      %tile = memref.view %smem[%c0][] : memref<4096xi8, 3> to memref<16x32xf32, 3>
      %bar = nvgpu.mbarrier.create -> !barriers
      %leader = arith.cmpi eq, %tx, %c0 : index
      scf.if %leader {
        nvgpu.mbarrier.init %bar[%c0], %c1 : !barriers
      }
      gpu.barrier
      scf.if %leader {
        nvgpu.mbarrier.arrive.expect_tx %bar[%c0], %bytes : !barriers
        nvgpu.tma.async.load %map[%c0, %c16], %bar[%c0] to %tile : !map, !barriers -> memref<16x32xf32, 3> // @load
      }
      nvgpu.mbarrier.try_wait.parity %bar[%c0], %parity, %ticks : !barriers
      %r = arith.remui %tx, %c16 : index
      %q = arith.divui %tx, %c16 : index
      %col = arith.muli %q, %c8 : index
      %v = memref.load %tile[%r, %col] : memref<16x32xf32, 3>
      memref.store %v, %out[%tx] : memref<64xf32>
      gpu.terminator
    }
    %result = memref.alloc() : memref<64xf32>
    gpu.memcpy %result, %out : memref<64xf32>, memref<64xf32>
    %zero = arith.constant 0.0 : f32
    %sum = scf.for %t = %c0 to %c64 step %c1 iter_args(%acc = %zero) -> (f32) {
      %x = memref.load %result[%t] : memref<64xf32>
      %n = arith.addf %acc, %x : f32
      scf.yield %n : f32
    }
    gpu.dealloc %dev : memref<32x32xf32>
    gpu.dealloc %out : memref<64xf32>
    memref.dealloc %host : memref<32x32xf32>
    memref.dealloc %result : memref<64xf32>
    %si = arith.fptosi %sum : f32 to i32
    vector.print str "sum: "
    vector.print %si : i32
    return
  }
}

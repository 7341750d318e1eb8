// A wgmma GEMM with the 128-byte swizzle: D (64x32, f32) = A (64x64, f16) * B^T, B stored 32x64 (N x K,
// K-major). TMA loads both tiles into shared memory with the 128-byte swizzle (one mbarrier, 12 KiB of
// transactions); one warpgroup (128 threads) issues four wgmma.mma_async m64n32k16 steps whose matrix
// descriptors it builds itself: start address + 32 bytes per k step, stride byte offset 1024 (8 rows of 128
// bytes), swizzle mode 1 (128B). The first step has scale-d 0, so the accumulator's initial 1000s are
// ignored. Each thread stores its 16 accumulator registers where the PTX ISA's m64nNk16 D layout puts them.
// A[m][k] = (m + 2k) mod 5 - 2, B[n][k] = (3n + k) mod 7 - 3; the CHECK lines are the product computed in
// Python.
// ARCHS: sm_90a
// WRONG: the descriptors without the swizzle mode (the 128-byte swizzled tiles read as if unswizzled)
// WRONG-FROM:       %mode = arith.constant 4611686018427387904 : i64
// WRONG-TO:       %mode = arith.constant 0 : i64
// CHECK: data =
// CHECK-NEXT: [-3, 8, -2, -5, -8, 3, 7, -3, 8, -2, -5, -8, 3, 7, -3, 8, -2, -5, -8, 3, 7, -3, 8, -2, -5, -8, 3, 7, -3, 8, -2, -5]
// CHECK-NEXT: [-1, -7, 1, 9, -11, 11, -2, -1, -7, 1, 9, -11, 11, -2, -1, -7, 1, 9, -11, 11, -2, -1, -7, 1, 9, -11, 11, -2, -1, -7, 1, 9]
// CHECK-NEXT: [1, -7, -1, -2, 11, -11, 9, 1, -7, -1, -2, 11, -11, 9, 1, -7, -1, -2, 11, -11, 9, 1, -7, -1, -2, 11, -11, 9, 1, -7, -1, -2]
// CHECK-NEXT: [-2, 8, -3, 7, 3, -8, -5, -2, 8, -3, 7, 3, -8, -5, -2, 8, -3, 7, 3, -8, -5, -2, 8, -3, 7, 3, -8, -5, -2, 8, -3, 7]
// CHECK-NEXT: [5, -2, 5, -9, 5, 5, -9, 5, -2, 5, -9, 5, 5, -9, 5, -2, 5, -9, 5, 5, -9, 5, -2, 5, -9, 5, 5, -9, 5, -2, 5, -9]
// CHECK-NEXT: [-3, 8, -2, -5, -8, 3, 7, -3, 8, -2, -5, -8, 3, 7, -3, 8, -2, -5, -8, 3, 7, -3, 8, -2, -5, -8, 3, 7, -3, 8, -2, -5]
// CHECK-NEXT: [-1, -7, 1, 9, -11, 11, -2, -1, -7, 1, 9, -11, 11, -2, -1, -7, 1, 9, -11, 11, -2, -1, -7, 1, 9, -11, 11, -2, -1, -7, 1, 9]
// CHECK-NEXT: [1, -7, -1, -2, 11, -11, 9, 1, -7, -1, -2, 11, -11, 9, 1, -7, -1, -2, 11, -11, 9, 1, -7, -1, -2, 11, -11, 9, 1, -7, -1, -2]
// CHECK-NEXT: [-2, 8, -3, 7, 3, -8, -5, -2, 8, -3, 7, 3, -8, -5, -2, 8, -3, 7, 3, -8, -5, -2, 8, -3, 7, 3, -8, -5, -2, 8, -3, 7]
// CHECK-NEXT: [5, -2, 5, -9, 5, 5, -9, 5, -2, 5, -9, 5, 5, -9, 5, -2, 5, -9, 5, 5, -9, 5, -2, 5, -9, 5, 5, -9, 5, -2, 5, -9]
// CHECK-NEXT: [-3, 8, -2, -5, -8, 3, 7, -3, 8, -2, -5, -8, 3, 7, -3, 8, -2, -5, -8, 3, 7, -3, 8, -2, -5, -8, 3, 7, -3, 8, -2, -5]
// CHECK-NEXT: [-1, -7, 1, 9, -11, 11, -2, -1, -7, 1, 9, -11, 11, -2, -1, -7, 1, 9, -11, 11, -2, -1, -7, 1, 9, -11, 11, -2, -1, -7, 1, 9]
// CHECK-NEXT: [1, -7, -1, -2, 11, -11, 9, 1, -7, -1, -2, 11, -11, 9, 1, -7, -1, -2, 11, -11, 9, 1, -7, -1, -2, 11, -11, 9, 1, -7, -1, -2]
// CHECK-NEXT: [-2, 8, -3, 7, 3, -8, -5, -2, 8, -3, 7, 3, -8, -5, -2, 8, -3, 7, 3, -8, -5, -2, 8, -3, 7, 3, -8, -5, -2, 8, -3, 7]
// CHECK-NEXT: [5, -2, 5, -9, 5, 5, -9, 5, -2, 5, -9, 5, 5, -9, 5, -2, 5, -9, 5, 5, -9, 5, -2, 5, -9, 5, 5, -9, 5, -2, 5, -9]
// CHECK-NEXT: [-3, 8, -2, -5, -8, 3, 7, -3, 8, -2, -5, -8, 3, 7, -3, 8, -2, -5, -8, 3, 7, -3, 8, -2, -5, -8, 3, 7, -3, 8, -2, -5]
// CHECK-NEXT: [-1, -7, 1, 9, -11, 11, -2, -1, -7, 1, 9, -11, 11, -2, -1, -7, 1, 9, -11, 11, -2, -1, -7, 1, 9, -11, 11, -2, -1, -7, 1, 9]
// CHECK-NEXT: [1, -7, -1, -2, 11, -11, 9, 1, -7, -1, -2, 11, -11, 9, 1, -7, -1, -2, 11, -11, 9, 1, -7, -1, -2, 11, -11, 9, 1, -7, -1, -2]
// CHECK-NEXT: [-2, 8, -3, 7, 3, -8, -5, -2, 8, -3, 7, 3, -8, -5, -2, 8, -3, 7, 3, -8, -5, -2, 8, -3, 7, 3, -8, -5, -2, 8, -3, 7]
// CHECK-NEXT: [5, -2, 5, -9, 5, 5, -9, 5, -2, 5, -9, 5, 5, -9, 5, -2, 5, -9, 5, 5, -9, 5, -2, 5, -9, 5, 5, -9, 5, -2, 5, -9]
// CHECK-NEXT: [-3, 8, -2, -5, -8, 3, 7, -3, 8, -2, -5, -8, 3, 7, -3, 8, -2, -5, -8, 3, 7, -3, 8, -2, -5, -8, 3, 7, -3, 8, -2, -5]
// CHECK-NEXT: [-1, -7, 1, 9, -11, 11, -2, -1, -7, 1, 9, -11, 11, -2, -1, -7, 1, 9, -11, 11, -2, -1, -7, 1, 9, -11, 11, -2, -1, -7, 1, 9]
// CHECK-NEXT: [1, -7, -1, -2, 11, -11, 9, 1, -7, -1, -2, 11, -11, 9, 1, -7, -1, -2, 11, -11, 9, 1, -7, -1, -2, 11, -11, 9, 1, -7, -1, -2]
// CHECK-NEXT: [-2, 8, -3, 7, 3, -8, -5, -2, 8, -3, 7, 3, -8, -5, -2, 8, -3, 7, 3, -8, -5, -2, 8, -3, 7, 3, -8, -5, -2, 8, -3, 7]
// CHECK-NEXT: [5, -2, 5, -9, 5, 5, -9, 5, -2, 5, -9, 5, 5, -9, 5, -2, 5, -9, 5, 5, -9, 5, -2, 5, -9, 5, 5, -9, 5, -2, 5, -9]
// CHECK-NEXT: [-3, 8, -2, -5, -8, 3, 7, -3, 8, -2, -5, -8, 3, 7, -3, 8, -2, -5, -8, 3, 7, -3, 8, -2, -5, -8, 3, 7, -3, 8, -2, -5]
// CHECK-NEXT: [-1, -7, 1, 9, -11, 11, -2, -1, -7, 1, 9, -11, 11, -2, -1, -7, 1, 9, -11, 11, -2, -1, -7, 1, 9, -11, 11, -2, -1, -7, 1, 9]
// CHECK-NEXT: [1, -7, -1, -2, 11, -11, 9, 1, -7, -1, -2, 11, -11, 9, 1, -7, -1, -2, 11, -11, 9, 1, -7, -1, -2, 11, -11, 9, 1, -7, -1, -2]
// CHECK-NEXT: [-2, 8, -3, 7, 3, -8, -5, -2, 8, -3, 7, 3, -8, -5, -2, 8, -3, 7, 3, -8, -5, -2, 8, -3, 7, 3, -8, -5, -2, 8, -3, 7]
// CHECK-NEXT: [5, -2, 5, -9, 5, 5, -9, 5, -2, 5, -9, 5, 5, -9, 5, -2, 5, -9, 5, 5, -9, 5, -2, 5, -9, 5, 5, -9, 5, -2, 5, -9]
// CHECK-NEXT: [-3, 8, -2, -5, -8, 3, 7, -3, 8, -2, -5, -8, 3, 7, -3, 8, -2, -5, -8, 3, 7, -3, 8, -2, -5, -8, 3, 7, -3, 8, -2, -5]
// CHECK-NEXT: [-1, -7, 1, 9, -11, 11, -2, -1, -7, 1, 9, -11, 11, -2, -1, -7, 1, 9, -11, 11, -2, -1, -7, 1, 9, -11, 11, -2, -1, -7, 1, 9]
// CHECK-NEXT: [1, -7, -1, -2, 11, -11, 9, 1, -7, -1, -2, 11, -11, 9, 1, -7, -1, -2, 11, -11, 9, 1, -7, -1, -2, 11, -11, 9, 1, -7, -1, -2]
// CHECK-NEXT: [-2, 8, -3, 7, 3, -8, -5, -2, 8, -3, 7, 3, -8, -5, -2, 8, -3, 7, 3, -8, -5, -2, 8, -3, 7, 3, -8, -5, -2, 8, -3, 7]
// CHECK-NEXT: [5, -2, 5, -9, 5, 5, -9, 5, -2, 5, -9, 5, 5, -9, 5, -2, 5, -9, 5, 5, -9, 5, -2, 5, -9, 5, 5, -9, 5, -2, 5, -9]
// CHECK-NEXT: [-3, 8, -2, -5, -8, 3, 7, -3, 8, -2, -5, -8, 3, 7, -3, 8, -2, -5, -8, 3, 7, -3, 8, -2, -5, -8, 3, 7, -3, 8, -2, -5]
// CHECK-NEXT: [-1, -7, 1, 9, -11, 11, -2, -1, -7, 1, 9, -11, 11, -2, -1, -7, 1, 9, -11, 11, -2, -1, -7, 1, 9, -11, 11, -2, -1, -7, 1, 9]
// CHECK-NEXT: [1, -7, -1, -2, 11, -11, 9, 1, -7, -1, -2, 11, -11, 9, 1, -7, -1, -2, 11, -11, 9, 1, -7, -1, -2, 11, -11, 9, 1, -7, -1, -2]
// CHECK-NEXT: [-2, 8, -3, 7, 3, -8, -5, -2, 8, -3, 7, 3, -8, -5, -2, 8, -3, 7, 3, -8, -5, -2, 8, -3, 7, 3, -8, -5, -2, 8, -3, 7]
// CHECK-NEXT: [5, -2, 5, -9, 5, 5, -9, 5, -2, 5, -9, 5, 5, -9, 5, -2, 5, -9, 5, 5, -9, 5, -2, 5, -9, 5, 5, -9, 5, -2, 5, -9]
// CHECK-NEXT: [-3, 8, -2, -5, -8, 3, 7, -3, 8, -2, -5, -8, 3, 7, -3, 8, -2, -5, -8, 3, 7, -3, 8, -2, -5, -8, 3, 7, -3, 8, -2, -5]
// CHECK-NEXT: [-1, -7, 1, 9, -11, 11, -2, -1, -7, 1, 9, -11, 11, -2, -1, -7, 1, 9, -11, 11, -2, -1, -7, 1, 9, -11, 11, -2, -1, -7, 1, 9]
// CHECK-NEXT: [1, -7, -1, -2, 11, -11, 9, 1, -7, -1, -2, 11, -11, 9, 1, -7, -1, -2, 11, -11, 9, 1, -7, -1, -2, 11, -11, 9, 1, -7, -1, -2]
// CHECK-NEXT: [-2, 8, -3, 7, 3, -8, -5, -2, 8, -3, 7, 3, -8, -5, -2, 8, -3, 7, 3, -8, -5, -2, 8, -3, 7, 3, -8, -5, -2, 8, -3, 7]
// CHECK-NEXT: [5, -2, 5, -9, 5, 5, -9, 5, -2, 5, -9, 5, 5, -9, 5, -2, 5, -9, 5, 5, -9, 5, -2, 5, -9, 5, 5, -9, 5, -2, 5, -9]
// CHECK-NEXT: [-3, 8, -2, -5, -8, 3, 7, -3, 8, -2, -5, -8, 3, 7, -3, 8, -2, -5, -8, 3, 7, -3, 8, -2, -5, -8, 3, 7, -3, 8, -2, -5]
// CHECK-NEXT: [-1, -7, 1, 9, -11, 11, -2, -1, -7, 1, 9, -11, 11, -2, -1, -7, 1, 9, -11, 11, -2, -1, -7, 1, 9, -11, 11, -2, -1, -7, 1, 9]
// CHECK-NEXT: [1, -7, -1, -2, 11, -11, 9, 1, -7, -1, -2, 11, -11, 9, 1, -7, -1, -2, 11, -11, 9, 1, -7, -1, -2, 11, -11, 9, 1, -7, -1, -2]
// CHECK-NEXT: [-2, 8, -3, 7, 3, -8, -5, -2, 8, -3, 7, 3, -8, -5, -2, 8, -3, 7, 3, -8, -5, -2, 8, -3, 7, 3, -8, -5, -2, 8, -3, 7]
// CHECK-NEXT: [5, -2, 5, -9, 5, 5, -9, 5, -2, 5, -9, 5, 5, -9, 5, -2, 5, -9, 5, 5, -9, 5, -2, 5, -9, 5, 5, -9, 5, -2, 5, -9]
// CHECK-NEXT: [-3, 8, -2, -5, -8, 3, 7, -3, 8, -2, -5, -8, 3, 7, -3, 8, -2, -5, -8, 3, 7, -3, 8, -2, -5, -8, 3, 7, -3, 8, -2, -5]
// CHECK-NEXT: [-1, -7, 1, 9, -11, 11, -2, -1, -7, 1, 9, -11, 11, -2, -1, -7, 1, 9, -11, 11, -2, -1, -7, 1, 9, -11, 11, -2, -1, -7, 1, 9]
// CHECK-NEXT: [1, -7, -1, -2, 11, -11, 9, 1, -7, -1, -2, 11, -11, 9, 1, -7, -1, -2, 11, -11, 9, 1, -7, -1, -2, 11, -11, 9, 1, -7, -1, -2]
// CHECK-NEXT: [-2, 8, -3, 7, 3, -8, -5, -2, 8, -3, 7, 3, -8, -5, -2, 8, -3, 7, 3, -8, -5, -2, 8, -3, 7, 3, -8, -5, -2, 8, -3, 7]
// CHECK-NEXT: [5, -2, 5, -9, 5, 5, -9, 5, -2, 5, -9, 5, 5, -9, 5, -2, 5, -9, 5, 5, -9, 5, -2, 5, -9, 5, 5, -9, 5, -2, 5, -9]
// CHECK-NEXT: [-3, 8, -2, -5, -8, 3, 7, -3, 8, -2, -5, -8, 3, 7, -3, 8, -2, -5, -8, 3, 7, -3, 8, -2, -5, -8, 3, 7, -3, 8, -2, -5]
// CHECK-NEXT: [-1, -7, 1, 9, -11, 11, -2, -1, -7, 1, 9, -11, 11, -2, -1, -7, 1, 9, -11, 11, -2, -1, -7, 1, 9, -11, 11, -2, -1, -7, 1, 9]
// CHECK-NEXT: [1, -7, -1, -2, 11, -11, 9, 1, -7, -1, -2, 11, -11, 9, 1, -7, -1, -2, 11, -11, 9, 1, -7, -1, -2, 11, -11, 9, 1, -7, -1, -2]
// CHECK-NEXT: [-2, 8, -3, 7, 3, -8, -5, -2, 8, -3, 7, 3, -8, -5, -2, 8, -3, 7, 3, -8, -5, -2, 8, -3, 7, 3, -8, -5, -2, 8, -3, 7]
// CHECK-NEXT: [5, -2, 5, -9, 5, 5, -9, 5, -2, 5, -9, 5, 5, -9, 5, -2, 5, -9, 5, 5, -9, 5, -2, 5, -9, 5, 5, -9, 5, -2, 5, -9]
// CHECK-NEXT: [-3, 8, -2, -5, -8, 3, 7, -3, 8, -2, -5, -8, 3, 7, -3, 8, -2, -5, -8, 3, 7, -3, 8, -2, -5, -8, 3, 7, -3, 8, -2, -5]
// CHECK-NEXT: [-1, -7, 1, 9, -11, 11, -2, -1, -7, 1, 9, -11, 11, -2, -1, -7, 1, 9, -11, 11, -2, -1, -7, 1, 9, -11, 11, -2, -1, -7, 1, 9]
// CHECK-NEXT: [1, -7, -1, -2, 11, -11, 9, 1, -7, -1, -2, 11, -11, 9, 1, -7, -1, -2, 11, -11, 9, 1, -7, -1, -2, 11, -11, 9, 1, -7, -1, -2]
// CHECK-NEXT: [-2, 8, -3, 7, 3, -8, -5, -2, 8, -3, 7, 3, -8, -5, -2, 8, -3, 7, 3, -8, -5, -2, 8, -3, 7, 3, -8, -5, -2, 8, -3, 7]
!barriers = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
!mapA = !nvgpu.tensormap.descriptor<tensor = memref<64x64xf16, 3>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
!mapB = !nvgpu.tensormap.descriptor<tensor = memref<32x64xf16, 3>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
module attributes {gpu.container_module} {
  memref.global "private" @tileA : memref<64x64xf16, 3> {alignment = 1024 : i64}
  memref.global "private" @tileB : memref<32x64xf16, 3> {alignment = 1024 : i64}
  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c5 = arith.constant 5 : index
    %c7 = arith.constant 7 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %ha = memref.alloc() : memref<64x64xf16>
    %hb = memref.alloc() : memref<32x64xf16>
    scf.for %m = %c0 to %c64 step %c1 {
      scf.for %k = %c0 to %c64 step %c1 {
        %k2 = arith.muli %k, %c2 : index
        %s = arith.addi %m, %k2 : index
        %r = arith.remui %s, %c5 : index
        %v = arith.subi %r, %c2 : index
        %vi = arith.index_cast %v : index to i32
        %vf = arith.sitofp %vi : i32 to f16
        memref.store %vf, %ha[%m, %k] : memref<64x64xf16>
      }
    }
    scf.for %n = %c0 to %c32 step %c1 {
      scf.for %k = %c0 to %c64 step %c1 {
        %n3 = arith.muli %n, %c3 : index
        %s = arith.addi %n3, %k : index
        %r = arith.remui %s, %c7 : index
        %v = arith.subi %r, %c3 : index
        %vi = arith.index_cast %v : index to i32
        %vf = arith.sitofp %vi : i32 to f16
        memref.store %vf, %hb[%n, %k] : memref<32x64xf16>
      }
    }
    %da = gpu.alloc () : memref<64x64xf16>
    %db = gpu.alloc () : memref<32x64xf16>
    %dd = gpu.alloc () : memref<64x32xf32>
    gpu.memcpy %da, %ha : memref<64x64xf16>, memref<64x64xf16>
    gpu.memcpy %db, %hb : memref<32x64xf16>, memref<32x64xf16>
    %ua = memref.cast %da : memref<64x64xf16> to memref<*xf16>
    %ub = memref.cast %db : memref<32x64xf16> to memref<*xf16>
    %mapA = nvgpu.tma.create.descriptor %ua box[%c64, %c64] : memref<*xf16> -> !mapA
    %mapB = nvgpu.tma.create.descriptor %ub box[%c32, %c64] : memref<*xf16> -> !mapB
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%nx = %c128, %ny = %c1, %nz = %c1) {
      %bytes = arith.constant 12288 : index
      %ticks = arith.constant 10000000 : index
      %parity = arith.constant false
      %sA = memref.get_global @tileA : memref<64x64xf16, 3>
      %sB = memref.get_global @tileB : memref<32x64xf16, 3>
      %bar = nvgpu.mbarrier.create -> !barriers
      %leader = arith.cmpi eq, %tx, %c0 : index
      scf.if %leader {
        nvgpu.mbarrier.init %bar[%c0], %c1 : !barriers
      }
      gpu.barrier
      scf.if %leader {
        nvgpu.mbarrier.arrive.expect_tx %bar[%c0], %bytes : !barriers
        nvgpu.tma.async.load %mapA[%c0, %c0], %bar[%c0] to %sA : !mapA, !barriers -> memref<64x64xf16, 3>
        nvgpu.tma.async.load %mapB[%c0, %c0], %bar[%c0] to %sB : !mapB, !barriers -> memref<32x64xf16, 3>
      }
      nvgpu.mbarrier.try_wait.parity %bar[%c0], %parity, %ticks : !barriers
      %pa = memref.extract_aligned_pointer_as_index %sA : memref<64x64xf16, 3> -> index
      %pb = memref.extract_aligned_pointer_as_index %sB : memref<32x64xf16, 3> -> index
      %a64 = arith.index_cast %pa : index to i64
      %b64 = arith.index_cast %pb : index to i64
      %mask = arith.constant 262143 : i64
      %four = arith.constant 4 : i64
      %lbo = arith.constant 65536 : i64
      %sbo = arith.constant 274877906944 : i64
      %mode = arith.constant 4611686018427387904 : i64
      %fixed0 = arith.ori %lbo, %sbo : i64
      %fixed = arith.ori %fixed0, %mode : i64
      %thousand = arith.constant 1000.0 : f32
      %acc0 = llvm.mlir.undef : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      %init0 = llvm.insertvalue %thousand, %acc0[0] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      %init1 = llvm.insertvalue %thousand, %init0[1] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      %init2 = llvm.insertvalue %thousand, %init1[2] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      %init3 = llvm.insertvalue %thousand, %init2[3] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      %init4 = llvm.insertvalue %thousand, %init3[4] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      %init5 = llvm.insertvalue %thousand, %init4[5] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      %init6 = llvm.insertvalue %thousand, %init5[6] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      %init7 = llvm.insertvalue %thousand, %init6[7] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      %init8 = llvm.insertvalue %thousand, %init7[8] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      %init9 = llvm.insertvalue %thousand, %init8[9] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      %init10 = llvm.insertvalue %thousand, %init9[10] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      %init11 = llvm.insertvalue %thousand, %init10[11] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      %init12 = llvm.insertvalue %thousand, %init11[12] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      %init13 = llvm.insertvalue %thousand, %init12[13] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      %init14 = llvm.insertvalue %thousand, %init13[14] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      %init15 = llvm.insertvalue %thousand, %init14[15] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      nvvm.wgmma.fence.aligned
      %off0 = arith.constant 0 : i64
      %addrA0 = arith.addi %a64, %off0 : i64
      %lowA0 = arith.andi %addrA0, %mask : i64
      %encA0 = arith.shrui %lowA0, %four : i64
      %descA0 = arith.ori %encA0, %fixed : i64
      %addrB0 = arith.addi %b64, %off0 : i64
      %lowB0 = arith.andi %addrB0, %mask : i64
      %encB0 = arith.shrui %lowB0, %four : i64
      %descB0 = arith.ori %encB0, %fixed : i64
      %d0 = nvvm.wgmma.mma_async %descA0, %descB0, %init15, <m = 64, n = 32, k = 16>, D [<f32>, #nvvm.wgmma_scale_out<zero>], A [<f16>, #nvvm.wgmma_scale_in<one>, <row>], B [<f16>, #nvvm.wgmma_scale_in<one>, <col>] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      %off1 = arith.constant 32 : i64
      %addrA1 = arith.addi %a64, %off1 : i64
      %lowA1 = arith.andi %addrA1, %mask : i64
      %encA1 = arith.shrui %lowA1, %four : i64
      %descA1 = arith.ori %encA1, %fixed : i64
      %addrB1 = arith.addi %b64, %off1 : i64
      %lowB1 = arith.andi %addrB1, %mask : i64
      %encB1 = arith.shrui %lowB1, %four : i64
      %descB1 = arith.ori %encB1, %fixed : i64
      %d1 = nvvm.wgmma.mma_async %descA1, %descB1, %d0, <m = 64, n = 32, k = 16>, D [<f32>, #nvvm.wgmma_scale_out<one>], A [<f16>, #nvvm.wgmma_scale_in<one>, <row>], B [<f16>, #nvvm.wgmma_scale_in<one>, <col>] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      %off2 = arith.constant 64 : i64
      %addrA2 = arith.addi %a64, %off2 : i64
      %lowA2 = arith.andi %addrA2, %mask : i64
      %encA2 = arith.shrui %lowA2, %four : i64
      %descA2 = arith.ori %encA2, %fixed : i64
      %addrB2 = arith.addi %b64, %off2 : i64
      %lowB2 = arith.andi %addrB2, %mask : i64
      %encB2 = arith.shrui %lowB2, %four : i64
      %descB2 = arith.ori %encB2, %fixed : i64
      %d2 = nvvm.wgmma.mma_async %descA2, %descB2, %d1, <m = 64, n = 32, k = 16>, D [<f32>, #nvvm.wgmma_scale_out<one>], A [<f16>, #nvvm.wgmma_scale_in<one>, <row>], B [<f16>, #nvvm.wgmma_scale_in<one>, <col>] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      %off3 = arith.constant 96 : i64
      %addrA3 = arith.addi %a64, %off3 : i64
      %lowA3 = arith.andi %addrA3, %mask : i64
      %encA3 = arith.shrui %lowA3, %four : i64
      %descA3 = arith.ori %encA3, %fixed : i64
      %addrB3 = arith.addi %b64, %off3 : i64
      %lowB3 = arith.andi %addrB3, %mask : i64
      %encB3 = arith.shrui %lowB3, %four : i64
      %descB3 = arith.ori %encB3, %fixed : i64
      %d3 = nvvm.wgmma.mma_async %descA3, %descB3, %d2, <m = 64, n = 32, k = 16>, D [<f32>, #nvvm.wgmma_scale_out<one>], A [<f16>, #nvvm.wgmma_scale_in<one>, <row>], B [<f16>, #nvvm.wgmma_scale_in<one>, <col>] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      nvvm.wgmma.commit.group.sync.aligned
      nvvm.wgmma.wait.group.sync.aligned 0
      %warp = arith.divui %tx, %c32 : index
      %lane = arith.remui %tx, %c32 : index
      %c4_ = arith.constant 4 : index
      %g = arith.divui %lane, %c4_ : index
      %t = arith.remui %lane, %c4_ : index
      %c16_ = arith.constant 16 : index
      %w16 = arith.muli %warp, %c16_ : index
      %rowbase = arith.addi %w16, %g : index
      %t2 = arith.muli %t, %c2 : index
      %v0 = llvm.extractvalue %d3[0] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      %dr0 = arith.constant 0 : index
      %dc0 = arith.constant 0 : index
      %row0 = arith.addi %rowbase, %dr0 : index
      %col0 = arith.addi %t2, %dc0 : index
      memref.store %v0, %dd[%row0, %col0] : memref<64x32xf32>
      %v1 = llvm.extractvalue %d3[1] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      %dr1 = arith.constant 0 : index
      %dc1 = arith.constant 1 : index
      %row1 = arith.addi %rowbase, %dr1 : index
      %col1 = arith.addi %t2, %dc1 : index
      memref.store %v1, %dd[%row1, %col1] : memref<64x32xf32>
      %v2 = llvm.extractvalue %d3[2] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      %dr2 = arith.constant 8 : index
      %dc2 = arith.constant 0 : index
      %row2 = arith.addi %rowbase, %dr2 : index
      %col2 = arith.addi %t2, %dc2 : index
      memref.store %v2, %dd[%row2, %col2] : memref<64x32xf32>
      %v3 = llvm.extractvalue %d3[3] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      %dr3 = arith.constant 8 : index
      %dc3 = arith.constant 1 : index
      %row3 = arith.addi %rowbase, %dr3 : index
      %col3 = arith.addi %t2, %dc3 : index
      memref.store %v3, %dd[%row3, %col3] : memref<64x32xf32>
      %v4 = llvm.extractvalue %d3[4] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      %dr4 = arith.constant 0 : index
      %dc4 = arith.constant 8 : index
      %row4 = arith.addi %rowbase, %dr4 : index
      %col4 = arith.addi %t2, %dc4 : index
      memref.store %v4, %dd[%row4, %col4] : memref<64x32xf32>
      %v5 = llvm.extractvalue %d3[5] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      %dr5 = arith.constant 0 : index
      %dc5 = arith.constant 9 : index
      %row5 = arith.addi %rowbase, %dr5 : index
      %col5 = arith.addi %t2, %dc5 : index
      memref.store %v5, %dd[%row5, %col5] : memref<64x32xf32>
      %v6 = llvm.extractvalue %d3[6] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      %dr6 = arith.constant 8 : index
      %dc6 = arith.constant 8 : index
      %row6 = arith.addi %rowbase, %dr6 : index
      %col6 = arith.addi %t2, %dc6 : index
      memref.store %v6, %dd[%row6, %col6] : memref<64x32xf32>
      %v7 = llvm.extractvalue %d3[7] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      %dr7 = arith.constant 8 : index
      %dc7 = arith.constant 9 : index
      %row7 = arith.addi %rowbase, %dr7 : index
      %col7 = arith.addi %t2, %dc7 : index
      memref.store %v7, %dd[%row7, %col7] : memref<64x32xf32>
      %v8 = llvm.extractvalue %d3[8] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      %dr8 = arith.constant 0 : index
      %dc8 = arith.constant 16 : index
      %row8 = arith.addi %rowbase, %dr8 : index
      %col8 = arith.addi %t2, %dc8 : index
      memref.store %v8, %dd[%row8, %col8] : memref<64x32xf32>
      %v9 = llvm.extractvalue %d3[9] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      %dr9 = arith.constant 0 : index
      %dc9 = arith.constant 17 : index
      %row9 = arith.addi %rowbase, %dr9 : index
      %col9 = arith.addi %t2, %dc9 : index
      memref.store %v9, %dd[%row9, %col9] : memref<64x32xf32>
      %v10 = llvm.extractvalue %d3[10] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      %dr10 = arith.constant 8 : index
      %dc10 = arith.constant 16 : index
      %row10 = arith.addi %rowbase, %dr10 : index
      %col10 = arith.addi %t2, %dc10 : index
      memref.store %v10, %dd[%row10, %col10] : memref<64x32xf32>
      %v11 = llvm.extractvalue %d3[11] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      %dr11 = arith.constant 8 : index
      %dc11 = arith.constant 17 : index
      %row11 = arith.addi %rowbase, %dr11 : index
      %col11 = arith.addi %t2, %dc11 : index
      memref.store %v11, %dd[%row11, %col11] : memref<64x32xf32>
      %v12 = llvm.extractvalue %d3[12] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      %dr12 = arith.constant 0 : index
      %dc12 = arith.constant 24 : index
      %row12 = arith.addi %rowbase, %dr12 : index
      %col12 = arith.addi %t2, %dc12 : index
      memref.store %v12, %dd[%row12, %col12] : memref<64x32xf32>
      %v13 = llvm.extractvalue %d3[13] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      %dr13 = arith.constant 0 : index
      %dc13 = arith.constant 25 : index
      %row13 = arith.addi %rowbase, %dr13 : index
      %col13 = arith.addi %t2, %dc13 : index
      memref.store %v13, %dd[%row13, %col13] : memref<64x32xf32>
      %v14 = llvm.extractvalue %d3[14] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      %dr14 = arith.constant 8 : index
      %dc14 = arith.constant 24 : index
      %row14 = arith.addi %rowbase, %dr14 : index
      %col14 = arith.addi %t2, %dc14 : index
      memref.store %v14, %dd[%row14, %col14] : memref<64x32xf32>
      %v15 = llvm.extractvalue %d3[15] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)>
      %dr15 = arith.constant 8 : index
      %dc15 = arith.constant 25 : index
      %row15 = arith.addi %rowbase, %dr15 : index
      %col15 = arith.addi %t2, %dc15 : index
      memref.store %v15, %dd[%row15, %col15] : memref<64x32xf32>
      gpu.terminator
    }
    %hd = memref.alloc() : memref<64x32xf32>
    gpu.memcpy %hd, %dd : memref<64x32xf32>, memref<64x32xf32>
    %ud = memref.cast %hd : memref<64x32xf32> to memref<*xf32>
    call @printMemrefF32(%ud) : (memref<*xf32>) -> ()
    return
  }
  func.func private @printMemrefF32(memref<*xf32>)
}

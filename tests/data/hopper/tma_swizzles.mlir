// TMA with the 64- and 32-byte swizzles, out-of-bounds fill and TMA stores: from a 12x24 f32 matrix
// (G[r][c] = 100r + c), an 8x16 box at row 6, column 12 (rows 12.. and columns 24.. outside: zero) is loaded
// with the 64-byte swizzle and an 8x8 box at row 2, column 16 with the 32-byte swizzle (two phases of one
// mbarrier, all threads past the first before the second is armed). The words are printed as they lie in
// shared memory, then both boxes are stored by TMA (the same swizzles undone) into a zeroed 12x24 matrix at
// row 0, column 0 and row 4, column 16. The CHECK lines were computed independently (Python) from the PTX
// ISA's swizzles: the 16-byte chunk index XOR the 128-byte row index, one bit (32B) or two (64B).
// ARCHS: sm_90a
// WRONG: the 32-byte box loaded without its swizzle (and stored back with it)
// WRONG-FROM: !map32 = !nvgpu.tensormap.descriptor<tensor = memref<8x8xf32, 3>, swizzle = swizzle_32b, l2promo = none, oob = zero, interleave = none>
// WRONG-TO: !map32 = !nvgpu.tensormap.descriptor<tensor = memref<8x8xf32, 3>, swizzle = none, l2promo = none, oob = zero, interleave = none>
// CHECK: sizes = [8, 16]
// CHECK-NEXT: [612, 613, 614, 615, 616, 617, 618, 619, 620, 621, 622, 623, 0, 0, 0, 0]
// CHECK-NEXT: [712, 713, 714, 715, 716, 717, 718, 719, 720, 721, 722, 723, 0, 0, 0, 0]
// CHECK-NEXT: [816, 817, 818, 819, 812, 813, 814, 815, 0, 0, 0, 0, 820, 821, 822, 823]
// CHECK-NEXT: [916, 917, 918, 919, 912, 913, 914, 915, 0, 0, 0, 0, 920, 921, 922, 923]
// CHECK-NEXT: [1020, 1021, 1022, 1023, 0, 0, 0, 0, 1012, 1013, 1014, 1015, 1016, 1017, 1018, 1019]
// CHECK-NEXT: [1120, 1121, 1122, 1123, 0, 0, 0, 0, 1112, 1113, 1114, 1115, 1116, 1117, 1118, 1119]
// CHECK-NEXT: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
// CHECK-NEXT: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
// CHECK: sizes = [8, 8]
// CHECK-NEXT: [216, 217, 218, 219, 220, 221, 222, 223]
// CHECK-NEXT: [316, 317, 318, 319, 320, 321, 322, 323]
// CHECK-NEXT: [416, 417, 418, 419, 420, 421, 422, 423]
// CHECK-NEXT: [516, 517, 518, 519, 520, 521, 522, 523]
// CHECK-NEXT: [620, 621, 622, 623, 616, 617, 618, 619]
// CHECK-NEXT: [720, 721, 722, 723, 716, 717, 718, 719]
// CHECK-NEXT: [820, 821, 822, 823, 816, 817, 818, 819]
// CHECK-NEXT: [920, 921, 922, 923, 916, 917, 918, 919]
// CHECK: sizes = [12, 24]
// CHECK-NEXT: [612, 613, 614, 615, 616, 617, 618, 619, 620, 621, 622, 623, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
// CHECK-NEXT: [712, 713, 714, 715, 716, 717, 718, 719, 720, 721, 722, 723, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
// CHECK-NEXT: [812, 813, 814, 815, 816, 817, 818, 819, 820, 821, 822, 823, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
// CHECK-NEXT: [912, 913, 914, 915, 916, 917, 918, 919, 920, 921, 922, 923, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
// CHECK-NEXT: [1012, 1013, 1014, 1015, 1016, 1017, 1018, 1019, 1020, 1021, 1022, 1023, 0, 0, 0, 0, 216, 217, 218, 219, 220, 221, 222, 223]
// CHECK-NEXT: [1112, 1113, 1114, 1115, 1116, 1117, 1118, 1119, 1120, 1121, 1122, 1123, 0, 0, 0, 0, 316, 317, 318, 319, 320, 321, 322, 323]
// CHECK-NEXT: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 416, 417, 418, 419, 420, 421, 422, 423]
// CHECK-NEXT: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 516, 517, 518, 519, 520, 521, 522, 523]
// CHECK-NEXT: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 616, 617, 618, 619, 620, 621, 622, 623]
// CHECK-NEXT: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 716, 717, 718, 719, 720, 721, 722, 723]
// CHECK-NEXT: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 816, 817, 818, 819, 820, 821, 822, 823]
// CHECK-NEXT: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 916, 917, 918, 919, 920, 921, 922, 923]
!barriers = !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>
!map64 = !nvgpu.tensormap.descriptor<tensor = memref<8x16xf32, 3>, swizzle = swizzle_64b, l2promo = none, oob = zero, interleave = none>
!map32 = !nvgpu.tensormap.descriptor<tensor = memref<8x8xf32, 3>, swizzle = swizzle_32b, l2promo = none, oob = zero, interleave = none>
!out32 = !nvgpu.tensormap.descriptor<tensor = memref<8x8xf32, 3>, swizzle = swizzle_32b, l2promo = none, oob = zero, interleave = none>
module attributes {gpu.container_module} {
  memref.global "private" @tile64 : memref<8x16xf32, 3> {alignment = 1024 : i64}
  memref.global "private" @tile32 : memref<8x8xf32, 3> {alignment = 1024 : i64}
  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c12 = arith.constant 12 : index
    %c16 = arith.constant 16 : index
    %c24 = arith.constant 24 : index
    %c100 = arith.constant 100 : index
    %c128 = arith.constant 128 : index
    %zero = arith.constant 0.0 : f32
    %host = memref.alloc() : memref<12x24xf32>
    %blank = memref.alloc() : memref<12x24xf32>
    scf.for %r = %c0 to %c12 step %c1 {
      scf.for %c = %c0 to %c24 step %c1 {
        %r100 = arith.muli %r, %c100 : index
        %v = arith.addi %r100, %c : index
        %i = arith.index_cast %v : index to i32
        %f = arith.sitofp %i : i32 to f32
        memref.store %f, %host[%r, %c] : memref<12x24xf32>
        memref.store %zero, %blank[%r, %c] : memref<12x24xf32>
      }
    }
    %src = gpu.alloc () : memref<12x24xf32>
    %dst = gpu.alloc () : memref<12x24xf32>
    %raw64 = gpu.alloc () : memref<8x16xf32>
    %raw32 = gpu.alloc () : memref<8x8xf32>
    gpu.memcpy %src, %host : memref<12x24xf32>, memref<12x24xf32>
    gpu.memcpy %dst, %blank : memref<12x24xf32>, memref<12x24xf32>
    %usrc = memref.cast %src : memref<12x24xf32> to memref<*xf32>
    %udst = memref.cast %dst : memref<12x24xf32> to memref<*xf32>
    %m64 = nvgpu.tma.create.descriptor %usrc box[%c8, %c16] : memref<*xf32> -> !map64
    %m32 = nvgpu.tma.create.descriptor %usrc box[%c8, %c8] : memref<*xf32> -> !map32
    %o64 = nvgpu.tma.create.descriptor %udst box[%c8, %c16] : memref<*xf32> -> !map64
    %o32 = nvgpu.tma.create.descriptor %udst box[%c8, %c8] : memref<*xf32> -> !out32
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%nx = %c128, %ny = %c1, %nz = %c1) {
      %c2 = arith.constant 2 : index
      %c4 = arith.constant 4 : index
      %c6 = arith.constant 6 : index
      %c20 = arith.constant 20 : index
      %c64 = arith.constant 64 : index
      %bytes64 = arith.constant 512 : index
      %bytes32 = arith.constant 256 : index
      %ticks = arith.constant 10000000 : index
      %even = arith.constant false
      %odd = arith.constant true
      %t64 = memref.get_global @tile64 : memref<8x16xf32, 3>
      %t32 = memref.get_global @tile32 : memref<8x8xf32, 3>
      %bar = nvgpu.mbarrier.create -> !barriers
      %leader = arith.cmpi eq, %tx, %c0 : index
      scf.if %leader {
        nvgpu.mbarrier.init %bar[%c0], %c1 : !barriers
      }
      gpu.barrier
      scf.if %leader {
        nvgpu.mbarrier.arrive.expect_tx %bar[%c0], %bytes64 : !barriers
        nvgpu.tma.async.load %m64[%c12, %c6], %bar[%c0] to %t64 : !map64, !barriers -> memref<8x16xf32, 3>
      }
      nvgpu.mbarrier.try_wait.parity %bar[%c0], %even, %ticks : !barriers
      gpu.barrier
      scf.if %leader {
        nvgpu.mbarrier.arrive.expect_tx %bar[%c0], %bytes32 : !barriers
        nvgpu.tma.async.load %m32[%c16, %c2], %bar[%c0] to %t32 : !map32, !barriers -> memref<8x8xf32, 3>
      }
      nvgpu.mbarrier.try_wait.parity %bar[%c0], %odd, %ticks : !barriers
      %r16 = arith.divui %tx, %c16 : index
      %c16i = arith.remui %tx, %c16 : index
      %v64 = memref.load %t64[%r16, %c16i] : memref<8x16xf32, 3>
      memref.store %v64, %raw64[%r16, %c16i] : memref<8x16xf32>
      %small = arith.cmpi ult, %tx, %c64 : index
      scf.if %small {
        %r8 = arith.divui %tx, %c8 : index
        %c8i = arith.remui %tx, %c8 : index
        %v32 = memref.load %t32[%r8, %c8i] : memref<8x8xf32, 3>
        memref.store %v32, %raw32[%r8, %c8i] : memref<8x8xf32>
      }
      scf.if %leader {
        nvgpu.tma.async.store %t64 to %o64[%c0, %c0] : memref<8x16xf32, 3> -> !map64
        nvgpu.tma.async.store %t32 to %o32[%c16, %c4] : memref<8x8xf32, 3> -> !out32
        nvvm.cp.async.bulk.commit.group
        nvvm.cp.async.bulk.wait_group 0
      }
      gpu.terminator
    }
    %h64 = memref.alloc() : memref<8x16xf32>
    %h32 = memref.alloc() : memref<8x8xf32>
    gpu.memcpy %h64, %raw64 : memref<8x16xf32>, memref<8x16xf32>
    gpu.memcpy %h32, %raw32 : memref<8x8xf32>, memref<8x8xf32>
    gpu.memcpy %blank, %dst : memref<12x24xf32>, memref<12x24xf32>
    %p64 = memref.cast %h64 : memref<8x16xf32> to memref<*xf32>
    %p32 = memref.cast %h32 : memref<8x8xf32> to memref<*xf32>
    %pd = memref.cast %blank : memref<12x24xf32> to memref<*xf32>
    call @printMemrefF32(%p64) : (memref<*xf32>) -> ()
    call @printMemrefF32(%p32) : (memref<*xf32>) -> ()
    call @printMemrefF32(%pd) : (memref<*xf32>) -> ()
    return
  }
  func.func private @printMemrefF32(memref<*xf32>)
}

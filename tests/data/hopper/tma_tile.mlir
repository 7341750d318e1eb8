// A 16x32 f32 tile of a 48x32 matrix (rows 16..31 via the box at [0, 16]) loaded by TMA into shared
// memory, completion tracked by an mbarrier (expect_tx bytes, parity wait); the descriptor is made on the host.
module {
  memref.global "private" @tile_smem : memref<16x32xf32, 3> {alignment = 128 : i64}
  func.func @main() {
    %c0 = arith.constant 0 : index
    %phase0 = arith.constant false
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c16 = arith.constant 16 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %bytes = arith.constant 2048 : index
    %spins = arith.constant 1000000 : index
    %host = memref.alloc() : memref<48x32xf32>
    %s = gpu.wait async
    %dev, %t1 = gpu.alloc async [%s] () : memref<48x32xf32>
    %t2 = gpu.memcpy async [%t1] %dev, %host : memref<48x32xf32>, memref<48x32xf32>
    %unranked = memref.cast %dev : memref<48x32xf32> to memref<*xf32>
    %map = nvgpu.tma.create.descriptor %unranked box[%c16, %c32] : memref<*xf32> -> <tensor = memref<16x32xf32, 3>, swizzle = none, l2promo = l2promo_64b, oob = zero, interleave = none>
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%nx = %c64, %ny = %c1, %nz = %c1) {
      %tile = memref.get_global @tile_smem : memref<16x32xf32, 3>
      %bar = nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>>
      %threads = gpu.block_dim x
      nvgpu.mbarrier.init %bar[%c0], %threads : <memorySpace = #gpu.address_space<workgroup>>
      gpu.barrier
      %leader = arith.cmpi eq, %tx, %c0 : index
      scf.if %leader {
        nvgpu.mbarrier.arrive.expect_tx %bar[%c0], %bytes : <memorySpace = #gpu.address_space<workgroup>>
        nvgpu.tma.async.load %map[%c0, %c16], %bar[%c0] to %tile : <tensor = memref<16x32xf32, 3>, swizzle = none, l2promo = l2promo_64b, oob = zero, interleave = none>, <memorySpace = #gpu.address_space<workgroup>> -> memref<16x32xf32, 3>
      } else {
        nvgpu.mbarrier.arrive.expect_tx %bar[%c0], %c0 : <memorySpace = #gpu.address_space<workgroup>>
      }
      nvgpu.mbarrier.try_wait.parity %bar[%c0], %phase0, %spins : <memorySpace = #gpu.address_space<workgroup>>
      %v = memref.load %tile[%c1, %c2] : memref<16x32xf32, 3>
      gpu.printf "tile %f\n", %v : f32
      gpu.terminator
    }
    %t3 = gpu.wait async [%t2]
    gpu.wait [%t3]
    return
  }
}

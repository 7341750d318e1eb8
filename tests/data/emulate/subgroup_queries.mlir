// Subgroup queries and broadcasts, which MLIR 22's GPU conversions do not all lower (mlir-offload
// expands them before the device lowering): one block of 16x4 threads, each storing at its linear id
// t = x + 16y: gpu.lane_id, gpu.subgroup_id, gpu.num_subgroups, gpu.subgroup_size and lane 3's 10t
// (gpu.subgroup_broadcast specific_lane). Warps of 32 on sm_80 (two subgroups), one wavefront of 64 on
// gfx90a.
// ARCHS: sm_80 gfx90a
// WRONG: the broadcast reads lane 4 instead of lane 3
// WRONG-FROM:       %b = gpu.subgroup_broadcast %v, specific_lane %c3i : i32
// WRONG-TO:       %b = gpu.subgroup_broadcast %v, specific_lane %c4i : i32
// CHECK: sizes = [64, 5] strides = [5, 1] data =
// SM80: [0,  0,  2,  32,  30]
// SM80: [1,  0,  2,  32,  30]
// SM80: [1,  1,  2,  32,  350]
// SM80: [31,  1,  2,  32,  350]
// GFX90A: [0,  0,  1,  64,  30]
// GFX90A: [1,  0,  1,  64,  30]
// GFX90A: [33,  0,  1,  64,  30]
// GFX90A: [63,  0,  1,  64,  30]
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @probe(%out: memref<64x5xi32>) kernel {
      %x = gpu.thread_id x
      %y = gpu.thread_id y
      %c16 = arith.constant 16 : index
      %row = arith.muli %y, %c16 : index
      %t = arith.addi %x, %row : index
      %lane = gpu.lane_id
      %sg = gpu.subgroup_id : index
      %nsg = gpu.num_subgroups : index
      %sgs = gpu.subgroup_size : index
      %ti = arith.index_cast %t : index to i32
      %ten = arith.constant 10 : i32
      %c3i = arith.constant 3 : i32
      %c4i = arith.constant 4 : i32
      %v = arith.muli %ti, %ten : i32
      %li = arith.index_cast %lane : index to i32
      %b = gpu.subgroup_broadcast %v, specific_lane %c3i : i32
      %sgi = arith.index_cast %sg : index to i32
      %nsgi = arith.index_cast %nsg : index to i32
      %sgsi = arith.index_cast %sgs : index to i32
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c3 = arith.constant 3 : index
      %c4 = arith.constant 4 : index
      memref.store %li, %out[%t, %c0] : memref<64x5xi32>
      memref.store %sgi, %out[%t, %c1] : memref<64x5xi32>
      memref.store %nsgi, %out[%t, %c2] : memref<64x5xi32>
      memref.store %sgsi, %out[%t, %c3] : memref<64x5xi32>
      memref.store %b, %out[%t, %c4] : memref<64x5xi32>
      gpu.return
    }
  }
  func.func private @printMemrefI32(memref<*xi32>)
  func.func @main() {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c16 = arith.constant 16 : index
    %o = gpu.alloc host_shared () : memref<64x5xi32>
    gpu.launch_func @k::@probe blocks in (%c1, %c1, %c1) threads in (%c16, %c4, %c1) args(%o : memref<64x5xi32>)
    %u = memref.cast %o : memref<64x5xi32> to memref<*xi32>
    call @printMemrefI32(%u) : (memref<*xi32>) -> ()
    return
  }
}

// gpu.subgroup_reduce in one block of 64 threads, v = t*t mod 23 + 1: over the whole subgroup (32 lanes
// on sm_80, one 64-lane wavefront on gfx90a: the results differ by arch), over clusters of 8 lanes, and
// maxsi over clusters of 4 lanes 2 apart (lanes i, i+2, i+4, i+6 of each 8). mlir-offload expands the op
// to gpu.shuffle xor butterflies (MLIR 22's conversions do not lower it).
// ARCHS: sm_80 gfx90a
// WRONG: clusters of 4 instead of 8
// WRONG-FROM: %c8 = gpu.subgroup_reduce add %v cluster(size = 8) : (i32) -> i32
// WRONG-TO: %c8 = gpu.subgroup_reduce add %v cluster(size = 4) : (i32) -> i32
// SM80: [282,  282,  282,  282,  282,  282,  282,  282,  282,  282,  282,  282,  282,  282,  282,  282,  282,  282,  282,  282,  282,  282,  282,  282,  282,  282,  282,  282,  282,  282,  282,  282,  302,  302,  302,  302,  302,  302,  302,  302,  302,  302,  302,  302,  302,  302,  302,  302,  302,  302,  302,  302,  302,  302,  302,  302,  302,  302,  302,  302,  302,  302,  302,  302]
// GFX90A: [584,  584,  584,  584,  584,  584,  584,  584,  584,  584,  584,  584,  584,  584,  584,  584,  584,  584,  584,  584,  584,  584,  584,  584,  584,  584,  584,  584,  584,  584,  584,  584,  584,  584,  584,  584,  584,  584,  584,  584,  584,  584,  584,  584,  584,  584,  584,  584,  584,  584,  584,  584,  584,  584,  584,  584,  584,  584,  584,  584,  584,  584,  584,  584]
// CHECK: [56,  56,  56,  56,  56,  56,  56,  56,  96,  96,  96,  96,  96,  96,  96,  96,  56,  56,  56,  56,  56,  56,  56,  56,  74,  74,  74,  74,  74,  74,  74,  74,  81,  81,  81,  81,  81,  81,  81,  81,  54,  54,  54,  54,  54,  54,  54,  54,  85,  85,  85,  85,  85,  85,  85,  85,  82,  82,  82,  82,  82,  82,  82,  82]
// CHECK: [17,  10,  17,  10,  17,  10,  17,  10,  19,  19,  19,  19,  19,  19,  19,  19,  10,  17,  10,  17,  10,  17,  10,  17,  10,  19,  10,  19,  10,  19,  10,  19,  19,  13,  19,  13,  19,  13,  19,  13,  17,  10,  17,  10,  17,  10,  17,  10,  19,  13,  19,  13,  19,  13,  19,  13,  13,  19,  13,  19,  13,  19,  13,  19]
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @reduce(%full: memref<?xi32>, %eights: memref<?xi32>, %strided: memref<?xi32>) kernel {
      %tid = gpu.thread_id x
      %t = arith.index_cast %tid : index to i32
      %k23 = arith.constant 23 : i32
      %one = arith.constant 1 : i32
      %sq = arith.muli %t, %t : i32
      %m = arith.remui %sq, %k23 : i32
      %v = arith.addi %m, %one : i32
      %all = gpu.subgroup_reduce add %v : (i32) -> i32
      %c8 = gpu.subgroup_reduce add %v cluster(size = 8) : (i32) -> i32
      %c4 = gpu.subgroup_reduce maxsi %v cluster(size = 4, stride = 2) : (i32) -> i32
      memref.store %all, %full[%tid] : memref<?xi32>
      memref.store %c8, %eights[%tid] : memref<?xi32>
      memref.store %c4, %strided[%tid] : memref<?xi32>
      gpu.return
    }
  }
  func.func private @printMemrefI32(memref<*xi32>)
  func.func @main() {
    %c1 = arith.constant 1 : index
    %n = arith.constant 64 : index
    %full = gpu.alloc(%n) : memref<?xi32>
    %eights = gpu.alloc(%n) : memref<?xi32>
    %strided = gpu.alloc(%n) : memref<?xi32>
    gpu.launch_func @k::@reduce blocks in (%c1, %c1, %c1) threads in (%n, %c1, %c1)
        args(%full : memref<?xi32>, %eights : memref<?xi32>, %strided : memref<?xi32>)
    %h = memref.alloc(%n) : memref<?xi32>
    %u = memref.cast %h : memref<?xi32> to memref<*xi32>
    gpu.memcpy %h, %full : memref<?xi32>, memref<?xi32>
    call @printMemrefI32(%u) : (memref<*xi32>) -> ()
    gpu.memcpy %h, %eights : memref<?xi32>, memref<?xi32>
    call @printMemrefI32(%u) : (memref<*xi32>) -> ()
    gpu.memcpy %h, %strided : memref<?xi32>, memref<?xi32>
    call @printMemrefI32(%u) : (memref<*xi32>) -> ()
    return
  }
}

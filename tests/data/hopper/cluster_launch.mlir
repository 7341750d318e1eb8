// One kernel launched with thread-block clusters (2x3x1 clusters over a 6x3x2 grid), once without, and once
// with a non-portable 4x4x1 cluster (16 blocks) and 64 KiB of dynamic shared memory (both need opt-ins),
// then without clusters with 64 KiB of dynamic shared memory.
module attributes {gpu.container_module} {
  func.func @main() {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c6 = arith.constant 6 : index
    %c32 = arith.constant 32 : index
    %c4 = arith.constant 4 : index
    %c16 = arith.constant 16 : index
    %scale = arith.constant 5 : i32
    %shared = arith.constant 65536 : i32
    gpu.launch_func @cl::@tagged clusters in (%c2, %c3, %c1) blocks in (%c6, %c3, %c2) threads in (%c32, %c1, %c1) args(%scale : i32)
    gpu.launch_func @cl::@tagged blocks in (%c2, %c1, %c1) threads in (%c32, %c1, %c1) args(%scale : i32)
    gpu.launch_func @cl::@tagged clusters in (%c4, %c4, %c1) blocks in (%c16, %c16, %c1) threads in (%c32, %c1, %c1) dynamic_shared_memory_size %shared args(%scale : i32)
    gpu.launch_func @cl::@tagged blocks in (%c4, %c1, %c1) threads in (%c32, %c1, %c1) dynamic_shared_memory_size %shared args(%scale : i32)
    return
  }
  gpu.module @cl {
    gpu.func @tagged(%k: i32) kernel {
      %cx = gpu.cluster_id x
      %cdx = gpu.cluster_dim x
      %rank = gpu.cluster_block_id x
      %a = index.casts %cx : index to i32
      %b = index.casts %cdx : index to i32
      %c = index.casts %rank : index to i32
      %d = arith.muli %a, %k : i32
      gpu.printf "cluster %d of %d, block %d: %d\n", %a, %b, %c, %d : i32, i32, i32, i32
      gpu.return
    }
  }
}

// Operations the runtime carries out: a warp computes D = A x B + C (16x16x16, f16 inputs, f32 accumulator)
// with gpu.subgroup_mma_* (WMMA) on device buffers: A all ones, B[k][j] = j, C zero, so D[i][j] = 16 j and
// the host's sum of D is 30720. Each BUG makes a WMMA load or store reach past its buffer.
// ARCHS: sm_80
// CHECK: sum: 30720
// BUG load: A loaded from row 8 of its 16 rows: rows 16 to 23 lie past the buffer
// BUG load FROM:       %A = gpu.subgroup_mma_load_matrix %a[%c0, %c0] {leadDimension = 16 : index} : memref<16x16xf16> -> !gpu.mma_matrix<16x16xf16, "AOp"> // @load
// BUG load TO:       %A = gpu.subgroup_mma_load_matrix %a[%c8, %c0] {leadDimension = 16 : index} : memref<16x16xf16> -> !gpu.mma_matrix<16x16xf16, "AOp"> // @load
// BUG load REPORT: FILE:@load:12: error: memcheck: out-of-bounds access: read of 2 bytes in kernel 'multiply', block (0,0,0), thread (8,0,0): offset 512 of device buffer #1 (512 bytes, allocated at FILE:@alloc_a:10)
// BUG store: D stored with a leading dimension of 17: its last rows overrun the buffer
// BUG store FROM:       gpu.subgroup_mma_store_matrix %D, %d[%c0, %c0] {leadDimension = 16 : index} : !gpu.mma_matrix<16x16xf32, "COp">, memref<16x16xf32> // @store
// BUG store TO:       gpu.subgroup_mma_store_matrix %D, %d[%c0, %c0] {leadDimension = 17 : index} : !gpu.mma_matrix<16x16xf32, "COp">, memref<16x16xf32> // @store
// BUG store REPORT: FILE:@store:7: error: memcheck: out-of-bounds access: write of 4 bytes in kernel 'multiply', block (0,0,0), thread (30,0,0): offset 1024 of device buffer #4 (1024 bytes, allocated at FILE:@alloc_d:10)
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @multiply(%a: memref<16x16xf16>, %b: memref<16x16xf16>, %c: memref<16x16xf32>, %d: memref<16x16xf32>) kernel {
      %c0 = arith.constant 0 : index
      %c8 = arith.constant 8 : index
      %A = gpu.subgroup_mma_load_matrix %a[%c0, %c0] {leadDimension = 16 : index} : memref<16x16xf16> -> !gpu.mma_matrix<16x16xf16, "AOp"> // @load
      %B = gpu.subgroup_mma_load_matrix %b[%c0, %c0] {leadDimension = 16 : index} : memref<16x16xf16> -> !gpu.mma_matrix<16x16xf16, "BOp">
      %C = gpu.subgroup_mma_load_matrix %c[%c0, %c0] {leadDimension = 16 : index} : memref<16x16xf32> -> !gpu.mma_matrix<16x16xf32, "COp">
      %D = gpu.subgroup_mma_compute %A, %B, %C : !gpu.mma_matrix<16x16xf16, "AOp">, !gpu.mma_matrix<16x16xf16, "BOp"> -> !gpu.mma_matrix<16x16xf32, "COp">
      gpu.subgroup_mma_store_matrix %D, %d[%c0, %c0] {leadDimension = 16 : index} : !gpu.mma_matrix<16x16xf32, "COp">, memref<16x16xf32> // @store
      gpu.return
    }
  }
  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %c32 = arith.constant 32 : index
    %one = arith.constant 1.0 : f16
    %zero = arith.constant 0.0 : f32
    %ha = memref.alloc() : memref<16x16xf16>
    %hb = memref.alloc() : memref<16x16xf16>
    %hc = memref.alloc() : memref<16x16xf32>
    %hd = memref.alloc() : memref<16x16xf32>
    scf.for %i = %c0 to %c16 step %c1 {
      scf.for %j = %c0 to %c16 step %c1 {
        %ji = arith.index_cast %j : index to i32
        %jf = arith.sitofp %ji : i32 to f16
        memref.store %one, %ha[%i, %j] : memref<16x16xf16>
        memref.store %jf, %hb[%i, %j] : memref<16x16xf16>
        memref.store %zero, %hc[%i, %j] : memref<16x16xf32>
      }
    }
    %a = gpu.alloc() : memref<16x16xf16> // @alloc_a
    %b = gpu.alloc() : memref<16x16xf16>
    %c = gpu.alloc() : memref<16x16xf32>
    %d = gpu.alloc() : memref<16x16xf32> // @alloc_d
    gpu.memcpy %a, %ha : memref<16x16xf16>, memref<16x16xf16>
    gpu.memcpy %b, %hb : memref<16x16xf16>, memref<16x16xf16>
    gpu.memcpy %c, %hc : memref<16x16xf32>, memref<16x16xf32>
    gpu.launch_func @k::@multiply blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1)
        args(%a : memref<16x16xf16>, %b : memref<16x16xf16>, %c : memref<16x16xf32>, %d : memref<16x16xf32>)
    gpu.memcpy %hd, %d : memref<16x16xf32>, memref<16x16xf32>
    %sum = scf.for %i = %c0 to %c16 step %c1 iter_args(%acc = %zero) -> (f32) {
      %row = scf.for %j = %c0 to %c16 step %c1 iter_args(%r = %acc) -> (f32) {
        %v = memref.load %hd[%i, %j] : memref<16x16xf32>
        %n = arith.addf %r, %v : f32
        scf.yield %n : f32
      }
      scf.yield %row : f32
    }
    gpu.dealloc %a : memref<16x16xf16>
    gpu.dealloc %b : memref<16x16xf16>
    gpu.dealloc %c : memref<16x16xf32>
    gpu.dealloc %d : memref<16x16xf32>
    memref.dealloc %ha : memref<16x16xf16>
    memref.dealloc %hb : memref<16x16xf16>
    memref.dealloc %hc : memref<16x16xf32>
    memref.dealloc %hd : memref<16x16xf32>
    %si = arith.fptosi %sum : f32 to i32
    vector.print str "sum: "
    vector.print %si : i32
    return
  }
}

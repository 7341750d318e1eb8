// Tensor cores through gpu.subgroup_mma (wmma m16n16k16): D = A * B + C for 16x16 f16 A and B and f32 C,
// loaded, multiplied and stored by one warp, with an elementwise add on the fragments; D printed.
module attributes {gpu.container_module} {
  llvm.mlir.global internal constant @fmt("d[%d][%d] = %.1f\0A\00") {addr_space = 0 : i32}
  llvm.func @printf(!llvm.ptr, ...) -> i32

  gpu.module @kernels {
    gpu.func @wmma(%a: memref<16x16xf16>, %b: memref<16x16xf16>, %c: memref<16x16xf32>) kernel {
      %c0 = arith.constant 0 : index
      %fa = gpu.subgroup_mma_load_matrix %a[%c0, %c0] {leadDimension = 16 : index} : memref<16x16xf16> -> !gpu.mma_matrix<16x16xf16, "AOp">
      %fb = gpu.subgroup_mma_load_matrix %b[%c0, %c0] {leadDimension = 16 : index} : memref<16x16xf16> -> !gpu.mma_matrix<16x16xf16, "BOp">
      %fc = gpu.subgroup_mma_load_matrix %c[%c0, %c0] {leadDimension = 16 : index} : memref<16x16xf32> -> !gpu.mma_matrix<16x16xf32, "COp">
      %fd = gpu.subgroup_mma_compute %fa, %fb, %fc : !gpu.mma_matrix<16x16xf16, "AOp">, !gpu.mma_matrix<16x16xf16, "BOp"> -> !gpu.mma_matrix<16x16xf32, "COp">
      %half = arith.constant 0.5 : f32
      %fh = gpu.subgroup_mma_constant_matrix %half : !gpu.mma_matrix<16x16xf32, "COp">
      %fe = gpu.subgroup_mma_elementwise addf %fd, %fh : (!gpu.mma_matrix<16x16xf32, "COp">, !gpu.mma_matrix<16x16xf32, "COp">) -> !gpu.mma_matrix<16x16xf32, "COp">
      gpu.subgroup_mma_store_matrix %fe, %c[%c0, %c0] {leadDimension = 16 : index} : !gpu.mma_matrix<16x16xf32, "COp">, memref<16x16xf32>
      gpu.return
    }
  }

  func.func @main() -> i32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %c5 = arith.constant 5 : index
    %c7 = arith.constant 7 : index
    %c16 = arith.constant 16 : index
    %c32 = arith.constant 32 : index
    %ha = memref.alloc() : memref<16x16xf16>
    %hb = memref.alloc() : memref<16x16xf16>
    %hc = memref.alloc() : memref<16x16xf32>
    // a[i][k] = (i + k) % 7, b[k][j] = (3k + j) % 5, c[i][j] = i - j
    scf.for %i = %c0 to %c16 step %c1 {
      scf.for %j = %c0 to %c16 step %c1 {
        %s = arith.addi %i, %j : index
        %m = arith.remui %s, %c7 : index
        %mi = arith.index_cast %m : index to i32
        %mf = arith.sitofp %mi : i32 to f16
        memref.store %mf, %ha[%i, %j] : memref<16x16xf16>
        %i3 = arith.muli %i, %c3 : index
        %t = arith.addi %i3, %j : index
        %n = arith.remui %t, %c5 : index
        %ni = arith.index_cast %n : index to i32
        %nf = arith.sitofp %ni : i32 to f16
        memref.store %nf, %hb[%i, %j] : memref<16x16xf16>
        %ii = arith.index_cast %i : index to i32
        %ji = arith.index_cast %j : index to i32
        %d = arith.subi %ii, %ji : i32
        %df = arith.sitofp %d : i32 to f32
        memref.store %df, %hc[%i, %j] : memref<16x16xf32>
      }
    }
    %a = gpu.alloc () : memref<16x16xf16>
    %b = gpu.alloc () : memref<16x16xf16>
    %c = gpu.alloc () : memref<16x16xf32>
    gpu.memcpy %a, %ha : memref<16x16xf16>, memref<16x16xf16>
    gpu.memcpy %b, %hb : memref<16x16xf16>, memref<16x16xf16>
    gpu.memcpy %c, %hc : memref<16x16xf32>, memref<16x16xf32>
    gpu.launch_func @kernels::@wmma blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1)
        args(%a : memref<16x16xf16>, %b : memref<16x16xf16>, %c : memref<16x16xf32>)
    gpu.memcpy %hc, %c : memref<16x16xf32>, memref<16x16xf32>
    %fmt = llvm.mlir.addressof @fmt : !llvm.ptr
    scf.for %i = %c0 to %c16 step %c1 {
      scf.for %j = %c0 to %c16 step %c1 {
        %v = memref.load %hc[%i, %j] : memref<16x16xf32>
        %d = arith.extf %v : f32 to f64
        %ii = arith.index_cast %i : index to i32
        %ji = arith.index_cast %j : index to i32
        llvm.call @printf(%fmt, %ii, %ji, %d) vararg(!llvm.func<i32 (ptr, ...)>) : (!llvm.ptr, i32, i32, f64) -> i32
      }
    }
    %z = arith.constant 0 : i32
    return %z : i32
  }
}

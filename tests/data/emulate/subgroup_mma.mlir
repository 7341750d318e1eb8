// Tensor-core matrix ops (gpu.subgroup_mma_*: WMMA on sm_80, and on gfx1100, where mlir-offload lowers them
// to amdgpu.wmma with the RDNA3 fragment layouts): one warp computes D = A * B + C for 16x16
// tiles, A and B f16 and C, D f32, small integers so every sum is exact: A[i][k] = (i + 2k) mod 7 - 3,
// B[k][j] = (3k + j) mod 5 - 2, C[i][j] = i*j mod 4. A is read from the right half of a 16x32 buffer
// (leadDimension 32), B from a 16x24 buffer (leadDimension 24, junk in the last 8 columns), and D is
// stored into the lower half of a 32x16 buffer, so strides and offsets count.
// The host multiplies the same tiles; the diagonal of D is printed.
// ARCHS: sm_80 gfx1100
// WRONG: B loaded with the row stride of a 16-wide buffer instead of its 24
// WRONG-FROM:       %b = gpu.subgroup_mma_load_matrix %bbuf[%c0, %c0] {leadDimension = 24 : index}
// WRONG-TO:       %b = gpu.subgroup_mma_load_matrix %bbuf[%c0, %c0] {leadDimension = 16 : index}
// CHECK: [11,  8,  16,  8,  11,  2,  -12,  -11,  -2,  -13,  -9,  5,  9,  11,  10,  10]
// CHECK: sum: 276
// CHECK: sum of magnitudes: 2226
// CHECK: wrong elements: 0
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @mma(%abuf: memref<16x32xf16>, %bbuf: memref<16x24xf16>, %cbuf: memref<16x16xf32>, %dbuf: memref<32x16xf32>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c16 = arith.constant 16 : index
      %a = gpu.subgroup_mma_load_matrix %abuf[%c0, %c16] {leadDimension = 32 : index} : memref<16x32xf16> -> !gpu.mma_matrix<16x16xf16, "AOp">
      %b = gpu.subgroup_mma_load_matrix %bbuf[%c0, %c0] {leadDimension = 24 : index} : memref<16x24xf16> -> !gpu.mma_matrix<16x16xf16, "BOp">
      %c = gpu.subgroup_mma_load_matrix %cbuf[%c0, %c0] {leadDimension = 16 : index} : memref<16x16xf32> -> !gpu.mma_matrix<16x16xf32, "COp">
      %d = gpu.subgroup_mma_compute %a, %b, %c : !gpu.mma_matrix<16x16xf16, "AOp">, !gpu.mma_matrix<16x16xf16, "BOp"> -> !gpu.mma_matrix<16x16xf32, "COp">
      gpu.subgroup_mma_store_matrix %d, %dbuf[%c16, %c0] {leadDimension = 16 : index} : !gpu.mma_matrix<16x16xf32, "COp">, memref<32x16xf32>
      gpu.return
    }
  }
  func.func private @printMemrefF32(memref<*xf32>)
  func.func @value(%i: index, %j: index, %mi: index, %mj: index, %m: index, %shift: f32) -> f32 {
    %a = arith.muli %i, %mi : index
    %b = arith.muli %j, %mj : index
    %s = arith.addi %a, %b : index
    %r = arith.remui %s, %m : index
    %ri = arith.index_cast %r : index to i32
    %f = arith.sitofp %ri : i32 to f32
    %v = arith.subf %f, %shift : f32
    return %v : f32
  }
  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    %c5 = arith.constant 5 : index
    %c7 = arith.constant 7 : index
    %c16 = arith.constant 16 : index
    %c24 = arith.constant 24 : index
    %c32 = arith.constant 32 : index
    %zero = arith.constant 0.0 : f32
    %two = arith.constant 2.0 : f32
    %three = arith.constant 3.0 : f32
    %ha = memref.alloc() : memref<16x32xf16>
    %hb = memref.alloc() : memref<16x24xf16>
    %hc = memref.alloc() : memref<16x16xf32>
    %hd = memref.alloc() : memref<32x16xf32>
    %ra = memref.alloc() : memref<16x16xf32>
    %rb = memref.alloc() : memref<16x16xf32>
    scf.for %i = %c0 to %c16 step %c1 {
      scf.for %j = %c0 to %c16 step %c1 {
        %va = func.call @value(%i, %j, %c1, %c2, %c7, %three) : (index, index, index, index, index, f32) -> f32
        %vb = func.call @value(%i, %j, %c3, %c1, %c5, %two) : (index, index, index, index, index, f32) -> f32
        %ij = arith.muli %i, %j : index
        %cm = arith.remui %ij, %c4 : index
        %cmi = arith.index_cast %cm : index to i32
        %vc = arith.sitofp %cmi : i32 to f32
        memref.store %va, %ra[%i, %j] : memref<16x16xf32>
        memref.store %vb, %rb[%i, %j] : memref<16x16xf32>
        %va16 = arith.truncf %va : f32 to f16
        %vb16 = arith.truncf %vb : f32 to f16
        %j16 = arith.addi %j, %c16 : index
        memref.store %va16, %ha[%i, %j16] : memref<16x32xf16>
        %junk = arith.constant 99.0 : f16
        memref.store %junk, %ha[%i, %j] : memref<16x32xf16>
        memref.store %vb16, %hb[%i, %j] : memref<16x24xf16>
        memref.store %vc, %hc[%i, %j] : memref<16x16xf32>
      }
      scf.for %j = %c16 to %c24 step %c1 {
        %junk = arith.constant 77.0 : f16
        memref.store %junk, %hb[%i, %j] : memref<16x24xf16>
      }
    }
    %da = gpu.alloc() : memref<16x32xf16>
    %db = gpu.alloc() : memref<16x24xf16>
    %dc = gpu.alloc() : memref<16x16xf32>
    %dd = gpu.alloc() : memref<32x16xf32>
    gpu.memcpy %da, %ha : memref<16x32xf16>, memref<16x32xf16>
    gpu.memcpy %db, %hb : memref<16x24xf16>, memref<16x24xf16>
    gpu.memcpy %dc, %hc : memref<16x16xf32>, memref<16x16xf32>
    gpu.launch_func @k::@mma blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1)
        args(%da : memref<16x32xf16>, %db : memref<16x24xf16>, %dc : memref<16x16xf32>, %dd : memref<32x16xf32>)
    gpu.memcpy %hd, %dd : memref<32x16xf32>, memref<32x16xf32>
    %diag = memref.alloc() : memref<16xf32>
    %r:3 = scf.for %i = %c0 to %c16 step %c1 iter_args(%sum = %zero, %mag = %zero, %wrong = %c0) -> (f32, f32, index) {
      %row:3 = scf.for %j = %c0 to %c16 step %c1 iter_args(%s = %sum, %m = %mag, %w = %wrong) -> (f32, f32, index) {
        %acc0 = memref.load %hc[%i, %j] : memref<16x16xf32>
        %want = scf.for %k = %c0 to %c16 step %c1 iter_args(%acc = %acc0) -> (f32) {
          %x = memref.load %ra[%i, %k] : memref<16x16xf32>
          %y = memref.load %rb[%k, %j] : memref<16x16xf32>
          %p = arith.mulf %x, %y : f32
          %q = arith.addf %acc, %p : f32
          scf.yield %q : f32
        }
        %i16 = arith.addi %i, %c16 : index
        %got = memref.load %hd[%i16, %j] : memref<32x16xf32>
        %isdiag = arith.cmpi eq, %i, %j : index
        scf.if %isdiag {
          memref.store %got, %diag[%i] : memref<16xf32>
        }
        %same = arith.cmpf oeq, %got, %want : f32
        %w1 = arith.addi %w, %c1 : index
        %w2 = arith.select %same, %w, %w1 : index
        %s2 = arith.addf %s, %got : f32
        %abs = math.absf %got : f32
        %m2 = arith.addf %m, %abs : f32
        scf.yield %s2, %m2, %w2 : f32, f32, index
      }
      scf.yield %row#0, %row#1, %row#2 : f32, f32, index
    }
    %u = memref.cast %diag : memref<16xf32> to memref<*xf32>
    call @printMemrefF32(%u) : (memref<*xf32>) -> ()
    vector.print str "sum: "
    vector.print %r#0 : f32
    vector.print str "sum of magnitudes: "
    vector.print %r#1 : f32
    vector.print str "wrong elements: "
    %w = arith.index_cast %r#2 : index to i64
    vector.print %w : i64
    return
  }
}

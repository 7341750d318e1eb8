// A transform-dialect schedule rewrites a linalg.matmul inside a gpu.launch into mma.sync m16n8k4 on
// tf32 (transform.nvgpu.rewrite_matmul_as_mma_sync); the program runs with
// --pass-pipeline 'builtin.module(transform-interpreter)' and mlir-offload drops the schedule module
// afterwards. C (16x8) += A (16x4) * B (4x8) with a[i][k] = (i + 3k) % 5 - 2, b[k][j] = (2k + j) % 7,
// c[i][j] = ij % 3, all exact in tf32.
// ARCHS: sm_80
// PASS-PIPELINE: builtin.module(transform-interpreter)
// WRONG: the kernel multiplies by the other B (b2[k][j] = (2k + j + 1) % 7)
// WRONG-FROM:     linalg.matmul ins(%a, %b : memref<16x4xf32>, memref<4x8xf32>) outs(%c : memref<16x8xf32>)
// WRONG-TO:     linalg.matmul ins(%a, %b2 : memref<16x4xf32>, memref<4x8xf32>) outs(%c : memref<16x8xf32>)
// CHECK: [10,  -4,  -4,  3,  3,  -4,  -4,  10]
// CHECK: [-8,  6,  6,  3,  3,  -11,  -14,  -7]
// CHECK: [-6,  1,  -2,  -12,  -12,  -1,  -4,  -4]
// CHECK: [6,  8,  10,  -2,  0,  9,  11,  6]
// CHECK: [-2,  -7,  -5,  8,  10,  12,  11,  -1]
// CHECK: [10,  -2,  -3,  3,  5,  -3,  -4,  12]
// CHECK: [-8,  5,  4,  3,  2,  -13,  -14,  -8]
// CHECK: [-6,  0,  -1,  -12,  -13,  0,  -4,  -5]
// CHECK: [6,  10,  11,  -2,  2,  10,  11,  8]
// CHECK: [-2,  -8,  -7,  8,  9,  10,  11,  -2]
// CHECK: [10,  -3,  -2,  3,  4,  -2,  -4,  11]
// CHECK: [-8,  7,  5,  3,  4,  -12,  -14,  -6]
// CHECK: [-6,  -1,  -3,  -12,  -14,  -2,  -4,  -6]
// CHECK: [6,  9,  12,  -2,  1,  11,  11,  7]
// CHECK: [-2,  -6,  -6,  8,  11,  11,  11,  0]
// CHECK: [10,  -4,  -4,  3,  3,  -4,  -4,  10]
func.func private @printMemrefF32(memref<*xf32>)
func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c7 = arith.constant 7 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %a = gpu.alloc host_shared () : memref<16x4xf32>
  %b = gpu.alloc host_shared () : memref<4x8xf32>
  %b2 = gpu.alloc host_shared () : memref<4x8xf32>
  %c = gpu.alloc host_shared () : memref<16x8xf32>
  scf.for %i = %c0 to %c16 step %c1 {
    scf.for %k = %c0 to %c4 step %c1 {
      %k3 = arith.muli %k, %c3 : index
      %s = arith.addi %i, %k3 : index
      %m = arith.remui %s, %c5 : index
      %mi = arith.index_cast %m : index to i32
      %two = arith.constant 2 : i32
      %v = arith.subi %mi, %two : i32
      %f = arith.sitofp %v : i32 to f32
      memref.store %f, %a[%i, %k] : memref<16x4xf32>
    }
    scf.for %j = %c0 to %c8 step %c1 {
      %p = arith.muli %i, %j : index
      %m = arith.remui %p, %c3 : index
      %mi = arith.index_cast %m : index to i32
      %f = arith.sitofp %mi : i32 to f32
      memref.store %f, %c[%i, %j] : memref<16x8xf32>
    }
  }
  scf.for %k = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c8 step %c1 {
      %k2 = arith.muli %k, %c2 : index
      %s = arith.addi %k2, %j : index
      %m = arith.remui %s, %c7 : index
      %mi = arith.index_cast %m : index to i32
      %f = arith.sitofp %mi : i32 to f32
      memref.store %f, %b[%k, %j] : memref<4x8xf32>
      %s2 = arith.addi %s, %c1 : index
      %m2 = arith.remui %s2, %c7 : index
      %mi2 = arith.index_cast %m2 : index to i32
      %f2 = arith.sitofp %mi2 : i32 to f32
      memref.store %f2, %b2[%k, %j] : memref<4x8xf32>
    }
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    linalg.matmul ins(%a, %b : memref<16x4xf32>, memref<4x8xf32>) outs(%c : memref<16x8xf32>)
    gpu.terminator
  }
  %u = memref.cast %c : memref<16x8xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}

module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.nvgpu.rewrite_matmul_as_mma_sync %mm : (!transform.any_op) -> ()
    transform.yield
  }
}

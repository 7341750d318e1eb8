// Tiled matmul C = A * B (64x64 f32, small integers so every sum is exact) with 16x16 tiles of A and
// B in workgroup attributions, a barrier after loading each tile and another before the next load.
// A[i][k] = (i + 2k) mod 5 - 2, B[k][j] = (3k + j) mod 7 - 3; the host multiplies them itself.
// ARCHS: sm_80 gfx90a
// WRONG: the barrier before the next tile overwrites the tiles removed
// WRONG-FROM:           scf.yield %sum : f32
// WRONG-FROM:         }
// WRONG-FROM:         gpu.barrier
// WRONG-TO:           scf.yield %sum : f32
// WRONG-TO:         }
// CHECK: [-1,  8,  -3,  6,  -3,  3,  1,  0]
// CHECK: sum: 13
// CHECK: sum of magnitudes: 28899
// CHECK: wrong elements: 0
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @matmul(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %c: memref<64x64xf32>)
        workgroup(%ta: memref<16x16xf32, #gpu.address_space<workgroup>>,
                  %tb: memref<16x16xf32, #gpu.address_space<workgroup>>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %c16 = arith.constant 16 : index
      %tx = gpu.thread_id x
      %ty = gpu.thread_id y
      %bx = gpu.block_id x
      %by = gpu.block_id y
      %rbase = arith.muli %by, %c16 : index
      %row = arith.addi %rbase, %ty : index
      %cbase = arith.muli %bx, %c16 : index
      %col = arith.addi %cbase, %tx : index
      %zero = arith.constant 0.0 : f32
      %acc = scf.for %t = %c0 to %c4 step %c1 iter_args(%partial = %zero) -> (f32) {
        %kbase = arith.muli %t, %c16 : index
        %ka = arith.addi %kbase, %tx : index
        %kb = arith.addi %kbase, %ty : index
        %va = memref.load %a[%row, %ka] : memref<64x64xf32>
        %vb = memref.load %b[%kb, %col] : memref<64x64xf32>
        memref.store %va, %ta[%ty, %tx] : memref<16x16xf32, #gpu.address_space<workgroup>>
        memref.store %vb, %tb[%ty, %tx] : memref<16x16xf32, #gpu.address_space<workgroup>>
        gpu.barrier
        %dot = scf.for %k = %c0 to %c16 step %c1 iter_args(%s = %partial) -> (f32) {
          %x = memref.load %ta[%ty, %k] : memref<16x16xf32, #gpu.address_space<workgroup>>
          %y = memref.load %tb[%k, %tx] : memref<16x16xf32, #gpu.address_space<workgroup>>
          %p = arith.mulf %x, %y : f32
          %sum = arith.addf %s, %p : f32
          scf.yield %sum : f32
        }
        gpu.barrier
        scf.yield %dot : f32
      }
      memref.store %acc, %c[%row, %col] : memref<64x64xf32>
      gpu.return
    }
  }
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
    %c9 = arith.constant 9 : index
    %c16 = arith.constant 16 : index
    %n = arith.constant 64 : index
    %ha = memref.alloc() : memref<64x64xf32>
    %hb = memref.alloc() : memref<64x64xf32>
    %hc = memref.alloc() : memref<64x64xf32>
    scf.for %i = %c0 to %n step %c1 {
      scf.for %j = %c0 to %n step %c1 {
        %j2 = arith.muli %j, %c2 : index
        %sa = arith.addi %i, %j2 : index
        %ma = arith.remui %sa, %c5 : index
        %ia = arith.index_cast %ma : index to i32
        %fa = arith.sitofp %ia : i32 to f32
        %two = arith.constant 2.0 : f32
        %va = arith.subf %fa, %two : f32
        memref.store %va, %ha[%i, %j] : memref<64x64xf32>
        %i3 = arith.muli %i, %c3 : index
        %sb = arith.addi %i3, %j : index
        %mb = arith.remui %sb, %c7 : index
        %ib = arith.index_cast %mb : index to i32
        %fb = arith.sitofp %ib : i32 to f32
        %three = arith.constant 3.0 : f32
        %vb = arith.subf %fb, %three : f32
        memref.store %vb, %hb[%i, %j] : memref<64x64xf32>
      }
    }
    %a = gpu.alloc() : memref<64x64xf32>
    %b = gpu.alloc() : memref<64x64xf32>
    %c = gpu.alloc() : memref<64x64xf32>
    gpu.memcpy %a, %ha : memref<64x64xf32>, memref<64x64xf32>
    gpu.memcpy %b, %hb : memref<64x64xf32>, memref<64x64xf32>
    gpu.launch_func @k::@matmul blocks in (%c4, %c4, %c1) threads in (%c16, %c16, %c1)
        args(%a : memref<64x64xf32>, %b : memref<64x64xf32>, %c : memref<64x64xf32>)
    gpu.memcpy %hc, %c : memref<64x64xf32>, memref<64x64xf32>
    %diagonal = memref.alloc() : memref<8xf32>
    scf.for %d = %c0 to %c8 step %c1 {
      %i = arith.muli %d, %c9 : index
      %v = memref.load %hc[%i, %i] : memref<64x64xf32>
      memref.store %v, %diagonal[%d] : memref<8xf32>
    }
    %ud = memref.cast %diagonal : memref<8xf32> to memref<*xf32>
    call @printMemrefF32(%ud) : (memref<*xf32>) -> ()
    %zero = arith.constant 0.0 : f32
    %sums:3 = scf.for %i = %c0 to %n step %c1 iter_args(%sum = %zero, %mag = %zero, %wrong = %c0) -> (f32, f32, index) {
      %row:3 = scf.for %j = %c0 to %n step %c1 iter_args(%s = %sum, %m = %mag, %w = %wrong) -> (f32, f32, index) {
        %want = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32) {
          %x = memref.load %ha[%i, %k] : memref<64x64xf32>
          %y = memref.load %hb[%k, %j] : memref<64x64xf32>
          %p = arith.mulf %x, %y : f32
          %q = arith.addf %acc, %p : f32
          scf.yield %q : f32
        }
        %got = memref.load %hc[%i, %j] : memref<64x64xf32>
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
    vector.print str "sum: "
    vector.print %sums#0 : f32
    vector.print str "sum of magnitudes: "
    vector.print %sums#1 : f32
    vector.print str "wrong elements: "
    %w = arith.index_cast %sums#2 : index to i64
    vector.print %w : i64
    gpu.dealloc %a : memref<64x64xf32>
    gpu.dealloc %b : memref<64x64xf32>
    gpu.dealloc %c : memref<64x64xf32>
    return
  }
}

// Device math through the device libraries (libdevice on sm_80, ocml on gfx90a): ten functions of f32 and
// f64 over 72 inputs (0.05 + 0.37 i, and 1e7..4.5e7 for the trigonometric argument reduction; exp, tanh
// and erf take min(x/4 - 1, 20)), compared with the host's libm on the same inputs. Tolerance: |device - host| <= 2^-19 * max(1, |host|) for
// f32 and 2^-48 * max(1, |host|) for f64, a few units in the last place of each (the libraries' documented
// error bounds are 1 to 4 ulp, the host's libm within 1 ulp).
// ARCHS: sm_80 gfx90a
// WRONG: the device computes cos where the host computes sin (f32)
// WRONG-FROM:       %r0 = math.sin %x : f32
// WRONG-TO:       %r0 = math.cos %x : f32
// CHECK: f32 sin outside tolerance: 0
// CHECK: f32 cos outside tolerance: 0
// CHECK: f32 exp outside tolerance: 0
// CHECK: f32 log outside tolerance: 0
// CHECK: f32 sqrt outside tolerance: 0
// CHECK: f32 tanh outside tolerance: 0
// CHECK: f32 erf outside tolerance: 0
// CHECK: f32 atan outside tolerance: 0
// CHECK: f32 pow outside tolerance: 0
// CHECK: f32 atan2 outside tolerance: 0
// CHECK: f64 sin outside tolerance: 0
// CHECK: f64 cos outside tolerance: 0
// CHECK: f64 exp outside tolerance: 0
// CHECK: f64 log outside tolerance: 0
// CHECK: f64 sqrt outside tolerance: 0
// CHECK: f64 tanh outside tolerance: 0
// CHECK: f64 erf outside tolerance: 0
// CHECK: f64 atan outside tolerance: 0
// CHECK: f64 pow outside tolerance: 0
// CHECK: f64 atan2 outside tolerance: 0
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @math_f32(%in: memref<?xf32>, %out0: memref<?xf32>, %out1: memref<?xf32>, %out2: memref<?xf32>, %out3: memref<?xf32>, %out4: memref<?xf32>, %out5: memref<?xf32>, %out6: memref<?xf32>, %out7: memref<?xf32>, %out8: memref<?xf32>, %out9: memref<?xf32>) kernel {
      %i = gpu.global_id x
      %x = memref.load %in[%i] : memref<?xf32>
      %quarter = arith.constant 0.25 : f32
      %one = arith.constant 1.0 : f32
      %p = arith.constant 1.5 : f32
      %x4 = arith.mulf %x, %quarter : f32
      %q0 = arith.subf %x4, %one : f32
      %cap = arith.constant 20.0 : f32
      %q = arith.minimumf %q0, %cap : f32
      %r0 = math.sin %x : f32
      %r1 = math.cos %x : f32
      %r2 = math.exp %q : f32
      %r3 = math.log %x : f32
      %r4 = math.sqrt %x : f32
      %r5 = math.tanh %q : f32
      %r6 = math.erf %q : f32
      %r7 = math.atan %x : f32
      %r8 = math.powf %x, %p : f32
      %r9 = math.atan2 %x, %p : f32
      memref.store %r0, %out0[%i] : memref<?xf32>
      memref.store %r1, %out1[%i] : memref<?xf32>
      memref.store %r2, %out2[%i] : memref<?xf32>
      memref.store %r3, %out3[%i] : memref<?xf32>
      memref.store %r4, %out4[%i] : memref<?xf32>
      memref.store %r5, %out5[%i] : memref<?xf32>
      memref.store %r6, %out6[%i] : memref<?xf32>
      memref.store %r7, %out7[%i] : memref<?xf32>
      memref.store %r8, %out8[%i] : memref<?xf32>
      memref.store %r9, %out9[%i] : memref<?xf32>
      gpu.return
    }
    gpu.func @math_f64(%in: memref<?xf64>, %out0: memref<?xf64>, %out1: memref<?xf64>, %out2: memref<?xf64>, %out3: memref<?xf64>, %out4: memref<?xf64>, %out5: memref<?xf64>, %out6: memref<?xf64>, %out7: memref<?xf64>, %out8: memref<?xf64>, %out9: memref<?xf64>) kernel {
      %i = gpu.global_id x
      %x = memref.load %in[%i] : memref<?xf64>
      %quarter = arith.constant 0.25 : f64
      %one = arith.constant 1.0 : f64
      %p = arith.constant 1.5 : f64
      %x4 = arith.mulf %x, %quarter : f64
      %q0 = arith.subf %x4, %one : f64
      %cap = arith.constant 20.0 : f64
      %q = arith.minimumf %q0, %cap : f64
      %r0 = math.sin %x : f64
      %r1 = math.cos %x : f64
      %r2 = math.exp %q : f64
      %r3 = math.log %x : f64
      %r4 = math.sqrt %x : f64
      %r5 = math.tanh %q : f64
      %r6 = math.erf %q : f64
      %r7 = math.atan %x : f64
      %r8 = math.powf %x, %p : f64
      %r9 = math.atan2 %x, %p : f64
      memref.store %r0, %out0[%i] : memref<?xf64>
      memref.store %r1, %out1[%i] : memref<?xf64>
      memref.store %r2, %out2[%i] : memref<?xf64>
      memref.store %r3, %out3[%i] : memref<?xf64>
      memref.store %r4, %out4[%i] : memref<?xf64>
      memref.store %r5, %out5[%i] : memref<?xf64>
      memref.store %r6, %out6[%i] : memref<?xf64>
      memref.store %r7, %out7[%i] : memref<?xf64>
      memref.store %r8, %out8[%i] : memref<?xf64>
      memref.store %r9, %out9[%i] : memref<?xf64>
      gpu.return
    }
  }
  func.func @host_f32(%x: f32) -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) {
    %quarter = arith.constant 0.25 : f32
    %one = arith.constant 1.0 : f32
    %p = arith.constant 1.5 : f32
    %x4 = arith.mulf %x, %quarter : f32
    %q0 = arith.subf %x4, %one : f32
    %cap = arith.constant 20.0 : f32
    %q = arith.minimumf %q0, %cap : f32
    %r0 = math.sin %x : f32
    %r1 = math.cos %x : f32
    %r2 = math.exp %q : f32
    %r3 = math.log %x : f32
    %r4 = math.sqrt %x : f32
    %r5 = math.tanh %q : f32
    %r6 = math.erf %q : f32
    %r7 = math.atan %x : f32
    %r8 = math.powf %x, %p : f32
    %r9 = math.atan2 %x, %p : f32
    return %r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8, %r9 : f32, f32, f32, f32, f32, f32, f32, f32, f32, f32
  }
  func.func @host_f64(%x: f64) -> (f64, f64, f64, f64, f64, f64, f64, f64, f64, f64) {
    %quarter = arith.constant 0.25 : f64
    %one = arith.constant 1.0 : f64
    %p = arith.constant 1.5 : f64
    %x4 = arith.mulf %x, %quarter : f64
    %q0 = arith.subf %x4, %one : f64
    %cap = arith.constant 20.0 : f64
    %q = arith.minimumf %q0, %cap : f64
    %r0 = math.sin %x : f64
    %r1 = math.cos %x : f64
    %r2 = math.exp %q : f64
    %r3 = math.log %x : f64
    %r4 = math.sqrt %x : f64
    %r5 = math.tanh %q : f64
    %r6 = math.erf %q : f64
    %r7 = math.atan %x : f64
    %r8 = math.powf %x, %p : f64
    %r9 = math.atan2 %x, %p : f64
    return %r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8, %r9 : f64, f64, f64, f64, f64, f64, f64, f64, f64, f64
  }
  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %c8 = arith.constant 8 : index
    %c9 = arith.constant 9 : index
    %n = arith.constant 72 : index
    %h_in_f32 = memref.alloc(%n) : memref<?xf32>
    scf.for %i = %c0 to %n step %c1 {
      %small = arith.cmpi ult, %i, %c64 : index
      %ii = arith.index_cast %i : index to i64
      %fi = arith.sitofp %ii : i64 to f32
      %step = arith.constant 0.37 : f32
      %start = arith.constant 0.05 : f32
      %s1 = arith.mulf %fi, %step : f32
      %near = arith.addf %s1, %start : f32
      %big_step = arith.constant 5.0e6 : f32
      %big_start = arith.constant -3.1e8 : f32
      %b1 = arith.mulf %fi, %big_step : f32
      %far0 = arith.addf %b1, %big_start : f32
      %far = math.absf %far0 : f32
      %x = arith.select %small, %near, %far : f32
      memref.store %x, %h_in_f32[%i] : memref<?xf32>
    }
    %d_in_f32 = gpu.alloc(%n) : memref<?xf32>
    gpu.memcpy %d_in_f32, %h_in_f32 : memref<?xf32>, memref<?xf32>
    %d0_f32 = gpu.alloc(%n) : memref<?xf32>
    %d1_f32 = gpu.alloc(%n) : memref<?xf32>
    %d2_f32 = gpu.alloc(%n) : memref<?xf32>
    %d3_f32 = gpu.alloc(%n) : memref<?xf32>
    %d4_f32 = gpu.alloc(%n) : memref<?xf32>
    %d5_f32 = gpu.alloc(%n) : memref<?xf32>
    %d6_f32 = gpu.alloc(%n) : memref<?xf32>
    %d7_f32 = gpu.alloc(%n) : memref<?xf32>
    %d8_f32 = gpu.alloc(%n) : memref<?xf32>
    %d9_f32 = gpu.alloc(%n) : memref<?xf32>
    gpu.launch_func @k::@math_f32 blocks in (%c8, %c1, %c1) threads in (%c9, %c1, %c1)
        args(%d_in_f32 : memref<?xf32>, %d0_f32 : memref<?xf32>, %d1_f32 : memref<?xf32>, %d2_f32 : memref<?xf32>, %d3_f32 : memref<?xf32>, %d4_f32 : memref<?xf32>, %d5_f32 : memref<?xf32>, %d6_f32 : memref<?xf32>, %d7_f32 : memref<?xf32>, %d8_f32 : memref<?xf32>, %d9_f32 : memref<?xf32>)
    %h0_f32 = memref.alloc(%n) : memref<?xf32>
    gpu.memcpy %h0_f32, %d0_f32 : memref<?xf32>, memref<?xf32>
    %h1_f32 = memref.alloc(%n) : memref<?xf32>
    gpu.memcpy %h1_f32, %d1_f32 : memref<?xf32>, memref<?xf32>
    %h2_f32 = memref.alloc(%n) : memref<?xf32>
    gpu.memcpy %h2_f32, %d2_f32 : memref<?xf32>, memref<?xf32>
    %h3_f32 = memref.alloc(%n) : memref<?xf32>
    gpu.memcpy %h3_f32, %d3_f32 : memref<?xf32>, memref<?xf32>
    %h4_f32 = memref.alloc(%n) : memref<?xf32>
    gpu.memcpy %h4_f32, %d4_f32 : memref<?xf32>, memref<?xf32>
    %h5_f32 = memref.alloc(%n) : memref<?xf32>
    gpu.memcpy %h5_f32, %d5_f32 : memref<?xf32>, memref<?xf32>
    %h6_f32 = memref.alloc(%n) : memref<?xf32>
    gpu.memcpy %h6_f32, %d6_f32 : memref<?xf32>, memref<?xf32>
    %h7_f32 = memref.alloc(%n) : memref<?xf32>
    gpu.memcpy %h7_f32, %d7_f32 : memref<?xf32>, memref<?xf32>
    %h8_f32 = memref.alloc(%n) : memref<?xf32>
    gpu.memcpy %h8_f32, %d8_f32 : memref<?xf32>, memref<?xf32>
    %h9_f32 = memref.alloc(%n) : memref<?xf32>
    gpu.memcpy %h9_f32, %d9_f32 : memref<?xf32>, memref<?xf32>
    %tol_f32 = arith.constant 1.9073486328125e-06 : f32
    %one_f32 = arith.constant 1.0 : f32
    %bad_f32:10 = scf.for %i = %c0 to %n step %c1 iter_args(%e0 = %c0, %e1 = %c0, %e2 = %c0, %e3 = %c0, %e4 = %c0, %e5 = %c0, %e6 = %c0, %e7 = %c0, %e8 = %c0, %e9 = %c0) -> (index, index, index, index, index, index, index, index, index, index) {
      %x = memref.load %h_in_f32[%i] : memref<?xf32>
      %want:10 = func.call @host_f32(%x) : (f32) -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)
      %got0 = memref.load %h0_f32[%i] : memref<?xf32>
      %diff0 = arith.subf %got0, %want#0 : f32
      %err0 = math.absf %diff0 : f32
      %mag0 = math.absf %want#0 : f32
      %scale0 = arith.maximumf %mag0, %one_f32 : f32
      %bound0 = arith.mulf %scale0, %tol_f32 : f32
      %fine0 = arith.cmpf ole, %err0, %bound0 : f32
      %more0 = arith.addi %e0, %c1 : index
      %n0 = arith.select %fine0, %e0, %more0 : index
      %got1 = memref.load %h1_f32[%i] : memref<?xf32>
      %diff1 = arith.subf %got1, %want#1 : f32
      %err1 = math.absf %diff1 : f32
      %mag1 = math.absf %want#1 : f32
      %scale1 = arith.maximumf %mag1, %one_f32 : f32
      %bound1 = arith.mulf %scale1, %tol_f32 : f32
      %fine1 = arith.cmpf ole, %err1, %bound1 : f32
      %more1 = arith.addi %e1, %c1 : index
      %n1 = arith.select %fine1, %e1, %more1 : index
      %got2 = memref.load %h2_f32[%i] : memref<?xf32>
      %diff2 = arith.subf %got2, %want#2 : f32
      %err2 = math.absf %diff2 : f32
      %mag2 = math.absf %want#2 : f32
      %scale2 = arith.maximumf %mag2, %one_f32 : f32
      %bound2 = arith.mulf %scale2, %tol_f32 : f32
      %fine2 = arith.cmpf ole, %err2, %bound2 : f32
      %more2 = arith.addi %e2, %c1 : index
      %n2 = arith.select %fine2, %e2, %more2 : index
      %got3 = memref.load %h3_f32[%i] : memref<?xf32>
      %diff3 = arith.subf %got3, %want#3 : f32
      %err3 = math.absf %diff3 : f32
      %mag3 = math.absf %want#3 : f32
      %scale3 = arith.maximumf %mag3, %one_f32 : f32
      %bound3 = arith.mulf %scale3, %tol_f32 : f32
      %fine3 = arith.cmpf ole, %err3, %bound3 : f32
      %more3 = arith.addi %e3, %c1 : index
      %n3 = arith.select %fine3, %e3, %more3 : index
      %got4 = memref.load %h4_f32[%i] : memref<?xf32>
      %diff4 = arith.subf %got4, %want#4 : f32
      %err4 = math.absf %diff4 : f32
      %mag4 = math.absf %want#4 : f32
      %scale4 = arith.maximumf %mag4, %one_f32 : f32
      %bound4 = arith.mulf %scale4, %tol_f32 : f32
      %fine4 = arith.cmpf ole, %err4, %bound4 : f32
      %more4 = arith.addi %e4, %c1 : index
      %n4 = arith.select %fine4, %e4, %more4 : index
      %got5 = memref.load %h5_f32[%i] : memref<?xf32>
      %diff5 = arith.subf %got5, %want#5 : f32
      %err5 = math.absf %diff5 : f32
      %mag5 = math.absf %want#5 : f32
      %scale5 = arith.maximumf %mag5, %one_f32 : f32
      %bound5 = arith.mulf %scale5, %tol_f32 : f32
      %fine5 = arith.cmpf ole, %err5, %bound5 : f32
      %more5 = arith.addi %e5, %c1 : index
      %n5 = arith.select %fine5, %e5, %more5 : index
      %got6 = memref.load %h6_f32[%i] : memref<?xf32>
      %diff6 = arith.subf %got6, %want#6 : f32
      %err6 = math.absf %diff6 : f32
      %mag6 = math.absf %want#6 : f32
      %scale6 = arith.maximumf %mag6, %one_f32 : f32
      %bound6 = arith.mulf %scale6, %tol_f32 : f32
      %fine6 = arith.cmpf ole, %err6, %bound6 : f32
      %more6 = arith.addi %e6, %c1 : index
      %n6 = arith.select %fine6, %e6, %more6 : index
      %got7 = memref.load %h7_f32[%i] : memref<?xf32>
      %diff7 = arith.subf %got7, %want#7 : f32
      %err7 = math.absf %diff7 : f32
      %mag7 = math.absf %want#7 : f32
      %scale7 = arith.maximumf %mag7, %one_f32 : f32
      %bound7 = arith.mulf %scale7, %tol_f32 : f32
      %fine7 = arith.cmpf ole, %err7, %bound7 : f32
      %more7 = arith.addi %e7, %c1 : index
      %n7 = arith.select %fine7, %e7, %more7 : index
      %got8 = memref.load %h8_f32[%i] : memref<?xf32>
      %diff8 = arith.subf %got8, %want#8 : f32
      %err8 = math.absf %diff8 : f32
      %mag8 = math.absf %want#8 : f32
      %scale8 = arith.maximumf %mag8, %one_f32 : f32
      %bound8 = arith.mulf %scale8, %tol_f32 : f32
      %fine8 = arith.cmpf ole, %err8, %bound8 : f32
      %more8 = arith.addi %e8, %c1 : index
      %n8 = arith.select %fine8, %e8, %more8 : index
      %got9 = memref.load %h9_f32[%i] : memref<?xf32>
      %diff9 = arith.subf %got9, %want#9 : f32
      %err9 = math.absf %diff9 : f32
      %mag9 = math.absf %want#9 : f32
      %scale9 = arith.maximumf %mag9, %one_f32 : f32
      %bound9 = arith.mulf %scale9, %tol_f32 : f32
      %fine9 = arith.cmpf ole, %err9, %bound9 : f32
      %more9 = arith.addi %e9, %c1 : index
      %n9 = arith.select %fine9, %e9, %more9 : index
      scf.yield %n0, %n1, %n2, %n3, %n4, %n5, %n6, %n7, %n8, %n9 : index, index, index, index, index, index, index, index, index, index
    }
    vector.print str "f32 sin outside tolerance: "
    %p0_f32 = arith.index_cast %bad_f32#0 : index to i64
    vector.print %p0_f32 : i64
    vector.print str "f32 cos outside tolerance: "
    %p1_f32 = arith.index_cast %bad_f32#1 : index to i64
    vector.print %p1_f32 : i64
    vector.print str "f32 exp outside tolerance: "
    %p2_f32 = arith.index_cast %bad_f32#2 : index to i64
    vector.print %p2_f32 : i64
    vector.print str "f32 log outside tolerance: "
    %p3_f32 = arith.index_cast %bad_f32#3 : index to i64
    vector.print %p3_f32 : i64
    vector.print str "f32 sqrt outside tolerance: "
    %p4_f32 = arith.index_cast %bad_f32#4 : index to i64
    vector.print %p4_f32 : i64
    vector.print str "f32 tanh outside tolerance: "
    %p5_f32 = arith.index_cast %bad_f32#5 : index to i64
    vector.print %p5_f32 : i64
    vector.print str "f32 erf outside tolerance: "
    %p6_f32 = arith.index_cast %bad_f32#6 : index to i64
    vector.print %p6_f32 : i64
    vector.print str "f32 atan outside tolerance: "
    %p7_f32 = arith.index_cast %bad_f32#7 : index to i64
    vector.print %p7_f32 : i64
    vector.print str "f32 pow outside tolerance: "
    %p8_f32 = arith.index_cast %bad_f32#8 : index to i64
    vector.print %p8_f32 : i64
    vector.print str "f32 atan2 outside tolerance: "
    %p9_f32 = arith.index_cast %bad_f32#9 : index to i64
    vector.print %p9_f32 : i64
    %h_in_f64 = memref.alloc(%n) : memref<?xf64>
    scf.for %i = %c0 to %n step %c1 {
      %small = arith.cmpi ult, %i, %c64 : index
      %ii = arith.index_cast %i : index to i64
      %fi = arith.sitofp %ii : i64 to f64
      %step = arith.constant 0.37 : f64
      %start = arith.constant 0.05 : f64
      %s1 = arith.mulf %fi, %step : f64
      %near = arith.addf %s1, %start : f64
      %big_step = arith.constant 5.0e6 : f64
      %big_start = arith.constant -3.1e8 : f64
      %b1 = arith.mulf %fi, %big_step : f64
      %far0 = arith.addf %b1, %big_start : f64
      %far = math.absf %far0 : f64
      %x = arith.select %small, %near, %far : f64
      memref.store %x, %h_in_f64[%i] : memref<?xf64>
    }
    %d_in_f64 = gpu.alloc(%n) : memref<?xf64>
    gpu.memcpy %d_in_f64, %h_in_f64 : memref<?xf64>, memref<?xf64>
    %d0_f64 = gpu.alloc(%n) : memref<?xf64>
    %d1_f64 = gpu.alloc(%n) : memref<?xf64>
    %d2_f64 = gpu.alloc(%n) : memref<?xf64>
    %d3_f64 = gpu.alloc(%n) : memref<?xf64>
    %d4_f64 = gpu.alloc(%n) : memref<?xf64>
    %d5_f64 = gpu.alloc(%n) : memref<?xf64>
    %d6_f64 = gpu.alloc(%n) : memref<?xf64>
    %d7_f64 = gpu.alloc(%n) : memref<?xf64>
    %d8_f64 = gpu.alloc(%n) : memref<?xf64>
    %d9_f64 = gpu.alloc(%n) : memref<?xf64>
    gpu.launch_func @k::@math_f64 blocks in (%c8, %c1, %c1) threads in (%c9, %c1, %c1)
        args(%d_in_f64 : memref<?xf64>, %d0_f64 : memref<?xf64>, %d1_f64 : memref<?xf64>, %d2_f64 : memref<?xf64>, %d3_f64 : memref<?xf64>, %d4_f64 : memref<?xf64>, %d5_f64 : memref<?xf64>, %d6_f64 : memref<?xf64>, %d7_f64 : memref<?xf64>, %d8_f64 : memref<?xf64>, %d9_f64 : memref<?xf64>)
    %h0_f64 = memref.alloc(%n) : memref<?xf64>
    gpu.memcpy %h0_f64, %d0_f64 : memref<?xf64>, memref<?xf64>
    %h1_f64 = memref.alloc(%n) : memref<?xf64>
    gpu.memcpy %h1_f64, %d1_f64 : memref<?xf64>, memref<?xf64>
    %h2_f64 = memref.alloc(%n) : memref<?xf64>
    gpu.memcpy %h2_f64, %d2_f64 : memref<?xf64>, memref<?xf64>
    %h3_f64 = memref.alloc(%n) : memref<?xf64>
    gpu.memcpy %h3_f64, %d3_f64 : memref<?xf64>, memref<?xf64>
    %h4_f64 = memref.alloc(%n) : memref<?xf64>
    gpu.memcpy %h4_f64, %d4_f64 : memref<?xf64>, memref<?xf64>
    %h5_f64 = memref.alloc(%n) : memref<?xf64>
    gpu.memcpy %h5_f64, %d5_f64 : memref<?xf64>, memref<?xf64>
    %h6_f64 = memref.alloc(%n) : memref<?xf64>
    gpu.memcpy %h6_f64, %d6_f64 : memref<?xf64>, memref<?xf64>
    %h7_f64 = memref.alloc(%n) : memref<?xf64>
    gpu.memcpy %h7_f64, %d7_f64 : memref<?xf64>, memref<?xf64>
    %h8_f64 = memref.alloc(%n) : memref<?xf64>
    gpu.memcpy %h8_f64, %d8_f64 : memref<?xf64>, memref<?xf64>
    %h9_f64 = memref.alloc(%n) : memref<?xf64>
    gpu.memcpy %h9_f64, %d9_f64 : memref<?xf64>, memref<?xf64>
    %tol_f64 = arith.constant 3.552713678800501e-15 : f64
    %one_f64 = arith.constant 1.0 : f64
    %bad_f64:10 = scf.for %i = %c0 to %n step %c1 iter_args(%e0 = %c0, %e1 = %c0, %e2 = %c0, %e3 = %c0, %e4 = %c0, %e5 = %c0, %e6 = %c0, %e7 = %c0, %e8 = %c0, %e9 = %c0) -> (index, index, index, index, index, index, index, index, index, index) {
      %x = memref.load %h_in_f64[%i] : memref<?xf64>
      %want:10 = func.call @host_f64(%x) : (f64) -> (f64, f64, f64, f64, f64, f64, f64, f64, f64, f64)
      %got0 = memref.load %h0_f64[%i] : memref<?xf64>
      %diff0 = arith.subf %got0, %want#0 : f64
      %err0 = math.absf %diff0 : f64
      %mag0 = math.absf %want#0 : f64
      %scale0 = arith.maximumf %mag0, %one_f64 : f64
      %bound0 = arith.mulf %scale0, %tol_f64 : f64
      %fine0 = arith.cmpf ole, %err0, %bound0 : f64
      %more0 = arith.addi %e0, %c1 : index
      %n0 = arith.select %fine0, %e0, %more0 : index
      %got1 = memref.load %h1_f64[%i] : memref<?xf64>
      %diff1 = arith.subf %got1, %want#1 : f64
      %err1 = math.absf %diff1 : f64
      %mag1 = math.absf %want#1 : f64
      %scale1 = arith.maximumf %mag1, %one_f64 : f64
      %bound1 = arith.mulf %scale1, %tol_f64 : f64
      %fine1 = arith.cmpf ole, %err1, %bound1 : f64
      %more1 = arith.addi %e1, %c1 : index
      %n1 = arith.select %fine1, %e1, %more1 : index
      %got2 = memref.load %h2_f64[%i] : memref<?xf64>
      %diff2 = arith.subf %got2, %want#2 : f64
      %err2 = math.absf %diff2 : f64
      %mag2 = math.absf %want#2 : f64
      %scale2 = arith.maximumf %mag2, %one_f64 : f64
      %bound2 = arith.mulf %scale2, %tol_f64 : f64
      %fine2 = arith.cmpf ole, %err2, %bound2 : f64
      %more2 = arith.addi %e2, %c1 : index
      %n2 = arith.select %fine2, %e2, %more2 : index
      %got3 = memref.load %h3_f64[%i] : memref<?xf64>
      %diff3 = arith.subf %got3, %want#3 : f64
      %err3 = math.absf %diff3 : f64
      %mag3 = math.absf %want#3 : f64
      %scale3 = arith.maximumf %mag3, %one_f64 : f64
      %bound3 = arith.mulf %scale3, %tol_f64 : f64
      %fine3 = arith.cmpf ole, %err3, %bound3 : f64
      %more3 = arith.addi %e3, %c1 : index
      %n3 = arith.select %fine3, %e3, %more3 : index
      %got4 = memref.load %h4_f64[%i] : memref<?xf64>
      %diff4 = arith.subf %got4, %want#4 : f64
      %err4 = math.absf %diff4 : f64
      %mag4 = math.absf %want#4 : f64
      %scale4 = arith.maximumf %mag4, %one_f64 : f64
      %bound4 = arith.mulf %scale4, %tol_f64 : f64
      %fine4 = arith.cmpf ole, %err4, %bound4 : f64
      %more4 = arith.addi %e4, %c1 : index
      %n4 = arith.select %fine4, %e4, %more4 : index
      %got5 = memref.load %h5_f64[%i] : memref<?xf64>
      %diff5 = arith.subf %got5, %want#5 : f64
      %err5 = math.absf %diff5 : f64
      %mag5 = math.absf %want#5 : f64
      %scale5 = arith.maximumf %mag5, %one_f64 : f64
      %bound5 = arith.mulf %scale5, %tol_f64 : f64
      %fine5 = arith.cmpf ole, %err5, %bound5 : f64
      %more5 = arith.addi %e5, %c1 : index
      %n5 = arith.select %fine5, %e5, %more5 : index
      %got6 = memref.load %h6_f64[%i] : memref<?xf64>
      %diff6 = arith.subf %got6, %want#6 : f64
      %err6 = math.absf %diff6 : f64
      %mag6 = math.absf %want#6 : f64
      %scale6 = arith.maximumf %mag6, %one_f64 : f64
      %bound6 = arith.mulf %scale6, %tol_f64 : f64
      %fine6 = arith.cmpf ole, %err6, %bound6 : f64
      %more6 = arith.addi %e6, %c1 : index
      %n6 = arith.select %fine6, %e6, %more6 : index
      %got7 = memref.load %h7_f64[%i] : memref<?xf64>
      %diff7 = arith.subf %got7, %want#7 : f64
      %err7 = math.absf %diff7 : f64
      %mag7 = math.absf %want#7 : f64
      %scale7 = arith.maximumf %mag7, %one_f64 : f64
      %bound7 = arith.mulf %scale7, %tol_f64 : f64
      %fine7 = arith.cmpf ole, %err7, %bound7 : f64
      %more7 = arith.addi %e7, %c1 : index
      %n7 = arith.select %fine7, %e7, %more7 : index
      %got8 = memref.load %h8_f64[%i] : memref<?xf64>
      %diff8 = arith.subf %got8, %want#8 : f64
      %err8 = math.absf %diff8 : f64
      %mag8 = math.absf %want#8 : f64
      %scale8 = arith.maximumf %mag8, %one_f64 : f64
      %bound8 = arith.mulf %scale8, %tol_f64 : f64
      %fine8 = arith.cmpf ole, %err8, %bound8 : f64
      %more8 = arith.addi %e8, %c1 : index
      %n8 = arith.select %fine8, %e8, %more8 : index
      %got9 = memref.load %h9_f64[%i] : memref<?xf64>
      %diff9 = arith.subf %got9, %want#9 : f64
      %err9 = math.absf %diff9 : f64
      %mag9 = math.absf %want#9 : f64
      %scale9 = arith.maximumf %mag9, %one_f64 : f64
      %bound9 = arith.mulf %scale9, %tol_f64 : f64
      %fine9 = arith.cmpf ole, %err9, %bound9 : f64
      %more9 = arith.addi %e9, %c1 : index
      %n9 = arith.select %fine9, %e9, %more9 : index
      scf.yield %n0, %n1, %n2, %n3, %n4, %n5, %n6, %n7, %n8, %n9 : index, index, index, index, index, index, index, index, index, index
    }
    vector.print str "f64 sin outside tolerance: "
    %p0_f64 = arith.index_cast %bad_f64#0 : index to i64
    vector.print %p0_f64 : i64
    vector.print str "f64 cos outside tolerance: "
    %p1_f64 = arith.index_cast %bad_f64#1 : index to i64
    vector.print %p1_f64 : i64
    vector.print str "f64 exp outside tolerance: "
    %p2_f64 = arith.index_cast %bad_f64#2 : index to i64
    vector.print %p2_f64 : i64
    vector.print str "f64 log outside tolerance: "
    %p3_f64 = arith.index_cast %bad_f64#3 : index to i64
    vector.print %p3_f64 : i64
    vector.print str "f64 sqrt outside tolerance: "
    %p4_f64 = arith.index_cast %bad_f64#4 : index to i64
    vector.print %p4_f64 : i64
    vector.print str "f64 tanh outside tolerance: "
    %p5_f64 = arith.index_cast %bad_f64#5 : index to i64
    vector.print %p5_f64 : i64
    vector.print str "f64 erf outside tolerance: "
    %p6_f64 = arith.index_cast %bad_f64#6 : index to i64
    vector.print %p6_f64 : i64
    vector.print str "f64 atan outside tolerance: "
    %p7_f64 = arith.index_cast %bad_f64#7 : index to i64
    vector.print %p7_f64 : i64
    vector.print str "f64 pow outside tolerance: "
    %p8_f64 = arith.index_cast %bad_f64#8 : index to i64
    vector.print %p8_f64 : i64
    vector.print str "f64 atan2 outside tolerance: "
    %p9_f64 = arith.index_cast %bad_f64#9 : index to i64
    vector.print %p9_f64 : i64
    return
  }
}

// Device math through the device libraries (libdevice on CUDA, ocml on HIP): each function of f32 and
// f64 at a few arguments, printed with all their digits for the test to compare with Python's math.
module attributes {gpu.container_module} {
  llvm.mlir.global internal constant @fmt("%s %d %.17g %.9g\0A\00") {addr_space = 0 : i32}
  llvm.mlir.global internal constant @names("sin\00cos\00tan\00exp\00log\00sqrt\00tanh\00atan2\00pow\00erf\00rsqrt\00expm1\00log1p\00cbrt\00floor\00fma\00") {addr_space = 0 : i32}
  llvm.func @printf(!llvm.ptr, ...) -> i32

  gpu.module @kernels {
    // out64[f * n + i] and out32[f * n + i]: function f at x[i] (two-argument ones use y[i]).
    gpu.func @functions(%x: memref<?xf64>, %y: memref<?xf64>, %out64: memref<?xf64>, %out32: memref<?xf32>, %n: index) kernel {
      %i = gpu.thread_id x
      %a = memref.load %x[%i] : memref<?xf64>
      %b = memref.load %y[%i] : memref<?xf64>
      %a32 = arith.truncf %a : f64 to f32
      %b32 = arith.truncf %b : f64 to f32
      %r0 = math.sin %a : f64
      %r1 = math.cos %a : f64
      %r2 = math.tan %a : f64
      %r3 = math.exp %a : f64
      %abs = math.absf %a : f64
      %r4 = math.log %abs : f64
      %r5 = math.sqrt %abs : f64
      %r6 = math.tanh %a : f64
      %r7 = math.atan2 %a, %b : f64
      %r8 = math.powf %abs, %b : f64
      %r9 = math.erf %a : f64
      %r10 = math.rsqrt %abs : f64
      %r11 = math.expm1 %a : f64
      %r12 = math.log1p %abs : f64
      %r13 = math.cbrt %a : f64
      %r14 = math.floor %a : f64
      %r15 = math.fma %a, %b, %a : f64
      %s0 = math.sin %a32 : f32
      %s1 = math.cos %a32 : f32
      %s2 = math.tan %a32 : f32
      %s3 = math.exp %a32 : f32
      %abs32 = math.absf %a32 : f32
      %s4 = math.log %abs32 : f32
      %s5 = math.sqrt %abs32 : f32
      %s6 = math.tanh %a32 : f32
      %s7 = math.atan2 %a32, %b32 : f32
      %s8 = math.powf %abs32, %b32 : f32
      %s9 = math.erf %a32 : f32
      %s10 = math.rsqrt %abs32 : f32
      %s11 = math.expm1 %a32 : f32
      %s12 = math.log1p %abs32 : f32
      %s13 = math.cbrt %a32 : f32
      %s14 = math.floor %a32 : f32
      %s15 = math.fma %a32, %b32, %a32 : f32
      %results64 = vector.from_elements %r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8, %r9, %r10, %r11, %r12, %r13, %r14, %r15 : vector<16xf64>
      %results32 = vector.from_elements %s0, %s1, %s2, %s3, %s4, %s5, %s6, %s7, %s8, %s9, %s10, %s11, %s12, %s13, %s14, %s15 : vector<16xf32>
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c16 = arith.constant 16 : index
      scf.for %f = %c0 to %c16 step %c1 {
        %v64 = vector.extract %results64[%f] : f64 from vector<16xf64>
        %v32 = vector.extract %results32[%f] : f32 from vector<16xf32>
        %fn = arith.muli %f, %n : index
        %at = arith.addi %fn, %i : index
        memref.store %v64, %out64[%at] : memref<?xf64>
        memref.store %v32, %out32[%at] : memref<?xf32>
      }
      gpu.return
    }
  }

  func.func @main() -> i32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %n = arith.constant 6 : index
    %total = arith.constant 96 : index
    %args = arith.constant dense<[0.5, -1.25, 3.0, 10.0, -100.5, 1.0e-3]> : vector<6xf64>
    %args2 = arith.constant dense<[2.0, 0.75, -1.5, 0.5, 3.0, -2.0]> : vector<6xf64>
    %hx = memref.alloc(%n) : memref<?xf64>
    %hy = memref.alloc(%n) : memref<?xf64>
    scf.for %i = %c0 to %n step %c1 {
      %v = vector.extract %args[%i] : f64 from vector<6xf64>
      %w = vector.extract %args2[%i] : f64 from vector<6xf64>
      memref.store %v, %hx[%i] : memref<?xf64>
      memref.store %w, %hy[%i] : memref<?xf64>
    }
    %x = gpu.alloc (%n) : memref<?xf64>
    %y = gpu.alloc (%n) : memref<?xf64>
    %o64 = gpu.alloc (%total) : memref<?xf64>
    %o32 = gpu.alloc (%total) : memref<?xf32>
    gpu.memcpy %x, %hx : memref<?xf64>, memref<?xf64>
    gpu.memcpy %y, %hy : memref<?xf64>, memref<?xf64>
    gpu.launch_func @kernels::@functions blocks in (%c1, %c1, %c1) threads in (%n, %c1, %c1)
        args(%x : memref<?xf64>, %y : memref<?xf64>, %o64 : memref<?xf64>, %o32 : memref<?xf32>, %n : index)
    %h64 = memref.alloc(%total) : memref<?xf64>
    %h32 = memref.alloc(%total) : memref<?xf32>
    gpu.memcpy %h64, %o64 : memref<?xf64>, memref<?xf64>
    gpu.memcpy %h32, %o32 : memref<?xf32>, memref<?xf32>
    %fmt = llvm.mlir.addressof @fmt : !llvm.ptr
    %names = llvm.mlir.addressof @names : !llvm.ptr
    %offsets = arith.constant dense<[0, 4, 8, 12, 16, 20, 25, 30, 36, 40, 44, 50, 56, 62, 67, 73]> : vector<16xi64>
    scf.for %f = %c0 to %c16 step %c1 {
      %off = vector.extract %offsets[%f] : i64 from vector<16xi64>
      %name = llvm.getelementptr %names[%off] : (!llvm.ptr, i64) -> !llvm.ptr, i8
      scf.for %i = %c0 to %n step %c1 {
        %fn = arith.muli %f, %n : index
        %at = arith.addi %fn, %i : index
        %v64 = memref.load %h64[%at] : memref<?xf64>
        %v32 = memref.load %h32[%at] : memref<?xf32>
        %d32 = arith.extf %v32 : f32 to f64
        %i32 = arith.index_cast %i : index to i32
        llvm.call @printf(%fmt, %name, %i32, %v64, %d32) vararg(!llvm.func<i32 (ptr, ...)>) : (!llvm.ptr, !llvm.ptr, i32, f64, f64) -> i32
      }
    }
    %r = arith.constant 0 : i32
    return %r : i32
  }
}

// sm_80 tensor cores as nvgpu writes them: A (16x16 f16) and B (8x16 f16, n-major) staged into workgroup
// memory by cp.async (nvgpu.device_async_copy), read as fragments by ldmatrix (x4, x2), multiplied by
// mma.sync m16n8k16 into f32, each lane storing its part of D by the PTX fragment layout; D printed.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @mma(%a: memref<16x16xf16>, %b: memref<8x16xf16>, %out: memref<16x8xf32>)
        workgroup(%sa : memref<16x16xf16, #gpu.address_space<workgroup>>, %sb : memref<8x16xf16, #gpu.address_space<workgroup>>) kernel {
      %t = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c2 = arith.constant 2 : index
      %c4 = arith.constant 4 : index
      %c8 = arith.constant 8 : index
      %c16 = arith.constant 16 : index
      %row = arith.divui %t, %c2 : index
      %half = arith.remui %t, %c2 : index
      %col = arith.muli %half, %c8 : index
      %is16 = arith.cmpi ult, %t, %c16 : index
      // stage A (16x16) and B (8x16, n-major) through cp.async: 16 bytes (8 halves) per copy
      nvgpu.device_async_copy %a[%row, %col], %sa[%row, %col], 8 : memref<16x16xf16> to memref<16x16xf16, #gpu.address_space<workgroup>>
      scf.if %is16 {
        nvgpu.device_async_copy %b[%row, %col], %sb[%row, %col], 8 : memref<8x16xf16> to memref<8x16xf16, #gpu.address_space<workgroup>>
      }
      %g = nvgpu.device_async_create_group
      nvgpu.device_async_wait %g
      gpu.barrier
      // ldmatrix x4 for A: lane l gives row (l % 16), column block 8 * (l / 16)
      %lr = arith.remui %t, %c16 : index
      %lc0 = arith.divui %t, %c16 : index
      %lc = arith.muli %lc0, %c8 : index
      %fa = nvgpu.ldmatrix %sa[%lr, %lc] {numTiles = 4 : i32, transpose = false} : memref<16x16xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
      // ldmatrix x2 for B: lanes 0..15 give row (l % 8), column block 8 * ((l / 8) % 2)
      %br = arith.remui %t, %c8 : index
      %bc0 = arith.divui %t, %c8 : index
      %bc1 = arith.remui %bc0, %c2 : index
      %bc = arith.muli %bc1, %c8 : index
      %fb = nvgpu.ldmatrix %sb[%br, %bc] {numTiles = 2 : i32, transpose = false} : memref<8x16xf16, #gpu.address_space<workgroup>> -> vector<2x2xf16>
      %zero = arith.constant dense<0.0> : vector<2x2xf32>
      %d = nvgpu.mma.sync(%fa, %fb, %zero) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
      // D fragment: lane l holds rows (l / 4) and (l / 4 + 8), columns 2 * (l % 4) + {0, 1}
      %q = arith.divui %t, %c4 : index
      %r4 = arith.remui %t, %c4 : index
      %cc = arith.muli %r4, %c2 : index
      %c1 = arith.constant 1 : index
      %cc1 = arith.addi %cc, %c1 : index
      %q8 = arith.addi %q, %c8 : index
      %d00 = vector.extract %d[0, 0] : f32 from vector<2x2xf32>
      %d01 = vector.extract %d[0, 1] : f32 from vector<2x2xf32>
      %d10 = vector.extract %d[1, 0] : f32 from vector<2x2xf32>
      %d11 = vector.extract %d[1, 1] : f32 from vector<2x2xf32>
      memref.store %d00, %out[%q, %cc] : memref<16x8xf32>
      memref.store %d01, %out[%q, %cc1] : memref<16x8xf32>
      memref.store %d10, %out[%q8, %cc] : memref<16x8xf32>
      memref.store %d11, %out[%q8, %cc1] : memref<16x8xf32>
      gpu.return
    }
  }
  llvm.mlir.global internal constant @fmt("d[%d][%d] = %.1f\0A\00") {addr_space = 0 : i32}
  llvm.func @printf(!llvm.ptr, ...) -> i32
  func.func @main() -> i32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %c5 = arith.constant 5 : index
    %c7 = arith.constant 7 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %c32 = arith.constant 32 : index
    %ha = memref.alloc() : memref<16x16xf16>
    %hb = memref.alloc() : memref<8x16xf16>
    %ho = memref.alloc() : memref<16x8xf32>
    scf.for %i = %c0 to %c16 step %c1 {
      scf.for %k = %c0 to %c16 step %c1 {
        %s = arith.addi %i, %k : index
        %m = arith.remui %s, %c7 : index
        %mi = arith.index_cast %m : index to i32
        %mf = arith.sitofp %mi : i32 to f16
        memref.store %mf, %ha[%i, %k] : memref<16x16xf16>
      }
    }
    scf.for %n = %c0 to %c8 step %c1 {
      scf.for %k = %c0 to %c16 step %c1 {
        %n3 = arith.muli %n, %c3 : index
        %s = arith.addi %n3, %k : index
        %m = arith.remui %s, %c5 : index
        %mi = arith.index_cast %m : index to i32
        %mf = arith.sitofp %mi : i32 to f16
        memref.store %mf, %hb[%n, %k] : memref<8x16xf16>
      }
    }
    %a = gpu.alloc () : memref<16x16xf16>
    %b = gpu.alloc () : memref<8x16xf16>
    %o = gpu.alloc () : memref<16x8xf32>
    gpu.memcpy %a, %ha : memref<16x16xf16>, memref<16x16xf16>
    gpu.memcpy %b, %hb : memref<8x16xf16>, memref<8x16xf16>
    gpu.launch_func @kernels::@mma blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1) args(%a : memref<16x16xf16>, %b : memref<8x16xf16>, %o : memref<16x8xf32>)
    gpu.memcpy %ho, %o : memref<16x8xf32>, memref<16x8xf32>
    %fmt = llvm.mlir.addressof @fmt : !llvm.ptr
    scf.for %i = %c0 to %c16 step %c1 {
      scf.for %j = %c0 to %c8 step %c1 {
        %v = memref.load %ho[%i, %j] : memref<16x8xf32>
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

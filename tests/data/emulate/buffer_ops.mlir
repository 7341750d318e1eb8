// AMD raw buffer operations (amdgpu.raw_buffer_load/store/atomic_*), which the hardware checks against the
// buffer's size (num_records, the memref's size in bytes) per dword: out-of-range dwords load as 0 and are
// not stored, out-of-range atomics do nothing; the sgprOffset is added to the address after the check.
// `lanes`: 16 threads each load in[t] of a 10-element buffer (threads 10..15 read 0), once with
// raw_buffer_load and once through a fat_raw_buffer_cast view (a buffer fat pointer).
// `window`: a 6-element view w = big[4..9] of big[i] = 1000 + i: a vector<4> load at w[4] (two dwords in
// range), w[2] with sgprOffset 8 (big[14]: in range, the offset is not checked), stores past w's end
// (dropped; with boundsCheck = false gfx11 does not check, gfx9 always does), a vector<2> store at w[5]
// whose second dword is out of range.
// `atomics`: 64 threads on 4-element views of 8-element buffers: fadd, fmax, smax, umin, cmpswap in range,
// fadd and smax out of range (dropped); the cmpswap winner (old value 0) records its value.
// ARCHS: gfx90a gfx1100
// WRONG: the window is 8 elements long, so what was out of range is in range
// WRONG-FROM:       %wlen = arith.constant 6 : index
// WRONG-TO:       %wlen = arith.constant 8 : index
// CHECK-LABEL: lanes
// CHECK: [100,  101,  104,  109,  116,  125,  136,  149,  164,  181,  0,  0,  0,  0,  0,  0,  100,  101,  104,  109,  116,  125,  136,  149,  164,  181,  0,  0,  0,  0,  0,  0]
// CHECK-LABEL: window
// CHECK: [1008,  1009,  0,  0,  1014,  0,  0,  0]
// GFX90A: [1000,  1001,  1002,  1003,  1004,  1005,  1006,  1007,  1008,  77,  1010,  1011,  1012,  1013,  1014,  1015]
// GFX1100: [1000,  1001,  1002,  1003,  1004,  1005,  1006,  1007,  1008,  77,  1010,  -2,  1012,  1013,  1014,  1015]
// CHECK-LABEL: atomics
// CHECK: [16,  63,  0,  0,  0,  0,  0,  0]
// CHECK: [43,  5,  {{[0-9]+}},  {{[0-9]+}},  0,  0,  0,  0]
// CHECK-NEXT: cmpswap winner recorded: 1
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @lanes(%in: memref<?xi32>, %out: memref<?xi32>) kernel {
      %t = gpu.thread_id x
      %ti = arith.index_cast %t : index to i32
      %v = amdgpu.raw_buffer_load {boundsCheck = true} %in[%ti] : memref<?xi32>, i32 -> i32
      memref.store %v, %out[%t] : memref<?xi32>
      %global = memref.memory_space_cast %in : memref<?xi32> to memref<?xi32, #gpu.address_space<global>>
      %fat = amdgpu.fat_raw_buffer_cast %global
        : memref<?xi32, #gpu.address_space<global>> to memref<?xi32, #amdgpu.address_space<fat_raw_buffer>>
      %f = memref.load %fat[%t] : memref<?xi32, #amdgpu.address_space<fat_raw_buffer>>
      %c16 = arith.constant 16 : index
      %second = arith.addi %t, %c16 : index
      memref.store %f, %out[%second] : memref<?xi32>
      gpu.return
    }
    gpu.func @window(%big: memref<16xi32>, %res: memref<8xi32>) kernel {
      %c0 = arith.constant 0 : index
      %c4 = arith.constant 4 : index
      %i2 = arith.constant 2 : i32
      %i4 = arith.constant 4 : i32
      %i5 = arith.constant 5 : i32
      %i6 = arith.constant 6 : i32
      %i7 = arith.constant 7 : i32
      %i8 = arith.constant 8 : i32
      %wlen = arith.constant 6 : index
      %w = memref.subview %big[4] [%wlen] [1] : memref<16xi32> to memref<?xi32, strided<[1], offset: 4>>
      %v = amdgpu.raw_buffer_load {boundsCheck = true} %w[%i4]
        : memref<?xi32, strided<[1], offset: 4>>, i32 -> vector<4xi32>
      vector.store %v, %res[%c0] : memref<8xi32>, vector<4xi32>
      %s = amdgpu.raw_buffer_load {boundsCheck = true} %w[%i2] sgprOffset %i8
        : memref<?xi32, strided<[1], offset: 4>>, i32 -> i32
      memref.store %s, %res[%c4] : memref<8xi32>
      %m1 = arith.constant -1 : i32
      %m2 = arith.constant -2 : i32
      amdgpu.raw_buffer_store {boundsCheck = true} %m1 -> %w[%i6] : i32 -> memref<?xi32, strided<[1], offset: 4>>, i32
      amdgpu.raw_buffer_store {boundsCheck = false} %m2 -> %w[%i7] : i32 -> memref<?xi32, strided<[1], offset: 4>>, i32
      %pair = arith.constant dense<[77, 78]> : vector<2xi32>
      amdgpu.raw_buffer_store {boundsCheck = true} %pair -> %w[%i5]
        : vector<2xi32> -> memref<?xi32, strided<[1], offset: 4>>, i32
      gpu.return
    }
    gpu.func @atomics(%acc: memref<8xf32>, %ints: memref<8xi32>) kernel {
      %c0 = arith.constant 0 : i32
      %c1 = arith.constant 1 : i32
      %c2 = arith.constant 2 : i32
      %c3 = arith.constant 3 : index
      %c5 = arith.constant 5 : i32
      %c6 = arith.constant 6 : i32
      %n = arith.constant 4 : index
      %fw = memref.subview %acc[0] [%n] [1] : memref<8xf32> to memref<?xf32, strided<[1]>>
      %iw = memref.subview %ints[0] [%n] [1] : memref<8xi32> to memref<?xi32, strided<[1]>>
      %t = gpu.thread_id x
      %ti = arith.index_cast %t : index to i32
      %quarter = arith.constant 0.25 : f32
      %one = arith.constant 1.0 : f32
      amdgpu.raw_buffer_atomic_fadd {boundsCheck = true} %quarter -> %fw[%c0] : f32 -> memref<?xf32, strided<[1]>>, i32
      amdgpu.raw_buffer_atomic_fadd {boundsCheck = true} %one -> %fw[%c5] : f32 -> memref<?xf32, strided<[1]>>, i32
      %tf = arith.sitofp %ti : i32 to f32
      amdgpu.raw_buffer_atomic_fmax {boundsCheck = true} %tf -> %fw[%c1] : f32 -> memref<?xf32, strided<[1]>>, i32
      %c20 = arith.constant 20 : i32
      %below = arith.subi %ti, %c20 : i32
      amdgpu.raw_buffer_atomic_smax {boundsCheck = true} %below -> %iw[%c0] : i32 -> memref<?xi32, strided<[1]>>, i32
      %c7 = arith.constant 7 : i32
      %c64 = arith.constant 64 : i32
      %scrambled = arith.muli %ti, %c7 : i32
      %wrapped = arith.remui %scrambled, %c64 : i32
      %u = arith.addi %wrapped, %c5 : i32
      amdgpu.raw_buffer_atomic_umin {boundsCheck = true} %u -> %iw[%c1] : i32 -> memref<?xi32, strided<[1]>>, i32
      %c99 = arith.constant 99 : i32
      amdgpu.raw_buffer_atomic_smax {boundsCheck = true} %c99 -> %iw[%c6] : i32 -> memref<?xi32, strided<[1]>>, i32
      %c100 = arith.constant 100 : i32
      %mine = arith.addi %ti, %c100 : i32
      %old = amdgpu.raw_buffer_atomic_cmpswap {boundsCheck = true} %mine, %c0 -> %iw[%c2]
        : i32 -> memref<?xi32, strided<[1]>>, i32
      %won = arith.cmpi eq, %old, %c0 : i32
      scf.if %won {
        memref.store %mine, %ints[%c3] : memref<8xi32>
      }
      gpu.return
    }
  }
  func.func private @printMemrefI32(memref<*xi32>)
  func.func private @printMemrefF32(memref<*xf32>)
  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c10 = arith.constant 10 : index
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    %hin = memref.alloc(%c10) : memref<?xi32>
    scf.for %i = %c0 to %c10 step %c1 {
      %ii = arith.index_cast %i : index to i32
      %sq = arith.muli %ii, %ii : i32
      %c100 = arith.constant 100 : i32
      %v = arith.addi %sq, %c100 : i32
      memref.store %v, %hin[%i] : memref<?xi32>
    }
    %in = gpu.alloc(%c10) : memref<?xi32>
    %c32 = arith.constant 32 : index
    %out = gpu.alloc(%c32) : memref<?xi32>
    gpu.memcpy %in, %hin : memref<?xi32>, memref<?xi32>
    gpu.launch_func @k::@lanes blocks in (%c1, %c1, %c1) threads in (%c16, %c1, %c1)
        args(%in : memref<?xi32>, %out : memref<?xi32>)
    %hout = memref.alloc(%c32) : memref<?xi32>
    gpu.memcpy %hout, %out : memref<?xi32>, memref<?xi32>
    vector.print str "lanes\n"
    %u0 = memref.cast %hout : memref<?xi32> to memref<*xi32>
    call @printMemrefI32(%u0) : (memref<*xi32>) -> ()

    %hbig = memref.alloc() : memref<16xi32>
    scf.for %i = %c0 to %c16 step %c1 {
      %ii = arith.index_cast %i : index to i32
      %c1000 = arith.constant 1000 : i32
      %v = arith.addi %ii, %c1000 : i32
      memref.store %v, %hbig[%i] : memref<16xi32>
    }
    %big = gpu.alloc() : memref<16xi32>
    %res = gpu.alloc() : memref<8xi32>
    %zero = arith.constant 0 : i32
    gpu.memset %res, %zero : memref<8xi32>, i32
    gpu.memcpy %big, %hbig : memref<16xi32>, memref<16xi32>
    gpu.launch_func @k::@window blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%big : memref<16xi32>, %res : memref<8xi32>)
    %hres = memref.alloc() : memref<8xi32>
    gpu.memcpy %hres, %res : memref<8xi32>, memref<8xi32>
    gpu.memcpy %hbig, %big : memref<16xi32>, memref<16xi32>
    vector.print str "window\n"
    %u1 = memref.cast %hres : memref<8xi32> to memref<*xi32>
    call @printMemrefI32(%u1) : (memref<*xi32>) -> ()
    %u2 = memref.cast %hbig : memref<16xi32> to memref<*xi32>
    call @printMemrefI32(%u2) : (memref<*xi32>) -> ()

    %acc = gpu.alloc() : memref<8xf32>
    %ints = gpu.alloc() : memref<8xi32>
    %fzero = arith.constant 0.0 : f32
    gpu.memset %acc, %fzero : memref<8xf32>, f32
    gpu.memset %ints, %zero : memref<8xi32>, i32
    %hints = memref.alloc() : memref<8xi32>
    gpu.memcpy %hints, %ints : memref<8xi32>, memref<8xi32>
    %c1000 = arith.constant 1000 : i32
    memref.store %c1000, %hints[%c1] : memref<8xi32>
    gpu.memcpy %ints, %hints : memref<8xi32>, memref<8xi32>
    gpu.launch_func @k::@atomics blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1)
        args(%acc : memref<8xf32>, %ints : memref<8xi32>)
    %hacc = memref.alloc() : memref<8xf32>
    gpu.memcpy %hacc, %acc : memref<8xf32>, memref<8xf32>
    gpu.memcpy %hints, %ints : memref<8xi32>, memref<8xi32>
    vector.print str "atomics\n"
    %u3 = memref.cast %hacc : memref<8xf32> to memref<*xf32>
    call @printMemrefF32(%u3) : (memref<*xf32>) -> ()
    %u4 = memref.cast %hints : memref<8xi32> to memref<*xi32>
    call @printMemrefI32(%u4) : (memref<*xi32>) -> ()
    %swapped = memref.load %hints[%c2] : memref<8xi32>
    %recorded = memref.load %hints[%c3] : memref<8xi32>
    %same = arith.cmpi eq, %swapped, %recorded : i32
    vector.print str "cmpswap winner recorded: "
    vector.print %same : i1
    return
  }
}

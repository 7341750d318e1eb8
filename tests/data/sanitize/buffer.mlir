// AMD raw buffer operations the runtime carries out: one thread loads 4 floats of a 16-byte device buffer
// through amdgpu.raw_buffer_load, doubles them and stores them with raw_buffer_store into a second buffer;
// the host sums that: 2 x (1 + 2 + 3 + 4) = 20. The hardware checks a raw buffer access against its
// size by the vector offset only (out-of-range dwords read 0 and are not stored: no error); the scalar
// offset (sgprOffset, in elements) is added after the check. Each BUG moves an access past its buffer by that offset.
// ARCHS: gfx90a
// CHECK: sum: 20
// BUG load: the load's sgprOffset is 2 elements: its last two dwords lie past the 16 bytes, unchecked
// BUG load FROM:       %skip = arith.constant 0 : i32
// BUG load TO:       %skip = arith.constant 2 : i32
// BUG load REPORT: FILE:@load:12: error: memcheck: out-of-bounds access: read of 4 bytes in kernel 'twice', block (0,0,0), thread (0,0,0): offset 16 of device buffer #1 (16 bytes, allocated at FILE:@alloc_x:10)
// BUG store: the store's sgprOffset is 1 element
// BUG store FROM:       %shift = arith.constant 0 : i32
// BUG store TO:       %shift = arith.constant 1 : i32
// BUG store REPORT: FILE:@store:7: error: memcheck: out-of-bounds access: write of 4 bytes in kernel 'twice', block (0,0,0), thread (0,0,0): offset 16 of device buffer #2 (16 bytes, allocated at FILE:@alloc_y:10)
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @twice(%x: memref<?xf32>, %y: memref<?xf32>) kernel {
      %c0 = arith.constant 0 : i32
      %skip = arith.constant 0 : i32
      %shift = arith.constant 0 : i32
      %v = amdgpu.raw_buffer_load {boundsCheck = true} %x[%c0] sgprOffset %skip : memref<?xf32>, i32 -> vector<4xf32> // @load
      %w = arith.addf %v, %v : vector<4xf32>
      amdgpu.raw_buffer_store {boundsCheck = true} %w -> %y[%c0] sgprOffset %shift : vector<4xf32> -> memref<?xf32>, i32 // @store
      gpu.return
    }
  }
  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %hx = memref.alloc(%c4) : memref<?xf32>
    %hy = memref.alloc(%c4) : memref<?xf32>
    scf.for %i = %c0 to %c4 step %c1 {
      %i1 = arith.addi %i, %c1 : index
      %ii = arith.index_cast %i1 : index to i32
      %f = arith.sitofp %ii : i32 to f32
      memref.store %f, %hx[%i] : memref<?xf32>
    }
    %x = gpu.alloc(%c4) : memref<?xf32> // @alloc_x
    %y = gpu.alloc(%c4) : memref<?xf32> // @alloc_y
    gpu.memcpy %x, %hx : memref<?xf32>, memref<?xf32>
    gpu.launch_func @k::@twice blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%x : memref<?xf32>, %y : memref<?xf32>)
    gpu.memcpy %hy, %y : memref<?xf32>, memref<?xf32>
    %zero = arith.constant 0.0 : f32
    %sum = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> (f32) {
      %v = memref.load %hy[%i] : memref<?xf32>
      %n = arith.addf %acc, %v : f32
      scf.yield %n : f32
    }
    gpu.dealloc %x : memref<?xf32>
    gpu.dealloc %y : memref<?xf32>
    memref.dealloc %hx : memref<?xf32>
    memref.dealloc %hy : memref<?xf32>
    %si = arith.fptosi %sum : f32 to i32
    vector.print str "sum: "
    vector.print %si : i32
    return
  }
}

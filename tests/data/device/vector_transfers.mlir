// Each of 4 threads reads 4 floats of a row with a 1-D vector.transfer_read (in bounds), and one more
// 4-vector past the row's end with padding (not in bounds), and writes their sum scaled by its id + 1
// with a 1-D vector.transfer_write.
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @rows(%in: memref<4x6xf32>, %out: memref<4x4xf32>) kernel {
      %t = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c4 = arith.constant 4 : index
      %pad = arith.constant 100.0 : f32
      %a = vector.transfer_read %in[%t, %c0], %pad {in_bounds = [true]} : memref<4x6xf32>, vector<4xf32>
      %b = vector.transfer_read %in[%t, %c4], %pad : memref<4x6xf32>, vector<4xf32>
      %s = arith.addf %a, %b : vector<4xf32>
      %ti = arith.index_cast %t : index to i32
      %tf = arith.sitofp %ti : i32 to f32
      %one = arith.constant 1.0 : f32
      %k = arith.addf %tf, %one : f32
      %kv = vector.broadcast %k : f32 to vector<4xf32>
      %r = arith.mulf %s, %kv : vector<4xf32>
      vector.transfer_write %r, %out[%t, %c0] {in_bounds = [true]} : vector<4xf32>, memref<4x4xf32>
      gpu.return
    }
  }
  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c6 = arith.constant 6 : index
    %in = memref.alloc() : memref<4x6xf32>
    %out = memref.alloc() : memref<4x4xf32>
    scf.for %i = %c0 to %c4 step %c1 {
      scf.for %j = %c0 to %c6 step %c1 {
        %i6 = arith.muli %i, %c6 : index
        %v = arith.addi %i6, %j : index
        %vi = arith.index_cast %v : index to i32
        %vf = arith.sitofp %vi : i32 to f32
        memref.store %vf, %in[%i, %j] : memref<4x6xf32>
      }
    }
    %din = gpu.alloc() : memref<4x6xf32>
    %dout = gpu.alloc() : memref<4x4xf32>
    gpu.memcpy %din, %in : memref<4x6xf32>, memref<4x6xf32>
    gpu.launch_func @k::@rows blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%din : memref<4x6xf32>, %dout : memref<4x4xf32>)
    gpu.memcpy %out, %dout : memref<4x4xf32>, memref<4x4xf32>
    %f0 = arith.constant 0.0 : f32
    scf.for %i = %c0 to %c4 step %c1 {
      %row = vector.transfer_read %out[%i, %c0], %f0 : memref<4x4xf32>, vector<4xf32>
      vector.print %row : vector<4xf32>
    }
    return
  }
}

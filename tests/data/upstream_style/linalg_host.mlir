// Host code in linalg: it needs `--pass-pipeline='builtin.module(func.func(convert-linalg-to-loops))'`
// before mlir-offload's lowering. The launch body is outlined afterwards, as in upstream's pipelines.
module {
  func.func @main() -> i32 {
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %three = arith.constant 3.0 : f32
    %host = memref.alloc() : memref<16xf32>
    linalg.fill ins(%three : f32) outs(%host : memref<16xf32>)
    %device = gpu.alloc () : memref<16xf32>
    gpu.memcpy %device, %host : memref<16xf32>, memref<16xf32>
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c16, %sy = %c1, %sz = %c1) {
      %v = memref.load %device[%tx] : memref<16xf32>
      %w = arith.mulf %v, %v : f32
      memref.store %w, %device[%tx] : memref<16xf32>
      gpu.terminator
    }
    gpu.memcpy %host, %device : memref<16xf32>, memref<16xf32>
    gpu.dealloc %device : memref<16xf32>
    memref.dealloc %host : memref<16xf32>
    %status = arith.constant 0 : i32
    return %status : i32
  }
}

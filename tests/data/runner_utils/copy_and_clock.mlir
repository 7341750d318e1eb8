// memref.copy between non-contiguous views (memrefCopy), rtclock and printFlops.
module attributes {gpu.container_module} {
  gpu.module @idle {
    gpu.func @nothing() kernel { gpu.return }
  }
  memref.global "private" constant @source : memref<4x6xf32> = dense<[
      [0.0, 1.0, 2.0, 3.0, 4.0, 5.0], [10.0, 11.0, 12.0, 13.0, 14.0, 15.0],
      [20.0, 21.0, 22.0, 23.0, 24.0, 25.0], [30.0, 31.0, 32.0, 33.0, 34.0, 35.0]]>
  memref.global "private" constant @zeros : memref<4x6xf32> = dense<0.0>
  func.func private @printMemrefF32(memref<*xf32>)
  func.func private @rtclock() -> f64
  func.func private @printFlops(f64)
  func.func @main() {
    %start = call @rtclock() : () -> f64
    %src = memref.get_global @source : memref<4x6xf32>
    %zeros = memref.get_global @zeros : memref<4x6xf32>
    %dst = memref.alloc() : memref<4x6xf32>
    memref.copy %zeros, %dst : memref<4x6xf32> to memref<4x6xf32>
    %from = memref.subview %src[1, 1] [3, 2] [1, 2] : memref<4x6xf32> to memref<3x2xf32, strided<[6, 2], offset: 7>>
    %to = memref.subview %dst[0, 3] [3, 2] [1, 1] : memref<4x6xf32> to memref<3x2xf32, strided<[6, 1], offset: 3>>
    memref.copy %from, %to : memref<3x2xf32, strided<[6, 2], offset: 7>> to memref<3x2xf32, strided<[6, 1], offset: 3>>
    %ud = memref.cast %dst : memref<4x6xf32> to memref<*xf32>
    call @printMemrefF32(%ud) : (memref<*xf32>) -> ()
    %one = memref.subview %src[3, 5] [1, 1] [1, 1] : memref<4x6xf32> to memref<f32, strided<[], offset: 23>>
    %cell = memref.subview %dst[0, 0] [1, 1] [1, 1] : memref<4x6xf32> to memref<f32, strided<[]>>
    memref.copy %one, %cell : memref<f32, strided<[], offset: 23>> to memref<f32, strided<[]>>
    %t = memref.transpose %src (i, j) -> (j, i) : memref<4x6xf32> to memref<6x4xf32, strided<[1, 6]>>
    %tt = memref.alloc() : memref<6x4xf32>
    memref.copy %t, %tt : memref<6x4xf32, strided<[1, 6]>> to memref<6x4xf32>
    %ut = memref.cast %tt : memref<6x4xf32> to memref<*xf32>
    call @printMemrefF32(%ut) : (memref<*xf32>) -> ()
    call @printMemrefF32(%ud) : (memref<*xf32>) -> ()
    %end = call @rtclock() : () -> f64
    %elapsed = arith.subf %end, %start : f64
    %z = arith.constant 0.0 : f64
    %forward = arith.cmpf oge, %elapsed, %z : f64
    vector.print %forward : i1
    %flops = arith.constant 2.5e9 : f64
    call @printFlops(%flops) : (f64) -> ()
    %more = arith.constant 123456789.0 : f64
    call @printFlops(%more) : (f64) -> ()
    memref.dealloc %tt : memref<6x4xf32>
    memref.dealloc %dst : memref<4x6xf32>
    return
  }
}

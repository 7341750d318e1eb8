// printMemrefF32 / printMemrefF64 (unranked, no C interface) on special values, strided and offset views.
module attributes {gpu.container_module} {
  gpu.module @idle {
    gpu.func @nothing() kernel { gpu.return }
  }
  memref.global "private" constant @grid : memref<3x5xf32> = dense<[
      [1.0, -0.0, 0x7FC00000, 0x7F800000, 0xFF800000],
      [0.1, 1.0e-7, 123456789.0, -2.5, 0xFFC00000],
      [3.0e38, 1.5e-45, 100000.0, 1000000.0, 0.333333343]]>
  memref.global "private" constant @wide : memref<2x3xf64> = dense<[
      [1.0e300, -1.0e-300, 0x7FF8000000000000], [2.0, 0.1, -123.456789]]>
  func.func private @printMemrefF32(memref<*xf32>)
  func.func private @printMemrefF64(memref<*xf64>)
  func.func @main() {
    %g = memref.get_global @grid : memref<3x5xf32>
    %u = memref.cast %g : memref<3x5xf32> to memref<*xf32>
    call @printMemrefF32(%u) : (memref<*xf32>) -> ()
    %inner = memref.subview %g[1, 1] [2, 3] [1, 1] : memref<3x5xf32> to memref<2x3xf32, strided<[5, 1], offset: 6>>
    %ui = memref.cast %inner : memref<2x3xf32, strided<[5, 1], offset: 6>> to memref<*xf32>
    call @printMemrefF32(%ui) : (memref<*xf32>) -> ()
    %every_other = memref.subview %g[0, 0] [3, 3] [1, 2] : memref<3x5xf32> to memref<3x3xf32, strided<[5, 2]>>
    %ue = memref.cast %every_other : memref<3x3xf32, strided<[5, 2]>> to memref<*xf32>
    call @printMemrefF32(%ue) : (memref<*xf32>) -> ()
    %column = memref.subview %g[0, 4] [3, 1] [1, 1] : memref<3x5xf32> to memref<3xf32, strided<[5], offset: 4>>
    %uc = memref.cast %column : memref<3xf32, strided<[5], offset: 4>> to memref<*xf32>
    call @printMemrefF32(%uc) : (memref<*xf32>) -> ()
    %row = memref.subview %g[2, 0] [1, 5] [1, 1] : memref<3x5xf32> to memref<1x5xf32, strided<[5, 1], offset: 10>>
    %ur = memref.cast %row : memref<1x5xf32, strided<[5, 1], offset: 10>> to memref<*xf32>
    call @printMemrefF32(%ur) : (memref<*xf32>) -> ()
    %w = memref.get_global @wide : memref<2x3xf64>
    %uw = memref.cast %w : memref<2x3xf64> to memref<*xf64>
    call @printMemrefF64(%uw) : (memref<*xf64>) -> ()
    %t = memref.transpose %w (i, j) -> (j, i) : memref<2x3xf64> to memref<3x2xf64, strided<[1, 3]>>
    %ut = memref.cast %t : memref<3x2xf64, strided<[1, 3]>> to memref<*xf64>
    call @printMemrefF64(%ut) : (memref<*xf64>) -> ()
    return
  }
}

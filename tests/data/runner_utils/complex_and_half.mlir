// Complex (C32, C64), f16 and bf16 memrefs; shape printers of each.
module attributes {gpu.container_module} {
  gpu.module @idle {
    gpu.func @nothing() kernel { gpu.return }
  }
  memref.global "private" constant @pairs : memref<2x2xcomplex<f32>> = dense<[[(1.0, -2.5), (0.0, -0.0)], [(0x7FC00000, 0x7F800000), (1.0e-3, 1.0e10)]]>
  memref.global "private" constant @wide_pairs : memref<3xcomplex<f64>> = dense<[(1.0, 2.0), (-0.5, 1.0e-300), (3.25, 0.1)]>
  memref.global "private" constant @halves : memref<2x3xf16> = dense<[[1.0, -0.0, 65504.0], [0.1, 0x7C00, 0x7E00]]>
  memref.global "private" constant @brains : memref<4xbf16> = dense<[1.0, -3.140625, 0x7F80, 1.0e20]>
  func.func private @printMemrefC32(memref<*xcomplex<f32>>)
  func.func private @printMemrefC64(memref<*xcomplex<f64>>)
  func.func private @printMemref1dC32(memref<?xcomplex<f32>>) attributes {llvm.emit_c_interface}
  func.func private @printMemref1dC64(memref<?xcomplex<f64>>) attributes {llvm.emit_c_interface}
  func.func private @printMemrefShapeC64(memref<*xcomplex<f64>>) attributes {llvm.emit_c_interface}
  func.func private @printMemrefF16(memref<*xf16>) attributes {llvm.emit_c_interface}
  func.func private @printMemrefBF16(memref<*xbf16>) attributes {llvm.emit_c_interface}
  func.func @main() {
    %p = memref.get_global @pairs : memref<2x2xcomplex<f32>>
    %up = memref.cast %p : memref<2x2xcomplex<f32>> to memref<*xcomplex<f32>>
    call @printMemrefC32(%up) : (memref<*xcomplex<f32>>) -> ()
    %q = memref.get_global @wide_pairs : memref<3xcomplex<f64>>
    %uq = memref.cast %q : memref<3xcomplex<f64>> to memref<*xcomplex<f64>>
    call @printMemrefC64(%uq) : (memref<*xcomplex<f64>>) -> ()
    call @printMemrefShapeC64(%uq) : (memref<*xcomplex<f64>>) -> ()
    %dq = memref.cast %q : memref<3xcomplex<f64>> to memref<?xcomplex<f64>>
    call @printMemref1dC64(%dq) : (memref<?xcomplex<f64>>) -> ()
    %col = memref.subview %p[0, 1] [2, 1] [1, 1] : memref<2x2xcomplex<f32>> to memref<2xcomplex<f32>, strided<[2], offset: 1>>
    %ucol = memref.cast %col : memref<2xcomplex<f32>, strided<[2], offset: 1>> to memref<*xcomplex<f32>>
    call @printMemrefC32(%ucol) : (memref<*xcomplex<f32>>) -> ()
    %h = memref.get_global @halves : memref<2x3xf16>
    %uh = memref.cast %h : memref<2x3xf16> to memref<*xf16>
    call @printMemrefF16(%uh) : (memref<*xf16>) -> ()
    %b = memref.get_global @brains : memref<4xbf16>
    %ub = memref.cast %b : memref<4xbf16> to memref<*xbf16>
    call @printMemrefBF16(%ub) : (memref<*xbf16>) -> ()
    return
  }
}

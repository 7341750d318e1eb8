// Integer and index printers: I8 prints characters, index prints unsigned; C-interface and plain entry points.
module attributes {gpu.container_module} {
  gpu.module @idle {
    gpu.func @nothing() kernel { gpu.return }
  }
  memref.global "private" constant @letters : memref<2x4xi8> = dense<[[72, 105, 33, 10], [77, 76, 73, 82]]>
  memref.global "private" constant @shorts : memref<2x2xi16> = dense<[[-32768, 32767], [0, -1]]>
  memref.global "private" constant @words : memref<5xi32> = dense<[-2147483648, 2147483647, 0, -1, 42]>
  memref.global "private" constant @longs : memref<2x2x2xi64> = dense<[[[-9223372036854775808, 9223372036854775807], [0, -5]], [[1, 2], [3, 4]]]>
  memref.global "private" constant @indices : memref<3xindex> = dense<[0, -1, 7]>
  func.func private @printMemrefI8(memref<*xi8>) attributes {llvm.emit_c_interface}
  func.func private @printMemrefI16(memref<*xi16>) attributes {llvm.emit_c_interface}
  func.func private @printMemrefI32(memref<*xi32>)
  func.func private @printMemrefI64(memref<*xi64>)
  func.func private @printMemrefInd(memref<*xindex>)
  func.func private @printMemref1dI8(memref<?xi8>) attributes {llvm.emit_c_interface}
  func.func private @printMemref1dI32(memref<?xi32>) attributes {llvm.emit_c_interface}
  func.func private @printMemref1dI64(memref<?xi64>) attributes {llvm.emit_c_interface}
  func.func private @printMemref1dInd(memref<?xindex>) attributes {llvm.emit_c_interface}
  func.func private @printMemrefShapeI32(memref<*xi32>) attributes {llvm.emit_c_interface}
  func.func private @printMemrefShapeInd(memref<*xindex>) attributes {llvm.emit_c_interface}
  func.func @main() {
    %l = memref.get_global @letters : memref<2x4xi8>
    %ul = memref.cast %l : memref<2x4xi8> to memref<*xi8>
    call @printMemrefI8(%ul) : (memref<*xi8>) -> ()
    %s = memref.get_global @shorts : memref<2x2xi16>
    %us = memref.cast %s : memref<2x2xi16> to memref<*xi16>
    call @printMemrefI16(%us) : (memref<*xi16>) -> ()
    %w = memref.get_global @words : memref<5xi32>
    %uw = memref.cast %w : memref<5xi32> to memref<*xi32>
    call @printMemrefI32(%uw) : (memref<*xi32>) -> ()
    call @printMemrefShapeI32(%uw) : (memref<*xi32>) -> ()
    %g = memref.get_global @longs : memref<2x2x2xi64>
    %ug = memref.cast %g : memref<2x2x2xi64> to memref<*xi64>
    call @printMemrefI64(%ug) : (memref<*xi64>) -> ()
    %i = memref.get_global @indices : memref<3xindex>
    %ui = memref.cast %i : memref<3xindex> to memref<*xindex>
    call @printMemrefInd(%ui) : (memref<*xindex>) -> ()
    call @printMemrefShapeInd(%ui) : (memref<*xindex>) -> ()
    %row = memref.subview %l[1, 0] [1, 4] [1, 1] : memref<2x4xi8> to memref<4xi8, strided<[1], offset: 4>>
    %dr = memref.cast %row : memref<4xi8, strided<[1], offset: 4>> to memref<?xi8, strided<[1], offset: ?>>
    %copy = memref.alloc() : memref<4xi8>
    memref.copy %row, %copy : memref<4xi8, strided<[1], offset: 4>> to memref<4xi8>
    %dc = memref.cast %copy : memref<4xi8> to memref<?xi8>
    call @printMemref1dI8(%dc) : (memref<?xi8>) -> ()
    %dw = memref.cast %w : memref<5xi32> to memref<?xi32>
    call @printMemref1dI32(%dw) : (memref<?xi32>) -> ()
    %col = memref.subview %g[0, 0, 1] [2, 2, 1] [1, 1, 1] : memref<2x2x2xi64> to memref<2x2xi64, strided<[4, 2], offset: 1>>
    %flat_col = memref.alloc() : memref<4xi64>
    %col_view = memref.reinterpret_cast %flat_col to offset: [0], sizes: [2, 2], strides: [2, 1] : memref<4xi64> to memref<2x2xi64>
    memref.copy %col, %col_view : memref<2x2xi64, strided<[4, 2], offset: 1>> to memref<2x2xi64>
    %dl = memref.cast %flat_col : memref<4xi64> to memref<?xi64>
    call @printMemref1dI64(%dl) : (memref<?xi64>) -> ()
    %di = memref.cast %i : memref<3xindex> to memref<?xindex>
    call @printMemref1dInd(%di) : (memref<?xindex>) -> ()
    return
  }
}

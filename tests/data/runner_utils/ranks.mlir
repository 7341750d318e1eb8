// Rank 0 to 4, through the unranked printer and the ranked C-interface printers (printMemref{0..4}dF32).
module attributes {gpu.container_module} {
  gpu.module @idle {
    gpu.func @nothing() kernel { gpu.return }
  }
  func.func private @printMemrefF32(memref<*xf32>)
  func.func private @printMemref0dF32(memref<f32>) attributes {llvm.emit_c_interface}
  func.func private @printMemref1dF32(memref<?xf32>) attributes {llvm.emit_c_interface}
  func.func private @printMemref2dF32(memref<?x?xf32>) attributes {llvm.emit_c_interface}
  func.func private @printMemref3dF32(memref<?x?x?xf32>) attributes {llvm.emit_c_interface}
  func.func private @printMemref4dF32(memref<?x?x?x?xf32>) attributes {llvm.emit_c_interface}
  func.func @fill(%m: memref<?xf32>, %n: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %half = arith.constant 0.5 : f32
    scf.for %i = %c0 to %n step %c1 {
      %k = arith.index_cast %i : index to i32
      %f = arith.sitofp %k : i32 to f32
      %v = arith.mulf %f, %half : f32
      memref.store %v, %m[%i] : memref<?xf32>
    }
    return
  }
  func.func @main() {
    %c120 = arith.constant 120 : index
    %flat = memref.alloc(%c120) : memref<?xf32>
    call @fill(%flat, %c120) : (memref<?xf32>, index) -> ()
    %r0 = memref.subview %flat[7] [1] [1] : memref<?xf32> to memref<f32, strided<[], offset: 7>>
    %r1 = memref.subview %flat[3] [4] [2] : memref<?xf32> to memref<4xf32, strided<[2], offset: 3>>
    %r2 = memref.reinterpret_cast %flat to offset: [1], sizes: [3, 4], strides: [5, 1] : memref<?xf32> to memref<3x4xf32, strided<[5, 1], offset: 1>>
    %r3 = memref.reinterpret_cast %flat to offset: [0], sizes: [2, 3, 4], strides: [12, 4, 1] : memref<?xf32> to memref<2x3x4xf32>
    %r4 = memref.reinterpret_cast %flat to offset: [2], sizes: [2, 2, 3, 4], strides: [60, 20, 5, 1] : memref<?xf32> to memref<2x2x3x4xf32, strided<[60, 20, 5, 1], offset: 2>>
    %u0 = memref.cast %r0 : memref<f32, strided<[], offset: 7>> to memref<*xf32>
    %u1 = memref.cast %r1 : memref<4xf32, strided<[2], offset: 3>> to memref<*xf32>
    %u2 = memref.cast %r2 : memref<3x4xf32, strided<[5, 1], offset: 1>> to memref<*xf32>
    %u3 = memref.cast %r3 : memref<2x3x4xf32> to memref<*xf32>
    %u4 = memref.cast %r4 : memref<2x2x3x4xf32, strided<[60, 20, 5, 1], offset: 2>> to memref<*xf32>
    call @printMemrefF32(%u0) : (memref<*xf32>) -> ()
    call @printMemrefF32(%u1) : (memref<*xf32>) -> ()
    call @printMemrefF32(%u2) : (memref<*xf32>) -> ()
    call @printMemrefF32(%u3) : (memref<*xf32>) -> ()
    call @printMemrefF32(%u4) : (memref<*xf32>) -> ()
    %d0 = memref.alloc() : memref<f32>
    %x = arith.constant -7.25 : f32
    memref.store %x, %d0[] : memref<f32>
    call @printMemref0dF32(%d0) : (memref<f32>) -> ()
    call @printMemref1dF32(%flat) : (memref<?xf32>) -> ()
    %d3 = memref.cast %r3 : memref<2x3x4xf32> to memref<?x?x?xf32>
    call @printMemref3dF32(%d3) : (memref<?x?x?xf32>) -> ()
    %square = memref.reinterpret_cast %flat to offset: [0], sizes: [4, 4], strides: [4, 1] : memref<?xf32> to memref<4x4xf32>
    %d2 = memref.cast %square : memref<4x4xf32> to memref<?x?xf32>
    call @printMemref2dF32(%d2) : (memref<?x?xf32>) -> ()
    %cube = memref.reinterpret_cast %flat to offset: [0], sizes: [1, 2, 1, 3], strides: [6, 3, 3, 1] : memref<?xf32> to memref<1x2x1x3xf32>
    %d4 = memref.cast %cube : memref<1x2x1x3xf32> to memref<?x?x?x?xf32>
    call @printMemref4dF32(%d4) : (memref<?x?x?x?xf32>) -> ()
    memref.dealloc %d0 : memref<f32>
    memref.dealloc %flat : memref<?xf32>
    return
  }
}

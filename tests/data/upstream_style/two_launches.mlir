// gpu.launch bodies in two functions: outlining names them after their function, and the two in
// @main would both be `main_kernel`; each kernel must keep a name of its own.
module {
  func.func @bump(%data: memref<4xi32>) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
      %v = memref.load %data[%tx] : memref<4xi32>
      %one = arith.constant 1 : i32
      %w = arith.addi %v, %one : i32
      memref.store %w, %data[%tx] : memref<4xi32>
      gpu.terminator
    }
    return
  }

  func.func @main() -> i32 {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %data = gpu.alloc () : memref<4xi32>
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
      %i = arith.index_cast %tx : index to i32
      memref.store %i, %data[%tx] : memref<4xi32>
      gpu.terminator
    }
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c2, %sy = %c1, %sz = %c1) {
      %i = arith.muli %bx, %c2 : index
      %j = arith.addi %i, %tx : index
      %v = memref.load %data[%j] : memref<4xi32>
      %w = arith.muli %v, %v : i32
      memref.store %w, %data[%j] : memref<4xi32>
      gpu.terminator
    }
    call @bump(%data) : (memref<4xi32>) -> ()
    gpu.dealloc %data : memref<4xi32>
    %status = arith.constant 0 : i32
    return %status : i32
  }
}

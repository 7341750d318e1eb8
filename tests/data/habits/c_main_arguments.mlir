// C's main: prints its last argument and exits with argc, computed by a kernel.
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @put(%out: memref<1xi32>, %v: i32) kernel {
      %c0 = arith.constant 0 : index
      memref.store %v, %out[%c0] : memref<1xi32>
      gpu.return
    }
  }
  llvm.func @puts(!llvm.ptr) -> i32
  func.func @main(%argc: i32, %argv: !llvm.ptr) -> i32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %one = arith.constant 1 : i32
    %last = arith.subi %argc, %one : i32
    %p = llvm.getelementptr %argv[%last] : (!llvm.ptr, i32) -> !llvm.ptr, !llvm.ptr
    %s = llvm.load %p : !llvm.ptr -> !llvm.ptr
    %r = llvm.call @puts(%s) : (!llvm.ptr) -> i32
    %d = gpu.alloc () : memref<1xi32>
    gpu.launch_func @k::@put blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%d : memref<1xi32>, %argc : i32)
    %h = memref.alloc() : memref<1xi32>
    gpu.memcpy %h, %d : memref<1xi32>, memref<1xi32>
    %v = memref.load %h[%c0] : memref<1xi32>
    return %v : i32
  }
}

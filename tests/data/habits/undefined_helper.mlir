// Calls a host function no input defines: the link must name it and the bundle that references it.
module attributes {gpu.container_module} {
  llvm.func @helper_from_elsewhere(i32) -> i32
  gpu.module @k {
    gpu.func @touch(%p: memref<?xf32>) kernel {
      gpu.return
    }
  }
  func.func @main() -> i32 {
    %c = llvm.mlir.constant(1 : i32) : i32
    %r = llvm.call @helper_from_elsewhere(%c) : (i32) -> i32
    return %r : i32
  }
}

// A device function that is declared but defined nowhere: needs --link-bitcode.
module attributes {gpu.container_module} {
  gpu.module @uses_external {
    func.func private @user_helper(f32) -> f32
    gpu.func @calls_helper(%a: memref<?xf32>) kernel {
      %t = gpu.thread_id x
      %v = memref.load %a[%t] : memref<?xf32>
      %r = func.call @user_helper(%v) : (f32) -> f32
      memref.store %r, %a[%t] : memref<?xf32>
      gpu.return
    }
  }
}

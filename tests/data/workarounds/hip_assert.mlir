// `cf.assert` in a HIP kernel (MLIR 22's convert-gpu-to-rocdl cannot lower it; mlir-offload lowers it as
// HIP's __assert_fail does): threads whose value passes go on and print; the thread holding 7 prints HIP's
// assertion line and traps, which ends the launch; the host's next check reports the failure.
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @check(%values: memref<3xi32>) kernel {
      %t = gpu.thread_id x
      %v = memref.load %values[%t] : memref<3xi32>
      %c7 = arith.constant 7 : i32
      %ok = arith.cmpi ne, %v, %c7 : i32
      cf.assert %ok, "value is not 7"
      gpu.printf "value %d passes\n", %v : i32
      gpu.return
    }
  }
  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %h = memref.alloc() : memref<3xi32>
    %v3 = arith.constant 3 : i32
    %v7 = arith.constant 7 : i32
    %v5 = arith.constant 5 : i32
    memref.store %v3, %h[%c0] : memref<3xi32>
    memref.store %v7, %h[%c1] : memref<3xi32>
    memref.store %v5, %h[%c2] : memref<3xi32>
    %d = gpu.alloc () : memref<3xi32>
    gpu.memcpy %d, %h : memref<3xi32>, memref<3xi32>
    gpu.launch_func @k::@check blocks in (%c1, %c1, %c1) threads in (%c3, %c1, %c1) args(%d : memref<3xi32>)
    gpu.memcpy %h, %d : memref<3xi32>, memref<3xi32>
    return
  }
}

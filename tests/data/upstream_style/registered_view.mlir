// Host buffers registered with the runtime and handed to a kernel through the device's view of them
// (mgpuMemGetDeviceMemRef1dFloat / Int32); @mgpuOffsetOf is the program's own function, not a runtime one.
module attributes {gpu.container_module} {
  gpu.module @views {
    gpu.func @shift(%values: memref<?xf32>, %counts: memref<?xi32>, %by: f32) kernel {
      %i = gpu.thread_id x
      %v = memref.load %values[%i] : memref<?xf32>
      %w = arith.addf %v, %by : f32
      memref.store %w, %values[%i] : memref<?xf32>
      %c = memref.load %counts[%i] : memref<?xi32>
      %one = arith.constant 1 : i32
      %d = arith.addi %c, %one : i32
      memref.store %d, %counts[%i] : memref<?xi32>
      gpu.return
    }
  }

  func.func @mgpuOffsetOf(%x: f32) -> f32 {
    %half = arith.constant 0.5 : f32
    %y = arith.addf %x, %half : f32
    return %y : f32
  }

  func.func @main() -> i32 {
    %c1 = arith.constant 1 : index
    %n = arith.constant 6 : index
    %values = memref.alloc(%n) : memref<?xf32>
    %counts = memref.alloc(%n) : memref<?xi32>
    %values_any = memref.cast %values : memref<?xf32> to memref<*xf32>
    %counts_any = memref.cast %counts : memref<?xi32> to memref<*xi32>
    gpu.host_register %values_any : memref<*xf32>
    gpu.host_register %counts_any : memref<*xi32>
    %device_values = call @mgpuMemGetDeviceMemRef1dFloat(%values) : (memref<?xf32>) -> memref<?xf32>
    %device_counts = call @mgpuMemGetDeviceMemRef1dInt32(%counts) : (memref<?xi32>) -> memref<?xi32>
    %two = arith.constant 2.0 : f32
    %by = call @mgpuOffsetOf(%two) : (f32) -> f32
    gpu.launch_func @views::@shift blocks in (%c1, %c1, %c1) threads in (%n, %c1, %c1)
        args(%device_values : memref<?xf32>, %device_counts : memref<?xi32>, %by : f32)
    %status = arith.constant 0 : i32
    return %status : i32
  }

  func.func private @mgpuMemGetDeviceMemRef1dFloat(memref<?xf32>) -> memref<?xf32>
  func.func private @mgpuMemGetDeviceMemRef1dInt32(memref<?xi32>) -> memref<?xi32>
}

// A program that runs until it is stopped: a kernel launched a billion times (signal tests and
// scripts/stress_interrupts.py).
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @bump(%x: memref<?xf32>) kernel {
      %i = gpu.global_id x
      %v = memref.load %x[%i] : memref<?xf32>
      %one = arith.constant 1.0 : f32
      %r = arith.addf %v, %one : f32
      memref.store %r, %x[%i] : memref<?xf32>
      gpu.return
    }
  }
  func.func @main() -> i32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = arith.constant 64 : index
    %times = arith.constant 1000000000 : index
    %x = gpu.alloc (%n) : memref<?xf32>
    scf.for %t = %c0 to %times step %c1 {
      gpu.launch_func @kernels::@bump blocks in (%c1, %c1, %c1) threads in (%n, %c1, %c1) args(%x : memref<?xf32>)
    }
    gpu.dealloc %x : memref<?xf32>
    %zero = arith.constant 0 : i32
    return %zero : i32
  }
}

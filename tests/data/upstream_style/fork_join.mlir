// One token, three dependents: @left and @right fork from the copy-in and run concurrently, a
// gpu.wait async joins them, and a synchronous copy-out and free follow on a stream of their own.
module attributes {gpu.container_module} {
  gpu.module @halves {
    gpu.func @left(%data: memref<8xf32>, %by: f32) kernel {
      %i = gpu.thread_id x
      %v = memref.load %data[%i] : memref<8xf32>
      %w = arith.mulf %v, %by : f32
      memref.store %w, %data[%i] : memref<8xf32>
      gpu.return
    }
    gpu.func @right(%data: memref<8xf32>, %by: f32) kernel {
      %c4 = arith.constant 4 : index
      %t = gpu.thread_id x
      %i = arith.addi %t, %c4 : index
      %v = memref.load %data[%i] : memref<8xf32>
      %w = arith.addf %v, %by : f32
      memref.store %w, %data[%i] : memref<8xf32>
      gpu.return
    }
  }

  func.func @main() -> i32 {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %two = arith.constant 2.0 : f32
    %ten = arith.constant 10.0 : f32
    %host = memref.alloc() : memref<8xf32>
    %start = gpu.wait async
    %data, %made = gpu.alloc async [%start] () : memref<8xf32>
    %in = gpu.memcpy async [%made] %data, %host : memref<8xf32>, memref<8xf32>
    %l = gpu.launch_func async [%in] @halves::@left blocks in (%c1, %c1, %c1)
        threads in (%c4, %c1, %c1) args(%data : memref<8xf32>, %two : f32)
    %r = gpu.launch_func async [%in] @halves::@right blocks in (%c1, %c1, %c1)
        threads in (%c4, %c1, %c1) args(%data : memref<8xf32>, %ten : f32)
    %both = gpu.wait async [%l, %r]
    gpu.wait [%both]
    gpu.memcpy %host, %data : memref<8xf32>, memref<8xf32>
    gpu.dealloc %data : memref<8xf32>
    memref.dealloc %host : memref<8xf32>
    %status = arith.constant 0 : i32
    return %status : i32
  }
}

// Device globals, two streams ordered by an event, async copies and three kernels whose launches use
// 3-D grids and blocks, dynamic shared memory and scalar arguments of every width: on each host triple
// the fake runtime must see the same registrations, launch configurations, streams and argument bytes.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    memref.global "public" @bias : memref<8xf32> = dense<0.5>
    memref.global "public" constant @weights : memref<3xf64> = dense<[1.0, 2.0, 4.0]>
    gpu.func @fill(%x: memref<?xf32>, %v: f32, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        memref.store %v, %x[%i] : memref<?xf32>
      }
      gpu.return
    }
    gpu.func @scale(%x: memref<?xf32>, %a: f64, %k: i32, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %c0 = arith.constant 0 : index
        %b = memref.get_global @bias : memref<8xf32>
        %w = memref.get_global @weights : memref<3xf64>
        %bv = memref.load %b[%c0] : memref<8xf32>
        %wv = memref.load %w[%c0] : memref<3xf64>
        %v = memref.load %x[%i] : memref<?xf32>
        %af = arith.truncf %a : f64 to f32
        %kf = arith.sitofp %k : i32 to f32
        %wf = arith.truncf %wv : f64 to f32
        %m = arith.mulf %v, %af : f32
        %m2 = arith.mulf %m, %kf : f32
        %m3 = arith.mulf %m2, %wf : f32
        %s = arith.addf %m3, %bv : f32
        memref.store %s, %x[%i] : memref<?xf32>
      }
      gpu.return
    }
    gpu.func @tag(%t: memref<?xi64>, %mark: i64, %small: i16, %byte: i8) kernel {
      %i = gpu.thread_id x
      memref.store %mark, %t[%i] : memref<?xi64>
      gpu.return
    }
  }

  func.func @main() -> i32 {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    %c5 = arith.constant 5 : index
    %c8 = arith.constant 8 : index
    %n = arith.constant 240 : index
    %shared = arith.constant 256 : i32
    %v = arith.constant 1.5 : f32
    %a = arith.constant -2.25 : f64
    %k = arith.constant 7 : i32
    %mark = arith.constant 81985529216486895 : i64
    %small = arith.constant -3 : i16
    %byte = arith.constant 200 : i8
    %h = memref.alloc(%n) : memref<?xf32>
    %s1 = gpu.wait async
    %s2 = gpu.wait async
    %x, %t1 = gpu.alloc async [%s1] (%n) : memref<?xf32>
    %tags, %t2 = gpu.alloc async [%s2] (%c8) : memref<?xi64>
    %t3 = gpu.memcpy async [%t1] %x, %h : memref<?xf32>, memref<?xf32>
    %t4 = gpu.launch_func async [%t3] @kernels::@fill blocks in (%c3, %c2, %c5) threads in (%c8, %c4, %c2)
        args(%x : memref<?xf32>, %v : f32, %n : index)
    %t5 = gpu.launch_func async [%t4] @kernels::@scale blocks in (%c2, %c1, %c1) threads in (%c8, %c1, %c1)
        dynamic_shared_memory_size %shared args(%x : memref<?xf32>, %a : f64, %k : i32, %n : index)
    %t6 = gpu.launch_func async [%t2, %t5] @kernels::@tag blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1)
        args(%tags : memref<?xi64>, %mark : i64, %small : i16, %byte : i8)
    %t7 = gpu.memcpy async [%t6] %h, %x : memref<?xf32>, memref<?xf32>
    %t8 = gpu.dealloc async [%t7] %x : memref<?xf32>
    %t9 = gpu.dealloc async [%t8] %tags : memref<?xi64>
    gpu.wait [%t9]
    memref.dealloc %h : memref<?xf32>
    %rc = arith.constant 0 : i32
    return %rc : i32
  }
}

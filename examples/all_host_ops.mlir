// Every host GPU operation mlir-offload runs on the CUDA/HIP runtime, in its synchronous and async
// form where MLIR has both, with four kernels in two gpu.modules. Expected output: see the last lines.
module attributes {gpu.container_module} {
  llvm.mlir.global internal constant @fmt_f("%s[%d] = %.1f\0A\00") {addr_space = 0 : i32}
  llvm.mlir.global internal constant @fmt_i("%s[%d] = %d\0A\00") {addr_space = 0 : i32}
  llvm.mlir.global internal constant @name_x("x\00") {addr_space = 0 : i32}
  llvm.mlir.global internal constant @name_y("y\00") {addr_space = 0 : i32}
  llvm.mlir.global internal constant @name_k("k\00") {addr_space = 0 : i32}
  llvm.func @printf(!llvm.ptr, ...) -> i32

  gpu.module @init_kernels {
    // x[i] = v for i < n
    gpu.func @fill(%x: memref<?xf32>, %v: f32, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        memref.store %v, %x[%i] : memref<?xf32>
      }
      gpu.return
    }
    // k[i] = i
    gpu.func @iota(%k: memref<?xi32>, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %v = arith.index_cast %i : index to i32
        memref.store %v, %k[%i] : memref<?xi32>
      }
      gpu.return
    }
  }

  gpu.module @math_kernels {
    // x[i] = x[i] * s
    gpu.func @scale(%x: memref<?xf32>, %s: f32, %n: index) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %v = memref.load %x[%i] : memref<?xf32>
        %w = arith.mulf %v, %s : f32
        memref.store %w, %x[%i] : memref<?xf32>
      }
      gpu.return
    }
    // y[i] = x[i] + y[i] + k[i], staged through dynamic workgroup memory
    gpu.func @accumulate(%x: memref<?xf32>, %y: memref<?xf32>, %k: memref<?xi32>, %n: index) kernel {
      %i = gpu.global_id x
      %t = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %shm = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %stage = memref.view %shm[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<256xf32, #gpu.address_space<workgroup>>
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %xv = memref.load %x[%i] : memref<?xf32>
        memref.store %xv, %stage[%t] : memref<256xf32, #gpu.address_space<workgroup>>
      }
      gpu.barrier
      scf.if %in {
        %xs = memref.load %stage[%t] : memref<256xf32, #gpu.address_space<workgroup>>
        %yv = memref.load %y[%i] : memref<?xf32>
        %kv = memref.load %k[%i] : memref<?xi32>
        %kf = arith.sitofp %kv : i32 to f32
        %s = arith.addf %xs, %yv : f32
        %r = arith.addf %s, %kf : f32
        memref.store %r, %y[%i] : memref<?xf32>
      }
      gpu.return
    }
  }

  func.func @main() -> i32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %n = arith.constant 1000 : index
    %blocks = arith.constant 4 : index
    %threads = arith.constant 256 : index
    %shared = arith.constant 1024 : i32
    %dev = arith.constant 0 : i32
    %one = arith.constant 1.0 : f32
    %two = arith.constant 2.0 : f32
    %three = arith.constant 3.0 : f32
    %zero_i = arith.constant 0 : i32

    gpu.set_default_device %dev

    // Host buffers; x is registered (page-locked) with the runtime.
    %hx = memref.alloc(%n) : memref<?xf32>
    %hy = memref.alloc(%n) : memref<?xf32>
    %hk = memref.alloc(%n) : memref<?xi32>
    %hx_unranked = memref.cast %hx : memref<?xf32> to memref<*xf32>
    gpu.host_register %hx_unranked : memref<*xf32>

    // Synchronous forms: device x, host-shared k.
    %x = gpu.alloc (%n) : memref<?xf32>
    %k = gpu.alloc host_shared (%n) : memref<?xi32>
    gpu.memset %x, %one : memref<?xf32>, f32
    gpu.memset %k, %zero_i : memref<?xi32>, i32
    gpu.launch_func @init_kernels::@iota blocks in (%blocks, %c1, %c1) threads in (%threads, %c1, %c1)
        args(%k : memref<?xi32>, %n : index)

    // Asynchronous forms on one stream: y = 2, x = x * 3, y = x + y + k.
    %s0 = gpu.wait async
    %y, %s1 = gpu.alloc async [%s0] (%n) : memref<?xf32>
    %s2 = gpu.memset async [%s1] %y, %two : memref<?xf32>, f32
    %s3 = gpu.launch_func async [%s2] @math_kernels::@scale blocks in (%blocks, %c1, %c1) threads in (%threads, %c1, %c1)
        args(%x : memref<?xf32>, %three : f32, %n : index)
    %s4 = gpu.launch_func async [%s3] @math_kernels::@accumulate blocks in (%blocks, %c1, %c1) threads in (%threads, %c1, %c1)
        dynamic_shared_memory_size %shared
        args(%x : memref<?xf32>, %y : memref<?xf32>, %k : memref<?xi32>, %n : index)
    %s5 = gpu.memcpy async [%s4] %hy, %y : memref<?xf32>, memref<?xf32>
    gpu.wait [%s5]

    // Synchronous copies and a second stream that waits on the first one's work.
    gpu.memcpy %hx, %x : memref<?xf32>, memref<?xf32>
    gpu.memcpy %hk, %k : memref<?xi32>, memref<?xi32>
    %s6 = gpu.wait async
    %s7 = gpu.launch_func async [%s6] @init_kernels::@fill blocks in (%blocks, %c1, %c1) threads in (%threads, %c1, %c1)
        args(%x : memref<?xf32>, %one : f32, %n : index)
    %s8 = gpu.dealloc async [%s7] %y : memref<?xf32>
    %s9 = gpu.wait async [%s8]
    gpu.wait [%s9]
    gpu.dealloc %x : memref<?xf32>
    gpu.dealloc %k : memref<?xi32>

    // x = 3, y = 3 + 2 + i, k = i
    %fmt_f = llvm.mlir.addressof @fmt_f : !llvm.ptr
    %fmt_i = llvm.mlir.addressof @fmt_i : !llvm.ptr
    %nx = llvm.mlir.addressof @name_x : !llvm.ptr
    %ny = llvm.mlir.addressof @name_y : !llvm.ptr
    %nk = llvm.mlir.addressof @name_k : !llvm.ptr
    %last = arith.constant 999 : index
    scf.for %i = %c0 to %n step %last {
      %i32 = arith.index_cast %i : index to i32
      %xv = memref.load %hx[%i] : memref<?xf32>
      %xd = arith.extf %xv : f32 to f64
      llvm.call @printf(%fmt_f, %nx, %i32, %xd) vararg(!llvm.func<i32 (ptr, ...)>) : (!llvm.ptr, !llvm.ptr, i32, f64) -> i32
      %yv = memref.load %hy[%i] : memref<?xf32>
      %yd = arith.extf %yv : f32 to f64
      llvm.call @printf(%fmt_f, %ny, %i32, %yd) vararg(!llvm.func<i32 (ptr, ...)>) : (!llvm.ptr, !llvm.ptr, i32, f64) -> i32
      %kv = memref.load %hk[%i] : memref<?xi32>
      llvm.call @printf(%fmt_i, %nk, %i32, %kv) vararg(!llvm.func<i32 (ptr, ...)>) : (!llvm.ptr, !llvm.ptr, i32, i32) -> i32
    }
    gpu.host_unregister %hx_unranked : memref<*xf32>
    memref.dealloc %hx : memref<?xf32>
    memref.dealloc %hy : memref<?xf32>
    memref.dealloc %hk : memref<?xi32>
    %ok = arith.constant 0 : i32
    return %ok : i32
  }
}

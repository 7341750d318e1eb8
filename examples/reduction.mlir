// Sum of 4096 floats: each block reduces 256 values in workgroup memory (tree reduction with
// barriers) and writes one partial sum; the host adds the 16 partials.
// Expected output on a GPU: "sum = 4096.0 (expect 4096.0)".
module attributes {gpu.container_module} {
  llvm.mlir.global internal constant @fmt("sum = %.1f (expect 4096.0)\0A\00") {addr_space = 0 : i32}
  llvm.func @printf(!llvm.ptr, ...) -> i32

  gpu.module @reduce_kernels {
    gpu.func @block_sum(%x: memref<?xf32>, %partial: memref<?xf32>)
        workgroup(%shm : memref<256xf32, #gpu.address_space<workgroup>>) kernel {
      %t = gpu.thread_id x
      %b = gpu.block_id x
      %i = gpu.global_id x
      %v = memref.load %x[%i] : memref<?xf32>
      memref.store %v, %shm[%t] : memref<256xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %s128 = arith.constant 128 : index
      %s64 = arith.constant 64 : index
      %s32 = arith.constant 32 : index
      %s16 = arith.constant 16 : index
      %s8 = arith.constant 8 : index
      %s4 = arith.constant 4 : index
      %s2 = arith.constant 2 : index
      %s1 = arith.constant 1 : index
      // One halving step per stride (128, 64, ..., 1), a barrier after each.
      %strides = memref.alloca() : memref<8xindex>
      memref.store %s128, %strides[%c0] : memref<8xindex>
      memref.store %s64, %strides[%s1] : memref<8xindex>
      memref.store %s32, %strides[%s2] : memref<8xindex>
      %c3 = arith.constant 3 : index
      memref.store %s16, %strides[%c3] : memref<8xindex>
      memref.store %s8, %strides[%s4] : memref<8xindex>
      %c5 = arith.constant 5 : index
      memref.store %s4, %strides[%c5] : memref<8xindex>
      %c6 = arith.constant 6 : index
      memref.store %s2, %strides[%c6] : memref<8xindex>
      %c7 = arith.constant 7 : index
      memref.store %s1, %strides[%c7] : memref<8xindex>
      %c8 = arith.constant 8 : index
      scf.for %k = %c0 to %c8 step %c1 {
        %stride = memref.load %strides[%k] : memref<8xindex>
        %active = arith.cmpi ult, %t, %stride : index
        scf.if %active {
          %other = arith.addi %t, %stride : index
          %a = memref.load %shm[%t] : memref<256xf32, #gpu.address_space<workgroup>>
          %o = memref.load %shm[%other] : memref<256xf32, #gpu.address_space<workgroup>>
          %s = arith.addf %a, %o : f32
          memref.store %s, %shm[%t] : memref<256xf32, #gpu.address_space<workgroup>>
        }
        gpu.barrier
      }
      %first = arith.cmpi eq, %t, %c0 : index
      scf.if %first {
        %total = memref.load %shm[%c0] : memref<256xf32, #gpu.address_space<workgroup>>
        memref.store %total, %partial[%b] : memref<?xf32>
      }
      gpu.return
    }
  }

  func.func @main() -> i32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = arith.constant 4096 : index
    %blocks = arith.constant 16 : index
    %threads = arith.constant 256 : index
    %one = arith.constant 1.0 : f32
    %zero = arith.constant 0.0 : f32
    %hx = memref.alloc(%n) : memref<?xf32>
    %hp = memref.alloc(%blocks) : memref<?xf32>
    scf.for %i = %c0 to %n step %c1 {
      memref.store %one, %hx[%i] : memref<?xf32>
    }
    %x = gpu.alloc (%n) : memref<?xf32>
    %p = gpu.alloc (%blocks) : memref<?xf32>
    gpu.memset %p, %zero : memref<?xf32>, f32
    gpu.memcpy %x, %hx : memref<?xf32>, memref<?xf32>
    gpu.launch_func @reduce_kernels::@block_sum blocks in (%blocks, %c1, %c1) threads in (%threads, %c1, %c1)
        args(%x : memref<?xf32>, %p : memref<?xf32>)
    gpu.memcpy %hp, %p : memref<?xf32>, memref<?xf32>
    gpu.dealloc %x : memref<?xf32>
    gpu.dealloc %p : memref<?xf32>
    %sum = scf.for %b = %c0 to %blocks step %c1 iter_args(%acc = %zero) -> (f32) {
      %v = memref.load %hp[%b] : memref<?xf32>
      %s = arith.addf %acc, %v : f32
      scf.yield %s : f32
    }
    %fmt = llvm.mlir.addressof @fmt : !llvm.ptr
    %d = arith.extf %sum : f32 to f64
    llvm.call @printf(%fmt, %d) vararg(!llvm.func<i32 (ptr, ...)>) : (!llvm.ptr, f64) -> i32
    memref.dealloc %hx : memref<?xf32>
    memref.dealloc %hp : memref<?xf32>
    %rc = arith.constant 0 : i32
    return %rc : i32
  }
}

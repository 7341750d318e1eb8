// A shared-memory tree reduction: each block sums its 256 values with barriers between the steps
// (inside a loop), then one atomic add per block into the total. Prints the per-block sums and the total.
module attributes {gpu.container_module} {
  llvm.mlir.global internal constant @fmt_block("block %d: %.1f\0A\00") {addr_space = 0 : i32}
  llvm.mlir.global internal constant @fmt_total("total: %.1f\0A\00") {addr_space = 0 : i32}
  llvm.func @printf(!llvm.ptr, ...) -> i32

  gpu.module @kernels {
    gpu.func @block_sum(%x: memref<?xf32>, %partial: memref<?xf32>, %total: memref<1xf32>)
        workgroup(%shm : memref<256xf32, #gpu.address_space<workgroup>>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c128 = arith.constant 128 : index
      %t = gpu.thread_id x
      %b = gpu.block_id x
      %i = gpu.global_id x
      %v = memref.load %x[%i] : memref<?xf32>
      memref.store %v, %shm[%t] : memref<256xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      // stride = 128, 64, ..., 1
      %last = scf.while (%stride = %c128) : (index) -> index {
        %go = arith.cmpi ugt, %stride, %c0 : index
        scf.condition(%go) %stride : index
      } do {
      ^bb0(%s: index):
        %active = arith.cmpi ult, %t, %s : index
        scf.if %active {
          %other = arith.addi %t, %s : index
          %a = memref.load %shm[%t] : memref<256xf32, #gpu.address_space<workgroup>>
          %o = memref.load %shm[%other] : memref<256xf32, #gpu.address_space<workgroup>>
          %sum = arith.addf %a, %o : f32
          memref.store %sum, %shm[%t] : memref<256xf32, #gpu.address_space<workgroup>>
        }
        gpu.barrier
        %next = arith.divui %s, %c2 : index
        scf.yield %next : index
      }
      %first = arith.cmpi eq, %t, %c0 : index
      scf.if %first {
        %s = memref.load %shm[%c0] : memref<256xf32, #gpu.address_space<workgroup>>
        memref.store %s, %partial[%b] : memref<?xf32>
        %old = memref.atomic_rmw addf %s, %total[%c0] : (f32, memref<1xf32>) -> f32
      }
      gpu.return
    }
  }

  func.func @main() -> i32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %blocks = arith.constant 8 : index
    %threads = arith.constant 256 : index
    %n = arith.constant 2048 : index
    %hx = memref.alloc(%n) : memref<?xf32>
    scf.for %i = %c0 to %n step %c1 {
      %i32 = arith.index_cast %i : index to i32
      %f = arith.sitofp %i32 : i32 to f32
      memref.store %f, %hx[%i] : memref<?xf32>
    }
    %x = gpu.alloc (%n) : memref<?xf32>
    %p = gpu.alloc (%blocks) : memref<?xf32>
    %t = gpu.alloc () : memref<1xf32>
    %zero = arith.constant 0.0 : f32
    gpu.memset %t, %zero : memref<1xf32>, f32
    gpu.memcpy %x, %hx : memref<?xf32>, memref<?xf32>
    gpu.launch_func @kernels::@block_sum blocks in (%blocks, %c1, %c1) threads in (%threads, %c1, %c1)
        args(%x : memref<?xf32>, %p : memref<?xf32>, %t : memref<1xf32>)
    %hp = memref.alloc(%blocks) : memref<?xf32>
    %ht = memref.alloc() : memref<1xf32>
    gpu.memcpy %hp, %p : memref<?xf32>, memref<?xf32>
    gpu.memcpy %ht, %t : memref<1xf32>, memref<1xf32>
    %fb = llvm.mlir.addressof @fmt_block : !llvm.ptr
    scf.for %i = %c0 to %blocks step %c1 {
      %i32 = arith.index_cast %i : index to i32
      %v = memref.load %hp[%i] : memref<?xf32>
      %d = arith.extf %v : f32 to f64
      llvm.call @printf(%fb, %i32, %d) vararg(!llvm.func<i32 (ptr, ...)>) : (!llvm.ptr, i32, f64) -> i32
    }
    %ft = llvm.mlir.addressof @fmt_total : !llvm.ptr
    %tv = memref.load %ht[%c0] : memref<1xf32>
    %td = arith.extf %tv : f32 to f64
    llvm.call @printf(%ft, %td) vararg(!llvm.func<i32 (ptr, ...)>) : (!llvm.ptr, f64) -> i32
    %r = arith.constant 0 : i32
    return %r : i32
  }
}

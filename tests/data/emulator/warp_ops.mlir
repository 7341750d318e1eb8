// Warp operations: gpu.shuffle xor/up/down/idx (full width and width 8 segments), a butterfly sum of the warp
// from xor shuffles, gpu.all_reduce, written per thread and printed for a few lanes.
module attributes {gpu.container_module} {
  llvm.mlir.global internal constant @fmt("t%d: xor=%d up=%d down=%d idx=%d w8=%d valid=%d sub=%d all=%d\0A\00") {addr_space = 0 : i32}
  llvm.func @printf(!llvm.ptr, ...) -> i32

  gpu.module @kernels {
    gpu.func @shuffles(%out: memref<?xi32>) kernel {
      %c9 = arith.constant 9 : index
      %t = gpu.thread_id x
      %ti = arith.index_cast %t : index to i32
      %one = arith.constant 1 : i32
      %two = arith.constant 2 : i32
      %three = arith.constant 3 : i32
      %five = arith.constant 5 : i32
      %w32 = arith.constant 32 : i32
      %w8 = arith.constant 8 : i32
      %v = arith.muli %ti, %three : i32
      %x, %vx = gpu.shuffle xor %v, %one, %w32 : i32
      %u, %vu = gpu.shuffle up %v, %two, %w32 : i32
      %d, %vd = gpu.shuffle down %v, %three, %w32 : i32
      %i, %vi = gpu.shuffle idx %v, %five, %w32 : i32
      %e, %ve = gpu.shuffle down %v, %three, %w8 : i32
      %vei = arith.extui %ve : i1 to i32
      %c16 = arith.constant 16 : i32
      %c4i = arith.constant 4 : i32
      %s1, %q1 = gpu.shuffle xor %ti, %c16, %w32 : i32
      %a1 = arith.addi %ti, %s1 : i32
      %s2, %q2 = gpu.shuffle xor %a1, %w8, %w32 : i32
      %a2 = arith.addi %a1, %s2 : i32
      %s3, %q3 = gpu.shuffle xor %a2, %c4i, %w32 : i32
      %a3 = arith.addi %a2, %s3 : i32
      %s4, %q4 = gpu.shuffle xor %a3, %two, %w32 : i32
      %a4 = arith.addi %a3, %s4 : i32
      %s5, %q5 = gpu.shuffle xor %a4, %one, %w32 : i32
      %sub = arith.addi %a4, %s5 : i32
      %all = gpu.all_reduce add %ti uniform {} : (i32) -> (i32)
      %base = arith.muli %t, %c9 : index
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c3 = arith.constant 3 : index
      %c4 = arith.constant 4 : index
      %c5 = arith.constant 5 : index
      %c6 = arith.constant 6 : index
      %c7 = arith.constant 7 : index
      %c8 = arith.constant 8 : index
      %p0 = arith.addi %base, %c0 : index
      %p1 = arith.addi %base, %c1 : index
      %p2 = arith.addi %base, %c2 : index
      %p3 = arith.addi %base, %c3 : index
      %p4 = arith.addi %base, %c4 : index
      %p5 = arith.addi %base, %c5 : index
      %p6 = arith.addi %base, %c6 : index
      %p7 = arith.addi %base, %c7 : index
      %p8 = arith.addi %base, %c8 : index
      memref.store %ti, %out[%p0] : memref<?xi32>
      memref.store %x, %out[%p1] : memref<?xi32>
      memref.store %u, %out[%p2] : memref<?xi32>
      memref.store %d, %out[%p3] : memref<?xi32>
      memref.store %i, %out[%p4] : memref<?xi32>
      memref.store %e, %out[%p5] : memref<?xi32>
      memref.store %vei, %out[%p6] : memref<?xi32>
      memref.store %sub, %out[%p7] : memref<?xi32>
      memref.store %all, %out[%p8] : memref<?xi32>
      gpu.return
    }
  }

  func.func @main() -> i32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c9 = arith.constant 9 : index
    %threads = arith.constant 64 : index
    %n = arith.constant 576 : index
    %out = gpu.alloc (%n) : memref<?xi32>
    gpu.launch_func @kernels::@shuffles blocks in (%c1, %c1, %c1) threads in (%threads, %c1, %c1)
        args(%out : memref<?xi32>)
    %h = memref.alloc(%n) : memref<?xi32>
    gpu.memcpy %h, %out : memref<?xi32>, memref<?xi32>
    %fmt = llvm.mlir.addressof @fmt : !llvm.ptr
    scf.for %t = %c0 to %threads step %c1 {
      %b = arith.muli %t, %c9 : index
      %v0 = memref.load %h[%b] : memref<?xi32>
      %i1 = arith.addi %b, %c1 : index
      %v1 = memref.load %h[%i1] : memref<?xi32>
      %i2 = arith.addi %i1, %c1 : index
      %v2 = memref.load %h[%i2] : memref<?xi32>
      %i3 = arith.addi %i2, %c1 : index
      %v3 = memref.load %h[%i3] : memref<?xi32>
      %i4 = arith.addi %i3, %c1 : index
      %v4 = memref.load %h[%i4] : memref<?xi32>
      %i5 = arith.addi %i4, %c1 : index
      %v5 = memref.load %h[%i5] : memref<?xi32>
      %i6 = arith.addi %i5, %c1 : index
      %v6 = memref.load %h[%i6] : memref<?xi32>
      %i7 = arith.addi %i6, %c1 : index
      %v7 = memref.load %h[%i7] : memref<?xi32>
      %i8 = arith.addi %i7, %c1 : index
      %v8 = memref.load %h[%i8] : memref<?xi32>
      llvm.call @printf(%fmt, %v0, %v1, %v2, %v3, %v4, %v5, %v6, %v7, %v8) vararg(!llvm.func<i32 (ptr, ...)>) : (!llvm.ptr, i32, i32, i32, i32, i32, i32, i32, i32, i32) -> i32
    }
    %r = arith.constant 0 : i32
    return %r : i32
  }
}

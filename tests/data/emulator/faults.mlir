// Faults the emulator reports as compute-sanitizer does (kernel, block, thread): the kernel chosen by
// environment variable FAULT runs wrongly on purpose.
//   1: thread 5 of block 1 writes one element past the end of a 256-element gpu.alloc buffer
//   2: threads 16.. of each block return before a barrier the others wait at
//   3: thread 3 of block 2 writes 16 KiB past the end of 64 floats of workgroup memory
module attributes {gpu.container_module} {
  llvm.func @atoi(!llvm.ptr) -> i32
  llvm.func @getenv(!llvm.ptr) -> !llvm.ptr
  llvm.mlir.global internal constant @fault("FAULT\00") {addr_space = 0 : i32}

  gpu.module @kernels {
    gpu.func @overrun(%out: memref<?xf32>, %n: index) kernel {
      %t = gpu.thread_id x
      %b = gpu.block_id x
      %c1 = arith.constant 1 : index
      %c5 = arith.constant 5 : index
      %i = gpu.global_id x
      %one = arith.constant 1.0 : f32
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        memref.store %one, %out[%i] : memref<?xf32>
      }
      %isb = arith.cmpi eq, %b, %c1 : index
      %ist = arith.cmpi eq, %t, %c5 : index
      %culprit = arith.andi %isb, %ist : i1
      scf.if %culprit {
        memref.store %one, %out[%n] : memref<?xf32>
      }
      gpu.return
    }
    gpu.func @early_exit(%out: memref<?xf32>)
        workgroup(%shm : memref<64xf32, #gpu.address_space<workgroup>>) kernel {
      %t = gpu.thread_id x
      %c16 = arith.constant 16 : index
      %one = arith.constant 1.0 : f32
      %low = arith.cmpi ult, %t, %c16 : index
      scf.if %low {
        memref.store %one, %shm[%t] : memref<64xf32, #gpu.address_space<workgroup>>
        gpu.barrier
        %v = memref.load %shm[%t] : memref<64xf32, #gpu.address_space<workgroup>>
        memref.store %v, %out[%t] : memref<?xf32>
      }
      gpu.return
    }
    gpu.func @shared_overrun(%out: memref<?xf32>, %far: index)
        workgroup(%shm : memref<64xf32, #gpu.address_space<workgroup>>) kernel {
      %t = gpu.thread_id x
      %b = gpu.block_id x
      %c0 = arith.constant 0 : index
      %c2 = arith.constant 2 : index
      %c3 = arith.constant 3 : index
      %isb = arith.cmpi eq, %b, %c2 : index
      %ist = arith.cmpi eq, %t, %c3 : index
      %culprit = arith.andi %isb, %ist : i1
      %extra = arith.select %culprit, %far, %c0 : index
      %at = arith.addi %t, %extra : index
      %tf = arith.index_cast %t : index to i32
      %v = arith.sitofp %tf : i32 to f32
      memref.store %v, %shm[%at] : memref<64xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %w = memref.load %shm[%t] : memref<64xf32, #gpu.address_space<workgroup>>
      memref.store %w, %out[%t] : memref<?xf32>
      gpu.return
    }
  }

  func.func @main() -> i32 {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c64 = arith.constant 64 : index
    %n = arith.constant 256 : index
    %name = llvm.mlir.addressof @fault : !llvm.ptr
    %value = llvm.call @getenv(%name) : (!llvm.ptr) -> !llvm.ptr
    %which = llvm.call @atoi(%value) : (!llvm.ptr) -> i32
    %out = gpu.alloc (%n) : memref<?xf32>
    %one = arith.constant 1 : i32
    %two = arith.constant 2 : i32
    %is1 = arith.cmpi eq, %which, %one : i32
    %is2 = arith.cmpi eq, %which, %two : i32
    scf.if %is1 {
      gpu.launch_func @kernels::@overrun blocks in (%c4, %c1, %c1) threads in (%c64, %c1, %c1)
          args(%out : memref<?xf32>, %n : index)
    } else {
      scf.if %is2 {
        gpu.launch_func @kernels::@early_exit blocks in (%c4, %c1, %c1) threads in (%c64, %c1, %c1)
            args(%out : memref<?xf32>)
      } else {
        %far = arith.constant 4096 : index
        gpu.launch_func @kernels::@shared_overrun blocks in (%c4, %c1, %c1) threads in (%c64, %c1, %c1)
            args(%out : memref<?xf32>, %far : index)
      }
    }
    %r = arith.constant 0 : i32
    return %r : i32
  }
}

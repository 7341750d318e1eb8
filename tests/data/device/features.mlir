// Device features the serializer must handle, for every target (issue 3, item 7).
module attributes {gpu.container_module} {
  gpu.module @math_kernels {
    // arith and math: sqrt, exp, log, sin, pow, fma, tanh; static-shape memrefs.
    gpu.func @math_ops(%in: memref<256xf32>, %out: memref<256xf32>) kernel {
      %i = gpu.global_id x
      %x = memref.load %in[%i] : memref<256xf32>
      %s = math.sqrt %x : f32
      %e = math.exp %s : f32
      %l = math.log %e : f32
      %n = math.sin %l : f32
      %p = math.powf %n, %x : f32
      %f = math.fma %p, %x, %s : f32
      %t = math.tanh %f : f32
      %c2 = arith.constant 2.0 : f32
      %r = arith.mulf %t, %c2 : f32
      memref.store %r, %out[%i] : memref<256xf32>
      gpu.return
    }
    // scf loop over a dynamic-shape memref.
    gpu.func @row_sum(%m: memref<?x?xf32>, %out: memref<?xf32>) kernel {
      %row = gpu.global_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %cols = memref.dim %m, %c1 : memref<?x?xf32>
      %zero = arith.constant 0.0 : f32
      %sum = scf.for %j = %c0 to %cols step %c1 iter_args(%acc = %zero) -> (f32) {
        %v = memref.load %m[%row, %j] : memref<?x?xf32>
        %a = arith.addf %acc, %v : f32
        scf.yield %a : f32
      }
      memref.store %sum, %out[%row] : memref<?xf32>
      gpu.return
    }
    // Workgroup memory attribution with gpu.barrier.
    gpu.func @reverse_block(%data: memref<?xf32>) workgroup(%tile: memref<128xf32, #gpu.address_space<workgroup>>) kernel {
      %t = gpu.thread_id x
      %g = gpu.global_id x
      %v = memref.load %data[%g] : memref<?xf32>
      memref.store %v, %tile[%t] : memref<128xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %c127 = arith.constant 127 : index
      %rt = arith.subi %c127, %t : index
      %w = memref.load %tile[%rt] : memref<128xf32, #gpu.address_space<workgroup>>
      memref.store %w, %data[%g] : memref<?xf32>
      gpu.return
    }
    // Dynamic shared memory.
    gpu.func @dyn_shared(%data: memref<?xf32>) kernel {
      %t = gpu.thread_id x
      %shm = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %c0 = arith.constant 0 : index
      %n = arith.constant 64 : index
      %view = memref.view %shm[%c0][%n] : memref<?xi8, #gpu.address_space<workgroup>> to memref<?xf32, #gpu.address_space<workgroup>>
      %v = memref.load %data[%t] : memref<?xf32>
      memref.store %v, %view[%t] : memref<?xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %w = memref.load %view[%c0] : memref<?xf32, #gpu.address_space<workgroup>>
      memref.store %w, %data[%t] : memref<?xf32>
      gpu.return
    }
    // gpu.all_reduce and gpu.shuffle.
    gpu.func @reduce_shuffle(%data: memref<?xf32>, %out: memref<?xf32>) kernel {
      %t = gpu.thread_id x
      %v = memref.load %data[%t] : memref<?xf32>
      %sum = gpu.all_reduce add %v uniform {} : (f32) -> f32
      %c1 = arith.constant 1 : i32
      %c32 = arith.constant 32 : i32
      %sh, %ok = gpu.shuffle xor %v, %c1, %c32 : f32
      %r = arith.addf %sum, %sh : f32
      memref.store %r, %out[%t] : memref<?xf32>
      gpu.return
    }
    // gpu.printf.
    gpu.func @hello(%x: f32) kernel {
      %t = gpu.thread_id x
      gpu.printf "thread %lld value %f\n", %t, %x : index, f32
      gpu.return
    }
  }
  // A second gpu.module: linked into the same image per target (RDC model).
  gpu.module @second_module {
    memref.global @device_counter : memref<4xi32> = dense<0>
    gpu.func @scale(%data: memref<?xf32>, %k: f32) kernel {
      %i = gpu.global_id x
      %v = memref.load %data[%i] : memref<?xf32>
      %r = arith.mulf %v, %k : f32
      memref.store %r, %data[%i] : memref<?xf32>
      %c = memref.get_global @device_counter : memref<4xi32>
      %c0 = arith.constant 0 : index
      %one = arith.constant 1 : i32
      %old = memref.atomic_rmw addi %one, %c[%c0] : (i32, memref<4xi32>) -> i32
      gpu.return
    }
  }
  // A gpu.launch in host code: outlined into its own gpu.module.
  func.func @host(%a: memref<?xf32>) {
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
      %v = memref.load %a[%tx] : memref<?xf32>
      %r = math.exp %v : f32
      memref.store %r, %a[%tx] : memref<?xf32>
      gpu.terminator
    }
    return
  }
}

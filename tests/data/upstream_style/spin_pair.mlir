// Two independent async chains: @waiter spins until @signal sets the flag. On one stream, or with the
// second chain ordered after the first, the waiter never returns; on independent streams both finish (on a
// GPU with CUDA_MODULE_LOADING=EAGER: lazy loading makes @signal's first launch wait for @waiter, a hang on an H100).
module attributes {gpu.container_module} {
  llvm.mlir.global internal constant @seen_format("seen %d\0A\00") {addr_space = 0 : i32}
  llvm.func @printf(!llvm.ptr, ...) -> i32

  gpu.module @handshake {
    gpu.func @waiter(%flag: memref<1xi32>, %seen: memref<1xi32>) kernel {
      %c0 = arith.constant 0 : index
      %zero = arith.constant 0 : i32
      %value = scf.while (%unused = %zero) : (i32) -> i32 {
        // An atomic add of 0 reads the flag from memory on every iteration.
        %now = memref.atomic_rmw addi %zero, %flag[%c0] : (i32, memref<1xi32>) -> i32
        %unset = arith.cmpi eq, %now, %zero : i32
        scf.condition(%unset) %now : i32
      } do {
      ^bb0(%now: i32):
        scf.yield %now : i32
      }
      memref.store %value, %seen[%c0] : memref<1xi32>
      gpu.return
    }
    gpu.func @signal(%flag: memref<1xi32>, %value: i32) kernel {
      %c0 = arith.constant 0 : index
      %old = memref.atomic_rmw assign %value, %flag[%c0] : (i32, memref<1xi32>) -> i32
      gpu.return
    }
  }

  func.func @main() -> i32 {
    %c1 = arith.constant 1 : index
    %c0 = arith.constant 0 : index
    %seven = arith.constant 7 : i32
    %zero_i32 = arith.constant 0 : i32
    %host = memref.alloc() : memref<1xi32>
    %setup = gpu.wait async
    %flag, %t1 = gpu.alloc async [%setup] () : memref<1xi32>
    %seen, %t2 = gpu.alloc async [%t1] () : memref<1xi32>
    %t3 = gpu.memset async [%t2] %flag, %zero_i32 : memref<1xi32>, i32
    gpu.wait [%t3]
    %first = gpu.wait async
    %second = gpu.wait async
    %spun = gpu.launch_func async [%first] @handshake::@waiter blocks in (%c1, %c1, %c1)
        threads in (%c1, %c1, %c1) args(%flag : memref<1xi32>, %seen : memref<1xi32>)
    %set = gpu.launch_func async [%second] @handshake::@signal blocks in (%c1, %c1, %c1)
        threads in (%c1, %c1, %c1) args(%flag : memref<1xi32>, %seven : i32)
    %back = gpu.memcpy async [%spun] %host, %seen : memref<1xi32>, memref<1xi32>
    gpu.wait [%back, %set]
    %got = memref.load %host[%c0] : memref<1xi32>
    %format = llvm.mlir.addressof @seen_format : !llvm.ptr
    llvm.call @printf(%format, %got) vararg(!llvm.func<i32 (ptr, ...)>) : (!llvm.ptr, i32) -> i32
    memref.dealloc %host : memref<1xi32>
    %status = arith.constant 0 : i32
    return %status : i32
  }
}

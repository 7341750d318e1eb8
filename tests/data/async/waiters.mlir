// Bodies that wait for a token the host makes available later (async.runtime ops): they are queued
// and resumed, in the order they were queued, when it becomes available.
module attributes {gpu.container_module} {
  gpu.module @idle {
    gpu.func @nothing() kernel { gpu.return }
  }
  func.func private @printI64(i64)
  func.func private @printNewline()
  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %log = memref.alloc() : memref<3xi64>
    %gate = async.runtime.create : !async.token
    %one = arith.constant 1 : i64
    %two = arith.constant 2 : i64
    %c2 = arith.constant 2 : index
    %five = arith.constant 5 : i64
    memref.store %five, %log[%c0] : memref<3xi64>
    %first = async.execute [%gate] {
      memref.store %one, %log[%c0] : memref<3xi64>
      async.yield
    }
    %second = async.execute [%gate, %first] {
      %seen = memref.load %log[%c0] : memref<3xi64>
      %x = arith.addi %seen, %two : i64
      memref.store %x, %log[%c1] : memref<3xi64>
      async.yield
    }
    %nine = arith.constant 9 : i64
    memref.store %nine, %log[%c2] : memref<3xi64>
    %before = memref.load %log[%c0] : memref<3xi64>
    call @printI64(%before) : (i64) -> ()
    call @printNewline() : () -> ()
    async.runtime.set_available %gate : !async.token
    async.await %second : !async.token
    %a = memref.load %log[%c0] : memref<3xi64>
    %b = memref.load %log[%c1] : memref<3xi64>
    %c = memref.load %log[%c2] : memref<3xi64>
    call @printI64(%a) : (i64) -> ()
    call @printNewline() : () -> ()
    call @printI64(%b) : (i64) -> ()
    call @printNewline() : () -> ()
    call @printI64(%c) : (i64) -> ()
    call @printNewline() : () -> ()
    return
  }
}

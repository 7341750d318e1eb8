// A group of executes made in a loop, each writing its own slot; the sum after await_all.
module attributes {gpu.container_module} {
  gpu.module @idle {
    gpu.func @nothing() kernel { gpu.return }
  }
  func.func private @printMemrefI64(memref<*xi64>)
  func.func private @printI64(i64)
  func.func private @printNewline()
  func.func @main() {
    %c0 = arith.constant 0 : index
    %c0_i64 = arith.constant 0 : i64
    %c1 = arith.constant 1 : index
    %n = arith.constant 6 : index
    %slots = memref.alloc() : memref<6xi64>
    %group = async.create_group %n : !async.group
    scf.for %i = %c0 to %n step %c1 {
      %token = async.execute {
        %ii = arith.index_cast %i : index to i64
        %sq = arith.muli %ii, %ii : i64
        %one = arith.constant 1 : i64
        %v = arith.addi %sq, %one : i64
        memref.store %v, %slots[%i] : memref<6xi64>
        async.yield
      }
      %rank = async.add_to_group %token, %group : !async.token
      %r = arith.index_cast %rank : index to i64
      func.call @printI64(%r) : (i64) -> ()
      func.call @printNewline() : () -> ()
    }
    async.await_all %group
    %u = memref.cast %slots : memref<6xi64> to memref<*xi64>
    call @printMemrefI64(%u) : (memref<*xi64>) -> ()
    // A group awaited inside an execute, then an empty group.
    %group2 = async.create_group %c1 : !async.group
    %first = async.execute {
      memref.store %c0_i64, %slots[%c0] : memref<6xi64>
      async.yield
    }
    %rank2 = async.add_to_group %first, %group2 : !async.token
    %after = async.execute {
      async.await_all %group2
      %seven = arith.constant 7 : i64
      memref.store %seven, %slots[%c1] : memref<6xi64>
      async.yield
    }
    async.await %after : !async.token
    %empty = async.create_group %c0 : !async.group
    async.await_all %empty
    call @printMemrefI64(%u) : (memref<*xi64>) -> ()
    memref.dealloc %slots : memref<6xi64>
    return
  }
}

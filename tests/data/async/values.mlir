// Values and tokens through a fork and a join; bodies print in the order their dependencies force.
module attributes {gpu.container_module} {
  gpu.module @idle {
    gpu.func @nothing() kernel { gpu.return }
  }
  func.func private @printI64(i64)
  func.func private @printF64(f64)
  func.func private @printNewline()
  func.func @show(%label: i64, %x: i64) {
    call @printI64(%label) : (i64) -> ()
    call @printNewline() : () -> ()
    call @printI64(%x) : (i64) -> ()
    call @printNewline() : () -> ()
    return
  }
  func.func @main() {
    %c3 = arith.constant 3 : i64
    %c10 = arith.constant 10 : i64
    %l1 = arith.constant 1 : i64
    %l2 = arith.constant 2 : i64
    %l3 = arith.constant 3 : i64
    %l4 = arith.constant 4 : i64
    // a = 3 * 10
    %ta, %a = async.execute () -> !async.value<i64> {
      %p = arith.muli %c3, %c10 : i64
      func.call @show(%l1, %p) : (i64, i64) -> ()
      async.yield %p : i64
    }
    // b = a + 1 and c = a * a, both after a (fork)
    %tb, %b = async.execute [%ta] (%a as %x : !async.value<i64>) -> !async.value<i64> {
      %q = arith.addi %x, %l1 : i64
      async.yield %q : i64
    }
    %tc, %c = async.execute (%a as %x : !async.value<i64>) -> !async.value<f64> {
      %sq = arith.muli %x, %x : i64
      %f = arith.sitofp %sq : i64 to f64
      %h = arith.constant 0.5 : f64
      %r = arith.mulf %f, %h : f64
      async.yield %r : f64
    }
    // d = b + int(c), awaiting both inside the body (join)
    %td, %d = async.execute -> !async.value<i64> {
      %bv = async.await %b : !async.value<i64>
      %cv = async.await %c : !async.value<f64>
      %ci = arith.fptosi %cv : f64 to i64
      %s = arith.addi %bv, %ci : i64
      func.call @show(%l3, %s) : (i64, i64) -> ()
      async.yield %s : i64
    }
    %dv = async.await %d : !async.value<i64>
    call @show(%l4, %dv) : (i64, i64) -> ()
    %cv = async.await %c : !async.value<f64>
    call @printF64(%cv) : (f64) -> ()
    call @printNewline() : () -> ()
    async.await %tb : !async.token
    return
  }
}

// gpu.shuffle xor/up/down/idx with widths 32 and 16 in blocks of 32 threads: v = 3*lane + 1 + 1000*block.
// A lane keeps a result only where the op defines one (valid, and the lane among the first `width`),
// else -1. Block 0's five rows are printed; block 1 must hold block 0's values plus 1000.
// On gfx90a, MLIR 22's ROCDL lowering of `up` compares the source lane as signed: lanes below the
// offset report valid and read an undefined lane (ds.bpermute of a negative lane), so only lanes >= 3
// of that row are checked there.
// ARCHS: sm_80 gfx90a
// WRONG: the up shuffle reads 2 lanes back instead of 3
// WRONG-FROM: gpu.shuffle up %v, %c3, %w32 : i32
// WRONG-TO: gpu.shuffle up %v, %c2, %w32 : i32
// CHECK: [16,  13,  22,  19,  4,  1,  10,  7,  40,  37,  46,  43,  28,  25,  34,  31,  64,  61,  70,  67,  52,  49,  58,  55,  88,  85,  94,  91,  76,  73,  82,  79]
// SM80: [-1,  -1,  -1,  1,  4,  7,  10,  13,  16,  19,  22,  25,  28,  31,  34,  37,  40,  43,  46,  49,  52,  55,  58,  61,  64,  67,  70,  73,  76,  79,  82,  85]
// GFX90A: [{{-?[0-9]+}},  {{-?[0-9]+}},  {{-?[0-9]+}},  1,  4,  7,  10,  13,  16,  19,  22,  25,  28,  31,  34,  37,  40,  43,  46,  49,  52,  55,  58,  61,  64,  67,  70,  73,  76,  79,  82,  85]
// CHECK: [13,  16,  19,  22,  25,  28,  31,  34,  37,  40,  43,  46,  -1,  -1,  -1,  -1,  -1,  -1,  -1,  -1,  -1,  -1,  -1,  -1,  -1,  -1,  -1,  -1,  -1,  -1,  -1,  -1]
// CHECK: [22,  22,  22,  22,  22,  22,  22,  22,  22,  22,  22,  22,  22,  22,  22,  22,  -1,  -1,  -1,  -1,  -1,  -1,  -1,  -1,  -1,  -1,  -1,  -1,  -1,  -1,  -1,  -1]
// CHECK: [4,  1,  10,  7,  16,  13,  22,  19,  28,  25,  34,  31,  40,  37,  46,  43,  -1,  -1,  -1,  -1,  -1,  -1,  -1,  -1,  -1,  -1,  -1,  -1,  -1,  -1,  -1,  -1]
// CHECK: block 1 differences: 0
module attributes {gpu.container_module} {
  gpu.module @k {
    func.func @keep(%r: i32, %ok: i1, %lane: i32, %width: i32, %out: memref<?xi32>, %at: index) {
      %inside = arith.cmpi ult, %lane, %width : i32
      %both = arith.andi %ok, %inside : i1
      %none = arith.constant -1 : i32
      %v = arith.select %both, %r, %none : i32
      memref.store %v, %out[%at] : memref<?xi32>
      return
    }
    gpu.func @shuffles(%out: memref<?xi32>) kernel {
      %c5i = arith.constant 5 : index
      %c32i = arith.constant 32 : index
      %tid = gpu.thread_id x
      %bid = gpu.block_id x
      %lane = arith.index_cast %tid : index to i32
      %block = arith.index_cast %bid : index to i32
      %c1 = arith.constant 1 : i32
      %c2 = arith.constant 2 : i32
      %c3 = arith.constant 3 : i32
      %c4 = arith.constant 4 : i32
      %c5 = arith.constant 5 : i32
      %c7 = arith.constant 7 : i32
      %c1000 = arith.constant 1000 : i32
      %w32 = arith.constant 32 : i32
      %w16 = arith.constant 16 : i32
      %l3 = arith.muli %lane, %c3 : i32
      %l31 = arith.addi %l3, %c1 : i32
      %b1000 = arith.muli %block, %c1000 : i32
      %v = arith.addi %l31, %b1000 : i32
      %r0, %ok0 = gpu.shuffle xor %v, %c5, %w32 : i32
      %r1, %ok1 = gpu.shuffle up %v, %c3, %w32 : i32
      %r2, %ok2 = gpu.shuffle down %v, %c4, %w16 : i32
      %r3, %ok3 = gpu.shuffle idx %v, %c7, %w16 : i32
      %r4, %ok4 = gpu.shuffle xor %v, %c1, %w16 : i32
      %row0 = arith.muli %bid, %c5i : index
      %base0 = arith.muli %row0, %c32i : index
      %at0 = arith.addi %base0, %tid : index
      %at1 = arith.addi %at0, %c32i : index
      %at2 = arith.addi %at1, %c32i : index
      %at3 = arith.addi %at2, %c32i : index
      %at4 = arith.addi %at3, %c32i : index
      func.call @keep(%r0, %ok0, %lane, %w32, %out, %at0) : (i32, i1, i32, i32, memref<?xi32>, index) -> ()
      func.call @keep(%r1, %ok1, %lane, %w32, %out, %at1) : (i32, i1, i32, i32, memref<?xi32>, index) -> ()
      func.call @keep(%r2, %ok2, %lane, %w16, %out, %at2) : (i32, i1, i32, i32, memref<?xi32>, index) -> ()
      func.call @keep(%r3, %ok3, %lane, %w16, %out, %at3) : (i32, i1, i32, i32, memref<?xi32>, index) -> ()
      func.call @keep(%r4, %ok4, %lane, %w16, %out, %at4) : (i32, i1, i32, i32, memref<?xi32>, index) -> ()
      gpu.return
    }
  }
  func.func private @printMemrefI32(memref<*xi32>)
  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c5 = arith.constant 5 : index
    %c32 = arith.constant 32 : index
    %c160 = arith.constant 160 : index
    %n = arith.constant 320 : index
    %h = memref.alloc(%n) : memref<?xi32>
    %d = gpu.alloc(%n) : memref<?xi32>
    gpu.launch_func @k::@shuffles blocks in (%c2, %c1, %c1) threads in (%c32, %c1, %c1) args(%d : memref<?xi32>)
    gpu.memcpy %h, %d : memref<?xi32>, memref<?xi32>
    scf.for %r = %c0 to %c5 step %c1 {
      %at = arith.muli %r, %c32 : index
      %row = memref.subview %h[%at] [32] [1] : memref<?xi32> to memref<32xi32, strided<[1], offset: ?>>
      %u = memref.cast %row : memref<32xi32, strided<[1], offset: ?>> to memref<*xi32>
      func.call @printMemrefI32(%u) : (memref<*xi32>) -> ()
    }
    %none = arith.constant -1 : i32
    %k1000 = arith.constant 1000 : i32
    %diff = scf.for %i = %c0 to %c160 step %c1 iter_args(%count = %c0) -> (index) {
      %a = memref.load %h[%i] : memref<?xi32>
      %j = arith.addi %i, %c160 : index
      %b = memref.load %h[%j] : memref<?xi32>
      %isnone = arith.cmpi eq, %a, %none : i32
      %plus = arith.addi %a, %k1000 : i32
      %want = arith.select %isnone, %none, %plus : i32
      %same = arith.cmpi eq, %b, %want : i32
      %next = arith.addi %count, %c1 : index
      %c = arith.select %same, %count, %next : index
      scf.yield %c : index
    }
    vector.print str "block 1 differences: "
    %dd = arith.index_cast %diff : index to i64
    vector.print %dd : i64
    gpu.dealloc %d : memref<?xi32>
    memref.dealloc %h : memref<?xi32>
    return
  }
}

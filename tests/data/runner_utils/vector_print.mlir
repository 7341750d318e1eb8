// vector.print of scalars and vectors of each element type, punctuation options and strings.
module attributes {gpu.container_module} {
  gpu.module @idle {
    gpu.func @nothing() kernel { gpu.return }
  }
  func.func @main() {
    %f = arith.constant -0.0 : f32
    vector.print %f : f32
    %d = arith.constant 6.02214076e23 : f64
    vector.print %d : f64
    %nan = arith.constant 0xFFF8000000000000 : f64
    vector.print %nan : f64
    %i = arith.constant -17 : i32
    vector.print %i : i32
    %u = arith.constant -56 : i8
    vector.print %u : i8
    %b = arith.constant true
    vector.print %b : i1
    %x = arith.constant 12345 : index
    vector.print %x : index
    %big = arith.constant -1 : i64
    vector.print %big : i64
    %h = arith.constant 0.333 : f16
    vector.print %h : f16
    %bh = arith.constant -2.5 : bf16
    vector.print %bh : bf16
    %v1 = arith.constant dense<[0.5, 0x7F800000, 0xFF800000, 1.0e-10]> : vector<4xf32>
    vector.print %v1 : vector<4xf32>
    %v2 = arith.constant dense<[[1, 2, 3], [-4, -5, -6]]> : vector<2x3xi8>
    vector.print %v2 : vector<2x3xi8>
    %v3 = arith.constant dense<[[[true, false]], [[false, true]]]> : vector<2x1x2xi1>
    vector.print %v3 : vector<2x1x2xi1>
    %v4 = arith.constant dense<[1.5, -2.25]> : vector<2xf64>
    vector.print %v4 : vector<2xf64> punctuation <no_punctuation>
    vector.print punctuation <comma>
    vector.print %v4 : vector<2xf64> punctuation <no_punctuation>
    vector.print punctuation <newline>
    vector.print punctuation <open>
    vector.print punctuation <close>
    vector.print punctuation <newline>
    %v5 = arith.constant dense<[7, 8]> : vector<2xindex>
    vector.print %v5 : vector<2xindex>
    %v6 = arith.constant dense<[1.0, 0.1]> : vector<2xf16>
    vector.print %v6 : vector<2xf16>
    vector.print str "a string: 100%\n"
    %s = arith.constant dense<3.0> : vector<f32>
    vector.print %s : vector<f32>
    return
  }
}

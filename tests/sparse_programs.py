"""The sparsifier's GPU pipelines and a program reading a sparse tensor from a file, shared by the tests of
the sparsifier's paths (tests/unit/mlir/test_sparsifier_gpu_paths.py) and of the sparse tensor runtime
requirement (tests/builds/test_sparse_tensor_runtime_tools.py)."""

from __future__ import annotations

from pathlib import Path

TRIPLE = "gpu-triple=nvptx64-nvidia-cuda gpu-chip=sm_80"
LIBGEN = f"builtin.module(sparsifier{{enable-runtime-library=%s enable-gpu-libgen {TRIPLE}}})"
READS_A_FILE = """!Filename = !llvm.ptr
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
module {
  func.func private @getTensorFilename(index) -> (!Filename)
  func.func @matvec(%a: tensor<?x?xf32, #CSR>, %x: tensor<?xf32>, %y: tensor<?xf32>) -> tensor<?xf32> {
    %r = linalg.matvec ins(%a, %x : tensor<?x?xf32, #CSR>, tensor<?xf32>) outs(%y : tensor<?xf32>) -> tensor<?xf32>
    return %r : tensor<?xf32>
  }
  func.func @main() {
    %c0 = arith.constant 0 : index
    %f0 = arith.constant 0.0 : f32
    %name = call @getTensorFilename(%c0) : (index) -> (!Filename)
    %a = sparse_tensor.new %name : !Filename to tensor<?x?xf32, #CSR>
    %xs = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
    %x = tensor.cast %xs : tensor<4xf32> to tensor<?xf32>
    %ys = arith.constant dense<0.0> : tensor<3xf32>
    %y = tensor.cast %ys : tensor<3xf32> to tensor<?xf32>
    %r = call @matvec(%a, %x, %y) : (tensor<?x?xf32, #CSR>, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
    %v = vector.transfer_read %r[%c0], %f0 : tensor<?xf32>, vector<3xf32>
    vector.print %v : vector<3xf32>
    return
  }
}
"""
# (row, column, value), one-based as Matrix Market writes them
ENTRIES = [(1, 1, 1.5), (1, 4, -2.0), (2, 2, 3.0), (3, 1, 4.0), (3, 3, 0.25)]
MLIR_C_RUNNER_UTILS = sorted(Path("/usr/lib/llvm-22/lib").glob("libmlir_c_runner_utils.so*"))  # libmlir-22

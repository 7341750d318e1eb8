"""Memref elements narrower than a byte (i1, i4): MLIR 22's memref-to-LLVM lowering asserts on their
loads and stores (an assertions build of MLIR, as the Python bindings are, dies of SIGABRT), so
mlir-offload accesses them a byte at a time (offload/mlir/byte_elements.py), on the device and on the
host. tests/data/emulate/predicates.mlir checks the numbers under emulation."""

from __future__ import annotations

import pytest

from conftest import run_cli

PROGRAM = """module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @flags(%bits: memref<?xi1>, %nibbles: memref<8xi4>, %grid: memref<4x4xi1>) kernel {
      %t = gpu.thread_id x
      %c3 = arith.constant 3 : index
      %ti = arith.index_cast %t : index to i32
      %odd = arith.trunci %ti : i32 to i1
      memref.store %odd, %bits[%t] : memref<?xi1>
      %back = memref.load %bits[%t] : memref<?xi1>
      %n = arith.trunci %ti : i32 to i4
      memref.store %n, %nibbles[%t] : memref<8xi4>
      affine.store %back, %grid[%t mod 4, %t floordiv 4] : memref<4x4xi1>
      %g = affine.load %grid[0, 0] : memref<4x4xi1>
      memref.store %g, %bits[%c3] : memref<?xi1>
      gpu.return
    }
  }
  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %true = arith.constant true
    %bits = gpu.alloc(%c16) : memref<?xi1>
    %nibbles = gpu.alloc() : memref<8xi4>
    %grid = gpu.alloc() : memref<4x4xi1>
    gpu.launch_func @k::@flags blocks in (%c1, %c1, %c1) threads in (%c16, %c1, %c1)
        args(%bits : memref<?xi1>, %nibbles : memref<8xi4>, %grid : memref<4x4xi1>)
    %host = memref.alloc() : memref<2x3xi1>
    affine.store %true, %host[1, 2] : memref<2x3xi1>
    %v = memref.load %host[%c1, %c0] : memref<2x3xi1>
    vector.print %v : i1
    return
  }
}
"""


@pytest.mark.parametrize("arch", ["sm_80", "gfx90a"])
def test_narrow_element_loads_and_stores_compile(tmp_path, arch):
    source = tmp_path / "narrow.mlir"
    source.write_text(PROGRAM)
    done = run_cli("compile", str(source), "--offload-arch", arch, "-o", str(tmp_path / "narrow.bc"))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "narrow.bc").stat().st_size > 0

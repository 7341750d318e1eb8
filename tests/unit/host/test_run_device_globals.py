"""Device globals: each gets an offload entry with its size, is registered by the runtime under its name,
and is a symbol of every arch's device image (clang 22 bitcode bundle and clang 19 object bundle)."""

from __future__ import annotations

import pytest

from conftest import REPO, require_tool, run_cli
from offload.toolchain.executable import read_executable

EXAMPLE = REPO / "examples" / "device_globals.mlir"


@pytest.mark.parametrize("clang,suffix", [(22, "bc"), (19, "o")])
def test_device_globals_are_registered_with_their_sizes(tmp_path, fake_cuda, clang, suffix):
    require_tool(f"clang-{clang}", clang)
    bundle, app = tmp_path / f"globals.offload.{suffix}", tmp_path / "globals"
    done = run_cli(
        "compile", str(EXAMPLE), "--offload-arch", "sm_80,sm_90", "--target-clang", str(clang), "-o", str(bundle)
    )
    assert done.returncode == 0, done.stderr
    done = run_cli("link", str(bundle), "-o", str(app))
    assert done.returncode == 0, done.stderr
    verified = run_cli("verify", str(app))
    assert verified.returncode == 0, verified.stdout + verified.stderr

    result = fake_cuda.run(app)
    assert result.returncode == 0, result.stderr
    # Defined here, so never extern; `memref.global constant` is an LLVM constant in the global address space.
    registered = {(v["name"], v["size"], v["constant"], v["extern"]) for v in result.variables_registered()}
    assert registered == {("table", 64, 0, 0), ("coeffs", 16, 0, 0)}
    assert result.kernels_registered() == ["lookup"]
    assert [launch["block"] for launch in result.launches()] == [[16, 1, 1]]
    images = [image for section in read_executable(str(app)).device_sections.values() for image in section]
    assert sorted(image.arch for image in images) == ["sm_80", "sm_90"]
    for image in images:
        assert image.kernels() == {"lookup"}
        assert {"lookup", "table", "coeffs"} <= image.symbols()


CONSTANT_SPACE = """\
// A global in the constant address space (CUDA's __constant__), read by the kernel beside a mutable one.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    memref.global "public" @table : memref<16xf32> = dense<0.0>
    llvm.mlir.global external constant @weights(dense<[0.5, 1.5, 2.5, 3.5]> : tensor<4xf32>)
        {addr_space = 4 : i32} : !llvm.array<4 x f32>
    gpu.func @weigh(%out: memref<?xf32>) kernel {
      %i = gpu.thread_id x
      %p = llvm.mlir.addressof @weights : !llvm.ptr<4>
      %ix = arith.index_cast %i : index to i64
      %e = llvm.getelementptr %p[0, %ix] : (!llvm.ptr<4>, i64) -> !llvm.ptr<4>, !llvm.array<4 x f32>
      %w = llvm.load %e : !llvm.ptr<4> -> f32
      %t = memref.get_global @table : memref<16xf32>
      %v = memref.load %t[%i] : memref<16xf32>
      %s = arith.addf %v, %w : f32
      memref.store %s, %out[%i] : memref<?xf32>
      gpu.return
    }
  }
  func.func @main() -> i32 {
    %c1 = arith.constant 1 : index
    %n = arith.constant 4 : index
    %out = gpu.alloc (%n) : memref<?xf32>
    gpu.launch_func @kernels::@weigh blocks in (%c1, %c1, %c1) threads in (%n, %c1, %c1) args(%out : memref<?xf32>)
    gpu.dealloc %out : memref<?xf32>
    %zero = arith.constant 0 : i32
    return %zero : i32
  }
}
"""


@pytest.mark.parametrize("clang,suffix", [(22, "bc"), (19, "o")])
def test_a_constant_address_space_global_is_registered_as_constant(tmp_path, fake_cuda, clang, suffix):
    """Its entry carries the constant flag (the runtime's `constant` argument), and no global is extern."""
    require_tool(f"clang-{clang}", clang)
    source, bundle, app = tmp_path / "weights.mlir", tmp_path / f"weights.offload.{suffix}", tmp_path / "weights"
    source.write_text(CONSTANT_SPACE)
    done = run_cli("compile", str(source), "--offload-arch", "sm_80", "--target-clang", str(clang), "-o", str(bundle))
    assert done.returncode == 0, done.stderr
    done = run_cli("link", str(bundle), "-o", str(app))
    assert done.returncode == 0, done.stderr
    result = fake_cuda.run(app)
    assert result.returncode == 0, result.stderr
    registered = {(v["name"], v["size"], v["constant"], v["extern"]) for v in result.variables_registered()}
    assert registered == {("table", 64, 0, 0), ("weights", 16, 1, 0)}
    assert [launch["kernel"] for launch in result.launches()] == ["weigh"]

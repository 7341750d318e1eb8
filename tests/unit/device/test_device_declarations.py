"""A device function declared in a gpu.module (`func.func private @scale(f32) -> f32`) keeps its name,
so a --link-bitcode library (or CUDA device code linked with it) that defines `scale` resolves it; the
GPU conversions would otherwise call `_mlir_ciface_scale`, which nothing defines."""

from __future__ import annotations

import os

import pytest

from conftest import cuda_rdc_object, require_tool, run_cli
from offload.errors import OffloadError

PROGRAM = """\
module attributes {gpu.container_module} {
  gpu.module @kernels {
    func.func private @scale(f32) -> f32
    gpu.func @apply(%buf: memref<16xf32>) kernel {
      %i = gpu.thread_id x
      %v = memref.load %buf[%i] : memref<16xf32>
      %s = func.call @scale(%v) : (f32) -> f32
      memref.store %s, %buf[%i] : memref<16xf32>
      gpu.return
    }
  }
  func.func @main() {
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %m = gpu.alloc () : memref<16xf32>
    gpu.launch_func @kernels::@apply blocks in (%c1, %c1, %c1) threads in (%c16, %c1, %c1) args(%m : memref<16xf32>)
    return
  }
}
"""
TRIPLES = {"sm_80": "nvptx64-nvidia-cuda", "gfx90a": "amdgcn-amd-amdhsa"}


def scale_library(path, triple: str, factor: float = 3.0):
    """A device bitcode library defining `float scale(float x) { return x * factor; }`."""
    import llvmlite.binding as llvm
    import llvmlite.ir as ll

    module = ll.Module(name="scale_library")
    module.triple = triple
    function = ll.Function(module, ll.FunctionType(ll.FloatType(), [ll.FloatType()]), name="scale")
    builder = ll.IRBuilder(function.append_basic_block())
    builder.ret(builder.fmul(function.args[0], ll.Constant(ll.FloatType(), factor)))
    path.write_bytes(llvm.parse_assembly(str(module)).as_bitcode())
    return path


@pytest.mark.parametrize("arch", ["sm_80", "gfx90a"])
def test_declared_function_keeps_its_name_and_resolves_from_a_library(tmp_path, arch):
    if arch.startswith("gfx"):
        from offload.device.libraries import find_rocm_device_libs

        try:
            find_rocm_device_libs(None)
        except OffloadError as error:  # in CI a missing toolchain fails, as require_tool does
            (pytest.fail if os.environ.get("CI") else pytest.skip)(error.message)
    program = tmp_path / "decl.mlir"
    program.write_text(PROGRAM)
    done = run_cli(
        "device", str(program), "--offload-arch", arch, "--emit", "ll", "-O", "0", "-o", str(tmp_path / "noop")
    )
    assert done.returncode == 1
    assert "unresolved device function 'scale' called from kernel 'apply'" in done.stderr, done.stderr
    library = scale_library(tmp_path / "scale.bc", TRIPLES[arch], 7.0)
    done = run_cli(
        "device",
        str(program),
        "--offload-arch",
        arch,
        "--link-bitcode",
        str(library),
        "--emit",
        "ll",
        "-o",
        str(tmp_path / "out"),
    )
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "out" / f"decl.{arch}.ll").read_text()
    assert "_mlir_ciface_" not in text
    assert "7.000000e+00" in text  # the library's body, linked and inlined


def test_declared_function_links_from_bitcode_library(tmp_path):
    require_tool("clang-22", 22)
    require_tool("ptxas")
    program = tmp_path / "decl.mlir"
    program.write_text(PROGRAM)
    library = scale_library(tmp_path / "scale.bc", TRIPLES["sm_80"])
    bundle = tmp_path / "decl.offload.bc"
    done = run_cli(
        "compile", str(program), "--offload-arch", "sm_80", "--link-bitcode", str(library), "-o", str(bundle)
    )
    assert done.returncode == 0, done.stderr
    done = run_cli("link", str(bundle), "-o", str(tmp_path / "app"))
    assert done.returncode == 0, done.stderr


CUDA_SCALE = 'extern "C" __attribute__((device)) float scale(float x) { return 3.0f * x; }\n'


@pytest.mark.parametrize("image", ["bitcode", "cubin"])
def test_declared_function_links_from_a_gpu_rdc_cuda_object(tmp_path, image):
    """With -fgpu-rdc the declaration may be defined by CUDA device code of the link (as nvcc -rdc=true)."""
    clang = require_tool("clang-22", 22)
    require_tool("ptxas")
    program = tmp_path / "decl.mlir"
    program.write_text(PROGRAM)
    (tmp_path / "scale.cu").write_text(CUDA_SCALE)
    cuda_rdc_object(clang, tmp_path / "scale.cu", tmp_path / "scale.o")
    bundle = tmp_path / ("decl.offload.bc" if image == "bitcode" else "decl.offload.o")
    formats = ["--device-image", image] + (["--host-format", "obj"] if image == "cubin" else [])
    done = run_cli("compile", str(program), "--offload-arch", "sm_80", *formats, "-o", str(bundle))
    assert done.returncode == 1 and "compile with -fgpu-rdc" in done.stderr
    done = run_cli("compile", str(program), "--offload-arch", "sm_80", "-fgpu-rdc", *formats, "-o", str(bundle))
    assert done.returncode == 0, done.stderr
    done = run_cli("link", str(bundle), "-o", str(tmp_path / "lacking"))
    assert done.returncode == 1 and "undefined device function 'scale'" in done.stderr  # nothing defines it
    done = run_cli("link", str(bundle), str(tmp_path / "scale.o"), "-o", str(tmp_path / "app"))
    assert done.returncode == 0, done.stderr

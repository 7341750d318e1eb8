"""gpu.subgroup_mma_* on gfx11: MLIR 22 lowers them to NVVM only, so mlir-offload rewrites them to amdgpu.wmma
with the RDNA3 fragment layouts (offload/device/amd_wmma.py). The numbers are checked under emulation by
tests/data/emulate/subgroup_mma.mlir (gfx1100); here: the device image calls the WMMA intrinsic, opSelect
reaches it, and what the rewrite cannot take is one located error."""

from __future__ import annotations

import pytest

from conftest import run_cli

KERNEL = """module attributes {{gpu.container_module}} {{
  gpu.module @k {{
    gpu.func @mma(%a: memref<16x16xf16>, %c: memref<16x16xf16>) kernel {{
      %c0 = arith.constant 0 : index
      %A = gpu.subgroup_mma_load_matrix %a[%c0, %c0] {{leadDimension = 16 : index}}
        : memref<16x16xf16> -> !gpu.mma_matrix<16x16xf16, "AOp">
      %B = gpu.subgroup_mma_load_matrix %a[%c0, %c0] {{leadDimension = 16 : index, transpose}}
        : memref<16x16xf16> -> !gpu.mma_matrix<16x16xf16, "BOp">
      %C = gpu.subgroup_mma_load_matrix %c[%c0, %c0] {{leadDimension = 16 : index{opselect}}}
        : memref<16x16xf16> -> !gpu.mma_matrix<16x16xf16, "COp">
{body}
      gpu.return
    }}
  }}
}}
"""
COMPUTE = """      %D = gpu.subgroup_mma_compute %A, %B, %C{compute} : !gpu.mma_matrix<16x16xf16, "AOp">,
        !gpu.mma_matrix<16x16xf16, "BOp"> -> !gpu.mma_matrix<16x16xf16, "COp">
      gpu.subgroup_mma_store_matrix %D, %c[%c0, %c0] {{leadDimension = 16 : index{opselect}}}
        : !gpu.mma_matrix<16x16xf16, "COp">, memref<16x16xf16>"""


def device_ir(tmp_path, source: str, arch: str) -> str:
    import llvmlite.binding as llvm

    (tmp_path / "mma.mlir").write_text(source)
    done = run_cli("compile", "mma.mlir", "--offload-arch", arch, "-save-temps", "-o", "mma.bc", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return str(llvm.parse_bitcode((tmp_path / f"mma.1-device.{arch}.bc").read_bytes()))


@pytest.mark.parametrize("opselect", [False, True])
def test_subgroup_mma_on_gfx11_becomes_the_wmma_intrinsic(tmp_path, opselect):
    unit = ", opSelect" if opselect else ""
    body = COMPUTE.format(compute=" {opSelect}" if opselect else "", opselect=unit)
    text = device_ir(tmp_path, KERNEL.format(opselect=unit, body=body), "gfx1100")
    calls = [line for line in text.splitlines() if "call <16 x half> @llvm.amdgcn.wmma.f16.16x16x16.f16" in line]
    assert len(calls) == 1
    assert calls[0].rstrip(")").endswith("i1 true" if opselect else "i1 false")


def test_a_matrix_carried_by_a_loop_is_one_located_error(tmp_path):
    body = """      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %R = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %C) -> (!gpu.mma_matrix<16x16xf16, "COp">) {
        %D = gpu.subgroup_mma_compute %A, %B, %acc : !gpu.mma_matrix<16x16xf16, "AOp">,
          !gpu.mma_matrix<16x16xf16, "BOp"> -> !gpu.mma_matrix<16x16xf16, "COp">
        scf.yield %D : !gpu.mma_matrix<16x16xf16, "COp">
      }"""
    source = tmp_path / "loop.mlir"
    source.write_text(KERNEL.format(opselect="", body=body))
    done = run_cli("compile", str(source), "--offload-arch", "gfx1100", "-o", str(tmp_path / "loop.bc"))
    assert done.returncode == 1
    assert done.stderr.startswith(f"{source}:9:12: error: gpu.subgroup_mma matrix used by 'scf.for'")
    assert done.stderr.count("\n") == 1 and not (tmp_path / "loop.bc").exists()

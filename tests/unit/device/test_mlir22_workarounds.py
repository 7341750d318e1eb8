"""MLIR 22's own gaps that mlir-offload works around in its lowering, for GPU builds and emulation alike:
the WMMA lowering's abort on element-wise `subf`/`negatef`, the transposed `vector.transfer_write` that
convert-vector-to-gpu leaves unlowered, and `cf.assert` in HIP kernels. The emulated results of the WMMA
programs are checked by tests/emulator/test_emulate_programs.py (tests/data/emulate/wmma_*.mlir); here, the GPU
builds and the HIP assertion."""

from __future__ import annotations

from conftest import REPO, require_tool, run_cli
from emulation import require_emulation

EMULATE = REPO / "tests" / "data" / "emulate"
HIP_ASSERT = REPO / "tests" / "data" / "workarounds" / "hip_assert.mlir"
VECTOR_TO_GPU = ("--pass-pipeline", "builtin.module(convert-vector-to-gpu)")


def ptx_of(tmp_path, program: str) -> str:
    require_tool("clang-22", 22)
    bundle = tmp_path / f"{program}.bc"
    done = run_cli(
        "compile", str(EMULATE / f"{program}.mlir"), *VECTOR_TO_GPU, "--offload-arch", "sm_80",
        "--device-image=ptx", "-o", str(bundle),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return (tmp_path / f"{program}.bc.sm_80.ptx").read_text()


def test_transposed_fragment_store_is_a_column_major_wmma_store(tmp_path):
    ptx = ptx_of(tmp_path, "wmma_transposed_store")
    assert "wmma.store.d.sync.aligned.col.m16n16k16" in ptx
    assert "wmma.store.d.sync.aligned.row" not in ptx


def test_subf_and_negf_on_fragments_build_for_the_gpu(tmp_path):
    ptx = ptx_of(tmp_path, "wmma_elementwise")
    assert ptx.count("wmma.mma.sync") == 1 and "wmma.store.d.sync.aligned.row.m16n16k16" in ptx
    # -x as x * -1 (which LLVM makes a negation) on the fragment's f16 pairs.
    assert "neg.f16x2" in ptx


def test_hip_assert_prints_hips_line_and_stops_the_kernel():
    require_emulation()
    done = run_cli("run", str(HIP_ASSERT), "--emulate", "--offload-arch", "gfx90a")
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert sorted(lines) == sorted(
        [
            "value 3 passes",
            "value 5 passes",
            f"{HIP_ASSERT}:11: (unknown) Device-side assertion `value is not 7' failed.",
        ]
    )
    assert "trap in kernel 'check', block (0,0,0), thread (1,0,0)" in done.stderr
    assert "device-side assert triggered" in done.stderr


def test_hip_assert_builds_for_the_gpu(tmp_path):
    require_tool("clang-22", 22)
    done = run_cli("compile", str(HIP_ASSERT), "--offload-arch", "gfx90a", "-o", str(tmp_path / "a.bc"))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "a.bc").stat().st_size > 0

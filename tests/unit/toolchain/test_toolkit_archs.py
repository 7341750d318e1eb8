"""An arch the CUDA toolkit in use cannot build: compile refuses it where it runs ptxas, warns for bitcode
(assembled at the target's link, maybe with another toolkit), link refuses it in one line naming the arch,
the toolkit version and its range, before clang runs."""

from __future__ import annotations

import json
import os

import pytest

from conftest import REPO, require_tool, run_cli

SAXPY = REPO / "examples" / "saxpy.mlir"


def fake_toolkit(folder, version: str):
    (folder / "bin").mkdir(parents=True)
    (folder / "version.json").write_text(json.dumps({"cuda": {"version": version}}))
    return folder


@pytest.mark.fast
def test_ranges_per_toolkit_major():
    from offload.formats.toolkit_archs import unbuildable_arch

    assert unbuildable_arch("sm_50", "13.0.88") == "sm_50 is not built by CUDA 13.0.88, which builds sm_75 to sm_121"
    assert unbuildable_arch("sm_75", "13.0.88") is None
    assert unbuildable_arch("sm_90a", "13.0.88") is None
    assert unbuildable_arch("compute_70", "13.0") is not None
    assert unbuildable_arch("sm_50", "12.4.1") is None
    assert unbuildable_arch("sm_100", "11.8.0") is not None
    assert unbuildable_arch("sm_50", "99.0") is None  # a toolkit this data does not know: ptxas decides


def test_compile_warns_for_bitcode_refuses_for_cubin(tmp_path):
    env = dict(os.environ, CUDA_PATH=str(fake_toolkit(tmp_path / "cuda13", "13.0.88")))
    done = run_cli("compile", str(SAXPY), "--offload-arch", "sm_50", "-o", str(tmp_path / "b.bc"), env=env)
    assert done.returncode == 0, done.stderr
    assert "warning: sm_50 is not built by CUDA 13.0.88, which builds sm_75 to sm_121" in done.stderr
    done = run_cli(
        "compile", str(SAXPY), "--offload-arch", "sm_50", "--device-image=cubin", "-o", str(tmp_path / "c.bc"), env=env
    )
    assert done.returncode == 1
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("mlir-offload: error: sm_50 is not built by CUDA 13.0.88")
    assert not (tmp_path / "c.bc").exists()


def test_link_refuses_an_arch_the_toolkit_cannot_build(tmp_path):
    require_tool("clang-22", 22)
    env = dict(os.environ, CUDA_PATH=str(fake_toolkit(tmp_path / "cuda12", "12.4.1")))
    bundle = tmp_path / "old.bc"
    done = run_cli("compile", str(SAXPY), "--offload-arch", "sm_50", "-o", str(bundle), env=env)
    assert done.returncode == 0 and "warning" not in done.stderr, done.stderr
    cuda13 = fake_toolkit(tmp_path / "cuda13", "13.0.88")
    done = run_cli("link", str(bundle), "--cuda-path", str(cuda13), "-o", str(tmp_path / "app"))
    assert done.returncode == 1
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "sm_50 is not built by CUDA 13.0.88, which builds sm_75 to sm_121" in lines[0]
    assert not (tmp_path / "app").exists()
    done = run_cli(
        "link", str(bundle), "--cuda-path", str(tmp_path / "cuda12"), "--dry-run", "-o", str(tmp_path / "app")
    )
    assert done.returncode == 0, done.stderr

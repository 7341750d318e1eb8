"""`mlir-offload doctor` finds the real toolchains of this machine and says when it cannot link."""

from __future__ import annotations

from conftest import find_tool, require_tool, run_cli


def test_doctor_lists_clangs_and_cuda(clang22, clang19):
    result = run_cli("doctor")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "clang 22." in out and "clang 19." in out
    assert "clang-linker-wrapper" in out
    if find_tool("ptxas"):
        assert "ptxas ok" in out and "nvlink ok" in out and "libcudart ok" in out


def test_doctor_reports_cuda_version(clang22):
    require_tool("ptxas")
    result = run_cli("doctor", "--cuda-path", "/usr/local/cuda")
    assert result.returncode == 0
    cuda_line = next(line for line in result.stdout.splitlines() if line.startswith("CUDA"))
    version = cuda_line.split()[1]
    assert version[0].isdigit() and "." in version


def test_doctor_bad_cuda_path_says_not_found(clang22, tmp_path):
    result = run_cli("doctor", "--cuda-path", str(tmp_path))
    assert result.returncode == 0
    assert "CUDA: not found" in result.stdout


def test_doctor_reports_the_build_side_and_tolerates_its_absence(clang22, tmp_path):
    import os

    r = run_cli("doctor")
    assert r.returncode == 0, r.stderr
    assert "MLIR Python bindings (" in r.stdout and "llvmlite 0.50" in r.stdout
    # A target machine has no MLIR: doctor says so and still judges the link side.
    fake = tmp_path / "site" / "mlir"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('no MLIR here')\n")
    env = dict(os.environ, PYTHONPATH=str(tmp_path / "site"))
    r = run_cli("doctor", env=env)
    assert r.returncode == 0, r.stderr
    assert "MLIR Python bindings: not loadable (this machine can link bundles, not compile them)" in r.stdout

"""Sparse programs linked against the real cuSPARSE and cuSPARSELt: NVIDIA's PyPI wheels (nvidia-cusparse,
nvidia-cusparselt-cu13), which scripts/setup installs. The executables link the wheels' libraries (their
imported functions checked by `verify`), then run on the fake CUDA runtime, whose cuSPARSE and cuSPARSELt
of the same sonames come first at run time and log each call."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from conftest import REPO, run_cli

PROGRAMS = REPO / "tests" / "data" / "emulate"
# soname -> the unversioned name -l looks for (the wheels ship the soname alone)
WHEEL_LIBRARIES = {"libcusparse.so.12": "libcusparse.so", "libcusparseLt.so.0": "libcusparseLt.so"}


def wheel_library_folder(tmp_path: Path) -> Path:
    """A folder where -lcusparse and -lcusparseLt find the wheels' libraries (links to them, as a toolkit's
    development links are); skipped (failed in CI) where the wheels are not installed."""
    spec = importlib.util.find_spec("nvidia")
    found: dict[str, Path] = {}
    for root in spec.submodule_search_locations if spec and spec.submodule_search_locations else []:
        for soname in WHEEL_LIBRARIES:
            for path in sorted(Path(root).glob(f"*/lib/{soname}")):
                found[soname] = path
    missing = sorted(set(WHEEL_LIBRARIES) - set(found))
    if missing:
        message = f"NVIDIA's wheels are not installed ({', '.join(missing)}): scripts/setup installs them"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    folder = tmp_path / "wheel-libraries"
    folder.mkdir()
    for soname, name in WHEEL_LIBRARIES.items():
        (folder / name).symlink_to(found[soname])
    return folder


@pytest.mark.parametrize(
    ("program", "library", "calls"),
    [
        ("sparse_spmv_csr.mlir", "cusparse", ("cusparseCreateCsr", "cusparseSpMV")),
        ("sparse_2to4_spmm.mlir", "cusparseLt", ("cusparseLtSpMMAPrune", "cusparseLtMatmul")),
    ],
)
def test_linked_against_the_wheels_verified_and_run_on_the_fake(tmp_path, fake_cuda, program, library, calls):
    wheels = wheel_library_folder(tmp_path)
    bundle = tmp_path / "p.o"
    done = run_cli("compile", str(PROGRAMS / program), "--offload-arch", "sm_80", "-o", str(bundle))
    assert done.returncode == 0, done.stderr
    exe = tmp_path / "app"
    # The one folder the link searches: the wheels' libraries, and the fake's libcudart (no toolkit here).
    (wheels / "libcudart.so").symlink_to(fake_cuda.lib_dir / "libcudart.so")
    done = run_cli("link", str(bundle), f"-L{wheels}", "-o", str(exe))
    assert done.returncode == 0, done.stderr
    needed = run_cli("verify", str(exe))
    assert needed.returncode == 0, needed.stderr
    assert library in needed.stdout + needed.stderr
    result = fake_cuda.run(exe)
    assert result.returncode == 0, result.stderr
    for api in calls:
        assert result.calls(api), f"{api} not called"

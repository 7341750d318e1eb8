"""examples/cmake: mlir_offload_add_bundle() from toolchain/cmake/MLIROffload.cmake in a CMake project
(cmake >= 3.20, Makefile generator), built with clang++-22 for sm_80 and sm_90, bitcode and PORTABLE
(cubin + ELF host object), and run on the fake CUDA runtime; the bundle's dependency file makes CMake
rebuild it when mlir-offload.toml changes."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO, require_tool
from fakert import fake_cuda, fatbin_cubins  # noqa: F401  (session fixture)

EXAMPLE = REPO / "examples" / "cmake"


def _run(*cmd: str) -> subprocess.CompletedProcess:
    result = subprocess.run(list(cmd), capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return result


@pytest.fixture(scope="module")
def projects(tmp_path_factory):
    """variant -> (source folder, build folder): "bitcode" and "portable", configured and built."""
    cmake = require_tool("cmake")
    clangxx = require_tool("clang++-22", 22)
    require_tool("ptxas")
    work = tmp_path_factory.mktemp("cmake")
    # The mlir-offload command of this Python (a user's would come from pip's console script).
    wrapper = work / "bin" / "mlir-offload"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m offload "$@"\n')
    wrapper.chmod(0o755)
    built = {}
    for variant in ("bitcode", "portable"):
        source, build = work / variant / "src", work / variant / "build"
        shutil.copytree(EXAMPLE, source, ignore=shutil.ignore_patterns("build"))
        (source / "mlir-offload.toml").write_text("opt-level = 3\n")
        _run(cmake, "-S", str(source), "-B", str(build), f"-DCMAKE_CXX_COMPILER={clangxx}",
             f"-DMLIR_OFFLOAD_EXECUTABLE={wrapper}", f"-DVADD_PORTABLE={'ON' if variant == 'portable' else 'OFF'}")
        _run(cmake, "--build", str(build), "-j2")
        built[variant] = (source, build)
    return built


@pytest.mark.parametrize("variant, bundle", [("bitcode", "vadd.offload.bc"), ("portable", "vadd.offload.o")])
def test_builds_and_runs(projects, fake_cuda, variant, bundle):  # noqa: F811
    _, build = projects[variant]
    data = (build / bundle).read_bytes()
    assert data[:4] == (b"BC\xc0\xde" if variant == "bitcode" else b"\x7fELF")
    run = fake_cuda.run(build / "vadd")
    assert run.returncode == 1 and run.stdout.startswith("vadd.mlir: MISMATCH (")  # the fake runs no kernel
    assert run.kernels_registered() == ["vadd"]
    (launch,) = run.launches()
    assert launch["grid"] == [16, 1, 1] and launch["block"] == [64, 1, 1]
    assert fatbin_cubins(build / "vadd") == {"sm_80": {"vadd"}, "sm_90": {"vadd"}}


def test_dependency_file_reaches_cmake(projects):
    source, build = projects["bitcode"]
    assert (build / "vadd.offload.d").read_text().startswith(f"{build / 'vadd.offload.bc'}: {source / 'vadd.mlir'} \\\n")
    cmake = require_tool("cmake")
    assert "mlir-offload compile" not in _run(cmake, "--build", str(build)).stdout
    later = time.time() + 2
    os.utime(source / "mlir-offload.toml", (later, later))
    rebuilt = _run(cmake, "--build", str(build)).stdout
    assert "mlir-offload compile vadd.mlir" in rebuilt and "Linking CXX executable vadd" in rebuilt

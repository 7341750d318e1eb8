"""examples/cmake: mlir_offload_add_bundle() from offload/data/cmake/MLIROffload.cmake in a CMake project
(cmake >= 3.20, Makefile generator), built with clang++-22 for sm_80 and sm_90, bitcode and PORTABLE
(cubin + ELF host object + PTX beside), and PORTABLE for clang 19 with clang++-19, linked through
`mlir-offload link` (the linker launcher MLIROffload.cmake sets), and run on the fake CUDA runtime; the
bundle's dependency file makes CMake rebuild it when mlir-offload.toml changes."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import REPO, require_tool, run_cli
from fakert import fatbin_cubins

EXAMPLE = REPO / "examples" / "cmake"


def _run(*cmd: str) -> subprocess.CompletedProcess:
    result = subprocess.run(list(cmd), capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return result


def _mlir_offload_command(folder: Path) -> Path:
    """The mlir-offload command of this Python (a user's would come from pip's console script)."""
    wrapper = folder / "bin" / "mlir-offload"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m offload "$@"\n')
    wrapper.chmod(0o755)
    return wrapper


def _configure_and_build(work: Path, variant: str, clangxx: str, *options: str) -> tuple[Path, Path]:
    cmake = require_tool("cmake")
    source, build = work / variant / "src", work / variant / "build"
    shutil.copytree(EXAMPLE, source, ignore=shutil.ignore_patterns("build"))
    (source / "mlir-offload.toml").write_text("opt-level = 3\n")
    _run(
        cmake,
        "-S",
        str(source),
        "-B",
        str(build),
        f"-DCMAKE_CXX_COMPILER={clangxx}",
        f"-DMLIR_OFFLOAD_EXECUTABLE={_mlir_offload_command(work / variant)}",
        *options,
    )
    _run(cmake, "--build", str(build), "-j2")
    return source, build


@pytest.fixture(scope="module")
def projects(tmp_path_factory):
    """variant -> (source folder, build folder): "bitcode" and "portable", configured and built."""
    require_tool("cmake")
    clangxx = require_tool("clang++-22", 22)
    require_tool("ptxas")
    work = tmp_path_factory.mktemp("cmake")
    return {
        variant: _configure_and_build(
            work, variant, clangxx, f"-DVADD_PORTABLE={'ON' if variant == 'portable' else 'OFF'}"
        )
        for variant in ("bitcode", "portable")
    }


@pytest.fixture(scope="module")
def project19(tmp_path_factory):
    require_tool("cmake")
    clangxx = require_tool("clang++-19", 19)
    require_tool("ptxas")
    return _configure_and_build(
        tmp_path_factory.mktemp("cmake19"), "portable19", clangxx, "-DVADD_PORTABLE=ON", "-DVADD_TARGET_CLANG=19"
    )


@pytest.mark.parametrize("variant, bundle", [("bitcode", "vadd.offload.bc"), ("portable", "vadd.offload.o")])
def test_builds_and_runs(projects, fake_cuda, variant, bundle):
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
    first_line = f"{build / 'vadd.offload.bc'}: {source / 'vadd.mlir'} \\\n"
    assert (build / "vadd.offload.d").read_text().startswith(first_line)
    cmake = require_tool("cmake")
    assert "mlir-offload compile" not in _run(cmake, "--build", str(build)).stdout
    later = time.time() + 2
    os.utime(source / "mlir-offload.toml", (later, later))
    rebuilt = _run(cmake, "--build", str(build)).stdout
    assert "mlir-offload compile vadd.mlir" in rebuilt and "Linking CXX executable vadd" in rebuilt


def test_portable_link_adds_the_ptx_beside_the_bundle(projects):
    _, build = projects["portable"]
    assert (build / "vadd.offload.o.sm_80.ptx").is_file() and (build / "vadd.offload.o.sm_90.ptx").is_file()
    verified = run_cli("verify", str(build / "vadd"))
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "PTX for compute_80" in verified.stdout and "PTX for compute_90" in verified.stdout


def test_clang19_portable_builds_and_runs(project19, fake_cuda):
    _, build = project19
    verified = run_cli("verify", str(build / "vadd"))
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "(clang 19 layout): 1 entries: vadd" in verified.stdout and "PTX for compute_90" in verified.stdout
    run = fake_cuda.run(build / "vadd")
    assert run.returncode == 1 and run.stdout.startswith("vadd.mlir: MISMATCH (")
    assert run.kernels_registered() == ["vadd"] and len(run.launches()) == 1
    assert fatbin_cubins(build / "vadd") == {"sm_80": {"vadd"}, "sm_90": {"vadd"}}


def test_cmake_link_refuses_a_bundle_for_another_clang(project19, tmp_path):
    # The clang 19 bundle, linked by clang++-22: the launcher's check fails the build with the reason.
    source, _ = project19
    cmake = require_tool("cmake")
    clangxx = require_tool("clang++-22", 22)
    build = tmp_path / "build"
    _run(
        cmake,
        "-S",
        str(source),
        "-B",
        str(build),
        f"-DCMAKE_CXX_COMPILER={clangxx}",
        f"-DMLIR_OFFLOAD_EXECUTABLE={source.parent / 'bin' / 'mlir-offload'}",
        "-DVADD_PORTABLE=ON",
        "-DVADD_TARGET_CLANG=19",
    )
    result = subprocess.run([cmake, "--build", str(build)], capture_output=True, text=True, timeout=300)
    assert result.returncode != 0 and not (build / "vadd").exists()
    assert "mlir-offload: error: bundle was made for clang 19 (legacy entries)" in result.stdout + result.stderr


def test_emulate_option_builds_an_executable_that_computes_behind_the_users_launcher(tmp_path):
    # -DMLIR_OFFLOAD_EMULATE=ON, with a linker launcher of the user's own (env): the module runs
    # mlir-offload link --emulate behind it instead of replacing it, and the kernels compute on the CPU.
    from emulation import require_emulation

    require_emulation()
    clangxx = require_tool("clang++-22", 22)
    _, build = _configure_and_build(
        tmp_path, "emulated", clangxx, "-DMLIR_OFFLOAD_EMULATE=ON", f"-DCMAKE_CXX_LINKER_LAUNCHER={shutil.which('env')}"
    )
    link = (build / "CMakeFiles" / "vadd.dir" / "link.txt").read_text()
    assert link.startswith(f"{shutil.which('env')} {tmp_path / 'emulated' / 'bin' / 'mlir-offload'} link --emulate ")
    run = subprocess.run([str(build / "vadd")], capture_output=True, text=True, timeout=300)
    assert run.stdout == "vadd.mlir: ok (0 wrong)\n" and run.returncode == 0


def test_emulate_option_refuses_a_users_gpu_link_launcher(tmp_path):
    cmake = require_tool("cmake")
    clangxx = require_tool("clang++-22", 22)
    source, build = tmp_path / "src", tmp_path / "build"
    shutil.copytree(EXAMPLE, source, ignore=shutil.ignore_patterns("build"))
    command = _mlir_offload_command(tmp_path)
    done = subprocess.run(
        [cmake, "-S", str(source), "-B", str(build), f"-DCMAKE_CXX_COMPILER={clangxx}"]
        + [f"-DMLIR_OFFLOAD_EXECUTABLE={command}", "-DMLIR_OFFLOAD_EMULATE=ON"]
        + [f"-DCMAKE_CXX_LINKER_LAUNCHER={command};link;--clang"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode != 0
    message = " ".join(done.stderr.split())
    assert "mlir_offload_link(vadd): MLIR_OFFLOAD_EMULATE is ON but its CXX_LINKER_LAUNCHER" in message
    assert "links for the GPU: add --emulate to it, or remove it" in message

"""MLIROffload.cmake fits CMake users: the target clang comes from the project's compiler and is checked
at configure time (a compiler that is not clang fails the configure step with the fix, before any
build), and ARCHS / CMAKE_CUDA_ARCHITECTURES take CMake's spellings (80, 90-real, 90-virtual)."""

from __future__ import annotations

import shutil
import subprocess

from conftest import REPO, require_tool
from fakert import fatbin_cubins
from test_build_cmake import _mlir_offload_command

EXAMPLE = REPO / "examples" / "cmake"


def configure(work, name, compiler, *options) -> subprocess.CompletedProcess:
    source, build = work / name / "src", work / name / "build"
    shutil.copytree(EXAMPLE, source, ignore=shutil.ignore_patterns("build"))
    # CMAKE_CUDA_ARCHITECTURES instead of the example's ARCHS list.
    text = (source / "CMakeLists.txt").read_text().replace("ARCHS sm_80 sm_90 ", "")
    (source / "CMakeLists.txt").write_text(text)
    return subprocess.run(
        [
            require_tool("cmake"),
            "-S",
            str(source),
            "-B",
            str(build),
            f"-DCMAKE_CXX_COMPILER={compiler}",
            f"-DMLIR_OFFLOAD_EXECUTABLE={_mlir_offload_command(work / name)}",
            *options,
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_non_clang_compiler_fails_at_configure(tmp_path):
    gxx = shutil.which("g++") or require_tool("c++")
    done = configure(tmp_path, "gnu", gxx, "-DCMAKE_CUDA_ARCHITECTURES=80")
    assert done.returncode != 0
    message = " ".join(done.stderr.split())
    assert "mlir_offload_add_bundle(vadd_gpu): the bundles are linked by clang" in message
    assert "but CMAKE_CXX_COMPILER is GNU" in message and "-DCMAKE_CXX_COMPILER=clang++-" in message


def test_cuda_architectures_and_derived_target_clang(tmp_path, fake_cuda):
    clangxx = require_tool("clang++-22", 22)
    require_tool("ptxas")
    done = configure(tmp_path, "archs", clangxx, "-DCMAKE_CUDA_ARCHITECTURES=80;90-real")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "mlir-offload: bundles for clang 22" in done.stdout
    build = tmp_path / "archs" / "build"
    rules = (build / "CMakeFiles" / "vadd_gpu_bundles.dir" / "build.make").read_text()
    assert "--offload-arch=80,90" in rules and "--target-clang=22" in rules
    built = subprocess.run([require_tool("cmake"), "--build", str(build)], capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stdout + built.stderr
    assert fatbin_cubins(build / "vadd") == {"sm_80": {"vadd"}, "sm_90": {"vadd"}}
    assert fake_cuda.run(build / "vadd").kernels_registered() == ["vadd"]

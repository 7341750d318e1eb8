"""MLIROffload.cmake fits CMake users: the target clang comes from the project's compiler and is checked
at configure time (a compiler that is not clang fails the configure step with the fix, before any
build), and ARCHS / CMAKE_CUDA_ARCHITECTURES take CMake's spellings (80, 90-real, 90-virtual)."""

from __future__ import annotations

import shutil
import subprocess

from test_build_cmake import _mlir_offload_command

from conftest import REPO, require_tool, run_cli
from fakert import fatbin_cubins

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


# A project with CUDA sources of its own, compiled by nvcc: the CUDA language would link the target (nvcc,
# which cannot read a bundle: `vadd.offload.bc: file not recognized`); the module makes clang link it.
MIXED_MAIN = """#include <cstdint>
#include <cstdio>
extern "C" int32_t mlir_vadd(int64_t n);
extern "C" void launch_twice(float *x, int n);
int main() {
  int32_t wrong = mlir_vadd(1000);
  launch_twice(nullptr, 0);
  std::printf("vadd.mlir: %s (%d wrong)\\n", wrong == 0 ? "ok" : "MISMATCH", wrong);
  return wrong == 0 ? 0 : 1;
}
"""
MIXED_KERNEL = """extern "C" __global__ void twice(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= 2.0f;
}
extern "C" void launch_twice(float *x, int n) { if (n) twice<<<(n + 63) / 64, 64>>>(x, n); }
"""


def mixed_project(work, name, linker_language: str = ""):
    """examples/cmake with LANGUAGES CXX CUDA and only .cu sources in the executable."""
    source = work / name / "src"
    shutil.copytree(EXAMPLE, source, ignore=shutil.ignore_patterns("build"))
    (source / "main.cu").write_text(MIXED_MAIN)
    (source / "twice.cu").write_text(MIXED_KERNEL)
    text = (source / "CMakeLists.txt").read_text()
    text = text.replace("LANGUAGES CXX)", "LANGUAGES CXX CUDA)").replace("ARCHS sm_80 sm_90 ", "ARCHS sm_80 ")
    text = text.replace("add_executable(vadd main.cpp)", "add_executable(vadd main.cu twice.cu)")
    if linker_language:
        text += f"set_target_properties(vadd PROPERTIES LINKER_LANGUAGE {linker_language})\n"
    (source / "CMakeLists.txt").write_text(text)
    build = work / name / "build"
    return subprocess.run(
        [
            require_tool("cmake"),
            "-S",
            str(source),
            "-B",
            str(build),
            f"-DCMAKE_CXX_COMPILER={require_tool('clang++-22', 22)}",
            f"-DCMAKE_CUDA_COMPILER={require_tool('nvcc')}",
            "-DCMAKE_CUDA_ARCHITECTURES=80",
            f"-DMLIR_OFFLOAD_EXECUTABLE={_mlir_offload_command(work / name)}",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    ), build


def test_cuda_language_project_with_nvcc_links_through_clang(tmp_path):
    configured, build = mixed_project(tmp_path, "nvcc")
    assert configured.returncode == 0, configured.stdout + configured.stderr
    built = subprocess.run(
        [require_tool("cmake"), "--build", str(build), "-v"], capture_output=True, text=True, timeout=600
    )
    assert built.returncode == 0, built.stdout + built.stderr
    assert "Linking CXX executable vadd" in built.stdout and " link --ptx-beside --clang " in built.stdout
    verified = run_cli("verify", str(build / "vadd"))  # the bundle's fatbinary beside nvcc's two
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert (
        "kernels: twice;" in verified.stdout and "kernels: vadd; registered by the offload entries" in verified.stdout
    )


def test_a_cuda_linker_language_of_the_users_stops_configure_naming_the_fix(tmp_path):
    configured, _ = mixed_project(tmp_path, "own", linker_language="CUDA")
    assert configured.returncode != 0
    message = " ".join(configured.stderr.split())
    assert (
        "vadd links MLIR offload bundles, which clang links (CMAKE_CXX_COMPILER), but its LINKER_LANGUAGE is "
        "CUDA: set_target_properties(vadd PROPERTIES LINKER_LANGUAGE CXX)" in message
    )

"""CUDA C++ objects of clang's offload driver (`clang++-22 -x cuda -fgpu-rdc --offload-new-driver
-foffload-lto -c`) linked beside MLIR bundles under --emulate: their device bitcode is retargeted with the
bundles' (one device link: an MLIR kernel calls a CUDA device function), their `<<<>>>` launches (of their
own kernels and of an MLIR kernel, through the bundle's clang-style stub) go through the emulation
runtime's call configuration, and every kernel computes on the CPU; examples/hpc-make builds
and runs emulated through its own Makefile (`make OFFLOAD_EMULATE=1`, and `make LDFLAGS=--emulate`).
Device code that is not bitcode (a cubin: no -foffload-lto; a fatbinary: no -fgpu-rdc, or nvcc) is refused
in one line naming the object and the flags that fix it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conftest import REPO, require_tool, run_cli
from emulation import require_emulation
from hpc_make import EXAMPLE, fresh_copy, make

DATA = REPO / "tests" / "data" / "emulate_objects"
OFFLOAD_FLAGS = ("-fgpu-rdc", "--offload-new-driver", "-foffload-lto")


def compile_cu(source: Path, output: Path, *flags: str) -> None:
    """`source` compiled by clang++-22 as CUDA for sm_80 with `flags` (what mlir-offload config --cflags
    adds besides, and the example's compat headers)."""
    cflags = run_cli("config", "--cflags").stdout.split()
    cflags = [flag for flag in cflags if flag not in OFFLOAD_FLAGS]
    done = subprocess.run(
        [require_tool("clang++-22", 22), "-x", "cuda", *flags, *cflags, f"-I{EXAMPLE / 'compat'}"]
        + ["--offload-arch=sm_80", "-O2", "-c", str(source), "-o", str(output)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    """kernels.o (CUDA C++), twice.offload.bc (MLIR calling kernels.cu's device function), main.o (C++)."""
    require_emulation()
    require_tool("ptxas")  # the CUDA headers of the toolkit, which the .cu includes
    folder = tmp_path_factory.mktemp("mixed")
    compile_cu(DATA / "kernels.cu", folder / "kernels.o", *OFFLOAD_FLAGS)
    done = subprocess.run(
        [require_tool("clang++-22", 22), "-O2", "-c", str(DATA / "main.cpp"), "-o", str(folder / "main.o")],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    done = run_cli(
        "compile", str(DATA / "twice.mlir"), "-fgpu-rdc", "--offload-arch", "sm_80", "-o", str(folder / "twice.bc")
    )
    assert done.returncode == 0, done.stderr
    return folder


def test_cuda_object_and_bundle_run_emulated_and_call_each_other(mixed):
    app = mixed / "app"
    done = run_cli("link", "--emulate", *(str(mixed / n) for n in ("main.o", "kernels.o", "twice.bc")), "-o", str(app))
    assert done.returncode == 0, done.stderr
    run = subprocess.run([str(app)], capture_output=True, text=True, timeout=300)
    # Each checked by the program: the .cu's printf, its kernels' results (shared memory, barrier, shuffle,
    # a device global counted by atomics), the MLIR kernel's calls of the .cu's device function, and the
    # .cu's <<<>>> launch of the MLIR kernel (through the bundle's clang-style stub, __device_stub__twice).
    assert run.stdout.splitlines() == [
        "cu_block_reverse: block 1 of 3",
        "kernels.cu: 0 wrong",
        "twice.mlir: 0 wrong",
        "twice.mlir from kernels.cu: 0 wrong",
    ]
    assert run.returncode == 0, run.stderr


def test_cuda_launch_of_an_mlir_kernel_reaches_the_gpu_runtime(mixed, fake_cuda):
    # The same inputs linked for the GPU: the .cu's twice<<<3, 32>>> is a launch of the bundle's kernel.
    app = mixed / "gpu_app"
    done = run_cli("link", *(str(mixed / n) for n in ("main.o", "kernels.o", "twice.bc")), "-o", str(app))
    assert done.returncode == 0, done.stderr
    launches = [(launch["kernel"], launch["grid"], launch["block"]) for launch in fake_cuda.run(app).launches()]
    assert launches == [
        ("cu_block_reverse", [3, 1, 1], [64, 1, 1]),
        ("cu_read_seen", [1, 1, 1], [1, 1, 1]),
        ("twice", [4, 1, 1], [32, 1, 1]),
        ("twice", [3, 1, 1], [32, 1, 1]),
    ]


def test_kernel_defined_by_object_and_bundle_names_both(mixed, tmp_path):
    clash = tmp_path / "clash.cu"
    clash.write_text('extern "C" __global__ void twice(float *y, long n) { y[0] = 1.0f; }\n')
    compile_cu(clash, tmp_path / "clash.o", *OFFLOAD_FLAGS)
    done = run_cli("link", "--emulate", str(mixed / "twice.bc"), str(tmp_path / "clash.o"), "-o", str(tmp_path / "x"))
    assert done.returncode == 1
    (line,) = done.stderr.splitlines()
    assert f"'twice' is defined by {mixed / 'twice.bc'} and {tmp_path / 'clash.o'}" in line
    assert "/tmp/mlir-offload" not in line and not (tmp_path / "x").exists()


@pytest.mark.parametrize(
    "flags, says",
    [
        (("-fgpu-rdc", "--offload-new-driver"), "its sm_80 device code is native code"),  # a cubin
        (("--offload-new-driver",), "its device code is a fatbinary (.nv_fatbin"),  # registered at start-up
    ],
)
def test_object_without_device_bitcode_is_refused_with_the_flags(mixed, tmp_path, flags, says):
    compile_cu(DATA / "kernels.cu", tmp_path / "kernels.o", *flags)
    inputs = [str(mixed / "main.o"), str(tmp_path / "kernels.o"), str(mixed / "twice.bc")]
    done = run_cli("link", "--emulate", *inputs, "-o", str(tmp_path / "app"))
    assert done.returncode == 1
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"mlir-offload: error: {tmp_path / 'kernels.o'}: {says}")
    assert line.endswith("compile it with clang++-22 -x cuda -fgpu-rdc --offload-new-driver -foffload-lto -c")


@pytest.mark.parametrize("switch", ["OFFLOAD_EMULATE=1", "LDFLAGS=--emulate"])
def test_hpc_make_builds_and_runs_emulated_through_its_makefile(tmp_path, switch):
    require_emulation()
    require_tool("clang++-22", 22)
    require_tool("make")
    require_tool("ptxas")
    folder = fresh_copy(tmp_path)
    built = make(folder, switch, "-j2")
    assert built.returncode == 0, built.stdout + built.stderr
    commands = built.stdout.replace("\\\n", " ").splitlines()  # make echoes a rule's continued lines
    link = next(line for line in commands if "-o hpc-app" in line)
    assert "--emulate" in link and "--ptx-beside" not in link
    assert "-foffload-lto" in next(line for line in commands if "-c scale.cu" in line)
    run = subprocess.run([str(folder / "hpc-app")], capture_output=True, text=True, timeout=300)
    # Each line is the program's own check of what the kernels computed (scale.cu's <<<>>> launch, the
    # MLIR kernels, cube.mlir's call of helpers.cu's device function).
    assert run.stdout.splitlines() == ["scale.cu: ok", "saxpy.mlir: ok (0 wrong)", "cube.mlir: ok (0 wrong)"]
    assert run.returncode == 0


HIP_MAIN = """\
#include <stdint.h>
#include <stdio.h>
int hip_fill_check(int n);
int32_t mlir_saxpy(float a, int64_t n);
int main(void) {
  int filled = hip_fill_check(1000), saxpy = mlir_saxpy(2.0f, 1000);
  printf("kernels.hip: %d wrong, saxpy.mlir: %d wrong\\n", filled, saxpy);
  return filled != 0 || saxpy != 0;
}
"""


def test_hip_object_and_bundle_run_emulated(tmp_path):
    # A HIP object (its device code is bitcode by default) beside a gfx90a bundle: one joined device
    # module though their module flags differ (code object 6 and 5).
    require_emulation()
    clangxx = require_tool("clang++-22", 22)
    hip = [clangxx, "-x", "hip", "-nogpuinc", "-nogpulib", *OFFLOAD_FLAGS[:2], "--offload-arch=gfx90a", "-O2"]
    done = subprocess.run([*hip, "-c", str(DATA / "kernels.hip"), "-o", str(tmp_path / "kernels.o")], text=True)
    assert done.returncode == 0
    (tmp_path / "main.c").write_text(HIP_MAIN)
    clang = require_tool("clang-22", 22)
    assert subprocess.run([clang, "-c", str(tmp_path / "main.c"), "-o", str(tmp_path / "main.o")]).returncode == 0
    (tmp_path / "saxpy.mlir").write_text((EXAMPLE / "saxpy.mlir").read_text())  # away from its toml
    bundle = tmp_path / "saxpy.bc"
    done = run_cli("compile", str(tmp_path / "saxpy.mlir"), "--offload-arch", "gfx90a", "-o", str(bundle))
    assert done.returncode == 0, done.stderr
    inputs = [str(tmp_path / "main.o"), str(tmp_path / "kernels.o"), str(bundle)]
    done = run_cli("link", "--emulate", *inputs, "-o", str(tmp_path / "app"))
    assert done.returncode == 0, done.stderr
    run = subprocess.run([str(tmp_path / "app")], capture_output=True, text=True, timeout=300)
    assert run.stdout == "kernels.hip: 0 wrong, saxpy.mlir: 0 wrong\n" and run.returncode == 0


ALONE = """\
#include <cstdio>
#include <cuda_runtime.h>
__global__ void add_index(int *v) { v[threadIdx.x] += threadIdx.x; }
int main() {
  int *v = nullptr;
  cudaMallocManaged(&v, 32 * sizeof(int));
  for (int i = 0; i < 32; ++i) v[i] = 100;
  add_index<<<1, 32>>>(v);
  cudaDeviceSynchronize();
  std::printf("%d %d\\n", v[0], v[31]);
  return 0;
}
"""


def test_objects_alone_link_emulated(mixed, tmp_path):
    # No bundle at all: the .cu object brings the kernel and main.
    (tmp_path / "alone.cu").write_text(ALONE)
    compile_cu(tmp_path / "alone.cu", tmp_path / "alone.o", *OFFLOAD_FLAGS)
    app = tmp_path / "app"
    done = run_cli("link", "--emulate", str(tmp_path / "alone.o"), "-o", str(app))
    assert done.returncode == 0, done.stderr
    run = subprocess.run([str(app)], capture_output=True, text=True, timeout=300)
    assert run.stdout == "100 131\n" and run.returncode == 0

"""`mlir-offload verify` on real executables linked by clang 22 / clang 19: good ones pass; one linked
without the offload driver, one whose entries were made for the other clang, and one whose sm_90 cubin
lacks a registered kernel are flagged, each naming what is missing, with exit 1."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conftest import REPO, SHARED_REFERENCE, require_tool, run_cli
from fakert import CUDA_PATH, build_reference_cuda_app, build_reference_hip_app, clang_cuda_link, fatbin_cubins

DEVICE = SHARED_REFERENCE / "handwritten_device.ll"
HOST22 = SHARED_REFERENCE / "handwritten_host_clang22.ll"
HOST19 = SHARED_REFERENCE / "handwritten_host_clang19.ll"


@pytest.fixture(scope="module")
def two_arch_app(tmp_path_factory) -> Path:
    return build_reference_cuda_app(
        tmp_path_factory.mktemp("two-arch"), 22, HOST22, [(DEVICE, "sm_80"), (DEVICE, "sm_90")]
    )


@pytest.fixture(scope="module")
def app19(tmp_path_factory) -> Path:
    return build_reference_cuda_app(tmp_path_factory.mktemp("ref19"), 19, HOST19, [(DEVICE, "sm_80")])


@pytest.fixture(scope="module")
def sm90_lacks_vsqrt(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("missing")
    fill_only = tmp / "fill_only.ll"
    extract = require_tool("llvm-extract-22", 22)
    subprocess.run([extract, "-S", "--func=fill", str(DEVICE), "-o", str(fill_only)], check=True)
    return build_reference_cuda_app(tmp, 22, HOST22, [(DEVICE, "sm_80"), (fill_only, "sm_90")])


def test_verify_passes_two_arch_cuda_executable(two_arch_app):
    assert fatbin_cubins(two_arch_app) == {"sm_80": {"fill", "vsqrt"}, "sm_90": {"fill", "vsqrt"}}
    proc = run_cli("verify", str(two_arch_app))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert "4 symbol/image check(s) passed" in proc.stdout
    assert "llvm_offload_entries (clang 22 layout): 2 entries: fill, vsqrt" in proc.stdout
    assert ".nv_fatbin: 2 device image(s) for sm_80, sm_90" in proc.stdout
    assert run_cli("verify", "-q", str(two_arch_app)).stdout == ""


def test_verify_passes_clang19_executable(app19):
    proc = run_cli("verify", str(app19))
    assert proc.returncode == 0, proc.stderr
    assert "cuda_offloading_entries (clang 19 layout): 2 entries: fill, vsqrt" in proc.stdout


def test_verify_passes_hip_executable(tmp_path, fake_hip):
    app = build_reference_hip_app(tmp_path, fake_hip.lib_dir)
    proc = run_cli("verify", str(app))
    assert proc.returncode == 0, proc.stderr
    assert ".hip_fatbin: 1 device image(s) for gfx90a" in proc.stdout


def test_verify_names_kernel_missing_from_one_arch(sm90_lacks_vsqrt):
    assert fatbin_cubins(sm90_lacks_vsqrt) == {"sm_80": {"fill", "vsqrt"}, "sm_90": {"fill"}}
    proc = run_cli("verify", str(sm90_lacks_vsqrt))
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == [
        f"mlir-offload: error: {sm90_lacks_vsqrt}: kernel 'vsqrt' is registered but missing from the sm_90 "
        f"device image in .nv_fatbin"
    ]


def test_verify_flags_link_without_offload_driver(tmp_path, two_arch_app):
    clang = require_tool("clang-22", 22)
    plain = tmp_path / "plain"
    subprocess.run(
        [clang, str(two_arch_app.parent / "host.o"), f"-L{CUDA_PATH}/lib64", "-lcudart", "-o", str(plain)], check=True
    )
    proc = run_cli("verify", str(plain))
    assert proc.returncode == 1
    lines = proc.stderr.splitlines()
    assert len(lines) == 2 and lines[0].startswith("mlir-offload: error: ")
    assert lines[1].startswith("mlir-offload: note: ")  # further problems are notes after the one error
    assert "no device code section (.nv_fatbin for CUDA, .hip_fatbin for HIP)" in lines[0]
    assert "--offload-new-driver" in lines[0]
    assert "2 offload entries in section llvm_offload_entries are never registered" in lines[1]


def test_verify_flags_clang19_entries_linked_by_clang22(tmp_path, app19):
    # clang 22 links this without complaint; the executable registers nothing (docs/targets-and-shipping.md).
    crossed = tmp_path / "crossed"
    clang_cuda_link(require_tool("clang-22", 22), 22, [str(app19.parent / "host.o")], crossed)
    proc = run_cli("verify", str(crossed))
    assert proc.returncode == 1
    assert (
        "2 offload entries in section cuda_offloading_entries are never registered: its registration "
        "code walks llvm_offload_entries" in proc.stderr
    )
    assert "__start_llvm_offload_entries..__stop_llvm_offload_entries is empty" in proc.stderr


def test_verify_flags_clang22_entries_linked_by_clang19(tmp_path, two_arch_app):
    crossed = tmp_path / "crossed"
    clang_cuda_link(require_tool("clang-19", 19), 19, [str(two_arch_app.parent / "host.o")], crossed)
    proc = run_cli("verify", str(crossed))
    assert proc.returncode == 1
    assert (
        "2 offload entries in section llvm_offload_entries are never registered: its registration "
        "code walks cuda_offloading_entries" in proc.stderr
    )


@pytest.mark.parametrize(
    "content, message",
    [
        (b"not an executable", "is not an ELF file"),
        (b"\x7fELF\x02\x01" + bytes(10), "truncated ELF header"),
    ],
)
def test_verify_rejects_non_executables_in_one_line(tmp_path, content, message):
    path = tmp_path / "bad"
    path.write_bytes(content)
    proc = run_cli("verify", str(path))
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1 and message in proc.stderr and "Traceback" not in proc.stderr


def test_verify_missing_file_is_one_line_error(tmp_path):
    proc = run_cli("verify", str(tmp_path / "nope"))
    assert proc.returncode == 1
    assert proc.stderr == f"mlir-offload: error: no such file: '{tmp_path / 'nope'}'\n"


# A CUDA file of our own that nvcc compiles: its object carries a fatbinary of its own, registered by its own code.
NVCC_SOURCE = """extern "C" __global__ void twice(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= 2.0f;
}
extern "C" void launch_twice(float *x, int n) { twice<<<(n + 63) / 64, 64>>>(x, n); }
"""


def nvcc_object(tmp: Path, archs: tuple[str, ...] = ("sm_80", "sm_90")) -> Path:
    nvcc = require_tool("nvcc")
    source, obj = tmp / "twice.cu", tmp / "twice.o"
    source.write_text(NVCC_SOURCE)
    gencode = [f"-gencode=arch=compute_{a[3:]},code={a}" for a in archs]
    subprocess.run([nvcc, *gencode, "-c", str(source), "-o", str(obj)], check=True, capture_output=True)
    return obj


def test_verify_checks_every_fatbinary_with_an_nvcc_object_beside(tmp_path):
    """nvcc's object brings a second fatbinary into .nv_fatbin: the bundle's kernels are checked in the
    fatbinary that holds them (all its images), nvcc's images are read and listed, none fails the other."""
    require_tool("clang-22", 22)
    obj = nvcc_object(tmp_path)
    bundle, app = tmp_path / "saxpy.offload.bc", tmp_path / "app"
    saxpy = REPO / "examples" / "saxpy.mlir"
    done = run_cli("compile", str(saxpy), "--offload-arch", "sm_80,sm_90", "-o", str(bundle))
    assert done.returncode == 0, done.stderr
    done = run_cli("link", str(bundle), str(obj), "-o", str(app))
    assert done.returncode == 0, done.stderr
    proc = run_cli("verify", str(app))
    assert proc.returncode == 0, proc.stderr
    assert "2 symbol/image check(s) passed" in proc.stdout  # saxpy in our sm_80 and sm_90 images
    notes = [line.strip() for line in proc.stdout.splitlines() if line.strip().startswith("fatbinary ")]
    assert len(notes) == 2, proc.stdout
    ours = next(note for note in notes if "kernels: saxpy;" in note)
    assert ours.endswith("registered by the offload entries") and "sm_80" in ours and "sm_90" in ours
    theirs = next(note for note in notes if note is not ours)
    assert "kernels: twice;" in theirs and "its own object's code" in theirs


def test_verify_still_names_a_kernel_missing_from_one_image_beside_nvcc(tmp_path, sm90_lacks_vsqrt):
    """The second fatbinary changes nothing about the bundle's own images: sm_90 lacking vsqrt is still
    the one error, and nvcc's images (which never held vsqrt) are not reported."""
    obj = nvcc_object(tmp_path, ("sm_80",))
    app = tmp_path / "app"
    clang_cuda_link(
        require_tool("clang-22", 22), 22, [str(sm90_lacks_vsqrt.parent / "host.o"), str(obj)], app, ["-lstdc++"]
    )
    proc = run_cli("verify", str(app))
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == [
        f"mlir-offload: error: {app}: kernel 'vsqrt' is registered but missing from the sm_90 "
        "device image in .nv_fatbin"
    ]

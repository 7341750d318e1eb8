"""`mlir-offload verify` on real executables linked by clang 22 / clang 19: good ones pass; one linked
without the offload driver, one whose entries were made for the other clang, and one whose sm_90 cubin
lacks a registered kernel are flagged, each naming what is missing, with exit 1."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conftest import SHARED_REFERENCE, require_tool, run_cli
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

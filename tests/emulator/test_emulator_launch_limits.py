"""Per-arch launch limits in the emulator (docs/emulator.md, "Launch limits"): a launch asking for more shared
memory, threads or blocks than the arch allows is refused as the GPU runtime refuses it (its status, and
GetErrorString's text naming the limit and the arch), with or without --sanitize; within them it runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import REPO, run_cli
from emulation import require_emulation
from offload.formats.launch_limits import launch_limits

PROGRAM = REPO / "tests" / "data" / "emulate" / "dynamic_shared.mlir"
SHARED = "    %shared = arith.constant 256 : i32"
THREADS = "threads in (%c64, %c1, %c1)"


def variant(folder: Path, shared: int, threads: str = "%c64") -> str:
    source = PROGRAM.read_text()
    assert source.count(SHARED) == 1 and source.count(THREADS) == 1
    source = source.replace(SHARED, f"    %shared = arith.constant {shared} : i32")
    source = source.replace(THREADS, f"threads in ({threads}, %c1, %c1)")
    if threads != "%c64":
        source = source.replace(
            "    %c64 = arith.constant 64 : index",
            f"    %c64 = arith.constant 64 : index\n    {threads} = arith.constant 2048 : index",
        )
    (folder / "limits.mlir").write_text(source)
    return "limits.mlir"


def emulated(folder: Path, name: str, arch: str, *flags: str):
    require_emulation()
    return run_cli("run", name, "--offload-arch", arch, "--emulate", *flags, cwd=folder)


@pytest.mark.no_toolchain
def test_the_limits_are_per_arch_data():
    assert launch_limits("sm_80").shared_per_block == 163 * 1024
    assert launch_limits("sm_86").shared_per_block == 99 * 1024
    assert launch_limits("sm_89").shared_per_block == 99 * 1024
    assert launch_limits("sm_90a").shared_per_block == 227 * 1024  # the arch's number, suffix aside
    assert launch_limits("sm_90a").arch == "sm_90"
    assert launch_limits("gfx90a").shared_per_block == 64 * 1024
    assert launch_limits("gfx950").shared_per_block == 160 * 1024
    assert (
        launch_limits("sm_80").shared_without_opt_in == 48 * 1024 and launch_limits("gfx90a").shared_without_opt_in == 0
    )
    assert launch_limits("sm_80").grid == (2**31 - 1, 65535, 65535) and launch_limits("gfx90a").grid_items == 2**32 - 1
    assert (
        launch_limits("sm_80").pass_parameter()
        == "limits=sm_80:166912:49152:1024:1024:1024:64:2147483647:65535:65535:0"
    )


@pytest.mark.parametrize("arch, shared", [("sm_80", 163 * 1024), ("gfx90a", 60 * 1024), ("gfx90a", 64 * 1024)])
def test_shared_memory_within_the_arch_limit_runs(tmp_path, arch, shared):
    done = emulated(tmp_path, variant(tmp_path, shared), arch)
    assert done.returncode == 0, done.stderr
    assert "wrong elements: 0" in done.stdout


def test_shared_memory_past_the_arch_limit_is_refused(tmp_path):
    name = variant(tmp_path, 200 * 1024)
    done = emulated(tmp_path, name, "sm_80")
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "cudaFuncSetAttribute: invalid argument: kernel 'reverse' asks for 204800 bytes of dynamic shared memory "
        "(0 static besides); sm_80 allows 166912 (163 KiB) per block"
    ]
    name = variant(tmp_path, 100 * 1024)  # within sm_80's 163 KiB, past sm_86's 99 KiB
    assert emulated(tmp_path, name, "sm_80").returncode == 0
    done = emulated(tmp_path, name, "sm_86")
    assert done.returncode == 1 and "sm_86 allows 101376 (99 KiB) per block" in done.stderr, done.stderr
    name = variant(tmp_path, 64 * 1024 + 16)
    done = emulated(tmp_path, name, "gfx90a", "--sanitize")
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "hipLaunchKernel: invalid argument: kernel 'reverse' launched with 65552 bytes of shared memory per block "
        "(0 static, 65552 dynamic); gfx90a allows 65536 (64 KiB)"
    ]


def test_threads_past_the_arch_limit_are_refused(tmp_path):
    done = emulated(tmp_path, variant(tmp_path, 256, threads="%c2048"), "sm_80")
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "cudaLaunchKernel: invalid configuration argument: kernel 'reverse' launched with 2048 threads per block; "
        "sm_80 allows 1024"
    ]

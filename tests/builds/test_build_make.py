"""examples/hpc-make: a C++ main, a CUDA .cu (clang-22 -fgpu-rdc --offload-new-driver) and two .mlir
programs in one executable, built by a Makefile that includes offload/data/mlir-offload.mk, with device
LTO across them (one cubin per arch holds every kernel); run on the fake CUDA runtime. The dependency
files of the bundles (-MD -MF) make edits of a .mlir, the linked helpers.bc or mlir-offload.toml
rebuild exactly what depends on them."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from conftest import require_tool
from fakert import fatbin_cubins
from hpc_make import fresh_copy
from hpc_make import make as _make


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    require_tool("clang-22", 22)
    require_tool("clang++-22", 22)
    require_tool("ptxas")
    require_tool("make")
    folder = fresh_copy(tmp_path_factory.mktemp("hpc"))
    result = _make(folder, "-j2")
    assert result.returncode == 0, result.stdout + result.stderr
    return folder


def test_one_executable_registers_and_launches_kernels_of_cu_and_mlir(built, fake_cuda):
    run = fake_cuda.run(built / "hpc-app")
    # The fake executes no kernel: each part reports a mismatch, after its launch.
    assert run.returncode == 1
    assert run.stdout.splitlines() == [
        "scale.cu: MISMATCH",
        "saxpy.mlir: MISMATCH (1023 wrong)",
        "cube.mlir: MISMATCH (511 wrong)",
    ]
    assert sorted(run.kernels_registered()) == ["cu_scale", "cube", "saxpy"]
    assert [(launch["kernel"], launch["grid"], launch["block"]) for launch in run.launches()] == [
        ("cu_scale", [1, 1, 1], [256, 1, 1]),
        ("saxpy", [4, 1, 1], [256, 1, 1]),
        ("cube", [4, 1, 1], [128, 1, 1]),
    ]
    assert len(run.calls("__cudaRegisterFatBinary")) == 1


def test_device_lto_puts_every_kernel_in_one_cubin(built):
    # Every device part stayed bitcode until the link, where the linker wrapper linked them together.
    assert fatbin_cubins(built / "hpc-app") == {"sm_80": {"cu_scale", "saxpy", "cube"}}


def test_dependency_files(built):
    text = (built / "cube.offload.d").read_text()
    assert text.startswith("cube.offload.bc: cube.mlir \\\n")
    assert f"{built / 'helpers.bc'} \\\n" in text and f"{built / 'mlir-offload.toml'}\n" in text
    assert (built / "saxpy.offload.d").read_text().startswith("saxpy.offload.bc: saxpy.mlir \\\n")


def _copy(built: Path, folder: Path) -> Path:
    """A copy of the built example, every file 60 s older than it was (order kept), so that a file
    touched now is newer than every output whatever the file system's time resolution."""
    shutil.copytree(built, folder, copy_function=shutil.copy2)
    for path in folder.rglob("*"):
        stat = path.stat()
        os.utime(path, (stat.st_atime - 60, stat.st_mtime - 60))
    # The .d files name helpers.bc and the toml by absolute path: point them at the copy.
    for depfile in folder.glob("*.offload.d"):
        mtime = depfile.stat().st_mtime
        depfile.write_text(depfile.read_text().replace(str(built), str(folder)))
        os.utime(depfile, (mtime, mtime))
    return folder


def _touch(path: Path) -> None:
    now = time.time()
    os.utime(path, (now, now))


def _would_run(folder: Path) -> list[str]:
    result = _make(folder, "-n")
    assert result.returncode == 0, result.stderr
    compiled = sorted(
        line.split()[line.split().index("compile") + 2]
        for line in result.stdout.splitlines()
        if " offload compile " in line
    )
    linked = any("-o hpc-app" in line for line in result.stdout.splitlines())
    return compiled + (["link"] if linked else [])


@pytest.mark.parametrize(
    "touched, rebuilt",
    [
        (None, []),
        ("cube.mlir", ["cube.mlir", "link"]),
        ("helpers.bc", ["cube.mlir", "saxpy.mlir", "link"]),
        ("mlir-offload.toml", ["cube.mlir", "saxpy.mlir", "link"]),
    ],
)
def test_edits_rebuild_what_depends_on_them(built, tmp_path, touched, rebuilt):
    folder = _copy(built, tmp_path / "copy")
    if touched:
        _touch(folder / touched)
    assert _would_run(folder) == rebuilt


def test_rebuild_after_config_edit_under_make_j(built, tmp_path, fake_cuda):
    folder = _copy(built, tmp_path / "copy")
    config = folder / "mlir-offload.toml"
    config.write_text(config.read_text().replace("opt-level = 3", "opt-level = 2"))
    _touch(config)
    result = _make(folder, "-j2")
    assert result.returncode == 0, result.stderr
    assert result.stdout.count(" offload compile ") == 2
    assert "Nothing to be done for 'all'." in _make(folder).stdout
    assert sorted(fake_cuda.run(folder / "hpc-app").kernels_registered()) == ["cu_scale", "cube", "saxpy"]

"""examples/hpc-make for the clang 19 profile: version-proof bundles (--target-clang=19 --portable: cubin +
ELF host object + PTX beside) linked by clang-19 through `mlir-offload link` (the link step of
mlir-offload.mk), run on the fake CUDA runtime; a bundle for clang 19 linked by clang 22 fails the make
with the reason; bundles of two profiles in one link are refused; `ship` of an existing portable bundle
carries the PTX written beside it."""

from __future__ import annotations

import json
import os
import shutil
import tarfile
import time
from pathlib import Path

import pytest

from conftest import require_tool, run_cli
from fakert import fatbin_cubins
from hpc_make import fresh_copy
from hpc_make import make as _make

PORTABLE_19 = "MLIR_OFFLOAD_FLAGS=--target-clang=19 --portable"


@pytest.fixture(scope="module")
def built19(tmp_path_factory):
    """(folder, make result) of the example built with clang-19 and portable bundles."""
    require_tool("clang-19", 19)
    require_tool("clang++-19", 19)
    require_tool("ptxas")
    require_tool("make")
    folder = fresh_copy(tmp_path_factory.mktemp("hpc19"))
    result = _make(folder, "-j2", "OFFLOAD_CLANG=clang-19", "CXX=clang++-19", PORTABLE_19)
    assert result.returncode == 0, result.stdout + result.stderr
    return folder, result


def test_clang19_portable_build_registers_and_launches(built19, fake_cuda):
    folder, result = built19
    for name in ("saxpy", "cube"):
        assert (folder / f"{name}.offload.o").read_bytes()[:4] == b"\x7fELF"  # OFFLOAD_BUNDLE_SUFFIX chose .o
        assert (folder / f"{name}.offload.o.sm_80.ptx").is_file()
    assert " link --clang=clang-19 --ptx-beside " in result.stdout
    run = fake_cuda.run(folder / "hpc-app")
    assert run.returncode == 1  # the fake executes no kernel
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
    # The bundles' cubins and scale.cu's bitcode were linked by nvlink into one cubin.
    assert fatbin_cubins(folder / "hpc-app") == {"sm_80": {"cu_scale", "saxpy", "cube"}}


def test_ptx_of_several_bundles_is_not_added_and_said(built19):
    folder, result = built19
    warning = [line for line in result.stderr.splitlines() if "warning" in line]
    assert len(warning) == 1 and "PTX of several bundles for sm_80 not added" in warning[0]
    assert "saxpy.offload.o.sm_80.ptx" in warning[0] and "cube.offload.o.sm_80.ptx" in warning[0]
    assert "PTX for" not in run_cli("verify", str(folder / "hpc-app")).stdout


def test_bundles_for_clang19_linked_by_clang22_fail_the_make(built19, tmp_path):
    folder = tmp_path / "hpc-make"
    shutil.copytree(built19[0], folder, copy_function=shutil.copy2)
    (folder / "hpc-app").unlink()
    result = _make(folder, "OFFLOAD_CLANG=clang-22", "CXX=clang++-22", PORTABLE_19)
    assert result.returncode != 0
    errors = [line for line in result.stderr.splitlines() if line.startswith("mlir-offload: error:")]
    assert len(errors) == 1, result.stderr
    assert "saxpy.offload.o: bundle was made for clang 19 (legacy entries)" in errors[0]
    assert "registers no kernel" in errors[0] and "--target-clang 22" in errors[0]
    assert "Traceback" not in result.stderr and not (folder / "hpc-app").exists()


def test_link_refuses_bundles_of_two_profiles(built19, tmp_path):
    folder = built19[0]
    newer = tmp_path / "saxpy22.offload.bc"
    done = run_cli("compile", str(folder / "saxpy.mlir"), "--target-clang", "22", "-o", str(newer))
    assert done.returncode == 0, done.stderr
    app = tmp_path / "app"
    done = run_cli(
        "link",
        "--clang=clang-19",
        str(folder / "main.o"),
        str(folder / "cube.offload.o"),
        str(newer),
        "-o",
        str(app),
        "--dry-run",
    )
    assert done.returncode == 1 and not app.exists()
    assert done.stderr.strip() == (
        f"mlir-offload: error: {folder / 'cube.offload.o'} was made for clang 19 but "
        f"{newer} for clang 22: one executable takes one entry layout, recompile them "
        "with the same --target-clang"
    )


def _archive(path: Path) -> dict[str, bytes]:
    files = {}
    with tarfile.open(path) as tar:
        for member in tar.getmembers():
            if member.isfile():
                extracted = tar.extractfile(member)
                assert extracted is not None
                files[member.name] = extracted.read()
    return files


def test_ship_of_an_existing_portable_bundle_carries_its_ptx(built19, tmp_path):
    bundle = built19[0] / "cube.offload.o"
    done = run_cli("ship", str(bundle), "-o", str(tmp_path / "cube.tar.gz"))
    assert done.returncode == 0, done.stderr
    files = _archive(tmp_path / "cube.tar.gz")
    assert files["cube/ptx/cube.sm_80.ptx"] == Path(f"{bundle}.sm_80.ptx").read_bytes()
    manifest = json.loads(files["cube/manifest.json"])
    assert manifest["device_image"] == "ptx" and "ptx/cube.sm_80.ptx" in manifest["files"]

    # A PTX file older than its bundle is an earlier compile's: left out, with a warning.
    stale = tmp_path / "stale"
    stale.mkdir()
    shutil.copy2(bundle, stale / "cube.offload.o")
    shutil.copy2(f"{bundle}.sm_80.ptx", stale / "cube.offload.o.sm_80.ptx")
    later = time.time() + 5
    os.utime(stale / "cube.offload.o", (later, later))
    done = run_cli("ship", str(stale / "cube.offload.o"), "-o", str(tmp_path / "old.tar.gz"))
    assert done.returncode == 0, done.stderr
    assert "cube.offload.o.sm_80.ptx is older than" in done.stderr
    assert not any("/ptx/" in name for name in _archive(tmp_path / "old.tar.gz"))

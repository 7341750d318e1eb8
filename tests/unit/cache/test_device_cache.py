"""The content-addressed device image cache (offload/device/image_cache.py): hits, what changes the key,
corrupt entries, --no-cache, the cache folder, and its size bound."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

from conftest import REPO, run_cli
from offload.cache.folder import CacheFolder
from offload.cache.root import CACHE_ENVIRONMENT, cache_root
from offload.device import pipeline
from offload.device.pipeline import compile_device
from offload.formats.targets import parse_offload_arch
from offload.mlir.frontend import load_program
from offload.options import CompileOptions

SAXPY = str(REPO / "examples" / "saxpy.mlir")


@pytest.fixture
def serializations(monkeypatch):
    """The targets whose image was really built (jobs=1 keeps serialization in this process)."""
    built = []

    def counting(real):
        def serialize(job):
            built.append(job.target.arch)
            return real(job)

        return serialize

    monkeypatch.setattr(pipeline, "serialize_image", counting(pipeline.serialize_image))  # either backend
    return built


def compile_saxpy(arch="sm_80", **changes):
    return compile_device(load_program(SAXPY), parse_offload_arch(arch), replace(CompileOptions(), **changes), jobs=1)


def entries() -> list[Path]:
    return sorted(Path(os.environ[CACHE_ENVIRONMENT]).glob("??/*.image"))


def test_unchanged_program_is_a_hit_with_the_same_image(serializations):
    first = compile_saxpy("sm_80,sm_90")
    assert serializations == ["sm_80", "sm_90"] and len(entries()) == 2
    second = compile_saxpy("sm_80,sm_90")
    assert serializations == ["sm_80", "sm_90"]  # nothing rebuilt
    assert [(i.bitcode, i.kernels, i.globals, i.target) for i in second] == [
        (i.bitcode, i.kernels, i.globals, i.target) for i in first
    ]


@pytest.mark.parametrize(
    "changes", [{"opt_level": 1}, {"ftz": True}, {"prec_sqrt": False}, {"rename": "module-prefix"}]
)
def test_a_changed_option_is_a_miss(serializations, changes):
    compile_saxpy()
    compile_saxpy(**changes)
    assert serializations == ["sm_80", "sm_80"] and len(entries()) == 2


def test_another_target_is_a_miss(serializations):
    compile_saxpy("sm_80")
    compile_saxpy("sm_90")
    assert serializations == ["sm_80", "sm_90"]


def _library(path: Path, value: int) -> str:
    import llvmlite.ir as ir

    module = ir.Module(name="helper")
    module.triple = "nvptx64-nvidia-cuda"
    function = ir.Function(module, ir.FunctionType(ir.IntType(32), []), name="helper_value")
    ir.IRBuilder(function.append_basic_block()).ret(ir.IntType(32)(value))
    path.write_text(str(module))
    return str(path)


def test_a_changed_library_is_a_miss(tmp_path):
    # With --link-bitcode the image is built in a forked child (LLVM parses the user's file there), so
    # the entries, one per key, say what was built.
    library = _library(tmp_path / "helper.ll", 1)
    compile_saxpy(link_bitcode=[library])
    compile_saxpy(link_bitcode=[library])
    assert len(entries()) == 1
    _library(tmp_path / "helper.ll", 2)  # same path, other bytes
    compile_saxpy(link_bitcode=[library])
    assert len(entries()) == 2


def test_a_corrupt_entry_is_ignored_and_rebuilt(serializations):
    first = compile_saxpy()
    [entry] = entries()
    data = bytearray(entry.read_bytes())
    data[-10] ^= 0xFF
    entry.write_bytes(bytes(data))
    second = compile_saxpy()
    assert serializations == ["sm_80", "sm_80"]
    assert second[0].bitcode == first[0].bitcode
    assert entry.read_bytes() != bytes(data)  # rewritten whole
    compile_saxpy()
    assert serializations == ["sm_80", "sm_80"]


def test_a_truncated_entry_is_a_miss(serializations):
    compile_saxpy()
    [entry] = entries()
    entry.write_bytes(entry.read_bytes()[:40])
    compile_saxpy()
    assert serializations == ["sm_80", "sm_80"]


def test_cache_off_neither_reads_nor_writes(serializations):
    compile_saxpy(cache=False)
    compile_saxpy(cache=False)
    assert serializations == ["sm_80", "sm_80"] and entries() == []


def test_no_cache_flag_and_config_key(tmp_path):
    out = str(tmp_path / "out.offload")
    done = run_cli("device", SAXPY, "--offload-arch", "sm_80", "--no-cache", "-o", out)
    assert done.returncode == 0, done.stderr
    assert entries() == []
    project = tmp_path / "project"
    project.mkdir()
    (project / "saxpy.mlir").write_text(Path(SAXPY).read_text())
    (project / "mlir-offload.toml").write_text("cache = false\n")
    done = run_cli("compile", str(project / "saxpy.mlir"), "--offload-arch", "sm_80", "-o", out)
    assert done.returncode == 0, done.stderr
    assert entries() == []
    done = run_cli("compile", SAXPY, "--offload-arch", "sm_80", "-o", out)
    assert done.returncode == 0, done.stderr
    assert len(entries()) == 1


def test_environment_names_the_folder(tmp_path, monkeypatch):
    elsewhere = tmp_path / "elsewhere"
    done = run_cli(
        "device",
        SAXPY,
        "--offload-arch",
        "sm_80",
        "-o",
        str(tmp_path / "o.offload"),
        env={**os.environ, CACHE_ENVIRONMENT: str(elsewhere)},
    )
    assert done.returncode == 0, done.stderr
    assert len(list(elsewhere.glob("??/*.image"))) == 1
    monkeypatch.delenv(CACHE_ENVIRONMENT)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == tmp_path / "xdg" / "mlir-offload"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_root() == tmp_path / "home" / ".cache" / "mlir-offload"


def test_size_bound_evicts_least_recently_used(tmp_path):
    folder = CacheFolder(tmp_path / "c", max_bytes=4000)
    assert folder.open()
    keys = [f"{n:02x}" * 32 for n in range(6)]

    def path(key):
        return tmp_path / "c" / key[:2] / f"{key}.image"

    for age, key in enumerate(keys):
        folder.write(key, bytes([age]) * 900)
        os.utime(path(key), (1000 + age, 1000 + age))
        folder.evict()
    assert folder.read(keys[0]) is None and folder.read(keys[1]) is None  # oldest went
    assert folder.read(keys[5]) == bytes([5]) * 900
    total = sum(p.stat().st_size for p in (tmp_path / "c").glob("??/*.image"))
    assert total <= 4000
    for age, key in enumerate(keys[2:], start=2):
        os.utime(path(key), (1000 + age, 1000 + age))
    assert folder.read(keys[2]) is not None  # used most recently: survives the next eviction
    folder.write("ff" * 32, b"x" * 900)
    folder.evict()
    assert folder.read(keys[3]) is None
    assert folder.read(keys[2]) is not None and folder.read("ff" * 32) == b"x" * 900
    assert sum(p.stat().st_size for p in (tmp_path / "c").glob("??/*.image")) <= 4000

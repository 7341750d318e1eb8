"""Whole compiles from the cache (offload/cache/compiles.py): a second compile of an unchanged
program writes the same files without loading MLIR or LLVM; anything its key or its recorded inputs
cover that changes is a miss; a forged or misplaced entry is a miss; a compile that warned is not kept."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO
from offload.cache import compiles as compile_cache
from offload.cache.remote import URL_ENVIRONMENT
from offload.cache.root import CACHE_ENVIRONMENT

SAXPY = REPO / "examples" / "saxpy.mlir"
TIMEOUT = 180
HEAVY = ("mlir.ir", "llvmlite.binding", "offload.device.pipeline", "redis")


def environment(cache: Path | None, url: str | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MLIR_OFFLOAD_REMOTE_CACHE")}
    env["PYTHONPATH"] = str(REPO)
    if cache is not None:
        env[CACHE_ENVIRONMENT] = str(cache)
    if url:
        env[URL_ENVIRONMENT] = url
    return env


def compile_in(folder: Path, cache: Path | None, *flags: str, url: str | None = None, program: str = "saxpy.mlir"):
    """compile as make runs it (in the folder, -o and a dependency file); (stderr, modules imported)."""
    command = [
        sys.executable,
        "-X",
        "importtime",
        "-m",
        "offload",
        "compile",
        program,
        "--offload-arch",
        "sm_80",
        "-o",
        "saxpy.offload.bc",
        "-MD",
        "-MP",
        "-MF",
        "saxpy.offload.d",
        *flags,
        *(["--no-cache"] if cache is None else []),
    ]
    done = subprocess.run(
        command, cwd=folder, env=environment(cache, url), capture_output=True, text=True, timeout=TIMEOUT
    )
    assert done.returncode == 0, done.stderr
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    messages = "\n".join(line for line in done.stderr.splitlines() if not line.startswith("import time:"))
    return messages, imported


def outputs(folder: Path) -> dict[str, bytes]:
    return {name: (folder / name).read_bytes() for name in ("saxpy.offload.bc", "saxpy.offload.d")}


@pytest.fixture
def project(tmp_path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    shutil.copy(SAXPY, folder / "saxpy.mlir")
    return folder


@pytest.fixture
def reference(project) -> dict[str, bytes]:
    compile_in(project, None)
    files = outputs(project)
    for name in files:
        (project / name).unlink()
    return files


def compile_entries(cache: Path) -> list[Path]:
    return sorted(cache.glob("??/*.compile"))


def test_second_compile_is_taken_whole_without_mlir(tmp_path, project, reference):
    cache = tmp_path / "cache"
    _, first = compile_in(project, cache)
    assert "mlir.ir" in first and len(compile_entries(cache)) == 1
    assert outputs(project) == reference
    for name in reference:
        (project / name).unlink()
    messages, second = compile_in(project, cache)
    assert not messages and not set(HEAVY) & second, sorted(set(HEAVY) & second)
    assert outputs(project) == reference  # the bundle and its dependency file, byte for byte


def test_a_change_to_what_the_key_covers_is_a_miss(tmp_path, project, reference):
    cache = tmp_path / "cache"
    compile_in(project, cache)
    _, imported = compile_in(project, cache, "-O1")  # another option
    assert "mlir.ir" in imported
    text = (project / "saxpy.mlir").read_text()
    (project / "saxpy.mlir").write_text(text + "\n// an edit\n")  # another program
    _, imported = compile_in(project, cache)
    assert "mlir.ir" in imported
    (project / "saxpy.mlir").write_text(text)
    (project / "mlir-offload.toml").write_text("opt-level = 3\n")  # a settings file now in effect
    _, imported = compile_in(project, cache)
    assert "mlir.ir" in imported
    (project / "mlir-offload.toml").unlink()
    _, imported = compile_in(project, cache)  # as at first: taken whole
    assert "mlir.ir" not in imported and outputs(project) == reference
    _, imported = compile_in(project, cache, "-v")  # -v shows the stages: it runs them
    assert "mlir.ir" in imported


def test_recorded_inputs_are_checked(tmp_path):
    """What the compile found by itself (a library it read, a program it ran) is recorded; a change to
    either makes the entry stale."""
    library, program = tmp_path / "libdevice.bc", tmp_path / "tool"
    library.write_bytes(b"BC\xc0\xde" + bytes(100))
    program.write_text("#!/bin/sh\nexit 0\n")
    program.chmod(0o755)
    recorder = compile_cache.Recorder()
    recorder.start()
    try:
        library.read_bytes()
        subprocess.run([str(program)], check=True)
        (tmp_path / "written").write_bytes(b"")  # written, not read: not an input
    finally:
        recorder.stop()
    library.read_bytes()  # after stop: not recorded again (and no harm)
    implicit = recorder.implicit_inputs([])
    assert implicit is not None
    assert [kind for kind, _, _ in implicit] == ["file", "program"]
    assert {path for _, path, _ in implicit} == {str(library.resolve()), str(program.resolve())}
    assert compile_cache.still_valid(implicit)
    library.write_bytes(b"BC\xc0\xde" + bytes(99) + b"\1")
    assert not compile_cache.still_valid(implicit)
    library.write_bytes(b"BC\xc0\xde" + bytes(100))
    assert compile_cache.still_valid(implicit)
    program.write_text("#!/bin/sh\nexit 0 # another build\n")
    assert not compile_cache.still_valid(implicit)


def test_entry_binds_key_and_outputs():
    files = {"a.offload.bc": b"BC\xc0\xde", "a.offload.d": b"a.offload.bc: a.mlir\n"}
    entry = compile_cache.encode("k" * 64, [], files)
    allowed = {"a.offload.bc", "a.offload.d"}.__contains__
    assert compile_cache.decode(entry, "k" * 64, allowed) == ([], files)
    assert compile_cache.decode(entry, "j" * 64, allowed) is None  # another key's
    assert compile_cache.decode(entry, "k" * 64, {"a.offload.bc"}.__contains__) is None  # a file not written here
    assert compile_cache.decode(entry[:-1], "k" * 64, allowed) is None  # truncated
    garbled = bytearray(entry)
    garbled[-3] ^= 1
    assert compile_cache.decode(bytes(garbled), "k" * 64, allowed) is None
    outside = compile_cache.encode("k" * 64, [], {"../../outside.bc": b"x"})
    assert compile_cache.decode(outside, "k" * 64, allowed) is None
    many = [["program", "/bin/sh", [0, 0]]] * (compile_cache.MAX_IMPLICIT_INPUTS + 1)
    assert compile_cache.decode(compile_cache.encode("k" * 64, many, files), "k" * 64, allowed) is None


def test_entry_cannot_make_a_compile_read_a_huge_file_or_a_device(tmp_path):
    huge = tmp_path / "huge"
    with open(huge, "wb") as f:
        f.truncate(compile_cache.MAX_INPUT_BYTES + 1)  # sparse: nothing is written
    os.mkfifo(tmp_path / "fifo")
    for path in (huge, tmp_path / "fifo", Path("/dev/zero"), tmp_path / "missing"):
        assert not compile_cache.still_valid([["file", str(path), "0" * 64]])


def test_forged_entry_is_a_miss_and_rebuilt(tmp_path, project, reference):
    cache = tmp_path / "cache"
    compile_in(project, cache)
    [entry] = compile_entries(cache)
    key = entry.name.split(".")[0]
    entry.write_bytes(
        compile_cache.encode(
            key, [], {"saxpy.offload.bc": b"not the bundle", "saxpy.offload.d": b"saxpy.offload.bc:\n"}
        )[:-1]
    )
    _, imported = compile_in(project, cache)
    assert "mlir.ir" in imported and outputs(project) == reference
    # A well-formed entry another user planted (the cache's owner checks apply to these entries too).
    os.chmod(entry, 0o666)
    _, imported = compile_in(project, cache)
    assert "mlir.ir" in imported and outputs(project) == reference


def test_a_compile_that_printed_is_not_kept(tmp_path, monkeypatch):
    from offload.errors import take_deferred_warnings, warn_when_done
    from offload.options import CompileOptions

    monkeypatch.setenv(CACHE_ENVIRONMENT, str(tmp_path / "cache"))
    monkeypatch.delenv(URL_ENVIRONMENT, raising=False)
    for printed in ("a warning on standard error", "a warning printed when the command is done", None):
        whole = compile_cache.CompileCache("ab" * 32, CompileOptions())
        whole.start()
        if printed == "a warning on standard error":
            print("mlir-offload: warning: something", file=sys.stderr)
        elif printed:
            warn_when_done("mlir-offload: warning: something later")
        whole.store({"a.offload.bc": b"BC\xc0\xde"}, exclude=[])
        take_deferred_warnings()
        kept = [tmp_path / "cache" / "ab" / f"{'ab' * 32}.compile"]
        assert compile_entries(tmp_path / "cache") == ([] if printed else kept), printed
        assert not isinstance(sys.stderr, compile_cache._Watched)  # standard error given back


def test_server_down_warns_once_and_the_compile_is_kept(tmp_path, project, reference):
    with_nothing_listening = "redis://127.0.0.1:1/0"
    messages, _ = compile_in(project, tmp_path / "cache", url=with_nothing_listening)
    assert messages.count("warning:") == 1 and outputs(project) == reference  # asked for the compile and the image
    messages, imported = compile_in(project, tmp_path / "cache", url=with_nothing_listening)
    assert not messages and "mlir.ir" not in imported and outputs(project) == reference  # a local hit: not asked


def test_second_machine_takes_the_whole_compile_from_redis(tmp_path, project, reference):
    from test_remote_cache import RedisServer

    server = RedisServer(tmp_path)
    try:
        compile_in(project, tmp_path / "machine1", url=server.url())
        messages, imported = compile_in(project, tmp_path / "machine2", url=server.url())
        assert not messages and "mlir.ir" not in imported and "redis" in imported
        assert outputs(project) == reference
        assert len(compile_entries(tmp_path / "machine2")) == 1  # kept locally too
        messages, imported = compile_in(project, tmp_path / "machine2", url=server.url())
        assert not messages and "redis" not in imported and outputs(project) == reference
        client = server.client()
        [key] = client.keys(compile_cache.CompileCache.REMOTE_PREFIX + "*")
        value = client.get(key)
        assert value is not None
        client.set(key, value[:-1] + bytes([value[-1] ^ 1]))  # garbled: a miss, rebuilt and written back
        messages, imported = compile_in(project, tmp_path / "machine3", url=server.url())
        assert not messages and "mlir.ir" in imported and outputs(project) == reference
        messages, imported = compile_in(project, tmp_path / "machine4", url=server.url())
        assert not messages and "mlir.ir" not in imported and outputs(project) == reference
    finally:
        server.stop()

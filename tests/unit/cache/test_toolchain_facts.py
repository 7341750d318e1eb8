"""Toolchain facts (offload/cache/facts.py): what a tool says of itself is asked once per tool binary and
remembered in the cache folder, so that a second compile, link or emulated run starts no probe process;
a touched or replaced tool, or a changed toolkit file, is asked again; a damaged, oversized or forged facts
file is ignored and rewritten; an unusable cache folder only means the tools are asked; the bundle is the
same bytes with and without the facts."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, require_tool
from offload.cache import compiles, facts
from offload.cache.folder import FACTS_NAME
from offload.cache.root import CACHE_ENVIRONMENT
from offload.device.device_lto import driver_ptx_feature
from offload.toolchain.tools import clang_version, tool_output

TIMEOUT = 300


@pytest.fixture(autouse=True)
def new_process():
    """Each test starts as a new process would: nothing asked or read yet."""
    facts.forget()
    yield
    facts.forget()


def fake_tool(path: Path, log: Path, says: str) -> Path:
    """A tool that logs each run to `log` and prints `says` (to stderr too: clang's -### writes there)."""
    path.write_text(f"#!/bin/sh\necho run >> '{log}'\nprintf '%s\\n' '{says}'\nprintf '%s\\n' '{says}' >&2\n")
    path.chmod(0o755)
    return path


def runs(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


def facts_file() -> Path:
    return Path(os.environ[CACHE_ENVIRONMENT]) / FACTS_NAME


@pytest.mark.no_toolchain
def test_an_answer_is_asked_once_then_remembered_across_processes(tmp_path):
    log = tmp_path / "log"
    tool = fake_tool(tmp_path / "clang", log, "clang version 22.1.8 (fake)")
    assert clang_version(str(tool)) == "22.1.8"
    assert clang_version(str(tool)) == "22.1.8"
    assert runs(log) == 1  # once per process
    facts.forget()  # a new process: the file answers
    assert clang_version(str(tool)) == "22.1.8"
    assert runs(log) == 1
    stored = json.loads(facts_file().read_bytes())
    assert stored["schema"] == facts.SCHEMA and len(stored["facts"]) == 1
    assert stat.S_IMODE(facts_file().stat().st_mode) == 0o600


@pytest.mark.no_toolchain
def test_a_touched_or_replaced_tool_is_asked_again(tmp_path):
    log = tmp_path / "log"
    tool = fake_tool(tmp_path / "clang", log, "clang version 22.1.8 (fake)")
    assert clang_version(str(tool)) == "22.1.8"
    status = tool.stat()
    os.utime(tool, ns=(status.st_atime_ns, status.st_mtime_ns + 1_000_000_000))  # touched: same bytes
    facts.forget()
    assert clang_version(str(tool)) == "22.1.8"
    assert runs(log) == 2
    replacement = fake_tool(tmp_path / "new-clang", log, "clang version 23.0.0 (fake)")
    os.utime(replacement, ns=(status.st_atime_ns, status.st_mtime_ns))
    os.replace(replacement, tool)  # replaced: another inode, another answer
    facts.forget()
    assert clang_version(str(tool)) == "23.0.0"
    assert runs(log) == 3
    # The same binary through another name is its own fact (clang's answer names the path it was run as).
    link = tmp_path / "clang-23"
    link.symlink_to(tool)
    assert clang_version(str(link)) == "23.0.0"
    assert runs(log) == 4


@pytest.mark.no_toolchain
def test_a_tool_that_cannot_run_is_not_remembered(tmp_path):
    assert tool_output([str(tmp_path / "missing"), "--version"]) == ""
    broken = tmp_path / "broken"
    broken.write_text("not a program")
    broken.chmod(0o644)  # exists, cannot be run (PermissionError): asked again each time, never stored
    assert tool_output([str(broken), "--version"]) == ""
    assert not facts_file().exists()


@pytest.mark.no_toolchain
def test_the_ptx_feature_is_asked_again_when_the_toolkit_version_changes(tmp_path):
    log = tmp_path / "log"
    clang = fake_tool(tmp_path / "clang", log, 'clang version 22.1.8 "--plugin-opt=-mattr=+ptx88"')
    cuda = tmp_path / "cuda"
    (cuda / "include").mkdir(parents=True)
    (cuda / "include" / "cuda.h").write_text("#define CUDA_VERSION 13000\n")
    assert driver_ptx_feature(str(clang), "sm_80", str(cuda), 22) == "+ptx88"
    facts.forget()
    assert driver_ptx_feature(str(clang), "sm_80", str(cuda), 22) == "+ptx88"
    assert driver_ptx_feature(str(clang), "sm_80", str(cuda), 21) is None  # the remembered major is checked
    assert runs(log) == 1
    assert driver_ptx_feature(str(clang), "sm_90", str(cuda), 22) == "+ptx88"  # another arch: asked
    assert runs(log) == 2
    (cuda / "version.json").write_text('{"cuda": {"version": "13.1.0"}}')  # a toolkit upgrade
    facts.forget()
    assert driver_ptx_feature(str(clang), "sm_80", str(cuda), 22) == "+ptx88"
    assert runs(log) == 3


def _remember_one(tmp_path: Path) -> tuple[Path, Path]:
    log = tmp_path / "log"
    tool = fake_tool(tmp_path / "ptxas", log, "Cuda compilation tools, release 13.0, V13.0.88")
    assert tool_output([str(tool), "--version"]).startswith("Cuda compilation tools")
    assert runs(log) == 1
    return tool, log


def _write_facts(data: bytes) -> None:
    path = facts_file()
    path.write_bytes(data)
    path.chmod(0o600)


@pytest.mark.no_toolchain
@pytest.mark.parametrize(
    "damage",
    [
        "truncated",
        "not json",
        "not utf-8",
        "oversized",
        "wrong schema",
        "extra field",
        "bad key",
        "value too deep",
        "a list at the top",
        "deeply nested json",
    ],
)
def test_a_damaged_facts_file_is_ignored_and_rewritten(tmp_path, damage):
    tool, log = _remember_one(tmp_path)
    whole = facts_file().read_bytes()
    document = json.loads(whole)
    ((key, value),) = document["facts"].items()
    damaged = {
        "truncated": whole[: len(whole) // 2],
        "not json": b"{'schema': 1}",
        "not utf-8": b'{"schema": "\xff\xfe"}',
        "oversized": b" " * (facts.MAX_FACTS_BYTES + 1) + whole,
        "wrong schema": json.dumps({"schema": "mlir-offload toolchain facts 0", "facts": document["facts"]}).encode(),
        "extra field": json.dumps({**document, "more": 1}).encode(),
        "bad key": json.dumps({"schema": facts.SCHEMA, "facts": {key[:-1] + "X": value}}).encode(),
        "value too deep": json.dumps({"schema": facts.SCHEMA, "facts": {key: [[[[[value]]]]]}}).encode(),
        "a list at the top": json.dumps([document]).encode(),
        "deeply nested json": b"[" * 100_000 + b"]" * 100_000,
    }[damage]
    _write_facts(damaged)
    facts.forget()
    assert tool_output([str(tool), "--version"]) == value  # asked again, no error
    assert runs(log) == 2
    assert json.loads(facts_file().read_bytes()) == document  # rewritten whole
    facts.forget()
    assert tool_output([str(tool), "--version"]) == value
    assert runs(log) == 2


@pytest.mark.no_toolchain
def test_a_forged_answer_of_the_wrong_shape_is_asked_again(tmp_path):
    """The file's JSON is well formed, but the answer under the PTX feature's key is not a +ptxNN feature
    (it would reach llc's command line): the probe's own check refuses it."""
    log = tmp_path / "log"
    clang = fake_tool(tmp_path / "clang", log, 'clang version 22.1.8 "--plugin-opt=-mattr=+ptx88"')
    cuda = tmp_path / "cuda"
    cuda.mkdir()
    assert driver_ptx_feature(str(clang), "sm_80", str(cuda), 22) == "+ptx88"
    document = json.loads(facts_file().read_bytes())
    for forged in ([22, "+ptx88 -load=/tmp/x.so"], [22], "+ptx88", [True, "+ptx88"]):
        (key,) = document["facts"]
        document["facts"][key] = forged
        _write_facts(json.dumps(document).encode())
        facts.forget()
        assert driver_ptx_feature(str(clang), "sm_80", str(cuda), 22) == "+ptx88"
        assert json.loads(facts_file().read_bytes())["facts"][key] == [22, "+ptx88"]
    assert runs(log) == 5


@pytest.mark.no_toolchain
def test_a_link_or_fifo_in_place_of_the_file_is_not_read(tmp_path):
    tool, log = _remember_one(tmp_path)
    elsewhere = tmp_path / "elsewhere.json"
    facts_file().rename(elsewhere)
    facts_file().symlink_to(elsewhere)
    facts.forget()
    tool_output([str(tool), "--version"])
    assert runs(log) == 2  # the link was not followed; the rename replaced it with a file
    assert not facts_file().is_symlink()
    facts_file().unlink()
    os.mkfifo(facts_file())
    facts.forget()
    tool_output([str(tool), "--version"])  # no hang on the FIFO
    assert runs(log) == 3


@pytest.mark.no_toolchain
def test_an_unusable_cache_folder_only_means_asking(tmp_path, monkeypatch, capfd):
    log = tmp_path / "log"
    tool = fake_tool(tmp_path / "clang", log, "clang version 22.1.8 (fake)")
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("")
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o1777)  # writable by every user: not trusted
    for root in (not_a_folder / "cache", shared):
        monkeypatch.setenv(CACHE_ENVIRONMENT, str(root))
        facts.forget()
        assert clang_version(str(tool)) == "22.1.8"
        assert clang_version(str(tool)) == "22.1.8"  # still once per process
    assert runs(log) == 2
    assert not (shared / FACTS_NAME).exists()
    assert capfd.readouterr().err == ""


@pytest.mark.no_toolchain
def test_the_file_keeps_the_newest_facts_within_its_bound(tmp_path, monkeypatch):
    monkeypatch.setattr(facts, "MAX_FACTS", 3)
    log = tmp_path / "log"
    tool = fake_tool(tmp_path / "tool", log, "tool version 1")
    for flag in ("-a", "-b", "-c", "-d"):
        tool_output([str(tool), flag])
    kept = json.loads(facts_file().read_bytes())["facts"]
    assert len(kept) == 3
    facts.forget()
    for flag in ("-b", "-c", "-d"):
        tool_output([str(tool), flag])
    assert runs(log) == 4  # the three newest were remembered
    tool_output([str(tool), "-a"])
    assert runs(log) == 5


@pytest.mark.no_toolchain
def test_a_whole_compile_records_the_tools_whose_answers_it_used(tmp_path):
    """A remembered answer starts no process, yet the whole-compile cache must still see the tool: an entry
    stored then is dropped when the tool changes, as when the tool had run."""
    tool, _ = _remember_one(tmp_path)
    facts.forget()
    recorder = compiles.Recorder()
    recorder.start()
    try:
        tool_output([str(tool), "--version"])
    finally:
        recorder.stop()
    assert recorder.programs == [str(tool.resolve())]
    implicit = recorder.implicit_inputs([])
    assert implicit and compiles.still_valid(implicit)
    tool.write_text(tool.read_text() + "# changed\n")
    assert not compiles.still_valid(implicit)


# ---- whole processes: compile, link, cache --clear -----------------------------------------------------

# Runs mlir-offload with an audit hook that logs every process it (or a child it forks) starts.
LOGGING_LAUNCHER = """
import json, os, runpy, sys
log = os.environ["PROBES_TEST_LOG"]
def hook(event, arguments):
    if event == "subprocess.Popen":
        with open(log, "a") as f:
            f.write(json.dumps([os.fsdecode(word) for word in arguments[1]]) + "\\n")
sys.addaudithook(hook)
sys.argv = ["mlir-offload", *sys.argv[1:]]
runpy.run_module("offload", run_name="__main__")
"""


def _is_probe(words: list[str]) -> bool:
    """A process that asks a tool about itself: --version, -dumpmachine, clang's -###, opt's empty module."""
    return (
        words[1:] in (["--version"], ["-dumpmachine"], ["--help"], ["--includedir"])
        or "-###" in words
        or words[1:4] == ["-o", "-", "-"]
    )


def _run(tmp_path: Path, cache: Path, *args: str) -> tuple[list[list[str]], list[list[str]]]:
    """(every process started, the probes among them) by one mlir-offload command."""
    log = tmp_path / "processes.log"
    log.unlink(missing_ok=True)
    launcher = tmp_path / "launcher.py"
    launcher.write_text(LOGGING_LAUNCHER)
    env = {**os.environ, "PYTHONPATH": str(REPO), CACHE_ENVIRONMENT: str(cache), "PROBES_TEST_LOG": str(log)}
    done = subprocess.run(
        [sys.executable, str(launcher), *args], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=TIMEOUT
    )
    assert done.returncode == 0, done.stderr
    started = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return started, [words for words in started if _is_probe(words)]


def test_a_second_compile_and_link_start_no_probe_and_build_the_same_bytes(tmp_path):
    require_tool("clang-22", 22)
    require_tool("opt-22", 22)
    require_tool("ptxas")
    program = REPO / "examples" / "saxpy.mlir"
    compile_args = ["compile", "--no-cache", "--device-image=cubin", "--offload-arch", "sm_80", str(program)]
    cache = tmp_path / "cache"
    first, first_probes = _run(tmp_path, cache, *compile_args, "-o", "first.bc")
    assert any("--version" in words for words in first_probes)  # ptxas's, at least
    assert any("-###" in words for words in first_probes)  # the device link's PTX feature
    assert (cache / FACTS_NAME).is_file()
    second, second_probes = _run(tmp_path, cache, *compile_args, "-o", "second.bc")
    assert second_probes == []
    assert len(second) == len(first) - len(first_probes)  # the same work, less the probes
    # Without a usable cache folder: the tools are asked again, and the bundle is the same.
    unusable = tmp_path / "first.bc" / "cache"
    _, unusable_probes = _run(tmp_path, unusable, *compile_args, "-o", "unusable.bc")
    assert len(unusable_probes) == len(first_probes)
    assert (tmp_path / "first.bc").read_bytes() == (tmp_path / "second.bc").read_bytes()
    assert (tmp_path / "first.bc").read_bytes() == (tmp_path / "unusable.bc").read_bytes()
    # A link asks clang and ptxas about themselves once, then no more.
    _, link_probes = _run(tmp_path, cache, "link", "first.bc", "-o", "first")
    assert link_probes
    _, relink_probes = _run(tmp_path, cache, "link", "first.bc", "-o", "again")
    assert relink_probes == []
    assert (tmp_path / "first").read_bytes() == (tmp_path / "again").read_bytes()
    # `cache --clear` forgets the facts: every tool is asked again.
    _run(tmp_path, cache, "cache", "--clear")
    assert not (cache / FACTS_NAME).exists()
    _, cleared_probes = _run(tmp_path, cache, *compile_args, "-o", "cleared.bc")
    assert len(cleared_probes) == len(first_probes)


@pytest.mark.no_toolchain
def test_concurrent_writers_leave_a_whole_file(tmp_path):
    """Eight processes adding facts at once (a `make -j`): the file is always one writer's whole file."""
    log = tmp_path / "log"
    tool = fake_tool(tmp_path / "tool", log, "tool version 1")
    children = []
    for child in range(8):
        pid = os.fork()
        if pid == 0:
            try:
                for flag in range(6):
                    facts.forget()
                    tool_output([str(tool), f"-{child}-{flag}"])
                    assert facts.decode(facts_file().read_bytes())  # never torn, never empty
            except BaseException:  # noqa: BLE001 - a forked child must never return into pytest
                os._exit(1)
            os._exit(0)
        children.append(pid)
    assert all(os.waitpid(pid, 0)[1] == 0 for pid in children)
    kept = facts.decode(facts_file().read_bytes())
    assert 1 <= len(kept) <= 48  # the last writer's, with the others' as the races left them
    assert all(value == "tool version 1\ntool version 1\n" for value in kept.values())

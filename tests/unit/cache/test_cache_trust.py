"""The local device image cache against what another user, a careless script or a broken disk puts in
its way: an entry swapped from another key, links, a FIFO, a forged payload, another user's entry, a
folder others can write into. Each compile must give the bytes --no-cache gives, exit 0, and never hang."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from cache_compiles import SAXPY, TIMEOUT, compile_saxpy
from conftest import REPO, require_tool
from emulation import require_emulation
from offload.cache.folder import CacheFolder
from offload.cache.root import CACHE_ENVIRONMENT
from offload.device import cache_entry
from offload.device.images import DeviceImage
from offload.formats.targets import parse_offload_arch


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> dict[str, bytes]:
    """What --no-cache gives, for -O3 and -O1."""
    folder = tmp_path_factory.mktemp("reference")
    outputs = {}
    for level in ("3", "1"):
        compile_saxpy(None, folder / f"O{level}.bc", f"-O{level}")
        outputs[level] = (folder / f"O{level}.bc").read_bytes()
    return outputs


def only_entry(cache: Path) -> Path:
    [entry] = sorted(cache.glob("??/*.image"))
    return entry


def check_rebuilt(cache: Path, out: Path, reference: bytes) -> str:
    """A compile through `cache` that must miss and give the reference bytes; returns its stderr."""
    done = compile_saxpy(cache, out)
    assert "cache: miss sm_80" in done.stderr and "cache: hit" not in done.stderr
    assert out.read_bytes() == reference
    return done.stderr


def test_entry_swapped_from_another_key_is_a_miss(tmp_path, reference):
    cache = tmp_path / "cache"
    compile_saxpy(cache, tmp_path / "o1.bc", "-O1")
    other = only_entry(cache)
    compile_saxpy(cache, tmp_path / "o3.bc")
    [mine] = [e for e in cache.glob("??/*.image") if e != other]
    mine.write_bytes(other.read_bytes())  # valid bitcode for the same target, but another program's
    check_rebuilt(cache, tmp_path / "again.bc", reference["3"])
    assert compile_saxpy(cache, tmp_path / "hit.bc").stderr.count("cache: hit sm_80") == 1  # rewritten
    assert (tmp_path / "hit.bc").read_bytes() == reference["3"]


def test_link_to_dev_zero_is_a_miss(tmp_path, reference):
    cache = tmp_path / "cache"
    compile_saxpy(cache, tmp_path / "first.bc")
    entry = only_entry(cache)
    entry.unlink()
    entry.symlink_to("/dev/zero")
    check_rebuilt(cache, tmp_path / "out.bc", reference["3"])


def test_fifo_in_place_of_an_entry_does_not_hang(tmp_path, reference):
    cache = tmp_path / "cache"
    compile_saxpy(cache, tmp_path / "first.bc")
    entry = only_entry(cache)
    entry.unlink()
    os.mkfifo(entry)
    check_rebuilt(cache, tmp_path / "out.bc", reference["3"])


def test_huge_entry_is_a_miss_without_reading_it(tmp_path, monkeypatch):
    folder = CacheFolder(tmp_path / "cache")
    assert folder.open()
    key = "ab" * 32
    folder.write(key, b"x")
    with open(tmp_path / "cache" / "ab" / f"{key}.image", "r+b") as f:
        f.truncate(4 << 30)  # sparse: 4 GiB that are never read
    assert folder.read(key) is None


def test_link_in_place_of_a_shard_folder_writes_nothing_outside(tmp_path, reference):
    cache = tmp_path / "cache"
    compile_saxpy(cache, tmp_path / "first.bc")
    entry = only_entry(cache)
    shard = entry.parent
    outside = tmp_path / "outside"
    outside.mkdir()
    for child in shard.iterdir():
        child.unlink()
    shard.rmdir()
    shard.symlink_to(outside, target_is_directory=True)
    stderr = check_rebuilt(cache, tmp_path / "out.bc", reference["3"])
    assert list(outside.iterdir()) == []
    assert stderr.count("warning:") == 1 and "mlir-offload cache --clear" in stderr
    assert shard.is_symlink()


def _forge(entry: Path, bitcode: bytes | None = None, native: bytes | None = None) -> None:
    """Rewrite `entry` as a well-formed entry under its own key whose bitcode or native code is replaced."""
    data = entry.read_bytes()
    key = cache_entry.entry_key(data)
    assert key is not None
    target = parse_offload_arch("sm_80")[0]
    image = cache_entry.decode(data, key, target) or cache_entry.decode(data, key, target, native=True)
    assert image is not None
    if bitcode is not None:
        image = replace(image, bitcode=bitcode)
    if native is not None:
        image = replace(image, native=replace(image.native, data=native))
    entry.write_bytes(cache_entry.encode(key, image))


@pytest.mark.parametrize("payload", [b"not bitcode at all", b"BC\xc0\xde" + b"\xff" * 64, b""])
def test_forged_payload_is_a_miss_never_embedded(tmp_path, reference, payload):
    cache = tmp_path / "cache"
    compile_saxpy(cache, tmp_path / "first.bc")
    _forge(only_entry(cache), bitcode=payload)
    check_rebuilt(cache, tmp_path / "out.bc", reference["3"])


@pytest.fixture(scope="module")
def cubin_reference(tmp_path_factory) -> bytes:
    from conftest import find_tool

    if find_tool("ptxas") is None:
        pytest.skip("ptxas not found (scripts/setup's CUDA toolkit)")
    out = tmp_path_factory.mktemp("cubin") / "reference.bc"
    compile_saxpy(None, out, "--device-image=cubin")
    return out.read_bytes()


def test_cubin_hit_brings_its_native_code(tmp_path, cubin_reference):
    cache = tmp_path / "cache"
    compile_saxpy(cache, tmp_path / "first.bc", "--device-image=cubin")
    done = compile_saxpy(cache, tmp_path / "hit.bc", "--device-image=cubin")
    assert "cache: hit sm_80" in done.stderr and "ptxas" not in done.stderr  # neither codegen nor ptxas ran
    assert (tmp_path / "hit.bc").read_bytes() == cubin_reference


def _host_elf_object() -> bytes:
    import llvmlite.binding as llvm
    from llvmlite import ir

    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    module = ir.Module(name="host")
    function = ir.Function(module, ir.FunctionType(ir.VoidType(), []), name="saxpy")  # the kernel's name
    ir.IRBuilder(function.append_basic_block()).ret_void()
    machine = llvm.Target.from_default_triple().create_target_machine()
    return machine.emit_object(llvm.parse_assembly(str(module)))


@pytest.mark.parametrize("forgery", ["bitcode", "garbage", "truncated", "host object", "no kernel symbol"])
def test_forged_entry_on_the_cubin_path_is_a_miss(tmp_path, cubin_reference, forgery):
    cache = tmp_path / "cache"
    compile_saxpy(cache, tmp_path / "first.bc", "--device-image=cubin")
    entry = only_entry(cache)
    data = entry.read_bytes()
    key = cache_entry.entry_key(data)
    assert key is not None
    cubin = cache_entry.decode(data, key, parse_offload_arch("sm_80")[0], native=True).native.data
    if forgery == "bitcode":
        _forge(entry, bitcode=b"BC\xc0\xde" + bytes(range(256)) * 4)  # LLVM would abort on it in-process
    elif forgery == "garbage":
        _forge(entry, native=os.urandom(len(cubin)))
    elif forgery == "truncated":
        _forge(entry, native=cubin[: len(cubin) // 2])
    elif forgery == "host object":
        _forge(entry, native=_host_elf_object())  # an ELF file with the kernel's symbol, for the wrong machine
    else:
        _forge(entry, native=cubin.replace(b"saxpy", b"saxpz"))
    done = compile_saxpy(cache, tmp_path / "out.bc", "--device-image=cubin")
    assert "cache: miss sm_80" in done.stderr
    assert (tmp_path / "out.bc").read_bytes() == cubin_reference


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown to another user needs root")
def test_entry_owned_by_another_user_is_a_miss(tmp_path, reference):
    cache = tmp_path / "cache"
    compile_saxpy(cache, tmp_path / "first.bc")
    entry = only_entry(cache)
    os.chown(entry, 4242, 4242)
    check_rebuilt(cache, tmp_path / "out.bc", reference["3"])
    assert only_entry(cache).stat().st_uid == os.geteuid()  # replaced by one of the user's own


@pytest.mark.parametrize("mode", [0o777, 0o1777])
def test_folder_others_can_write_is_refused_with_one_warning(tmp_path, reference, mode):
    cache = tmp_path / "shared"
    cache.mkdir()
    cache.chmod(mode)
    done = compile_saxpy(cache, tmp_path / "out.bc")
    warnings = [line for line in done.stderr.splitlines() if "warning:" in line]
    assert len(warnings) == 1 and "can be written by every user" in warnings[0]
    assert "MLIR_OFFLOAD_CACHE_DIR" in warnings[0] and "MLIR_OFFLOAD_CACHE_MODE=team" in warnings[0]
    assert (tmp_path / "out.bc").read_bytes() == reference["3"]
    assert list(cache.iterdir()) == []  # nothing stored in it


def test_team_mode_takes_a_group_writable_folder(tmp_path, reference):
    cache = tmp_path / "team"
    cache.mkdir()
    cache.chmod(0o2770)
    compile_saxpy(cache, tmp_path / "first.bc", env={"MLIR_OFFLOAD_CACHE_MODE": "team"})
    done = compile_saxpy(cache, tmp_path / "out.bc", env={"MLIR_OFFLOAD_CACHE_MODE": "team"})
    assert "cache: hit sm_80" in done.stderr and "warning" not in done.stderr
    assert (tmp_path / "out.bc").read_bytes() == reference["3"]
    assert only_entry(cache).stat().st_mode & 0o777 == 0o660
    assert only_entry(cache).parent.stat().st_mode & 0o7777 == 0o2770


def test_entry_format_binds_key_and_target():
    target, other = parse_offload_arch("sm_80,sm_90")
    from llvmlite import ir

    from offload.packager.bitcode_ident import bitcode_module  # noqa: F401 - the reader the check uses

    module = ir.Module(name="m")
    module.triple = target.triple
    function = ir.Function(module, ir.FunctionType(ir.VoidType(), []), name="kernel")
    ir.IRBuilder(function.append_basic_block()).ret_void()
    import llvmlite.binding as llvm

    bitcode = llvm.parse_assembly(str(module)).as_bitcode()
    key = "12" * 32
    data = cache_entry.encode(key, DeviceImage(target, bitcode, ["kernel"], []))
    assert cache_entry.decode(data, key, target).bitcode == bitcode
    assert cache_entry.decode(data, "34" * 32, target) is None  # another key
    assert cache_entry.decode(data, key, other) is None  # another target
    assert cache_entry.decode(data[:-1], key, target) is None  # truncated
    assert cache_entry.decode(data[:50] + b"\0" + data[51:], key, target) is None  # garbled
    missing_kernel = cache_entry.encode(key, DeviceImage(target, bitcode, ["other_kernel"], []))
    assert cache_entry.decode(missing_kernel, key, target) is None  # says it defines what it does not


def test_cache_command_shows_clears_and_zeroes(tmp_path):
    cache = tmp_path / "cache"
    compile_saxpy(cache, tmp_path / "a.bc")
    compile_saxpy(cache, tmp_path / "b.bc")
    environment = {**os.environ, CACHE_ENVIRONMENT: str(cache), "PYTHONPATH": str(REPO)}
    environment.pop("MLIR_OFFLOAD_REMOTE_CACHE", None)

    def cache_command(*flags):
        done = subprocess.run(
            [sys.executable, "-m", "offload", "cache", *flags],
            env=environment,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
        assert done.returncode == 0, done.stderr
        return dict(
            line.split(None, 1)
            if not line.startswith(("cache folder", "remote cache"))
            else [line[:12], line[12:].strip()]
            for line in done.stdout.splitlines()
            if "  " in line
        )

    shown = cache_command()
    assert shown["cache folder"].startswith(str(cache))
    assert shown["hits"].startswith("1 (local 1") and shown["misses"] == "1"
    assert shown["size"].endswith("in 1 images (bound 512.0 MiB)")
    shown = cache_command("-C", "-z")
    assert shown["hits"].startswith("0 ") and shown["misses"] == "0"
    assert shown["size"].startswith("0 bytes in 0 images")
    assert list(cache.glob("??/*.image")) == []


def test_cached_image_with_device_globals_gives_the_same_bundle(tmp_path):
    """The globals' sizes of a cached image are read by LLVM in a forked child: the same bytes as --no-cache."""
    program = str(REPO / "examples" / "device_globals.mlir")
    environment = {**os.environ, CACHE_ENVIRONMENT: str(tmp_path / "cache"), "PYTHONPATH": str(REPO)}
    environment.pop("MLIR_OFFLOAD_REMOTE_CACHE", None)
    outputs = []
    for name, flags in (("reference", ["--no-cache"]), ("first", []), ("hit", ["-v"])):
        out = tmp_path / f"{name}.bc"
        done = subprocess.run(
            [sys.executable, "-m", "offload", "compile", program, "--offload-arch", "sm_80", "-o", str(out), *flags],
            env=environment,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
        assert done.returncode == 0, done.stderr
        outputs.append(out.read_bytes())
    assert "cache: hit sm_80" in done.stderr
    assert outputs[0] == outputs[1] == outputs[2]


# ---- the emulator's build cache (offload/toolchain/build_cache.py): retarget.so runs inside opt, runtime.o
# in every emulated executable, so the same rule holds, and what is taken must match its recorded digest.

OTHER_UID, OTHER_GID = 12345, 4242  # no such user or group: "another user" in a temporary folder

PLANTED = """\
#include <stdio.h>
__attribute__((constructor)) static void planted(void) {
  FILE *f = fopen(MARKER, "w");
  if (f) fclose(f);
}
"""


def planted_builds(folder: Path, marker: Path) -> tuple[bytes, bytes]:
    """(a shared object, an object file) whose code, once loaded or linked and run, creates `marker`."""
    require_emulation()
    clang = require_tool("clang-22", 22)
    source = folder / "planted.c"
    source.write_text(PLANTED)
    define = f'-DMARKER="{marker}"'
    plugin, runtime = folder / "planted.so", folder / "planted.o"
    subprocess.run([clang, "-shared", "-fPIC", define, str(source), "-o", str(plugin)], check=True)
    subprocess.run([clang, "-c", "-fPIC", define, str(source), "-o", str(runtime)], check=True)
    return plugin.read_bytes(), runtime.read_bytes()


def emulated_link(bundle: Path, env: dict, *flags: str) -> subprocess.CompletedProcess:
    """`link --emulate` of `bundle` into app beside it, with `env` over this test's environment (None: unset)."""
    environment = {**os.environ, "PYTHONPATH": str(REPO), **{k: v for k, v in env.items() if v is not None}}
    for name in [name for name, value in env.items() if value is None]:
        environment.pop(name, None)
    command = [sys.executable, "-m", "offload", "link", str(bundle), "--emulate", *flags, "-o", "app"]
    return subprocess.run(command, env=environment, capture_output=True, text=True, timeout=600, cwd=bundle.parent)


def cached_paths(bundle: Path, env: dict, monkeypatch) -> tuple[Path, Path]:
    """Where a link with `env` takes retarget.so and runtime.o from (its --dry-run names the runtime)."""
    from offload.toolchain.emulate import find_emulation_tools, pass_plugin

    for name, value in env.items():
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    plugin = Path(pass_plugin(find_emulation_tools(), "", dry_run=True))
    dry = emulated_link(bundle, env, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    runtime = next(word for word in dry.stdout.split() if word.endswith("/runtime.o"))
    return plugin, Path(runtime)


def saxpy_bundle(folder: Path) -> Path:
    bundle = folder / "saxpy.offload.bc"
    done = subprocess.run(
        [sys.executable, "-m", "offload", "compile", SAXPY, "--offload-arch", "sm_80", "-o", str(bundle)],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 0, done.stderr
    return bundle


def plant(path: Path, content: bytes, owner: int | None = None) -> None:
    """`content` at `path` with the digest a planter would write beside it, all owned by `owner`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    digest = path.parent / (path.name + ".sha256")
    digest.write_text(hashlib.sha256(content).hexdigest())
    if owner is not None:
        for made in (path, digest, path.parent, path.parent.parent):
            os.chown(made, owner, owner)


def warnings_in(done: subprocess.CompletedProcess) -> list[str]:
    return [line for line in done.stderr.splitlines() if "warning:" in line]


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown to another user needs root")
def test_emulator_builds_planted_in_a_shared_cache_folder_are_never_loaded(tmp_path, monkeypatch):
    """Another user (uid 12345) plants retarget.so and runtime.o, with matching digests, under the
    predictable keys of a cache folder every user can write: opt must not load the one, the link must not
    take the other; one warning line, builds of the user's own, and the program runs."""
    marker = tmp_path / "planted-code-ran"
    plugin_bytes, runtime_bytes = planted_builds(tmp_path, marker)
    bundle = saxpy_bundle(tmp_path)
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    env = {"MLIR_OFFLOAD_CACHE_DIR": str(shared), "MLIR_OFFLOAD_EMULATOR_CACHE": None}
    plugin, runtime = cached_paths(bundle, env, monkeypatch)
    assert plugin.is_relative_to(shared) and runtime.is_relative_to(shared)
    plant(plugin, plugin_bytes, owner=OTHER_UID)
    plant(runtime, runtime_bytes, owner=OTHER_UID)
    done = emulated_link(bundle, env)
    assert done.returncode == 0, done.stderr
    [warning] = warnings_in(done)
    expected = f"the emulator's build cache '{shared / 'emulator'}' is in a folder that can be written by every user"
    assert expected in warning and "not used" in warning and "MLIR_OFFLOAD_EMULATOR_CACHE" in warning, warning
    ran = subprocess.run([str(tmp_path / "app")], capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0 and "saxpy: ok" in ran.stdout, ran.stderr
    assert not marker.exists()
    assert plugin.read_bytes() == plugin_bytes  # another user's files are left alone, never replaced


def test_emulator_build_that_does_not_match_its_digest_is_rebuilt(tmp_path, monkeypatch):
    """The user's own cache folder: an entry whose bytes do not match the digest recorded at build time,
    or a link in place of the file, is not linked: one warning line, a fresh build replaces it, and the
    next link takes it silently."""
    marker = tmp_path / "planted-code-ran"
    _, runtime_bytes = planted_builds(tmp_path, marker)
    bundle = saxpy_bundle(tmp_path)
    private = tmp_path / "emulator-cache"
    session = Path(os.environ["MLIR_OFFLOAD_EMULATOR_CACHE"])
    if session.is_dir():  # the plugin built once a session (half a minute), copied with its digests
        shutil.copytree(session, private, ignore=shutil.ignore_patterns(".*"))
    env = {"MLIR_OFFLOAD_EMULATOR_CACHE": str(private)}
    assert emulated_link(bundle, env).returncode == 0
    _, runtime = cached_paths(bundle, env, monkeypatch)
    recorded = (runtime.parent / "runtime.o.sha256").read_text()
    for tamper in ("bytes", "link"):
        runtime.unlink()
        if tamper == "bytes":
            runtime.write_bytes(runtime_bytes)  # the user's own file, mode 600: only the digest tells
            runtime.chmod(0o600)
        else:
            (tmp_path / "elsewhere.o").write_bytes(runtime_bytes)
            runtime.symlink_to(tmp_path / "elsewhere.o")
        done = emulated_link(bundle, env)
        assert done.returncode == 0, done.stderr
        [warning] = warnings_in(done)
        assert f"'{private}' holds a '{runtime.parent.name}/runtime.o' that" in warning, warning
        ran = subprocess.run([str(tmp_path / "app")], capture_output=True, text=True, timeout=300)
        assert ran.returncode == 0 and "saxpy: ok" in ran.stdout, ran.stderr
        assert not marker.exists()
        assert not runtime.is_symlink() and hashlib.sha256(runtime.read_bytes()).hexdigest() == recorded
        again = emulated_link(bundle, env)
        assert again.returncode == 0 and warnings_in(again) == [], again.stderr
    assert [p.name for p in private.iterdir() if p.name.startswith(".")] == []  # no temporaries left


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown to another user needs root")
def test_emulator_team_cache_takes_the_groups_builds_only(tmp_path, monkeypatch):
    """MLIR_OFFLOAD_CACHE_MODE=team: a teammate's build (another user, the folder's group) is taken; one of
    a user outside the group is not, with one warning."""
    bundle = saxpy_bundle(tmp_path)
    team = tmp_path / "team"
    session = Path(os.environ["MLIR_OFFLOAD_EMULATOR_CACHE"])
    if session.is_dir():
        shutil.copytree(session, team, ignore=shutil.ignore_patterns(".*"))
    team.mkdir(exist_ok=True)
    team.chmod(0o2770)
    env = {"MLIR_OFFLOAD_EMULATOR_CACHE": str(team), "MLIR_OFFLOAD_CACHE_MODE": "team"}
    assert emulated_link(bundle, env).returncode == 0
    _, runtime = cached_paths(bundle, env, monkeypatch)
    group = team.stat().st_gid
    for owner, expected in (((OTHER_UID, group), []), ((OTHER_UID, OTHER_GID), ["is not yours alone"])):
        for made in (runtime, runtime.parent / "runtime.o.sha256", runtime.parent):
            os.chown(made, *owner)
        done = emulated_link(bundle, env)
        assert done.returncode == 0, done.stderr
        assert [any(e in w for e in expected) for w in warnings_in(done)] == [True] * len(expected), done.stderr
        ran = subprocess.run([str(tmp_path / "app")], capture_output=True, text=True, timeout=300)
        assert ran.returncode == 0 and "saxpy: ok" in ran.stdout, ran.stderr

"""Hostile and careless input: every command against every malformed-input class gives exit 1,
one compiler-style error line, no traceback, and leaves no file behind or changed, within 256 MiB of address
space (RLIMIT_AS) and a hang timeout. The inputs are made from the real files in tests/data/fuzz."""

from __future__ import annotations

import gzip
import io
import json
import os
import resource
import shutil
import struct
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from conftest import DATA, REPO
from offload.formats.elf import SHT_NOBITS, read_elf

pytestmark = pytest.mark.no_toolchain  # target-side readers only: no clang, CUDA toolkit or MLIR needed

SEEDS = DATA / "fuzz"
MEMORY_LIMIT = 256 << 20


def run_limited(args: list[str], cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    """`mlir-offload ARGS` under RLIMIT_AS 256 MiB, killed after 60 s (a hang, not a timing check)."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))

    return subprocess.run(
        [sys.executable, "-m", "offload", *args], cwd=cwd, capture_output=True, preexec_fn=limit, timeout=60, env=env
    )


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() if p.is_file() else b"<dir>" for p in folder.rglob("*")}


def assert_one_line_error(done: subprocess.CompletedProcess, what: str) -> str:
    stderr = done.stderr.decode("utf-8", "replace")
    assert done.returncode == 1, f"{what}: exit {done.returncode}: {stderr[-2000:]}"
    lines = stderr.splitlines()
    assert len(lines) == 1, f"{what}: {stderr[-2000:]}"
    assert ": error: " in lines[0] and "internal error" not in lines[0] and "Traceback" not in stderr, lines[0]
    return lines[0]


def section_header_at(elf, name: str) -> int:
    data = elf.data
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    (shentsize,) = struct.unpack_from("<H", data, 0x3A)
    return shoff + elf.section(name).index * shentsize


# ---- the malformed inputs ------------------------------------------------------------------------


def bundle_inputs() -> dict[str, bytes]:
    portable = (SEEDS / "saxpy.portable.o").read_bytes()
    bitcode = (SEEDS / "saxpy.offload.bc").read_bytes()
    far = bytearray(portable)
    struct.pack_into("<Q", far, 0x28, 2**62)
    count = bytearray(portable)
    struct.pack_into("<H", count, 0x3C, 0xFFFF)
    return {
        "truncated-portable.o": portable[: len(portable) // 2],
        "shoff-2-62.o": bytes(far),
        "shnum-65535.o": bytes(count),
        "truncated-bitcode.bc": bitcode[: len(bitcode) // 3],
        "4gib-array.ll": b"@llvm.embedded.object = global [4294967296 x i8] zeroinitializer, "
        b'section ".llvm.offloading"\n',
        "deep-type.ll": b"@x = global " + b"[1 x " * 50000 + b"i8" + b"]" * 50000 + b" zeroinitializer\n",
        "garbage.bin": bytes(range(256)) * 4,
        "empty.bc": b"",
    }


def executable_inputs() -> dict[str, bytes]:
    exe = (SEEDS / "saxpy.cuda.exe").read_bytes()
    elf = read_elf(exe, "seed")
    fatbin = elf.section(".nv_fatbin")
    assert fatbin is not None
    header_zero = bytearray(exe)
    struct.pack_into("<H", header_zero, fatbin.offset + 6, 0)
    huge_fatbin = bytearray(exe)
    struct.pack_into("<Q", huge_fatbin, section_header_at(elf, ".nv_fatbin") + 0x20, 2 << 30)
    nobits = bytearray(exe)
    at = section_header_at(elf, "llvm_offload_entries")
    struct.pack_into("<I", nobits, at + 4, SHT_NOBITS)
    struct.pack_into("<Q", nobits, at + 0x20, 64 << 20)
    # Every copy of the kernel's name outside the fatbin becomes invalid UTF-8: the registered entry
    # then names no kernel of the device image.
    non_utf8 = bytearray(exe)
    position = 0
    while (position := non_utf8.find(b"saxpy\0", position)) >= 0:
        if not fatbin.offset <= position < fatbin.offset + fatbin.size:
            non_utf8[position : position + 2] = b"\xff\xfe"
        position += 1
    return {
        "fatbin-header-0": bytes(header_zero),
        "fatbin-2gib": bytes(huge_fatbin),
        "nobits-entries-64mib": bytes(nobits),
        "non-utf8-names": bytes(non_utf8),
        "truncated-exe": exe[: len(exe) // 2],
    }


def record_inputs() -> dict[str, bytes]:
    portable = (SEEDS / "saxpy.portable.o").read_bytes()
    assert portable.count(b"\x0022\x00sm_80") == 1 and portable.count(b"LLVM 22.") == 1
    return {
        "profile-not-a-number.o": portable.replace(b"\x0022\x00sm_80", b"\x00\xc2\xb2\x00sm_80"),
        "producer-not-a-number.o": portable.replace(b"LLVM 22.", b"LLVM x2."),
    }


def _tar_gz(members) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return gzip.compress(raw.getvalue(), mtime=0)


def _member(name: str, kind: bytes, link: str = "") -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, link
    return info, None


def archive_inputs() -> dict[str, bytes]:
    manifest = json.loads((SEEDS / "manifest.json").read_bytes())
    pax = bytearray(512)
    pax[0:9], pax[100:108], pax[156:157], pax[257:263] = b"PaxHeader", b"0000644\0", b"x", b"ustar\0"
    pax[124:136] = b"%011o\0" % (1 << 40)
    pax[148:156] = b"%06o\0 " % (sum(pax[:148]) + 8 * 32 + sum(pax[156:]))
    wrong_shape = dict(manifest, targets="sm_80")
    return {
        "symlink.tar.gz": _tar_gz([_member("app/manifest.json", tarfile.SYMTYPE, "/etc/passwd")]),
        "hardlink.tar.gz": _tar_gz([_member("app/manifest.json", tarfile.LNKTYPE, "app/other")]),
        "directory.tar.gz": _tar_gz([_member("app/manifest.json", tarfile.DIRTYPE)]),
        "pax-1tib.tar.gz": gzip.compress(bytes(pax) + bytes(1024), mtime=0),
        "not-gzip.tar.gz": b"not an archive",
        "manifest-list.json": b"[]",
        "manifest-shape.json": json.dumps(wrong_shape).encode(),
        "manifest-deep.json": b"[" * 100000 + b"]" * 100000,
        "manifest-not-utf8.json": b'{"format": "\xff"}',
    }


# ---- the matrix ----------------------------------------------------------------------------------

CASES = (
    [(name, command) for name in bundle_inputs() for command in ("inspect", "extract", "link", "ship")]
    + [(name, command) for name in executable_inputs() for command in ("verify", "inspect")]
    + [(name, "link") for name in record_inputs()]
    + [(name, "doctor") for name in archive_inputs()]
)


def _arguments(command: str, name: str) -> list[str]:
    return {
        "inspect": ["inspect", name],
        "extract": ["extract", name, "-o", "out"],
        "link": ["link", name, "-o", "app", "--dry-run"],
        "ship": ["ship", name, "-o", "app.tar.gz"],
        "verify": ["verify", name],
        "doctor": ["doctor", "--bundle", name],
    }[command]


@pytest.mark.parametrize("name,command", CASES, ids=[f"{c}-{n}" for n, c in CASES])
def test_malformed_input_gives_one_line_and_changes_nothing(tmp_path, name, command):
    data = {**bundle_inputs(), **executable_inputs(), **record_inputs(), **archive_inputs()}[name]
    (tmp_path / name).write_bytes(data)
    before = snapshot(tmp_path)
    line = assert_one_line_error(run_limited(_arguments(command, name), tmp_path), f"{command} {name}")
    assert snapshot(tmp_path) == before, f"{command} {name} left or changed files"
    if command != "doctor" or not name.endswith(".json"):
        assert name in line, line  # the error names the file


def test_a_file_name_with_a_newline_is_escaped(tmp_path):
    (tmp_path / "bad\nname.o").write_bytes(bundle_inputs()["truncated-portable.o"])
    line = assert_one_line_error(run_limited(["inspect", "bad\nname.o"], tmp_path), "inspect")
    assert "bad\\nname.o" in line


def test_verify_adds_further_problems_as_notes(tmp_path):
    (tmp_path / "plain").write_bytes((SEEDS / "saxpy.portable.o").read_bytes())  # an object, not linked
    done = run_limited(["verify", "plain"], tmp_path)
    lines = done.stderr.decode().splitlines()
    assert done.returncode == 1 and lines[0].startswith("mlir-offload: error: ")
    assert all(line.startswith("mlir-offload: note: ") for line in lines[1:]), lines
    for note in lines[1:]:  # a note adds a fact: neither the file's name nor the error's hint again
        fact = note.removeprefix("mlir-offload: note: ")
        assert not fact.startswith("plain:") and "--offload-new-driver" not in fact, lines


def test_the_cli_fuzz_judges_what_it_should():
    sys.path.insert(0, str(REPO / "scripts"))
    from fuzz_cli import judge

    assert judge(0, "") is None and judge(1, "mlir-offload: error: x: bad\n") is None
    assert judge(1, "mlir-offload: error: a: b (c)\nmlir-offload: note: a: b (c)\n")  # a repeat
    assert judge(1, "mlir-offload: error: internal error (KeyError: 1)\n")
    assert judge(1, "raw tool text\nmlir-offload: error: x\n") and judge(2, "") and judge(None, "")
    assert judge(1, "mlir-offload: error: x\n", left=("out",))  # a failed extract left its folder
    assert judge(1, "mlir-offload: error: x\n", stdout="0-cuda-sm_80.bc\n")  # partial output
    assert judge(0, "", stdout="listing\n", left=("out",)) is None


# ---- ship: names and the target's checks ---------------------------------------------------------


def _shipped(tmp_path: Path, app: str = "saxpy") -> Path:
    shutil.copy(SEEDS / "saxpy.portable.o", tmp_path / "saxpy.offload.o")
    done = run_limited(["ship", "saxpy.offload.o", "--app", app, "-o", "saxpy.tar.gz"], tmp_path)
    assert done.returncode == 0, done.stderr
    with tarfile.open(tmp_path / "saxpy.tar.gz") as tar:
        tar.extractall(tmp_path, filter="data")
    return tmp_path / app


@pytest.mark.parametrize("app", ["$(shell id >PWNED)x", "-rf", "a b", "x;id", ".hidden", "Makefile", "clean", "a\nb"])
def test_ship_refuses_unsafe_app_names(tmp_path, app):
    shutil.copy(SEEDS / "saxpy.portable.o", tmp_path / "saxpy.offload.o")
    before = snapshot(tmp_path)
    assert_one_line_error(run_limited(["ship", "saxpy.offload.o", "--app", app, "-o", "x.tar.gz"], tmp_path), app)
    assert snapshot(tmp_path) == before


def test_ship_refuses_an_unsafe_archive_name(tmp_path):
    shutil.copy(SEEDS / "saxpy.portable.o", tmp_path / "saxpy.offload.o")
    line = assert_one_line_error(run_limited(["ship", "saxpy.offload.o", "-o", "$(id).tar.gz"], tmp_path), "ship")
    assert "--app" in line and not (tmp_path / "$(id).tar.gz").exists()


def _build_sh(top: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    environment = dict(os.environ, CLANG="/nonexistent/clang", **env)
    return subprocess.run(
        ["sh", "build.sh", *args], cwd=top, capture_output=True, text=True, env=environment, timeout=60
    )


@pytest.mark.parametrize("app", ["*", "$(id)", "-rf", "build.sh", "../x", "a b"])
def test_build_sh_refuses_unsafe_app_names_and_removes_nothing(tmp_path, app):
    top = _shipped(tmp_path)
    before = snapshot(top)
    done = _build_sh(top, "clean", APP=app)
    assert done.returncode == 1 and "not a safe app name" in done.stderr
    assert snapshot(top) == before


def test_clean_removes_only_what_the_build_made(tmp_path):
    top = _shipped(tmp_path)
    (top / "saxpy").write_bytes(b"built")
    (top / "saxpy.tmp").write_bytes(b"half built")
    (top / "notes.txt").write_text("mine")
    assert _build_sh(top, "clean").returncode == 0
    assert not (top / "saxpy").exists() and not (top / "saxpy.tmp").exists() and (top / "notes.txt").exists()
    assert (top / "build.sh").exists() and (top / "manifest.json").exists()


@pytest.mark.parametrize("damage", ["empty", "garbage", "missing-line", "swapped-bundle"])
def test_build_sh_refuses_damaged_checksums(tmp_path, damage):
    top = _shipped(tmp_path)
    sums = (top / "SHA256SUMS").read_text()
    if damage == "empty":
        (top / "SHA256SUMS").write_text("")
    elif damage == "garbage":
        (top / "SHA256SUMS").write_text("garbage\n")
    elif damage == "missing-line":
        (top / "SHA256SUMS").write_text(
            "".join(line + "\n" for line in sums.splitlines() if not line.endswith("  saxpy.offload.o"))
        )
    else:
        (top / "saxpy.offload.o").write_bytes(b"\x7fELF swapped")
    done = _build_sh(top, "check")
    assert done.returncode == 1
    assert "SHA256SUMS" in done.stderr.splitlines()[0], done.stderr


def test_templates_quote_every_value(tmp_path):
    script = (_shipped(tmp_path) / "build.sh").read_text()
    for name in ("PROFILE", "OFFLOAD_KIND", "ENTRY_SIZE", "ENTRIES", "FATBINARY_LOOKUP", "BUNDLE"):
        assert f"\n{name}='" in script, name
    assert "sha256sum -c --strict SHA256SUMS" in script


# ---- outputs -------------------------------------------------------------------------------------


def test_output_onto_a_fifo_or_folder_is_refused(tmp_path):
    shutil.copy(SEEDS / "saxpy.portable.o", tmp_path / "saxpy.offload.o")
    os.mkfifo(tmp_path / "fifo")
    line = assert_one_line_error(run_limited(["ship", "saxpy.offload.o", "--app", "a", "-o", "fifo"], tmp_path), "fifo")
    assert "FIFO" in line
    line = assert_one_line_error(
        run_limited(["link", "saxpy.offload.o", "-o", "/dev/null", "--dry-run"], tmp_path), "device"
    )
    assert "device" in line


def test_extract_is_all_or_nothing(tmp_path):
    (tmp_path / "b.bc").write_bytes((SEEDS / "saxpy.hip.bc").read_bytes())
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "0-hip-gfx90a.bc").mkdir()  # the image's name is taken by a folder
    before = snapshot(tmp_path)
    assert_one_line_error(run_limited(["extract", "b.bc", "-o", "out"], tmp_path), "extract")
    assert snapshot(tmp_path) == before


def test_outputs_honour_the_umask(tmp_path):
    (tmp_path / "b.bc").write_bytes((SEEDS / "saxpy.hip.bc").read_bytes())
    old = os.umask(0o077)
    try:
        done = run_limited(["extract", "b.bc", "-o", "out"], tmp_path)
    finally:
        os.umask(old)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out" / "0-hip-gfx90a.bc").stat().st_mode & 0o777 == 0o600


# ---- children and the process's own failures ----------------------------------------------------


def test_a_dying_child_leaks_none_of_its_text(capfd):
    from offload.errors import OffloadError
    from offload.processes import call_forked

    def die(_):
        import faulthandler

        faulthandler.disable()  # pytest's dump would go to its own descriptor
        os.write(2, b"python3: SomePass.cpp:42: Assertion `x' failed.\n")
        os.abort()

    with pytest.raises(OffloadError) as caught:
        call_forked(die, None, "--pass-pipeline 'p' crashed")
    assert "Assertion" not in capfd.readouterr().err and "internal error" not in caught.value.render()

    def warn(_):
        os.write(2, b"a warning of a child that ends well\n")
        return 7

    assert call_forked(warn, None, "x") == 7
    assert "a warning of a child that ends well" in capfd.readouterr().err


def test_out_of_memory_anywhere_is_one_line(tmp_path):
    program = (
        "import sys; sys.argv = ['mlir-offload', 'inspect', 'x']\n"
        "import offload.cli as cli\n"
        "def exhausted(*a, **k):\n    raise MemoryError()\n"
        "cli.main = exhausted\ncli.run()\n"
    )
    done = subprocess.run([sys.executable, "-c", program], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and done.stderr == "mlir-offload: error: out of memory\n", done.stderr


# ---- shipped builds: only listed files, never an unbuilt executable, rebuilt when the archive changed --


def _make(top: Path, **variables: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["make", "-C", str(top), *(f"{k}={v}" for k, v in variables.items())],
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.parametrize("extra", ["extra.o", "tools/bin/ld", "ptx/sm_90.ptx"])
def test_build_sh_refuses_a_file_sha256sums_does_not_list(tmp_path, extra):
    top = _shipped(tmp_path)
    (top / extra).parent.mkdir(parents=True, exist_ok=True)
    (top / extra).write_bytes(b"not shipped")
    done = _build_sh(top, "check")
    assert done.returncode == 1 and f"does not list: {extra}" in done.stderr.splitlines()[0], done.stderr


def test_an_earlier_builds_executable_beside_its_stamp_is_not_an_extra_file(tmp_path):
    top = _shipped(tmp_path)
    (top / "other-app").write_bytes(b"built before with APP=other-app")
    (top / ".other-app.built").write_text("stamp\n")
    (top / ".lonely.built").write_text("stamp\n")  # a stamp with no executable is still unlisted
    done = _build_sh(top, "check")
    assert done.returncode == 1 and "does not list: .lonely.built" in done.stderr.splitlines()[0], done.stderr
    (top / ".lonely.built").unlink()
    done = _build_sh(top, "check")  # its clang is /nonexistent: that is the one problem left
    assert "does not list" not in done.stderr and "clang not found" in done.stderr, done.stderr


def test_an_executable_unpacked_from_an_archive_is_never_taken_as_built(tmp_path):
    shutil.which("make") or pytest.skip("no make")
    top = _shipped(tmp_path)
    (top / "saxpy").write_bytes(b"#!/bin/sh\necho unverified\n")  # as if the archive carried it, newer than all
    (top / "saxpy").chmod(0o755)
    done = _make(top, CLANG="/nonexistent/clang")
    assert done.returncode != 0 and "nothing was built" in done.stderr, done.stdout + done.stderr
    assert not (top / "saxpy").exists()  # never left to run


def test_a_new_archive_over_an_old_build_is_relinked(tmp_path):
    from conftest import require_tool

    require_tool("clang-22", 22)
    shutil.which("make") or pytest.skip("no make")
    top = _shipped(tmp_path)
    first = _make(top)
    assert first.returncode == 0 and "built with" in first.stdout, first.stdout + first.stderr
    assert "up to date" in _make(top).stdout
    built = (top / "saxpy").read_bytes()
    # A new archive of another bundle unpacked over the folder: its members' times are the archive's (old).
    shutil.copy(SEEDS / "saxpy.offload.bc", tmp_path / "saxpy.offload.bc")
    done = run_limited(["ship", "saxpy.offload.bc", "--app", "saxpy", "-o", "new.tar.gz"], tmp_path)
    assert done.returncode == 0, done.stderr
    (top / "saxpy.offload.o").unlink()  # the old archive's files the new one lacks (the old bundle, its tools)
    shutil.rmtree(top / "tools", ignore_errors=True)
    with tarfile.open(tmp_path / "new.tar.gz") as tar:
        tar.extractall(tmp_path, filter="data")
    again = _make(top)
    assert again.returncode == 0 and "built with" in again.stdout, again.stdout + again.stderr
    assert (top / "saxpy").read_bytes() != built
    changed = _make(top, LDLIBS="-lm")  # another link line: relinked too
    assert "built with" in changed.stdout, changed.stdout + changed.stderr


# ---- careless inputs: devices, folders, link loops, empty names ----------------------------------


@pytest.mark.parametrize("command", ["inspect", "verify", "extract"])
def test_an_endless_device_as_input_is_refused_not_read(tmp_path, command):
    args = {
        "inspect": ["inspect", "/dev/zero"],
        "verify": ["verify", "/dev/urandom"],
        "extract": ["extract", "/dev/zero", "-o", "out"],
    }[command]
    line = assert_one_line_error(run_limited(args, tmp_path), command)  # before: read until memory ran out
    assert "is a device, not a file" in line and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", ["inspect", "verify", "extract", "link", "ship"])
def test_a_folder_as_input_is_one_error_exit_1(tmp_path, command):
    (tmp_path / "d").mkdir()
    args = {
        "inspect": ["inspect", "d"],
        "verify": ["verify", "d"],
        "extract": ["extract", "d", "-o", "out"],
        "link": ["link", "d", "-o", "app", "--dry-run"],
        "ship": ["ship", "d", "-o", "d.tar.gz"],
    }[command]
    line = assert_one_line_error(run_limited(args, tmp_path), command)  # not click's usage error (exit 2)
    assert "'d' is a directory, not a file" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d"]


def test_a_link_loop_as_input_or_output_is_one_error(tmp_path):
    os.symlink("loop", tmp_path / "loop")
    shutil.copy(SEEDS / "saxpy.portable.o", tmp_path / "b.o")
    for args in (["inspect", "loop"], ["extract", "b.o", "-o", "loop"], ["ship", "b.o", "--app", "x", "-o", "loop"]):
        assert_one_line_error(run_limited(args, tmp_path), " ".join(args))
    assert os.readlink(tmp_path / "loop") == "loop"


def test_an_empty_output_name_is_one_error(tmp_path):
    shutil.copy(SEEDS / "saxpy.portable.o", tmp_path / "b.o")
    line = assert_one_line_error(run_limited(["ship", "b.o", "--app", "x", "-o", ""], tmp_path), "ship")
    assert "empty" in line and "busy" not in line


def test_a_failed_extract_leaves_no_folder_it_made(tmp_path, monkeypatch, capsys):
    from offload import cli
    from offload.commands import extract

    (tmp_path / "b.bc").write_bytes((SEEDS / "saxpy.hip.bc").read_bytes())
    monkeypatch.chdir(tmp_path)

    def disk_full(outputs, inputs=()):
        from offload.errors import OffloadError

        raise OffloadError("cannot write: No space left on device")

    monkeypatch.setattr(extract, "write_all", disk_full)
    with pytest.raises(SystemExit) as exited:
        cli.main(["extract", "b.bc", "-o", "new/deeper"])
    assert exited.value.code == 1 and "No space left" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.bc"]  # neither new/ nor new/deeper


# ---- mlir-offload.toml ---------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["deep-array", "deep-table", "folder", "device", "loop", "dangling"])
def test_a_bad_project_config_is_one_located_error(tmp_path, kind):
    config = tmp_path / "mlir-offload.toml"
    if kind == "deep-array":
        config.write_text("x = " + "[" * 100000 + "]" * 100000 + "\n")  # tomllib recursed until RecursionError
    elif kind == "deep-table":
        config.write_text("x = " + "{a=" * 100000 + "}" * 100000 + "\n")
    elif kind == "folder":
        config.mkdir()  # these were passed over without a word: the defaults applied
    elif kind == "device":
        os.symlink("/dev/zero", config)
    else:
        os.symlink("mlir-offload.toml" if kind == "loop" else "nowhere", config)
    line = assert_one_line_error(run_limited(["config", "show"], tmp_path), kind)
    assert "mlir-offload.toml" in line, line


def test_doctor_says_a_given_clang_is_unusable(tmp_path):
    done = run_limited(["doctor", "--clang", str(tmp_path / "no-such-clang")], tmp_path)
    assert f"--clang {tmp_path / 'no-such-clang'}: not a usable clang" in done.stdout.decode(), done.stdout


@pytest.mark.parametrize("args", [["inspect", "b.bc"], ["--help"], ["config", "show"]])
def test_a_full_standard_output_is_one_error(tmp_path, args):
    (tmp_path / "b.bc").write_bytes((SEEDS / "saxpy.hip.bc").read_bytes())
    with open("/dev/full", "wb") as full:  # writes fail with ENOSPC, as on a full disk
        done = subprocess.run(
            [sys.executable, "-m", "offload", *args], cwd=tmp_path, stdout=full, stderr=subprocess.PIPE, timeout=60
        )
    line = assert_one_line_error(done, " ".join(args))  # was an internal error (OSError)
    assert line == "mlir-offload: error: cannot write standard output: No space left on device", line


def test_response_files_naming_each_other_many_times_are_refused(tmp_path):
    for level in range(6):  # r0 names r1 ten times, ...: a million words, each file read again each time
        (tmp_path / f"r{level}").write_text(" ".join([f"@r{level + 1}"] * 10))
    (tmp_path / "r6").write_text("-O2")
    done = run_limited(["inspect", "@r0"], tmp_path)  # took minutes before
    lines = done.stderr.decode().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and "expand to more than" in lines[0], done.stderr

"""`mlir-offload ship`: the archive builds on a machine with only clang, the CUDA toolkit and make.

The bundles here are made from the hand-written reference modules by the real tools (clang 22 embeds
an OffloadBinary written by our packager); the target side runs with a scrubbed environment in which
the Python package cannot be imported, and the executable runs against the fake CUDA runtime.
Portable bundles use offload/device/native.py (llvmlite NVPTX + ptxas cubin, llvmlite x86-64 object) and
link with clang 19 and clang 22.
"""

from __future__ import annotations

import json
import os
import subprocess
import tarfile
from pathlib import Path

import pytest

from conftest import SHARED_REFERENCE, require_tool, run_cli
from ship_archive import run_make, scrubbed_env, unpack

LIBDEVICE = "/usr/local/cuda/nvvm/libdevice/libdevice.10.bc"


def _bundle(work: Path, major: int, portable: bool, recorded: int | None = None) -> Path:
    """A real bundle: reference host module for clang `major` with the reference device image, and the
    bundle record `compile` writes into its images (ship reads what the bundle is from it), which says
    clang `recorded` (default: `major`)."""
    from offload.device.native import convert_device_images, host_to_object
    from offload.formats.profiles import load_profile
    from offload.packager import ImageKind, OffloadImage, write_binary
    from offload.packager.bundle import BundleRecord

    llvm_link = require_tool("llvm-link-22", 22)
    clang = require_tool("clang-22", 22)
    require_tool("ptxas")
    device = work / "device.bc"
    subprocess.run(
        [
            llvm_link,
            str(SHARED_REFERENCE / "handwritten_device.ll"),
            LIBDEVICE,
            "--only-needed",
            "--internalize",
            "-o",
            str(device),
        ],
        check=True,
    )
    image = OffloadImage(
        int(ImageKind.BITCODE),
        load_profile(major).offload_kind_value("cuda"),
        0,
        {
            "triple": "nvptx64-nvidia-cuda",
            "arch": "sm_80",
            **BundleRecord(recorded or major, "22.1.0", "obj" if portable else "bc", ("cuda:sm_80",)).image_strings(),
        },
        device.read_bytes(),
    )
    images = [image]
    if portable:
        images, _ = convert_device_images(images, "cubin")
        assert images[0].image_kind == ImageKind.CUBIN
    package = work / f"images{major}.bin"
    package.write_bytes(write_binary(images))
    host_bc = work / f"host{major}.bc"
    subprocess.run(
        [
            clang,
            "-c",
            "-emit-llvm",
            "-Wno-override-module",
            "-Xclang",
            f"-fembed-offload-object={package}",
            str(SHARED_REFERENCE / f"handwritten_host_clang{major}.ll"),
            "-o",
            str(host_bc),
        ],
        check=True,
    )
    if not portable:
        return host_bc
    host_o = work / f"host{major}.o"
    host_o.write_bytes(host_to_object(host_bc.read_bytes()))
    return host_o


def test_ship_refuses_a_bundle_whose_entries_disagree_with_its_record(tmp_path):
    """The record says what the bundle is; its entry sections are checked against it, not read instead."""
    bundle = _bundle(tmp_path, 22, False, recorded=19)
    result = run_cli("ship", str(bundle), "-o", str(tmp_path / "app.tar.gz"))
    assert result.returncode == 1 and not (tmp_path / "app.tar.gz").exists()
    assert result.stderr.strip() == (
        "mlir-offload: error: app.offload.bc: its record says clang 19 but its "
        "offload entries have the layout of clang 22: "
        "the bundle was altered after compile"
    )


@pytest.fixture(scope="module")
def shipped(tmp_path_factory):
    """name -> archive: bitcode bundle for clang 22, portable bundles for clang 19 and 22."""
    work = tmp_path_factory.mktemp("ship")
    archives = {}
    for name, major, portable in (("app", 22, False), ("port19", 19, True), ("port22", 22, True)):
        bundle = _bundle(work, major, portable)
        out = work / f"{name}.tar.gz"
        result = run_cli("ship", str(bundle), "-o", str(out))
        assert result.returncode == 0, result.stderr
        archives[name] = out
    return archives


def test_archive_is_deterministic_and_complete(shipped, tmp_path):
    again = tmp_path / "app.tar.gz"
    bundle_dir = tmp_path / "b"
    with tarfile.open(shipped["app"]) as tar:
        names = sorted(tar.getnames())
        assert all(m.mtime == 0 and m.uid == 0 and m.gid == 0 for m in tar.getmembers())
        extracted = tar.extractfile("app/app.offload.bc")
        assert extracted is not None
        bundle = extracted.read()
    assert names == [
        "app",
        "app/Makefile",
        "app/SHA256SUMS",
        "app/app.offload.bc",
        "app/build.sh",
        "app/manifest.json",
        # CUDA bitcode: the ptxas wrapper of the parallel device link (tests/unit/toolchain/test_cuda_device_link.py)
        "app/tools",
        "app/tools/ptxas",
        "app/tools/ptxas/bin",
        "app/tools/ptxas/bin/ptxas",
    ]
    # SHA256SUMS lists exactly the archive's other files, each with its digest (build.sh checks no more).
    import hashlib

    for top, archive in shipped.items():
        with tarfile.open(archive) as tar:
            members = {}
            for member in tar.getmembers():
                if member.isfile():
                    extracted = tar.extractfile(member)
                    assert extracted is not None
                    members[member.name[len(top) + 1 :]] = extracted.read()
        listed = [line.split("  ", 1) for line in members.pop("SHA256SUMS").decode().splitlines()]
        assert sorted(name for _, name in listed) == sorted(members) and len(listed) == len(members), top
        assert all(digest == hashlib.sha256(members[name]).hexdigest() for digest, name in listed)
    bundle_dir.mkdir()
    (bundle_dir / "x.bc").write_bytes(bundle)
    assert run_cli("ship", str(bundle_dir / "x.bc"), "-o", str(again), "--app", "app").returncode == 0
    assert again.read_bytes() == shipped["app"].read_bytes()


def test_doctor_reads_back_the_bundle_record_from_the_manifest(shipped, tmp_path):
    """The manifest is rendered from the bundle's record; doctor's BundleNeeds holds that same record."""
    from offload.packager.bundle import read_bundle_record
    from offload.toolchain.ship import read_bundle_needs

    for name in ("app", "port19"):
        top = unpack(shipped[name], tmp_path / name)
        bundle = next(top.glob(f"{name}.offload.*"))
        record, _ = read_bundle_record(bundle.read_bytes(), bundle.name)
        needs, _ = read_bundle_needs(str(shipped[name]))
        assert needs.record == record and record.producer_llvm == "22.1.0"
        assert (needs.entry_profile, needs.host_format) == ((22, "bc") if name == "app" else (19, "obj"))


def test_manifest_records_producer_profile_targets_and_hashes(shipped, tmp_path):
    top = unpack(shipped["app"], tmp_path)
    manifest = json.loads((top / "manifest.json").read_text())
    assert manifest["entry_profile"] == 22 and manifest["producer_llvm"] == 22
    assert manifest["host_format"] == "bc" and manifest["device_image"] == "bitcode"
    assert manifest["entries"] == ["fill", "vsqrt"]
    targets = [(t["arch"], t["offload_kind"], t["image_kind"]) for t in manifest["targets"]]
    assert targets == [("sm_80", "cuda", "bitcode")]
    import hashlib

    assert manifest["files"]["app.offload.bc"] == hashlib.sha256((top / "app.offload.bc").read_bytes()).hexdigest()
    assert manifest["tool"].startswith("mlir-offload ")
    port = json.loads((unpack(shipped["port19"], tmp_path / "p") / "manifest.json").read_text())
    assert port["entry_profile"] == 19 and port["producer_llvm"] is None and port["host_format"] == "obj"
    assert port["targets"][0]["image_kind"] == "cubin" and "tools/bin/fatbinary" in port["files"]


@pytest.mark.parametrize("name, clang", [("app", "clang-22"), ("port22", "clang-22"), ("port19", "clang-19")])
def test_builds_without_python_and_runs(shipped, tmp_path, fake_cuda, name, clang):
    require_tool(clang, int(clang.split("-")[1]))
    top = unpack(shipped[name], tmp_path / "unpacked")
    env = scrubbed_env(tmp_path)
    result = run_make(top, env, f"CLANG={clang}", "APP=demo")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "demo: built with" in result.stdout
    assert not (tmp_path / "python-was-run").exists()
    assert (top / "demo").is_file() and not (top / "demo.tmp").exists()
    run = fake_cuda.run(top / "demo")
    assert run.kernels_registered() == ["fill", "vsqrt"] or sorted(run.kernels_registered()) == ["fill", "vsqrt"]
    assert len(run.launches()) == 2


def test_bitcode_bundle_with_too_old_clang_builds_nothing(shipped, tmp_path, clang19):
    top = unpack(shipped["app"], tmp_path)
    result = run_make(top, scrubbed_env(tmp_path), "CLANG=clang-19")
    assert result.returncode != 0
    assert "clang 19.1" in result.stderr and "too old for this bundle" in result.stderr
    assert "re-ship with --portable" in result.stderr
    assert not (top / "app").exists() and not (top / "app.tmp").exists()


def test_no_clang_is_a_clear_error(shipped, tmp_path):
    top = unpack(shipped["app"], tmp_path)
    result = run_make(top, scrubbed_env(tmp_path), "CLANG=no-such-clang")
    assert result.returncode != 0
    assert "clang not found ('no-such-clang')" in result.stderr and "fix:" in result.stderr
    assert not (top / "app").exists()


def test_tampered_file_is_refused(shipped, tmp_path, clang22):
    top = unpack(shipped["app"], tmp_path)
    with open(top / "app.offload.bc", "r+b") as f:
        f.seek(100)
        byte = f.read(1)
        f.seek(100)
        f.write(bytes([byte[0] ^ 0xFF]))
    result = run_make(top, scrubbed_env(tmp_path), "CLANG=clang-22")
    assert result.returncode != 0
    assert "files differ from the manifest (SHA256SUMS): app.offload.bc" in result.stderr
    assert not (top / "app").exists() and not (top / "app.tmp").exists()


def test_corrupted_archive_is_reported(shipped, tmp_path):
    broken = tmp_path / "broken.tar.gz"
    broken.write_bytes(shipped["app"].read_bytes()[:600])
    result = run_cli("doctor", "--bundle", str(broken))
    assert result.returncode == 1
    assert "damaged archive" in result.stderr and "Traceback" not in result.stderr
    assert subprocess.run(["tar", "xzf", str(broken), "-C", str(tmp_path)], capture_output=True).returncode != 0


def test_doctor_on_a_bundle(shipped, clang22, clang19):
    ok = run_cli("doctor", "--bundle", str(shipped["app"]), "--clang", "clang-22")
    assert ok.returncode == 0, ok.stdout
    assert "can link it" in ok.stdout
    refused = run_cli("doctor", "--bundle", str(shipped["app"]), "--clang", "clang-19")
    assert refused.returncode == 1
    assert "offload entries follow clang 22's layout" in refused.stdout and "fix: use clang 22" in refused.stdout
    portable = run_cli("doctor", "--bundle", str(shipped["port19"]), "--clang", "clang-19")
    assert portable.returncode == 0, portable.stdout
    assert "note: clang 19's linker wrapper calls fatbinary" in portable.stdout


def test_bad_inputs_to_ship(tmp_path):
    garbage = tmp_path / "x.bc"
    garbage.write_bytes(b"not a bundle")
    result = run_cli("ship", str(garbage), "-o", str(tmp_path / "x.tar.gz"))
    assert result.returncode == 1 and "not a bundle" in result.stderr
    assert not (tmp_path / "x.tar.gz").exists()


def _logging_clang(folder: Path, real: str) -> Path:
    """A `clang` that logs each command line (one per line) and runs the real one; clang-linker-wrapper
    beside it, where build.sh looks."""
    real = os.path.realpath(real)
    folder.mkdir()
    (folder / "clang-linker-wrapper").symlink_to(Path(real).parent / "clang-linker-wrapper")
    clang = folder / "clang"
    clang.write_text(f'#!/bin/sh\nprintf \'%s\\n\' "$*" >> {folder}/log\nexec {real} "$@"\n')
    clang.chmod(0o755)
    return clang


@pytest.mark.parametrize("ldflags, expected", [(None, ["-O2"]), ("-O0", ["-O0"]), ("-g -O3", ["-O3"])])
def test_build_sh_optimizes_the_host_part_unless_ldflags_says(shipped, tmp_path, ldflags, expected):
    real = require_tool("clang-22", 22)
    top = unpack(shipped["app"], tmp_path / "unpacked")
    clang = _logging_clang(tmp_path / "bin", real)
    result = run_make(top, scrubbed_env(tmp_path), f"CLANG={clang}", *([f"LDFLAGS={ldflags}"] if ldflags else []))
    assert result.returncode == 0, result.stdout + result.stderr
    (link,) = [
        line.split() for line in (tmp_path / "bin" / "log").read_text().splitlines() if "--offload-new-driver" in line
    ]
    assert [word for word in link if word.startswith("-O")] == expected


# ---- rebuilds, concurrent builds and failed steps -------------------------------------------------


def _built_or_up_to_date(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 0, result.stdout + result.stderr
    said = [word for word in ("built", "up to date") if f"demo: {word}" in result.stdout]
    return " ".join(said)


@pytest.mark.parametrize("how", ["object", "archive"])
def test_a_changed_file_that_ldflags_or_ldlibs_name_relinks(shipped, tmp_path, how):
    """The stamp holds the digests of the files the link variables name, not only their text."""
    clang = require_tool("clang-22", 22)
    top = unpack(shipped["port22"], tmp_path / "unpacked")
    env = scrubbed_env(tmp_path)
    (tmp_path / "lib").mkdir()
    extra_o, archive = tmp_path / "extra.o", tmp_path / "lib" / "libextra.a"
    variables = (
        [f"LDFLAGS={extra_o}"] if how == "object" else [f"LDFLAGS=-L {tmp_path / 'lib'}", "LDLIBS=-lextra -Wl,-u,extra"]
    )

    def build_extra(value: int) -> None:
        (tmp_path / "extra.c").write_text(f"int extra = {value};\n")
        subprocess.run([clang, "-c", str(tmp_path / "extra.c"), "-o", str(extra_o)], check=True)
        archive.unlink(missing_ok=True)
        subprocess.run(["ar", "rcs", str(archive), str(extra_o)], check=True)

    build_extra(1)
    assert _built_or_up_to_date(run_make(top, env, "CLANG=clang-22", "APP=demo", *variables)) == "built"
    assert _built_or_up_to_date(run_make(top, env, "CLANG=clang-22", "APP=demo", *variables)) == "up to date"
    first = (top / "demo").read_bytes()
    build_extra(2)  # same names and link line, other bytes
    assert _built_or_up_to_date(run_make(top, env, "CLANG=clang-22", "APP=demo", *variables)) == "built"
    assert (top / "demo").read_bytes() != first
    assert _built_or_up_to_date(run_make(top, env, "CLANG=clang-22", "APP=demo", *variables)) == "up to date"


def _slow_clang(folder: Path, real: str) -> Path:
    """A clang whose link waits 3 s before running the real one: two builds started together overlap."""
    folder.mkdir()
    (folder / "clang-linker-wrapper").symlink_to(Path(os.path.realpath(real)).parent / "clang-linker-wrapper")
    clang = folder / "clang"
    clang.write_text(
        f'#!/bin/sh\ncase " $* " in *" --offload-new-driver "*) sleep 3 ;; esac\nexec {os.path.realpath(real)} "$@"\n'
    )
    clang.chmod(0o755)
    return clang


def _path_without_flock(folder: Path) -> str:
    """A PATH folder with every command of /usr/bin and /bin but flock (a target without util-linux)."""
    folder.mkdir()
    for bin_dir in ("/bin", "/usr/bin"):
        for tool in Path(bin_dir).iterdir():
            if tool.name != "flock" and not (folder / tool.name).exists():
                (folder / tool.name).symlink_to(tool)
    return str(folder)


@pytest.mark.parametrize("lock", ["flock", "no flock", "flock that cannot lock"])
def test_two_builds_of_one_folder_at_once_take_turns(shipped, tmp_path, lock):
    """The second build waits for the first, then finds its executable up to date: neither removes or
    renames what the other links (before: both linked to APP.tmp, and one's clean-up took the other's).
    Without a flock that works (none installed; a file system that cannot lock, as some NFS), a lock folder."""
    clang = _slow_clang(tmp_path / "bin", require_tool("clang-22", 22))
    top = unpack(shipped["port22"], tmp_path / "unpacked")
    env = scrubbed_env(tmp_path)
    if lock != "flock":
        env["PATH"] = f"{tmp_path / 'shims'}:{_path_without_flock(tmp_path / 'no-flock')}"
    if lock == "flock that cannot lock":  # util-linux's exit status when flock(2) fails other than on a conflict
        (tmp_path / "shims" / "flock").write_text("#!/bin/sh\necho 'flock: 9: Bad file descriptor' >&2\nexit 65\n")
        (tmp_path / "shims" / "flock").chmod(0o755)
    command = ["make", "-C", str(top), f"CLANG={clang}", "APP=demo"]
    builds = [subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)]
    builds.append(subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    results = [subprocess.CompletedProcess(command, b.wait(timeout=300), *b.communicate()) for b in builds]
    assert sorted(_built_or_up_to_date(r) for r in results) == ["built", "up to date"]
    assert sorted(p.name for p in top.iterdir() if p.name.startswith(("demo", ".demo", ".build"))) == [
        ".demo.built",
        "demo",
    ]
    assert _built_or_up_to_date(run_make(top, env, f"CLANG={clang}", "APP=demo")) == "up to date"


def test_a_lock_folder_of_a_build_that_is_gone_is_one_error_naming_it(shipped, tmp_path):
    top = unpack(shipped["port22"], tmp_path / "unpacked")
    env = scrubbed_env(tmp_path)
    env["PATH"] = f"{tmp_path / 'shims'}:{_path_without_flock(tmp_path / 'no-flock')}"
    gone = subprocess.Popen(["true"])
    gone.wait()
    (top / ".build.lock").mkdir()
    (top / ".build.lock" / "owner").write_text(f"{gone.pid}\n")
    result = run_make(top, env, "CLANG=clang-22")
    assert result.returncode != 0
    assert result.stderr.splitlines()[:2] == [
        f"build.sh: error: .build.lock was left by a build that is gone (process {gone.pid})",
        f"  fix: if no build of this folder runs, remove it: rm -r {top}/.build.lock",
    ]
    assert (top / ".build.lock" / "owner").is_file() and not (top / "app").exists()


def test_a_failed_rename_never_reports_built(shipped, tmp_path):
    """mv failing (a full or read-only disk; here a mv that fails on the executable) is an error, exit 1."""
    require_tool("clang-22", 22)
    top = unpack(shipped["port22"], tmp_path / "unpacked")
    env = scrubbed_env(tmp_path)
    failing_mv = tmp_path / "shims" / "mv"
    failing_mv.write_text(
        '#!/bin/sh\ncase "$2" in *.tmp) echo "mv: cannot move $2: Read-only file system" >&2; exit 1 ;; esac\n'
        'exec /bin/mv "$@"\n'
    )
    failing_mv.chmod(0o755)
    result = run_make(top, env, "CLANG=clang-22", "APP=demo")
    assert result.returncode != 0 and "built with" not in result.stdout
    assert "demo: error: cannot rename demo.tmp to demo (see above)" in result.stderr.splitlines()
    assert "demo: 1 problem(s); nothing was built" in result.stderr.splitlines()
    assert not [p.name for p in top.iterdir() if "demo" in p.name]


def test_an_app_name_taken_by_a_folder_is_refused(shipped, tmp_path):
    require_tool("clang-22", 22)
    top = unpack(shipped["port22"], tmp_path / "unpacked")
    (top / "demo").mkdir()  # mv would move the executable into it, and the build would say "built"
    result = run_make(top, scrubbed_env(tmp_path), "CLANG=clang-22", "APP=demo")
    assert result.returncode != 0 and "built with" not in result.stdout
    assert "demo: error: demo is a folder: the build would move the executable into it" in result.stderr
    assert list((top / "demo").iterdir()) == [] and not (top / "demo.tmp").exists()


# ---- C++ objects in LDFLAGS link as C++ (mlir-offload link's rule) -----------------------------------

MAIN_CPP = """\
#include <cstdint>
#include <cstdio>
#include <vector>
extern "C" void run_double(float *allocated, float *aligned, int64_t offset, int64_t size, int64_t stride);
int main() {
  std::vector<float> values(16, 1.0f);
  run_double(values.data(), values.data(), 0, 16, 1);
  std::printf("launched with %zu values\\n", values.size());
  return 0;
}
"""
MAIN_C = """\
#include <stdint.h>
#include <stdio.h>
void run_double(float *allocated, float *aligned, int64_t offset, int64_t size, int64_t stride);
int main(void) {
  float values[16] = {0};
  run_double(values, values, 0, 16, 1);
  printf("launched with %d values\\n", 16);
  return 0;
}
"""


@pytest.fixture(scope="module")
def library_archive(tmp_path_factory):
    """A shipped bundle without main (run_double launches double_it), and main.cpp / main.c objects."""
    from test_ship_several import LIBRARY

    clang = require_tool("clang-22", 22)
    require_tool("ptxas")
    work = tmp_path_factory.mktemp("cxx")
    (work / "lib.mlir").write_text(LIBRARY)
    done = run_cli("compile", "lib.mlir", "--offload-arch", "sm_80", "-o", "lib.offload.bc", cwd=work)
    assert done.returncode == 0, done.stderr
    done = run_cli("ship", "lib.offload.bc", "--app", "lib", "-o", "lib.tar.gz", cwd=work)
    assert done.returncode == 0, done.stderr
    (work / "main.cpp").write_text(MAIN_CPP)
    (work / "main.c").write_text(MAIN_C)
    subprocess.run([require_tool("clang++-22", 22), "-c", "main.cpp", "-o", "main_cpp.o"], cwd=work, check=True)
    subprocess.run([clang, "-c", "main.c", "-o", "main_c.o"], cwd=work, check=True)
    (work / "cxx").mkdir()
    subprocess.run(["ar", "rcs", "cxx/libmain.a", "main_cpp.o"], cwd=work, check=True)
    return work


@pytest.mark.parametrize(
    "variables, cxx, cxx_runtime",
    [
        (["LDFLAGS={work}/main_cpp.o"], True, True),
        (["LDFLAGS=-L{work}/cxx", "LDLIBS=-lmain"], True, True),  # an archive that -l finds in a -L folder
        (["LDFLAGS={work}/main.cpp"], True, True),  # a C++ source clang compiles at the link
        (["LDFLAGS={work}/main_c.o"], False, False),
        (["LDFLAGS={work}/main_cpp.o", "LDLIBS=-lstdc++"], False, True),  # the runtime named: nothing added
    ],
)
def test_cxx_objects_in_ldflags_link_as_cxx(library_archive, tmp_path, fake_cuda, variables, cxx, cxx_runtime):
    real = require_tool("clang-22", 22)
    top = unpack(library_archive / "lib.tar.gz", tmp_path / "unpacked")
    clang = _logging_clang(tmp_path / "bin", real)
    filled = [v.format(work=library_archive) for v in variables]
    result = run_make(top, scrubbed_env(tmp_path), f"CLANG={clang}", *filled)
    assert result.returncode == 0, result.stdout + result.stderr
    (link,) = [line.split() for line in (tmp_path / "bin" / "log").read_text().splitlines() if "-o" in line.split()]
    assert ("--driver-mode=g++" in link) == cxx
    assert link[link.index("--offload-new-driver") + 1] == ("--driver-mode=g++" if cxx else "lib.offload.bc")
    needed = subprocess.run(["readelf", "-d", str(top / "lib")], capture_output=True, text=True, check=True).stdout
    assert ("libstdc++" in needed) == cxx_runtime
    ran = fake_cuda.run(top / "lib")
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == "launched with 16 values\n"
    assert [launch["kernel"] for launch in ran.launches()] == ["double_it"]

"""link runs the CUDA device link of one arch in parallel where clang 22 can (offload/toolchain/cuda_device_link.py):
LTO code generation in partitions and ptxas on threads of its own, through offload/data/ptxas/bin/ptxas. Every
kernel keeps its code, and the executable is the same bytes on one CPU as on all."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from importlib import resources
from types import SimpleNamespace

import pytest

from conftest import REPO, require_tool, run_cli

WRAPPER = str(resources.files("offload.data").joinpath("ptxas/bin/ptxas"))
DEVICE_LINKER = "-Xoffload-linker-nvptx64-nvidia-cuda"


def bundle_of(size: int, arch: str = "sm_80", triple: str = "nvptx64-nvidia-cuda"):
    from offload.packager import ImageKind

    image = SimpleNamespace(
        image_kind=int(ImageKind.BITCODE), strings={"triple": triple, "arch": arch}, data=b"x" * size
    )
    return SimpleNamespace(images=[image])


def toolkit(tmp_path, splits: bool = True):
    """A CUDA toolkit whose ptxas --help lists --split-compile or not."""
    bin_dir = tmp_path / ("cuda-split" if splits else "cuda-old") / "bin"
    bin_dir.mkdir(parents=True)
    ptxas = bin_dir / "ptxas"
    ptxas.write_text("#!/bin/sh\necho '--split-compile <N>'\n" if splits else "#!/bin/sh\necho '--maxrregcount'\n")
    ptxas.chmod(0o755)
    return SimpleNamespace(ptxas=str(ptxas), nvlink=str(bin_dir / "nvlink"))


@pytest.mark.fast
def test_partitions_and_ptxas_threads_follow_the_bundles_not_the_machine(tmp_path):
    from offload.formats.profiles import load_profile
    from offload.toolchain.cuda_device_link import (
        BITCODE_BYTES_PER_PARTITION,
        MAX_PARTITIONS,
        cuda_device_link_speed,
        partitions_for,
    )

    assert partitions_for(0) == 1
    assert partitions_for(BITCODE_BYTES_PER_PARTITION * 2 - 1) == 1
    assert partitions_for(BITCODE_BYTES_PER_PARTITION * 3) == 3
    assert partitions_for(BITCODE_BYTES_PER_PARTITION * 1000) == MAX_PARTITIONS
    clang22, cuda = load_profile(22), toolkit(tmp_path)
    big = [bundle_of(BITCODE_BYTES_PER_PARTITION * 3)]
    speed = cuda_device_link_speed(clang22, big, [], cuda)
    assert speed.arguments == [
        DEVICE_LINKER,
        "--plugin-opt=lto-partitions=3",
        DEVICE_LINKER,
        f"--cuda-path={os.path.dirname(os.path.dirname(WRAPPER))}",
    ]
    assert speed.env == {"MLIR_OFFLOAD_PTXAS": cuda.ptxas, "MLIR_OFFLOAD_PTXAS_OPTIONS": "--split-compile=4"}
    assert speed.path_prepend == [os.path.dirname(cuda.nvlink)]
    # The largest arch decides; two bundles' images of one arch are linked together.
    two = [bundle_of(BITCODE_BYTES_PER_PARTITION), bundle_of(BITCODE_BYTES_PER_PARTITION), bundle_of(10, "sm_90")]
    assert "--plugin-opt=lto-partitions=2" in cuda_device_link_speed(clang22, two, [], cuda).arguments
    # A small program: one partition, ptxas threads still.
    small = cuda_device_link_speed(clang22, [bundle_of(1000)], [], cuda)
    assert small.arguments == [DEVICE_LINKER, speed.arguments[3]]
    # The user's own nvlink wrapper options are theirs.
    own = cuda_device_link_speed(clang22, big, ["-O3", DEVICE_LINKER, "--plugin-opt=lto-partitions=1"], cuda)
    assert "--plugin-opt=lto-partitions=3" not in own.arguments and speed.arguments[3] in own.arguments
    own = cuda_device_link_speed(clang22, big, [DEVICE_LINKER, "--cuda-path=/opt/cuda"], cuda)
    assert own.arguments == speed.arguments[:2] and own.env == {}
    # Nothing for -G, -save-temps (every partition's PTX would get one name), a ptxas without threads,
    # HIP images, or a clang whose profile does not say its nvlink wrapper takes the options.
    # Nor for link --serial-device-link (serial=True, as -G passes it).
    for words, serial in ((["-save-temps"], False), (["--save-temps=obj"], False), ([], True)):
        assert cuda_device_link_speed(clang22, big, words, cuda, serial).arguments == []
    old = cuda_device_link_speed(clang22, big, [], toolkit(tmp_path, splits=False))
    assert old.arguments == speed.arguments[:2] and old.env == {}
    assert cuda_device_link_speed(clang22, [bundle_of(10**6, "gfx90a", "amdgcn-amd-amdhsa")], [], cuda).arguments == []
    assert cuda_device_link_speed(load_profile(19), big, [], cuda).arguments == []


@pytest.mark.fast
def test_ptxas_wrapper_runs_the_real_ptxas_with_its_options_only(tmp_path):
    real = tmp_path / "ptxas"
    real.write_text('#!/bin/sh\nprintf "%s\\n" "$@"\n')
    real.chmod(0o755)
    env = dict(os.environ, MLIR_OFFLOAD_PTXAS=str(real), MLIR_OFFLOAD_PTXAS_OPTIONS="--split-compile=4")
    done = subprocess.run([WRAPPER, "-arch", "sm_80", "a b.s"], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["--split-compile=4", "-arch", "sm_80", "a b.s"]
    for name, value, status in (
        ("MLIR_OFFLOAD_PTXAS", "", 127),
        ("MLIR_OFFLOAD_PTXAS", WRAPPER, 127),  # itself: it would run forever
        ("MLIR_OFFLOAD_PTXAS_OPTIONS", "--split-compile=4; rm -rf /", 1),
    ):
        done = subprocess.run([WRAPPER, "x.s"], env=dict(env, **{name: value}), capture_output=True, text=True)
        assert done.returncode == status
        assert done.stderr.startswith("ptxas wrapper: error: ") and len(done.stderr.splitlines()) == 1


def many_kernels(count: int) -> str:
    """A program of `count` kernels of libdevice math (enough device bitcode for several partitions): the
    benchmark's own generator (scripts/bench_e2e.py), whose main launches each kernel."""
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        import bench_e2e
    finally:
        sys.path.remove(str(REPO / "scripts"))
    return bench_e2e.generate_mlir(count)


def kernel_code(executable) -> dict[str, bytes]:
    """Each kernel's SASS (its cubin's .text.<kernel> bytes) in an executable's fatbin."""
    from offload.formats.elf import read_elf
    from offload.toolchain.executable import read_executable

    code = {}
    for objects in read_executable(str(executable)).device_sections.values():
        for image in objects:
            if image.kind == "elf":
                assert not image.compressed
                elf = read_elf(image.data, str(executable))
                code.update(
                    {f"{image.arch} {s.name}": elf.section_data(s) for s in elf.sections if s.name.startswith(".text.")}
                )
    return code


def test_parallel_device_link_keeps_every_kernel_and_the_bytes(tmp_path):
    require_tool("clang-22", 22)
    ptxas = require_tool("ptxas")
    source = tmp_path / "many.mlir"
    source.write_text(many_kernels(180))
    bundle = tmp_path / "many.bc"
    done = run_cli("compile", str(source), "--offload-arch", "sm_80", "-o", str(bundle))
    assert done.returncode == 0, done.stderr
    done = run_cli("link", str(bundle), "-o", str(tmp_path / "app"), "--dry-run")
    assert done.returncode == 0, done.stderr
    command = done.stdout.strip().splitlines()[-1]
    assert "--plugin-opt=lto-partitions=2" in shlex.split(command)
    splits = "--split-compile" in subprocess.run([ptxas, "--help"], capture_output=True, text=True).stdout
    assert (f"--cuda-path={os.path.dirname(os.path.dirname(WRAPPER))}" in shlex.split(command)) == splits
    # Linked in parallel, then on one CPU, then as before (one partition, the toolkit's own ptxas).
    done = run_cli("link", str(bundle), "-o", str(tmp_path / "reported"), "--resource-usage", "-v")
    assert done.returncode == 0, done.stderr
    ran = [line for line in done.stderr.splitlines() if line.startswith(' "') and "ptxas" in line]
    assert len(ran) == 2 and all(line.startswith(f' "{WRAPPER}"') == splits for line in ran)
    assert len([line for line in done.stdout.splitlines() if line.startswith("sm_80 kernel_")]) == 180
    done = run_cli("link", str(bundle), "-o", str(tmp_path / "app"))
    assert done.returncode == 0, done.stderr
    one_cpu = (
        subprocess.run(["taskset", "-c", str(min(os.sched_getaffinity(0))), "true"], capture_output=True).returncode
        == 0
    )
    if one_cpu:
        env = dict(os.environ, PYTHONPATH=str(REPO))
        pinned = subprocess.run(
            [
                "taskset",
                "-c",
                str(min(os.sched_getaffinity(0))),
                sys.executable,
                "-m",
                "offload",
                "link",
                str(bundle),
                "-o",
                str(tmp_path / "pinned"),
            ],
            env=env,
            capture_output=True,
            text=True,
        )
        assert pinned.returncode == 0, pinned.stderr
        assert (tmp_path / "pinned").read_bytes() == (tmp_path / "app").read_bytes()
    cuda_bin = os.path.dirname(os.path.realpath(ptxas))
    done = run_cli(
        "link",
        str(bundle),
        "-o",
        str(tmp_path / "serial"),
        DEVICE_LINKER,
        "--plugin-opt=lto-partitions=1",
        DEVICE_LINKER,
        f"--cuda-path={os.path.dirname(cuda_bin)}",
    )
    assert done.returncode == 0, done.stderr
    parallel, serial = kernel_code(tmp_path / "app"), kernel_code(tmp_path / "serial")
    assert len([name for name in serial if name.startswith("sm_80 .text.kernel_")]) == 180 and parallel == serial
    # link --serial-device-link: none of the threads, the same kernel code, the same bytes every time.
    done = run_cli("link", str(bundle), "-o", str(tmp_path / "lean"), "--serial-device-link", "--dry-run")
    assert done.returncode == 0, done.stderr
    words = shlex.split(done.stdout.strip().splitlines()[-1])
    assert not [w for w in words if "lto-partitions" in w or "offload-jobs" in w or "data/ptxas" in w], words
    for name in ("lean", "lean-again"):
        done = run_cli("link", str(bundle), "-o", str(tmp_path / name), "--serial-device-link")
        assert done.returncode == 0, done.stderr
    assert kernel_code(tmp_path / "lean") == parallel
    assert (tmp_path / "lean").read_bytes() == (tmp_path / "lean-again").read_bytes()


def test_shipped_build_links_in_parallel_as_link_does(tmp_path):
    """ship's build.sh renders link's rule: the same partitions and ptxas threads (the archive carries the ptxas
    wrapper), so the target builds the very bytes `mlir-offload link` does; LDFLAGS's own option wins, as the
    link's own words do."""
    import tarfile

    require_tool("clang-22", 22)
    ptxas = require_tool("ptxas")
    splits = "--split-compile" in subprocess.run([ptxas, "--help"], capture_output=True, text=True).stdout
    (tmp_path / "many.mlir").write_text(many_kernels(180))
    done = run_cli("compile", "many.mlir", "--offload-arch", "sm_80", "-o", "many.bc", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    done = run_cli("ship", "many.bc", "-o", "many.tar.gz", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    with tarfile.open(tmp_path / "many.tar.gz") as archive:
        members = {member.name: member for member in archive.getmembers()}
        archive.extractall(tmp_path, filter="tar")
    shipped = members["many/tools/ptxas/bin/ptxas"]
    assert shipped.mode & 0o111 and (tmp_path / "many/tools/ptxas/bin/ptxas").read_bytes() == open(WRAPPER, "rb").read()
    script = (tmp_path / "many" / "build.sh").read_text()
    assert "LTO_PARTITIONS='2'" in script and "PTXAS_THREADS='4'" in script

    def build(ldflags: str = "") -> bytes:
        subprocess.run(["make", "-C", "many", "clean"], cwd=tmp_path, check=True, capture_output=True)
        made = subprocess.run(
            ["make", "-C", "many", "CLANG=clang-22", f"LDFLAGS={ldflags}"], cwd=tmp_path, capture_output=True, text=True
        )
        assert made.returncode == 0, made.stderr
        return (tmp_path / "many" / "many").read_bytes()

    def link(*words: str) -> bytes:
        done = run_cli("link", "many.bc", "-o", "app", *words, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        return (tmp_path / "app").read_bytes()

    parallel = link()
    assert build() == parallel
    own = (DEVICE_LINKER, "--plugin-opt=lto-partitions=1")
    serial = link(*own)
    assert serial != parallel  # so the equalities say which partitions each build used
    assert build(" ".join(own)) == serial
    if splits:  # the ptxas threads change the cubin's bytes too: the toolkit's own ptxas, asked for, wins
        toolkit_ptxas = (DEVICE_LINKER, f"--cuda-path={os.path.dirname(os.path.dirname(os.path.realpath(ptxas)))}")
        assert build(" ".join(toolkit_ptxas)) == link(*toolkit_ptxas) != parallel


def test_shipped_device_debug_bundle_links_for_debugging(tmp_path):
    """A -G bundle ships with link's -G words (-g -O0 for the device compile of its bitcode) and without the
    parallel device link (no ptxas wrapper in the archive)."""
    import tarfile

    require_tool("clang-22", 22)
    require_tool("ptxas")
    done = run_cli(
        "compile", str(REPO / "examples" / "saxpy.mlir"), "--offload-arch", "sm_80", "-G", "-o", "g.bc", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    done = run_cli("ship", "g.bc", "-o", "g.tar.gz", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    with tarfile.open(tmp_path / "g.tar.gz") as archive:
        assert not [name for name in archive.getnames() if "ptxas" in name]
        archive.extractall(tmp_path, filter="tar")
    script = (tmp_path / "g" / "build.sh").read_text()
    assert "-Wl,--device-compiler=nvptx64-nvidia-cuda=-g -Wl,--device-compiler=nvptx64-nvidia-cuda=-O0" in script
    assert "LTO_PARTITIONS=''" in script and "PTXAS_THREADS=''" in script
    made = subprocess.run(
        ["make", "-C", "g", "CLANG=clang-22", "LDFLAGS=-save-temps"], cwd=tmp_path, capture_output=True, text=True
    )
    assert made.returncode == 0, made.stderr
    from offload.formats.elf import read_elf

    cubin = tmp_path / "g" / "g.tmp.nvptx64.sm_80.cubin"
    names = {section.name for section in read_elf(cubin.read_bytes(), str(cubin)).sections}
    assert {".debug_info", ".nv_debug_info_reg_sass"} <= names

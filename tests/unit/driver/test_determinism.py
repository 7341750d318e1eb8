"""Same input and flags, byte-identical outputs: across runs, working directories and absolute paths of
the input (no path, time or temp name may leak into a bundle, image, package or shipped archive)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import REPO, run_cli

SAXPY = REPO / "examples" / "saxpy.mlir"

# (output name, arguments after the input); the input is saxpy.mlir in each run's own folder. Every build
# makes its device images (--no-cache): an image taken from the cache would prove nothing.
BUILDS = (
    ("s.bc", ["compile", "--offload-arch", "sm_80,sm_90", "--no-cache"]),
    ("s.ll", ["compile", "--offload-arch", "sm_80", "-S", "--no-cache"]),
    ("h.bc", ["compile", "--offload-arch", "gfx90a", "--no-cache"]),
    ("d.bin", ["device", "--offload-arch", "sm_80,gfx90a", "--no-cache"]),
    ("s.tar.gz", ["ship", "--offload-arch", "sm_80", "--target-clang", "22", "--no-cache"]),
)


def build_all(folder: Path, input_arg: str) -> dict[str, bytes]:
    outputs = {}
    for name, (command, *flags) in BUILDS:
        result = run_cli(command, input_arg, *flags, "-o", name, cwd=folder)
        assert result.returncode == 0, f"{command}: {result.stderr}"
        outputs[name] = (folder / name).read_bytes()
    packaged = run_cli(
        "package",
        "-o",
        "p.bin",
        "--image=file=d.bin,triple=nvptx64-nvidia-cuda,arch=sm_80,kind=cuda,image-kind=bitcode",
        cwd=folder,
    )
    assert packaged.returncode == 0, packaged.stderr
    outputs["p.bin"] = (folder / "p.bin").read_bytes()
    return outputs


@pytest.fixture(scope="module")
def two_builds(tmp_path_factory):
    """The same program built in two folders of different depth: by relative and by absolute input path."""
    first = tmp_path_factory.mktemp("one")
    second = tmp_path_factory.mktemp("two") / "deeper" / "still deeper"
    second.mkdir(parents=True)
    for folder in (first, second):
        shutil.copy(SAXPY, folder / "saxpy.mlir")
    return (first, build_all(first, "saxpy.mlir")), (second, build_all(second, str(second / "saxpy.mlir")))


@pytest.mark.parametrize("name", [name for name, _ in BUILDS] + ["p.bin"])
def test_outputs_do_not_depend_on_the_folder_or_input_path(two_builds, name):
    (first, one), (second, two) = two_builds
    assert one[name], name
    assert one[name] == two[name], f"{name} differs between {first} and {second}"
    for folder in (first, second):
        # Neither folder's path appears in the output (the archive is gzip: check what it holds).
        assert str(folder).encode() not in one[name] + two[name]


def test_shipped_archive_holds_no_build_path(two_builds):
    import io
    import tarfile

    (first, one), (second, _) = two_builds
    with tarfile.open(fileobj=io.BytesIO(one["s.tar.gz"])) as archive:
        for member in archive.getmembers():
            if member.isfile():
                extracted = archive.extractfile(member)
                assert extracted is not None
                data = extracted.read()
                assert str(first).encode() not in data and str(second).encode() not in data, member.name
                assert b"/tmp/" not in data, member.name


def test_rebuild_in_place_is_identical(two_builds):
    (first, one), _ = two_builds
    again = run_cli("compile", "saxpy.mlir", "--offload-arch", "sm_80,sm_90", "--no-cache", "-o", "again.bc", cwd=first)
    assert again.returncode == 0, again.stderr
    assert (first / "again.bc").read_bytes() == one["s.bc"]

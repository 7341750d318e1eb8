"""Target-clang profiles as data: every profile is self-consistent, the clang 21 profile (verified on Debian's
clang 21.1.8, see offload/data/profiles/clang21.toml) drives compile's entry layout and kind values, and link
accepts or refuses bundles across clang 19/21/22 by what the profiles say. No clang 21 is needed here."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

from conftest import REPO, require_tool, run_cli
from offload.errors import OffloadError
from offload.formats.profiles import available_profiles, load_profile

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

SAXPY = REPO / "examples" / "saxpy.mlir"
FIELD_BYTES = {"i16": 2, "i32": 4, "i64": 8, "ptr": 8}


def profile_tables() -> dict[int, dict]:
    root = resources.files("offload.data").joinpath("profiles")
    return {
        int(p.name[len("clang") : -len(".toml")]): tomllib.loads(p.read_text("utf-8"))
        for p in root.iterdir()
        if p.name.startswith("clang") and p.name.endswith(".toml")
    }


# ---- the data itself ---------------------------------------------------------------------------


def test_profiles_encode_the_hip_kind_change_and_entry_layouts():
    assert {19, 22} <= set(available_profiles())
    p19, p22 = load_profile(19), load_profile(22)
    assert (p19.offload_kind["hip"], p22.offload_kind["hip"]) == (3, 4)
    assert p19.offload_kind["cuda"] == p22.offload_kind["cuda"] == 2
    sizes = {"ptr": 8, "i64": 8, "i32": 4, "i16": 2}
    for p in (p19, p22):
        fields = [f.split(":")[1] for f in p.entries["fields"]]
        assert sum(sizes[t] for t in fields) == p.entries["struct_size"]
    assert p22.entries["section"]["cuda"] == "llvm_offload_entries"
    assert p19.entries["section"]["hip"] == "hip_offloading_entries"


def test_unknown_profile_is_an_error_naming_the_known_ones():
    with pytest.raises(OffloadError, match=r"no profile for target clang 7 .*19.*22"):
        load_profile(7)
    with pytest.raises(OffloadError, match="clang major version"):
        load_profile("latest")


def test_profiles_present_and_labelled():
    tables = profile_tables()
    assert {19, 21, 22} <= set(tables)
    for major, table in tables.items():
        assert table["clang_major"] == major
        assert table["status"] in ("verified", "source"), major
        assert table["evidence"].strip() and "PENDING" not in table["evidence"], major
    assert tables[21]["status"] == "verified" and "21.1.8" in tables[21]["evidence"]


@pytest.mark.parametrize("major", sorted(profile_tables()))
def test_entry_fields_add_up_and_kinds_are_distinct_bits(major):
    table = profile_tables()[major]
    entries = table["entries"]
    sizes = [FIELD_BYTES[spec.split(":")[1]] for spec in entries["fields"]]
    assert sum(sizes) == entries["struct_size"]
    # Every field sits at its natural offset unless the struct is packed (align 1, the legacy layout).
    if entries["align"] == 8:
        offset = 0
        for size in sizes:
            assert offset % size == 0
            offset += size
    kinds = table["offload_kind"]
    assert {"openmp", "cuda", "hip"} <= set(kinds)
    assert len(set(kinds.values())) == len(kinds)
    assert set(entries["section"]) == {"cuda", "hip"}
    assert table["bitcode"]["reads_llvm_up_to"] == table["llvm_major"]
    assert isinstance(table["cuda"]["fatbinary_needs_image3_wrapper"], bool)


def test_release_differences_are_recorded():
    tables = profile_tables()
    # HIP is 3 up to LLVM 20 and 4 from 21 (bit flags); clang 21 emits 4 (measured).
    assert tables[19]["offload_kind"]["hip"] == 3
    assert tables[21]["offload_kind"]["hip"] == 4 and tables[22]["offload_kind"]["hip"] == 4
    assert tables[21]["entries"] == tables[22]["entries"]
    assert tables[21]["entries"]["section"]["hip"] == "llvm_offload_entries"
    # clang 21's linker wrapper still calls fatbinary --image=..., which CUDA 13 rejects.
    assert tables[21]["cuda"]["fatbinary_needs_image3_wrapper"] is True
    assert tables[22]["cuda"]["fatbinary_needs_image3_wrapper"] is False


def test_profiles_sharing_a_section_share_its_layout():
    """Executables are read by section name (offload/toolchain/executable.py): one section, one layout."""
    by_section: dict[str, dict] = {}
    for major, table in profile_tables().items():
        for section in table["entries"]["section"].values():
            layout = {k: table["entries"][k] for k in ("fields", "struct_size", "align", "version")}
            assert by_section.setdefault(section, layout) == layout, (major, section)


# ---- compile --target-clang 21 -----------------------------------------------------------------


def readelf_sections(path: Path) -> dict[str, int]:
    readelf = require_tool("llvm-readelf-22", 22)
    done = subprocess.run(
        [readelf, "--sections", "--elf-output-style=JSON", str(path)], capture_output=True, text=True, check=True
    )
    sections = json.loads(done.stdout)[0]["Sections"]
    return {s["Section"]["Name"]["Name"]: s["Section"]["Size"] for s in sections}


@pytest.fixture(scope="module")
def bundles(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("profiles21")
    made = {}
    for name, arch, clang in (
        ("cuda21", "sm_80", 21),
        ("hip21", "gfx90a", 21),
        ("cuda19", "sm_80", 19),
        ("cuda22", "sm_80", 22),
    ):
        out = tmp / (f"{name}.offload.bc" if clang == 22 else f"{name}.offload.o")
        done = run_cli("compile", str(SAXPY), "--offload-arch", arch, "--target-clang", str(clang), "-o", str(out))
        assert done.returncode == 0, done.stderr
        made[name] = out
    return made


def test_clang21_bundle_is_an_object_with_v1_entries(bundles):
    data = bundles["cuda21"].read_bytes()
    assert data[:4] == b"\x7fELF"  # clang 21 cannot read LLVM 22 bitcode: host object + cubin
    sections = readelf_sections(bundles["cuda21"])
    assert sections["llvm_offload_entries"] == 56  # one kernel, one 56-byte v1 entry
    assert ".llvm.rodata.offloading" in sections
    assert "cuda_offloading_entries" not in sections and ".llvm.offloading" in sections


@pytest.mark.parametrize("name, offload_kind, image_kind", [("cuda21", 2, 3), ("hip21", 4, 1)])
def test_clang21_entry_and_image_kinds(bundles, name, offload_kind, image_kind):
    from offload.packager import read_offload_images
    from offload.toolchain.executable import read_elf, read_entry_sections

    data = bundles[name].read_bytes()
    (section,) = [s for s in read_entry_sections(read_elf(data, name)) if s.entries]
    assert section.name == "llvm_offload_entries"
    assert [e.kind for e in section.entries] == [offload_kind]  # names are relocations in an object
    (image,) = read_offload_images(data, name)
    assert (image.offload_kind, image.image_kind) == (offload_kind, image_kind)
    assert image.strings["mlir-offload.profile"] == "21"


def test_clang21_refuses_llvm22_bitcode(tmp_path):
    out = tmp_path / "x.offload.bc"
    done = run_cli(
        "compile", str(SAXPY), "--offload-arch", "sm_80", "--target-clang", "21", "--host-format=bc", "-o", str(out)
    )
    assert done.returncode == 1 and not out.exists()
    assert "clang 21 cannot read LLVM 22" in done.stderr and len(done.stderr.strip().splitlines()) == 1


# ---- link across clang 19 / 21 / 22 ------------------------------------------------------------


def clang_record(major: int):
    from offload.toolchain.doctor import Clang

    return Clang(
        path=f"/opt/llvm-{major}/bin/clang",
        version=f"{major}.1.8",
        major=major,
        linker_wrapper=f"/opt/llvm-{major}/bin/clang-linker-wrapper",
        packager=None,
        lld=None,
    )


def link_problem(bundle: Path, clang_major: int) -> str | None:
    from offload.errors import OffloadError
    from offload.packager.bundle import read_bundle_record
    from offload.toolchain.link import compatibility_problem

    record, images = read_bundle_record(bundle.read_bytes(), bundle.name)
    problem = compatibility_problem(record, images, clang_record(clang_major))
    return OffloadError(problem).message if problem else None


def test_link_compatibility_follows_the_profiles(bundles):
    # Same entry layout and kinds, native images: any clang of that layout links it.
    assert link_problem(bundles["cuda21"], 21) is None
    assert link_problem(bundles["cuda21"], 22) is None
    assert link_problem(bundles["hip21"], 22) is None
    # A clang-22 bundle carries LLVM 22 bitcode, which clang 21 cannot read.
    problem = link_problem(bundles["cuda22"], 21)
    assert problem and "cannot read" in problem and "--target-clang 21" in problem
    # Legacy entries against v1 (either way): the executable would register nothing.
    for bundle, clang in (("cuda19", 21), ("cuda21", 19)):
        problem = link_problem(bundles[bundle], clang)
        assert problem and "registers no kernel" in problem and f"--target-clang {clang}" in problem


def test_link_refuses_clang21_bundle_with_clang19(bundles, tmp_path):
    require_tool("clang-19", 19)
    app = tmp_path / "app"
    done = run_cli("link", str(bundles["cuda21"]), "--clang", "clang-19", "-o", str(app))
    assert done.returncode == 1 and not app.exists()
    assert "bundle was made for clang 21" in done.stderr


def test_link_clang21_bundle_with_clang22_dry_run(bundles, tmp_path):
    require_tool("clang-22", 22)
    done = run_cli("link", str(bundles["cuda21"]), "--clang", "clang-22", "--dry-run", "-o", str(tmp_path / "app"))
    assert done.returncode == 0, done.stderr
    assert "--offload-new-driver" in done.stdout and "-lcudart" in done.stdout
    assert "offload/data/scripts" not in done.stdout  # clang 22 needs no fatbinary wrapper


def test_wrapper_link_puts_cuda_on_path_not_cuda_path(bundles, tmp_path):
    """clang 21 forwards --cuda-path to its linker wrapper, which then runs <cuda>/bin/fatbinary and
    bypasses the rewriting wrapper: with the wrapper, the toolkit goes on PATH instead (clang 19 too)."""
    require_tool("clang-19", 19)
    done = run_cli("link", str(bundles["cuda19"]), "--clang", "clang-19", "--dry-run", "-o", str(tmp_path / "app"))
    assert done.returncode == 0, done.stderr
    path_prefix, _, command = done.stdout.partition(" ")
    assert path_prefix.startswith("PATH=") and "offload/data/scripts" in path_prefix
    assert path_prefix.split("=", 1)[1].split(":")[1].endswith("/bin")  # the CUDA toolkit's bin, behind it
    assert "--cuda-path" not in command and "-lcudart" in command

"""The shared ground: error rendering, atomic output, target-clang profiles, README/CI agreement."""

import os
from pathlib import Path

import pytest

from conftest import REPO
from offload.errors import Location, OffloadError
from offload.fsutil import atomic_write
from offload.formats.profiles import available_profiles, load_profile


def test_error_renders_one_line_with_location():
    e = OffloadError("bad thing\nwith detail", Location("a.mlir", 3, 7))
    assert e.render() == "a.mlir:3:7: error: bad thing with detail"
    assert OffloadError("x").render() == "mlir-offload: error: x"


def test_atomic_write_replaces_whole_file(tmp_path):
    target = tmp_path / "out.bin"
    atomic_write(target, b"first")
    atomic_write(target, b"second")
    assert target.read_bytes() == b"second"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.bin"]


def test_atomic_write_into_missing_directory_fails_cleanly(tmp_path):
    with pytest.raises(OffloadError, match="cannot write"):
        atomic_write(tmp_path / "nope" / "out.bin", b"x")
    assert list(tmp_path.iterdir()) == []


def test_atomic_write_leaves_nothing_when_interrupted(tmp_path, monkeypatch):
    def boom(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(KeyboardInterrupt):
        atomic_write(tmp_path / "out.bin", b"x")
    assert list(tmp_path.iterdir()) == []


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


def test_ci_runs_the_readme_test_command():
    readme = (REPO / "README.md").read_text()
    ci = (REPO / ".ci" / "run").read_text().strip().splitlines()[-1]
    assert ci in readme

"""The shared ground: error rendering, atomic output, README/CI agreement."""

import os

import pytest

from conftest import REPO
from offload.errors import Location, OffloadError
from offload.fsutil import atomic_write

pytestmark = pytest.mark.no_toolchain


def test_error_renders_one_line_with_location():
    e = OffloadError("bad thing\nwith detail", Location("a.mlir", 3, 7))
    assert e.render() == "a.mlir:3:7: error: bad thing\\nwith detail"  # escaped: still one line
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


def test_ci_runs_the_readme_test_command():
    readme = (REPO / "README.md").read_text()
    ci = (REPO / ".ci" / "run").read_text().strip().splitlines()[-1]
    assert ci in readme

"""inspect on a linked executable lists its device images (arch, kind, size, kernels) and its offload
entries, as cuobjdump --list-elf does; a bundle object (ELF without a fatbin) keeps the image listing."""

from __future__ import annotations

import json

import pytest

from conftest import REPO, require_tool, run_cli

EXAMPLES = REPO / "examples"


@pytest.fixture(scope="module")
def executable(tmp_path_factory):
    require_tool("clang-22", 22)
    require_tool("ptxas")
    tmp = tmp_path_factory.mktemp("inspect-exe")
    done = run_cli(
        "compile",
        str(EXAMPLES / "device_globals.mlir"),
        "--offload-arch",
        "sm_80,sm_90",
        "--portable",
        "-o",
        str(tmp / "dg.o"),
    )
    assert done.returncode == 0, done.stderr
    done = run_cli("link", str(tmp / "dg.o"), "--ptx-beside", "-o", str(tmp / "dg"))
    assert done.returncode == 0, done.stderr
    return tmp


def test_lists_images_and_entries(executable):
    done = run_cli("inspect", str(executable / "dg"), "--json")
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    images = {(i["arch"], i["kind"]) for i in record["device_images"]}
    assert {("sm_80", "elf"), ("sm_90", "elf"), ("compute_80", "ptx"), ("compute_90", "ptx")} <= images
    assert all(i["size"] > 0 for i in record["device_images"])
    assert all(i["kernels"] == ["lookup"] for i in record["device_images"] if i["kind"] == "elf")
    [section] = record["entry_sections"]
    assert section["registered"] is True and section["target_clang"] == 22
    kinds = {e["name"]: e["kind"] for e in section["entries"]}
    assert kinds["lookup"] == "kernel" and kinds["table"] == "variable"
    text = run_cli("inspect", str(executable / "dg")).stdout
    assert text.splitlines()[0].endswith(f"linked executable, {len(record['device_images'])} device images")
    assert any(line.strip().startswith("kernel   lookup") for line in text.splitlines())


def test_bundle_object_still_lists_its_images(executable):
    done = run_cli("inspect", str(executable / "dg.o"))
    assert done.returncode == 0, done.stderr
    assert "2 images" in done.stdout.splitlines()[0] and "arch          sm_90" in done.stdout

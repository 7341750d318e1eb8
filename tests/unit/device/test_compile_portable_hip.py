"""Portable HIP bundles: device code with inline asm (ockl's, e.g. from gpu.printf) cannot be assembled by
llvmlite's AMDGPU target (an LLVM fatal error would kill the process), so the object comes from an llc
of our LLVM major; without one, compile refuses in one line. Objects carry every kernel's .kd symbol."""

from __future__ import annotations

import pytest

from conftest import REPO, require_tool, run_cli
from offload.errors import OffloadError

FEATURES = REPO / "tests" / "data" / "device" / "features.mlir"


def _kd_symbols(obj: bytes, tmp_path) -> set[str]:
    import subprocess

    nm = require_tool("llvm-nm-22", 22)
    path = tmp_path / "image.o"
    path.write_bytes(obj)
    out = subprocess.run([nm, "--defined-only", str(path)], capture_output=True, text=True, check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.split()[-1].endswith(".kd")}


def test_hip_portable_bundle_with_inline_asm_compiles_through_llc(tmp_path):
    require_tool("llc-22", 22)
    bundle = tmp_path / "features.offload.o"
    done = run_cli("compile", str(FEATURES), "--offload-arch", "gfx90a", "--target-clang", "19", "-o", str(bundle))
    assert done.returncode == 0, done.stderr
    from offload.packager import ImageKind, read_offload_images

    (image,) = read_offload_images(bundle.read_bytes(), str(bundle))
    assert image.image_kind == ImageKind.OBJECT and image.strings["arch"] == "gfx90a"
    assert _kd_symbols(image.data, tmp_path) == {
        f"{k}.kd"
        for k in (
            "math_ops",
            "row_sum",
            "reverse_block",
            "dyn_shared",
            "reduce_shuffle",
            "hello",
            "scale",
            "host_kernel",
        )
    }


def test_llc_must_be_of_our_llvm_major():
    import llvmlite.binding as llvm

    from offload.device.codegen import find_llc

    assert find_llc(llvm.llvm_version_info[0], candidates=("no-such-llc-anywhere",)) is None
    # An llc of another LLVM major is not taken: it could not read our bitcode.
    llc19 = require_tool("llc-19", 19)
    assert find_llc(19, candidates=(llc19,)) == llc19
    assert find_llc(llvm.llvm_version_info[0], candidates=(llc19,)) is None


def test_inline_asm_without_llc_is_refused_in_one_line(monkeypatch):
    from offload.device import codegen, parse_offload_arch

    (target,) = parse_offload_arch("gfx90a")
    monkeypatch.setattr(codegen, "find_llc", lambda major, candidates=None: None)
    with pytest.raises(OffloadError) as refused:
        codegen.llc_object(b"BC\xc0\xde", target, 3)
    message = refused.value.render()
    assert "\n" not in message
    assert "inline asm" in message and "install llvm-22" in message

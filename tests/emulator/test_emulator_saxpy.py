"""The emulator runs the bundle's own kernels on the CPU: saxpy computes the right numbers, and a wrong
kernel is caught by the same program's check."""

from __future__ import annotations

import pytest

from conftest import REPO
from emulation import emulate

SAXPY = REPO / "examples" / "saxpy.mlir"


@pytest.mark.parametrize("arch", ["sm_80", "gfx90a"])
def test_saxpy_computes_right_under_emulation(tmp_path, arch):
    done = emulate(SAXPY, arch, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["y[0] = 1.0", "y[1] = 3.0", "y[1023] = 2047.0", "saxpy: ok"]


def test_a_wrong_kernel_fails_the_check(tmp_path):
    text = SAXPY.read_text()
    wrong = text.replace("%r = arith.addf %ax, %yv : f32", "%r = arith.subf %ax, %yv : f32")
    assert wrong != text
    done = emulate(wrong, "sm_80", tmp_path)
    assert done.returncode == 2
    assert "saxpy: MISMATCH" in done.stdout
    assert "y[1] = 1.0" in done.stdout  # 2 * 1 - 1: the kernel really ran, wrongly

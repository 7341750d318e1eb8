"""1-D vector.transfer_read/write in device code (in bounds, and past a row's end with padding) lower to
loads and stores on both targets (convert-vector-to-llvm in the device lowering, as upstream's RUN lines run
it over gpu.modules, e.g. the sparse mma.sp program's); results checked against numpy under emulation."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import REPO
from emulation import emulate

PROGRAM = REPO / "tests" / "data" / "device" / "vector_transfers.mlir"


def expected() -> np.ndarray:
    rows = np.arange(24, dtype=np.float64).reshape(4, 6)
    padded = np.full((4, 8), 100.0)
    padded[:, :6] = rows
    return (rows[:, :4] + padded[:, 4:8]) * (np.arange(4) + 1)[:, None]


@pytest.mark.parametrize("arch", ["sm_80", "gfx90a"])
def test_vector_transfers_in_a_kernel(tmp_path, arch):
    done = emulate(PROGRAM, arch, tmp_path)
    assert done.returncode == 0, done.stderr
    got = np.array([[float(v) for v in line.strip("() ").split(",")] for line in done.stdout.splitlines()])
    np.testing.assert_array_equal(got, expected())

"""Building examples/hpc-make in a scratch folder with make, as the build-system tests do."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from conftest import REPO

EXAMPLE = REPO / "examples" / "hpc-make"
# Outputs of a build someone may have run in the source tree.
BUILD_OUTPUTS = ("*.o", "*.offload.bc", "*.offload.d", "*.ptx", "helpers.bc", "hpc-app")


def make(folder: Path, *args: str) -> subprocess.CompletedProcess:
    """`make -C folder ARGS` with this interpreter's mlir-offload."""
    return subprocess.run(
        ["make", "-C", str(folder), f"MLIR_OFFLOAD={sys.executable} -m offload", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


def fresh_copy(parent: Path) -> Path:
    """A clean copy of the example under `parent`, without build outputs."""
    folder = parent / "hpc-make"
    shutil.copytree(EXAMPLE, folder, ignore=shutil.ignore_patterns(*BUILD_OUTPUTS))
    return folder

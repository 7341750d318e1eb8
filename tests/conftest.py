"""Shared test helpers: running the CLI as a user does, and finding the real target toolchains."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
# Hand-written reference modules (copied from the design notes' shared/reference).
SHARED_REFERENCE = REPO / "tests" / "data" / "reference"


def find_tool(name: str, llvm_major: int | None = None) -> str | None:
    """A tool by its Debian name (clang-22), else from /usr/lib/llvm-N/bin, else the CUDA toolkit."""
    candidates = [name]
    if llvm_major is not None:
        candidates.append(f"/usr/lib/llvm-{llvm_major}/bin/{name.rsplit('-', 1)[0]}")
    candidates.append(f"/usr/local/cuda/bin/{name}")
    for c in candidates:
        found = shutil.which(c)
        if found:
            return found
    return None


def require_tool(name: str, llvm_major: int | None = None) -> str:
    """In CI a missing toolchain is a failure (scripts/setup installs it); elsewhere the test is skipped."""
    path = find_tool(name, llvm_major)
    if path is None:
        message = f"{name} not found (scripts/setup installs it)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return path


def run_cli(*args: str, cwd: str | os.PathLike | None = None, env: dict | None = None,
            input: bytes | None = None) -> subprocess.CompletedProcess:
    """Run `mlir-offload ARGS` in a fresh process, exactly as a user would."""
    return subprocess.run(
        [sys.executable, "-m", "offload", *args],
        cwd=cwd, env=env, input=input, capture_output=True, text=input is None, timeout=600,
    )


@pytest.fixture(autouse=True)
def private_image_cache(tmp_path_factory, monkeypatch):
    """Each test its own device image cache: none writes the user's, none sees another test's images."""
    monkeypatch.setenv("MLIR_OFFLOAD_CACHE_DIR", str(tmp_path_factory.mktemp("image-cache")))


@pytest.fixture
def clang22() -> str:
    return require_tool("clang-22", 22)


@pytest.fixture
def clang19() -> str:
    return require_tool("clang-19", 19)


@pytest.fixture
def llvm_offload_binary22() -> str:
    return require_tool("llvm-offload-binary-22", 22)


@pytest.fixture
def clang_offload_packager19() -> str:
    return require_tool("clang-offload-packager-19", 19)


@pytest.fixture
def ptxas() -> str:
    return require_tool("ptxas")

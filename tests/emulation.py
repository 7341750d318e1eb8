"""Running programs under emulation in tests: compile, link --emulate, run (see docs/emulator.md)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from conftest import find_tool, run_cli


def require_emulation() -> None:
    """Skip (fail in CI) where clang-22, opt-22 or LLVM 22's headers are missing: scripts/setup installs them."""
    from offload.toolchain.emulate import have_emulation_tools

    if not have_emulation_tools() or find_tool("clang-22", 22) is None:
        message = "--emulate needs clang-22, opt-22 and llvm-22-dev (scripts/setup installs them)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


def emulate(
    program: str | Path, arch: str, folder: Path, *compile_flags: str, arguments: tuple[str, ...] = ()
) -> subprocess.CompletedProcess:
    """Compile `program` (a Path, or MLIR text as a str) for `arch`, link it with --emulate and run it; the
    run's CompletedProcess (text output). A failing compile or link fails the test."""
    require_emulation()
    folder.mkdir(parents=True, exist_ok=True)
    if isinstance(program, Path):
        source = program
    else:
        source = folder / "program.mlir"
        source.write_text(program)
    bundle = folder / f"{source.stem}.{arch}.offload.bc"
    executable = folder / f"{source.stem}.{arch}.emulated"
    done = run_cli("compile", str(source), "--offload-arch", arch, *compile_flags, "-o", str(bundle))
    assert done.returncode == 0, done.stderr
    done = run_cli("link", str(bundle), "--emulate", "-o", str(executable))
    assert done.returncode == 0, done.stderr
    return subprocess.run([str(executable), *arguments], capture_output=True, text=True, timeout=300)

"""Building a `ship` archive as its target machine does: unpacked, then make in an environment where the
Python package cannot run (tests/builds/test_ship_*.py and the tests that ship what they check)."""

from __future__ import annotations

import subprocess
from pathlib import Path


def scrubbed_env(tmp: Path) -> dict:
    """PATH without the Python package: a python3/python that fails and leaves a mark if run."""
    shims = tmp / "shims"
    shims.mkdir(exist_ok=True)
    for name in ("python3", "python"):
        shim = shims / name
        shim.write_text(f"#!/bin/sh\ntouch {tmp}/python-was-run\nexit 99\n")
        shim.chmod(0o755)
    return {"PATH": f"{shims}:/usr/bin:/bin", "HOME": str(tmp), "LANG": "C"}


def unpack(archive: Path, dest: Path) -> Path:
    """The archive unpacked into `dest`: its one top-level folder."""
    dest.mkdir(parents=True, exist_ok=True)
    subprocess.run(["tar", "xzf", str(archive), "-C", str(dest)], check=True)
    (top,) = list(dest.iterdir())
    return top


def run_make(folder: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    """`make -C folder ARGS` in `env`, its output captured."""
    return subprocess.run(["make", "-C", str(folder), *args], env=env, capture_output=True, text=True, timeout=300)

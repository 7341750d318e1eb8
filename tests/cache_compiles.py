"""The cache tests' compile: examples/saxpy.mlir for sm_80 by this checkout's code, in a process of its own,
with a cache folder (None: --no-cache) and a remote cache URL of the test's choosing, never the caller's."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import REPO
from offload.cache.remote import URL_ENVIRONMENT
from offload.cache.root import CACHE_ENVIRONMENT

SAXPY = str(REPO / "examples" / "saxpy.mlir")
TIMEOUT = 180  # a compile that waits on a FIFO would hang: the test fails instead


def clean_environment() -> dict[str, str]:
    """This checkout's code, no remote cache setting of the caller's."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("MLIR_OFFLOAD_REMOTE_CACHE")}
    environment["PYTHONPATH"] = str(REPO)
    return environment


def compile_saxpy(
    cache: Path | None,
    out: Path,
    *flags: str,
    url: str | None = None,
    env: dict | None = None,
    check: bool = True,
) -> subprocess.CompletedProcess:
    """`compile -v` of saxpy into `out`; `check`: it must succeed, without a traceback."""
    environment = clean_environment()
    environment.update(env or {})
    if url:
        environment[URL_ENVIRONMENT] = url
    if cache is not None:
        environment[CACHE_ENVIRONMENT] = str(cache)
    command = [sys.executable, "-m", "offload", "compile", SAXPY, "--offload-arch", "sm_80", "-o", str(out), "-v"]
    command += [*flags, *(["--no-cache"] if cache is None else [])]
    done = subprocess.run(command, env=environment, capture_output=True, text=True, timeout=TIMEOUT)
    if check:
        assert done.returncode == 0, done.stderr
        assert "Traceback" not in done.stderr
    return done

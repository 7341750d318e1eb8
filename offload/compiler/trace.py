"""compile -v: each stage with its time, the libraries found and every tool run, on standard error
(as clang -v), written by the process that does the work (device serialization runs in forked children)."""

from __future__ import annotations

import os
import shlex
import sys
import time
from contextlib import contextmanager

# Inherited by forked children, so a child's library and tool lines appear too.
_ENABLED_ENVIRONMENT = "MLIR_OFFLOAD_VERBOSE"


def enable() -> None:
    os.environ[_ENABLED_ENVIRONMENT] = "1"


def enabled() -> bool:
    return os.environ.get(_ENABLED_ENVIRONMENT) == "1"


def note(message: str) -> None:
    if enabled():
        sys.stderr.write(f"mlir-offload: {message}\n")
        sys.stderr.flush()


def library(what: str, path: str) -> None:
    note(f"library {what}: {path}")


def tool(command: list[str]) -> None:
    note("running: " + " ".join(shlex.quote(str(part)) for part in command))


@contextmanager
def stage(name: str):
    start = time.perf_counter()
    yield
    note(f"stage {name}: {(time.perf_counter() - start) * 1000:.1f} ms")


__all__ = ["enable", "enabled", "library", "note", "stage", "tool"]

"""Every reader of untrusted files on mutated real inputs (fixed seed, scripts/fuzz_readers.py): only
OffloadError escapes, no native crash, no hang. MLIR_OFFLOAD_FUZZ_ITERATIONS runs more inputs."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import REPO

pytestmark = pytest.mark.no_toolchain  # the seeds are in tests/data/fuzz

SCRIPT = REPO / "scripts" / "fuzz_readers.py"


def test_readers_survive_mutated_inputs():
    iterations = os.environ.get("MLIR_OFFLOAD_FUZZ_ITERATIONS", "3000")
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--iterations", iterations, "--seed", "1"],
        capture_output=True,
        text=True,
        timeout=3600,
    )
    summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr
    assert done.returncode == 0, done.stdout + done.stderr
    assert summary.startswith(f"inputs {iterations}, crashes 0, native crashes 0, hangs 0"), summary


def test_fuzz_inputs_are_deterministic():
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        import fuzz_readers
    finally:
        sys.path.remove(str(SCRIPT.parent))
    corpus = fuzz_readers.seeds()
    first = [fuzz_readers.case(7, i, corpus)[1] for i in range(50)]
    assert first == [fuzz_readers.case(7, i, corpus)[1] for i in range(50)]
    assert len(set(first)) > 40  # and they do differ from one another

"""The emulation runtime's streams and events (offload/data/emulator/runtime.c) called directly, as a
bundle's host code calls them, by tests/data/emulator/streams_runtime.c: launches are queued and return,
streams run concurrently, the legacy stream waits for and blocks blocking streams (not non-blocking ones),
events order streams and answer queries, launches copy their arguments, copies and sets keep their
stream's order and pageable copies are done by the call. Built under the CUDA and the HIP names.
MLIR programs using streams are in tests/data/emulate (streams_*.mlir)."""

from __future__ import annotations

import subprocess

import pytest

from conftest import REPO, find_tool
from emulation import require_emulation

RUNTIME = REPO / "offload" / "data" / "emulator" / "runtime.c"
PROGRAM = REPO / "tests" / "data" / "emulator" / "streams_runtime.c"
CHECKS = (
    "launch-is-queued",
    "streams-overlap",
    "synchronized-stream-is-idle",
    "legacy-waits-for-blocking",
    "legacy-runs-after",
    "blocking-waits-for-legacy",
    "blocking-runs-after",
    "non-blocking-ignores-legacy",
    "legacy-kernel-finished",
    "event-pending",
    "event-never-recorded",
    "stream-waits-for-event",
    "event-complete",
    "waiting-stream-ran",
    "elapsed-time",
    "device-copy-is-queued",
    "pageable-copy-after-stream",
    "pageable-source-read-by-the-call",
    "destroyed-stream-finishes",
)


@pytest.fixture(scope="module")
def runtime_object(tmp_path_factory) -> tuple[str, str]:
    require_emulation()
    clang = find_tool("clang-22", 22)
    assert clang is not None  # require_emulation skips without clang-22
    folder = tmp_path_factory.mktemp("streams")
    obj = folder / "runtime.o"
    subprocess.run([clang, "-std=c11", "-O2", "-c", str(RUNTIME), "-o", str(obj)], check=True, timeout=300)
    return clang, str(obj)


@pytest.mark.parametrize("api", ["cuda", "hip"])
def test_streams_and_events_keep_the_runtime_rules(runtime_object, tmp_path, api):
    clang, obj = runtime_object
    executable = tmp_path / f"streams_{api}"
    subprocess.run(
        [clang, "-std=c11", "-O2", f"-DAPI={api}", str(PROGRAM), obj, "-lpthread", "-lm", "-o", str(executable)],
        check=True,
        timeout=300,
    )
    done = subprocess.run([str(executable)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.split("\n")[:-1] == [f"ok {name}" for name in CHECKS], done.stdout

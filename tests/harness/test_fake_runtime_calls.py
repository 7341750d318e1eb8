"""The fake CUDA runtime's memory, stream, event, device and error calls, driven by a small C program
(tests/fake_runtime/exercise_cuda.c) built with the system compiler against the fake libcudart."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conftest import require_tool
from fakert import FAKE_RUNTIME_SOURCES, ptr_value


@pytest.fixture(scope="module")
def exercise(tmp_path_factory, fake_cuda) -> Path:
    exe = tmp_path_factory.mktemp("exercise") / "exercise"
    subprocess.run(
        [require_tool("cc"), str(FAKE_RUNTIME_SOURCES / "exercise_cuda.c"), *fake_cuda.link_flags, "-o", str(exe)],
        check=True,
    )
    return exe


def test_memory_stream_event_calls_work_on_host_memory(exercise, fake_cuda):
    result = fake_cuda.run(exercise)
    assert result.returncode == 0, result.stderr
    first, second = result.stdout.splitlines()[:2]
    assert first == "roundtrip=ok managed=7 count=1 dev=0"
    (malloc,) = result.calls("cudaMalloc")
    upload = result.calls("cudaMemcpy")[0]
    assert (upload["kind_name"], upload["size"], ptr_value(upload["dst"])) == (
        "HostToDevice",
        16,
        ptr_value(malloc["ptr"]),
    )
    streams = [c["stream"] for c in result.calls("cudaStreamCreate") + result.calls("cudaStreamCreateWithFlags")]
    assert streams == [1, 2]
    assert [c["stream"] for c in result.calls("cudaMemcpyAsync")] == [2, 1]
    (wait,) = result.calls("cudaStreamWaitEvent")
    assert (wait["stream"], wait["event"], wait["ret"]) == (1, 1, 0)
    assert result.calls("cudaEventCreateWithFlags")[0]["flags"] == 2
    ok_calls = [
        e
        for e in result.events
        if e["api"] not in ("loaded",) and "ret" in e and e["api"] not in ("cudaGetLastError", "cudaPeekAtLastError")
    ]
    failed = [(e["api"], e["ret"]) for e in ok_calls if e["ret"] != 0]
    assert failed == [("cudaMemcpy", 1), ("cudaFree", 17), ("cudaSetDevice", 101), ("cudaMemcpy", 21)]


def test_errors_use_the_real_codes_names_and_strings(exercise, fake_cuda):
    result = fake_cuda.run(exercise)
    lines = result.stdout.splitlines()
    assert lines[1] == "peek=101 last=101 again=0"
    assert lines[2] == "errors=1,17,101,21 cudaErrorInvalidDevice / invalid device ordinal"


def test_injected_failure_of_nth_call(exercise, fake_cuda):
    result = fake_cuda.run(exercise, env={"FAKE_RT_FAIL": "cudaMemcpyAsync:2"})
    first, second = result.calls("cudaMemcpyAsync")
    assert first["ret"] == 0 and (second["ret"], second["injected"]) == (1, 1)
    assert result.stdout.startswith("roundtrip=bad")

"""The bundled examples (saxpy, workgroup-memory reduction, async copy-compute-copy): each compiles for
sm_80+sm_90, links with clang 22, passes `verify`, and on the fake
CUDA runtime registers its kernel and launches it with the exact configuration and arguments the host
passed, with the copies ordered around the launch on one stream and a synchronization before exit."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import REPO, require_tool, run_cli
from fakert import arg_f32, arg_i64, arg_ptr, ptr_value

EXAMPLES = REPO / "examples"


@pytest.fixture(scope="module", params=["saxpy", "reduction", "async_copy_compute"])
def example(request, tmp_path_factory):
    require_tool("clang-22", 22)
    name = request.param
    tmp = tmp_path_factory.mktemp(name)
    bundle, app = tmp / f"{name}.offload.bc", tmp / name
    done = run_cli("compile", str(EXAMPLES / f"{name}.mlir"), "--offload-arch", "sm_80,sm_90", "-o", str(bundle))
    assert done.returncode == 0, done.stderr
    done = run_cli("link", str(bundle), "-o", str(app))
    assert done.returncode == 0, done.stderr
    return name, app


def memref_1d(args, first: int):
    """(allocated, aligned, offset, size, stride) of a rank-1 memref argument starting at args[first]."""
    a = args[first : first + 5]
    return arg_ptr(a[0]), arg_ptr(a[1]), arg_i64(a[2]), arg_i64(a[3]), arg_i64(a[4])


# name: (kernel, grid, block, element counts of the device buffers in allocation order)
EXPECTED = {
    "saxpy": ("saxpy", [4, 1, 1], [256, 1, 1], [1024, 1024]),
    "reduction": ("block_sum", [16, 1, 1], [256, 1, 1], [4096, 16]),
    "async_copy_compute": ("square", [4, 1, 1], [128, 1, 1], [512]),
}


def test_example_verifies_registers_and_launches_exactly(example, fake_cuda):
    name, app = example
    verified = run_cli("verify", str(app))
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "2 device image(s) for sm_80, sm_90" in verified.stdout

    kernel, grid, block, sizes = EXPECTED[name]
    result = fake_cuda.run(app)
    assert result.stderr == ""
    assert result.kernels_registered() == [kernel]
    (launch,) = result.launches()
    assert (launch["kernel"], launch["grid"], launch["block"], launch["shared_mem"]) == (kernel, grid, block, 0)
    assert launch["ret"] == 0 and launch["stream"] != 0
    buffers = [ptr_value(c["ptr"]) for c in result.calls("cudaMalloc")]
    assert [c["size"] for c in result.calls("cudaMalloc")] == [4 * n for n in sizes]
    args = launch["args"]
    if name == "saxpy":
        assert arg_f32(args[0]) == 2.0
        assert memref_1d(args, 1) == (buffers[0], buffers[0], 0, 1024, 1)
        assert memref_1d(args, 6) == (buffers[1], buffers[1], 0, 1024, 1)
        assert arg_i64(args[11]) == 1024
    elif name == "reduction":
        assert memref_1d(args, 0) == (buffers[0], buffers[0], 0, 4096, 1)
        assert memref_1d(args, 5) == (buffers[1], buffers[1], 0, 16, 1)
    else:
        assert memref_1d(args, 0) == (buffers[0], buffers[0], 0, 512, 1)
        assert arg_i64(args[5]) == 512

    # Copies in are queued before the launch and the copy out after it, on the launch's stream, and the
    # stream is synchronized before the program ends.
    apis = [e["api"] for e in result.events]
    launch_at = apis.index("cudaLaunchKernel")
    copies = [(i, e) for i, e in enumerate(result.events) if e["api"] == "cudaMemcpyAsync"]
    assert all(e["stream"] == launch["stream"] for _, e in copies)
    ins = [e for i, e in copies if i < launch_at]
    outs = [e for i, e in copies if i > launch_at]
    assert {ptr_value(e["dst"]) for e in ins} <= set(buffers) and ins
    assert [ptr_value(e["src"]) for e in outs] == [buffers[-1]]
    syncs = [
        i
        for i, e in enumerate(result.events)
        if e["api"] == "cudaStreamSynchronize" and e["stream"] == launch["stream"]
    ]
    assert syncs and syncs[-1] > max(i for i, _ in copies)


# What each example prints of its computed result under emulation (values the program computes itself).
EMULATED_RESULT = {
    "saxpy": ["y[1] = 3.0", "y[1023] = 2047.0", "saxpy: ok"],
    "reduction": ["sum = 4096.0 (expect 4096.0)"],
    "async_copy_compute": ["x[3] = 9.0", "x[511] = 261121.0"],
}


@pytest.mark.parametrize("arch", ["sm_80", "gfx90a"])
@pytest.mark.parametrize("name", sorted(EMULATED_RESULT))
def test_example_computes_its_result_under_emulation(name, arch, tmp_path):
    """Every example for CUDA and HIP alike (a memref.alloca in a HIP kernel crashed the lowering)."""
    from emulation import emulate

    done = emulate(EXAMPLES / f"{name}.mlir", arch, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert all(line in lines for line in EMULATED_RESULT[name]), done.stdout


def test_run_example_ends_with_the_examples_own_result(tmp_path):
    """The README's main job: its last line is saxpy's own verdict (on the GPU, else emulated), never the
    fake runtime's mismatch (that runtime runs no kernel; it stays in the tests)."""
    require_tool("clang-22", 22)
    tools = tmp_path / "bin"
    tools.mkdir()
    wrapper = tools / "mlir-offload"  # this checkout's code (run_cli's), where the README's job has it installed
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m offload "$@"\n')
    wrapper.chmod(0o755)
    env = {**os.environ, "PATH": f"{tools}{os.pathsep}{os.environ['PATH']}", "OUT_DIR": str(tmp_path / "out")}
    done = subprocess.run(
        ["bash", str(REPO / "scripts" / "run_example")], env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1] == "saxpy: ok", done.stdout
    assert "MISMATCH" not in done.stdout and "fake" not in done.stdout + done.stderr

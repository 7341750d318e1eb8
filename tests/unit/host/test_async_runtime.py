"""The host async dialect: lowered by upstream's passes, its runtime (mlirAsyncRuntime*) generated into the
bundle (offload/host/async_runtime.py), so the target needs no MLIR.

Oracle: each program of tests/data/async (our own) lowered by Debian's mlir-opt-22 with the same async
passes and run by mlir-runner-22 with upstream's libmlir_async_runtime (a thread pool); the program built by
mlir-offload and run on the fake CUDA runtime must print the same bytes."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from test_runner_utils import LLVM_LIB, RUNNER_LIBRARIES, build, mask, run_bytes

from conftest import REPO, require_tool, run_cli

PROGRAMS = REPO / "tests" / "data" / "async"
ASYNC_LIBRARY = "libmlir_async_runtime.so.22.1"
ORACLE_PIPELINE = (
    "builtin.module(async-to-async-runtime,func.func(async-runtime-ref-counting,async-runtime-ref-counting-opt),"
    "convert-async-to-llvm,convert-vector-to-scf,convert-scf-to-cf,expand-strided-metadata,finalize-memref-to-llvm,"
    "convert-vector-to-llvm,convert-arith-to-llvm,convert-index-to-llvm,convert-cf-to-llvm,convert-func-to-llvm,"
    "reconcile-unrealized-casts)"
)


def oracle(program) -> subprocess.CompletedProcess:
    mlir_opt = require_tool("mlir-opt-22", 22)
    runner = require_tool("mlir-runner-22", 22)
    libraries = [f"{LLVM_LIB}/{name}" for name in (*RUNNER_LIBRARIES, ASYNC_LIBRARY)]
    for library in libraries:
        if not Path(library).exists():
            pytest.skip(f"{library} not found (package libmlir-22)")
    lowered = subprocess.run(
        [mlir_opt, str(program), f"--pass-pipeline={ORACLE_PIPELINE}"], capture_output=True, check=True
    )
    # -O0 as upstream's RUN lines: without an optimization level mlir-runner leaves the coroutines unsplit.
    done = subprocess.run(
        [runner, "-O0", "-e", "main", "--entry-point-result=void", f"--shared-libs={','.join(libraries)}"],
        input=lowered.stdout,
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    return done


@pytest.mark.parametrize("name", sorted(p.stem for p in PROGRAMS.glob("*.mlir")))
def test_output_is_upstreams_async_runtime(tmp_path, fake_cuda, name):
    program = PROGRAMS / f"{name}.mlir"
    expected = oracle(program)
    done = run_bytes(build(tmp_path, program, name), fake_cuda)
    assert done.returncode == 0, done.stderr
    assert expected.stdout.count(b"\n") >= 4
    assert mask(done.stdout) == mask(expected.stdout)
    assert done.stderr == expected.stderr


def test_the_bundle_defines_the_runtime_and_no_coroutine_is_left(tmp_path):
    require_tool("clang-22", 22)
    out = tmp_path / "groups.ll"
    done = run_cli("compile", str(PROGRAMS / "groups.mlir"), "--offload-arch", "sm_80", "-S", "-o", str(out))
    assert done.returncode == 0, done.stderr
    text = out.read_text()
    assert "define internal ptr @mlirAsyncRuntimeCreateGroup(" in text
    assert "declare" not in "".join(line for line in text.splitlines() if "mlirAsyncRuntime" in line)
    assert "llvm.coro." not in text


def test_await_of_what_nothing_can_provide_is_an_error_not_a_hang(tmp_path, fake_cuda):
    program = tmp_path / "stuck.mlir"
    program.write_text("""module attributes {gpu.container_module} {
  gpu.module @idle {
    gpu.func @nothing() kernel { gpu.return }
  }
  func.func @main() {
    %never = async.runtime.create : !async.token
    %body = async.execute [%never] { async.yield }
    async.await %body : !async.token
    return
  }
}
""")
    done = run_bytes(build(tmp_path, program, "stuck"), fake_cuda)
    assert done.returncode == 1
    assert done.stderr.decode() == (
        "mlir-offload: async runtime: async.await of a token that nothing can make "
        "available any more (the async runtime runs on one thread: it would wait "
        "forever)\n"
    )


GPU_CHAIN = """module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @twice(%a: memref<?xi32>) kernel {
      %t = gpu.thread_id x
      %x = memref.load %a[%t] : memref<?xi32>
      %y = arith.addi %x, %x : i32
      memref.store %y, %a[%t] : memref<?xi32>
      gpu.return
    }
  }
  func.func @main() {
    %c1 = arith.constant 1 : index
    %n = arith.constant 8 : index
    %h = memref.alloc(%n) : memref<?xi32>
    %t0, %f0 = async.execute () -> !async.value<memref<?xi32>> {
      %b = gpu.alloc(%n) : memref<?xi32>
      gpu.memcpy %b, %h : memref<?xi32>, memref<?xi32>
      async.yield %b : memref<?xi32>
    }
    %t1 = async.execute [%t0] (%f0 as %b : !async.value<memref<?xi32>>) {
      gpu.launch_func @k::@twice blocks in (%c1, %c1, %c1) threads in (%n, %c1, %c1) args(%b : memref<?xi32>)
      async.yield
    }
    %t2 = async.execute [%t1] (%f0 as %b : !async.value<memref<?xi32>>) {
      gpu.memcpy %h, %b : memref<?xi32>, memref<?xi32>
      gpu.dealloc %b : memref<?xi32>
      async.yield
    }
    async.await %t2 : !async.token
    memref.dealloc %h : memref<?xi32>
    return
  }
}
"""


@pytest.mark.parametrize("arch, runtime", [("sm_80", "cuda"), ("gfx90a", "hip")])
def test_gpu_work_in_async_bodies_runs_in_token_order(tmp_path, request, arch, runtime):
    require_tool("clang-22", 22)
    fake = request.getfixturevalue(f"fake_{runtime}")
    program = tmp_path / "chain.mlir"
    program.write_text(GPU_CHAIN)
    bundle, app = tmp_path / "chain.offload.bc", tmp_path / "chain"
    done = run_cli("compile", str(program), "--offload-arch", arch, "-o", str(bundle))
    assert done.returncode == 0, done.stderr
    link_flags = [] if runtime == "cuda" else fake.link_flags
    done = run_cli("link", str(bundle), "-o", str(app), *link_flags)
    assert done.returncode == 0, done.stderr
    result = fake.run(app)
    assert result.returncode == 0, result.stderr
    prefix = "cuda" if runtime == "cuda" else "hip"
    wanted = {f"{prefix}MemcpyAsync", f"{prefix}LaunchKernel", f"{prefix}StreamSynchronize", f"{prefix}Free"}
    order = [e["api"].removeprefix(prefix) for e in result.events if e["api"] in wanted]
    # Each body waits for its own GPU work before its token is available, so the next body starts after
    # (the free is queued behind the copy: cudaFree/hipFree wait for the device).
    assert order == [
        "MemcpyAsync",
        "StreamSynchronize",
        "LaunchKernel",
        "StreamSynchronize",
        "MemcpyAsync",
        "Free",
        "StreamSynchronize",
    ], order

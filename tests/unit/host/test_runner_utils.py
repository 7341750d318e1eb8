"""MLIR's runner utilities and the entry point, provided by the bundle (no MLIR on the target).

Oracle: each host program of tests/data/runner_utils (our own, with an idle kernel so the bundle has a
device image) is lowered by Debian's mlir-opt-22 and run by mlir-runner-22 with upstream's
libmlir_runner_utils / libmlir_c_runner_utils / libmlir_float16_utils; the same program built by
mlir-offload compile + link and run on the fake CUDA runtime must print the same bytes on stdout and
stderr, the base@ pointer values masked in both."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from conftest import REPO, require_tool, run_cli

PROGRAMS = REPO / "tests" / "data" / "runner_utils"
RUNNER_LIBRARIES = ("libmlir_runner_utils.so.22.1", "libmlir_c_runner_utils.so.22.1", "libmlir_float16_utils.so.22.1")
LLVM_LIB = "/usr/lib/llvm-22/lib"
# The oracle's lowering: the usual host conversions, nothing of mlir-offload.
ORACLE_PIPELINE = (
    "builtin.module(convert-vector-to-scf,convert-scf-to-cf,expand-strided-metadata,finalize-memref-to-llvm,"
    "convert-vector-to-llvm,convert-arith-to-llvm,convert-index-to-llvm,convert-cf-to-llvm,convert-func-to-llvm,"
    "reconcile-unrealized-casts)"
)
BASE_POINTER = re.compile(rb"base@ = (0x[0-9a-f]+|\(nil\)|0) ")

IDLE_KERNEL = """
  gpu.module @idle {
    gpu.func @nothing() kernel { gpu.return }
  }
"""


def mask(output: bytes) -> bytes:
    return BASE_POINTER.sub(b"base@ = <ptr> ", output)


def oracle(program) -> subprocess.CompletedProcess:
    """stdout/stderr of `program` as upstream's mlir-runner-22 prints them."""
    mlir_opt = require_tool("mlir-opt-22", 22)
    runner = require_tool("mlir-runner-22", 22)
    libraries = [f"{LLVM_LIB}/{name}" for name in RUNNER_LIBRARIES]
    for library in libraries:
        if not Path(library).exists():
            pytest.skip(f"{library} not found (package libmlir-22)")
    lowered = subprocess.run(
        [mlir_opt, str(program), f"--pass-pipeline={ORACLE_PIPELINE}"], capture_output=True, check=True
    )
    done = subprocess.run(
        [runner, "-e", "main", "--entry-point-result=void", f"--shared-libs={','.join(libraries)}"],
        input=lowered.stdout,
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    return done


def build(tmp, program, name: str):
    require_tool("clang-22", 22)
    bundle, app = tmp / f"{name}.offload.bc", tmp / name
    done = run_cli("compile", str(program), "--offload-arch", "sm_80", "-o", str(bundle))
    assert done.returncode == 0, done.stderr
    done = run_cli("link", str(bundle), "-o", str(app))
    assert done.returncode == 0, done.stderr
    return app


def run_bytes(app, fake) -> subprocess.CompletedProcess:
    """Run `app` on the fake CUDA runtime, keeping stdout/stderr as bytes (I8 memrefs print raw bytes)."""
    env = dict(os.environ, LD_LIBRARY_PATH=str(fake.lib_dir), FAKE_RT_LOG=os.devnull)
    return subprocess.run([str(app)], capture_output=True, env=env, timeout=60)


@pytest.mark.parametrize("name", sorted(p.stem for p in PROGRAMS.glob("*.mlir")))
def test_output_is_upstreams_byte_for_byte(tmp_path, fake_cuda, name):
    program = PROGRAMS / f"{name}.mlir"
    expected = oracle(program)
    done = run_bytes(build(tmp_path, program, name), fake_cuda)
    assert done.returncode == 0, done.stderr
    assert expected.stdout.count(b"\n") > 3
    assert mask(done.stdout) == mask(expected.stdout)
    assert done.stderr == expected.stderr


def test_void_main_exits_zero_and_i32_main_exits_with_its_value(tmp_path, fake_cuda):
    source = f"""module attributes {{gpu.container_module}} {{{IDLE_KERNEL}
  func.func private @printI64(i64)
  func.func private @printNewline()
  func.func @helper() -> i32 {{
    %c = arith.constant 42 : i32
    return %c : i32
  }}
  func.func @main() -> i32 {{
    %v = call @helper() : () -> i32
    %w = arith.extsi %v : i32 to i64
    call @printI64(%w) : (i64) -> ()
    call @printNewline() : () -> ()
    return %v : i32
  }}
}}
"""
    returning = tmp_path / "returning.mlir"
    returning.write_text(source)
    done = run_bytes(build(tmp_path, returning, "returning"), fake_cuda)
    assert (done.returncode, done.stdout) == (42, b"42\n")
    # A void main ends with status 0 whatever its last call left in the return register.
    void = tmp_path / "void.mlir"
    void.write_text(f"""module attributes {{gpu.container_module}} {{{IDLE_KERNEL}
  func.func @main() {{
    %t = arith.constant dense<[7, 200]> : vector<2xi32>
    vector.print %t : vector<2xi32>
    return
  }}
}}
""")
    done = run_bytes(build(tmp_path, void, "void"), fake_cuda)
    assert (done.returncode, done.stdout) == (0, b"( 7, 200 )\n")


@pytest.mark.parametrize(
    "signature, shown",
    [
        ("(%argc: i32) -> i32", "(i32) -> i32"),
        ("() -> f32", "() -> f32"),
        ("() -> (i32, i32)", "() -> (i32, i32)"),
        ("() -> i64", "() -> i64"),
    ],
)
def test_other_main_signatures_are_refused_at_main(tmp_path, signature, shown):
    results = {"() -> f32": "arith.constant 0.0 : f32", "() -> i64": "arith.constant 0 : i64"}
    body = {
        "(%argc: i32) -> i32": "return %argc : i32",
        "() -> f32": f"%r = {results['() -> f32']}\n    return %r : f32",
        "() -> i64": f"%r = {results['() -> i64']}\n    return %r : i64",
        "() -> (i32, i32)": "%r = arith.constant 0 : i32\n    return %r, %r : i32, i32",
    }[signature]
    program = tmp_path / "bad_main.mlir"
    program.write_text(f"""module attributes {{gpu.container_module}} {{{IDLE_KERNEL}
  func.func @main{signature} {{
    {body}
  }}
}}
""")
    out = tmp_path / "bad.offload.bc"
    done = run_cli("compile", str(program), "--offload-arch", "sm_80", "-o", str(out))
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        f"{program}:6:3: error: 'main' has type {shown}; the entry point must be () -> () (exit status 0), "
        "() -> i32 (the exit status) or (i32, !llvm.ptr) -> i32 (C's main: argc, argv)"
    ]
    assert not out.exists()

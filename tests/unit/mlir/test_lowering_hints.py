"""An op mlir-offload does not lower (host or device) gets an error naming the --pass-pipeline that
lowers its dialect; compiling again with exactly that pipeline works."""

from __future__ import annotations

import pytest

from conftest import REPO, run_cli
from offload.errors import FLAG, KEYWORD, worded

KERNEL = """\
  gpu.module @k {
    gpu.func @f(%a: memref<16xf32>) kernel {
      gpu.return
    }
  }
"""
HOST_LINALG = (
    """\
module attributes {gpu.container_module} {
"""
    + KERNEL
    + """\
  func.func @fill() {
    %m = memref.alloc() : memref<16xf32>
    %c = arith.constant 1.0 : f32
    linalg.fill ins(%c : f32) outs(%m : memref<16xf32>)
    return
  }
}
"""
)
HOST_TENSOR = (
    """\
module attributes {gpu.container_module} {
"""
    + KERNEL
    + """\
  func.func @first() -> f32 {
    %c = arith.constant 1.0 : f32
    %t = tensor.empty() : tensor<4xf32>
    %f = linalg.fill ins(%c : f32) outs(%t : tensor<4xf32>) -> tensor<4xf32>
    %i = arith.constant 0 : index
    %e = tensor.extract %f[%i] : tensor<4xf32>
    return %e : f32
  }
}
"""
)
DEVICE_LINALG = (REPO / "tests" / "data" / "device" / "unsupported.mlir").read_text()


@pytest.mark.parametrize(
    "name, program, passes",
    [
        ("host_linalg", HOST_LINALG, "convert-linalg-to-loops"),
        ("host_tensor", HOST_TENSOR, "one-shot-bufferize"),
        ("device_linalg", DEVICE_LINALG, "convert-linalg-to-loops"),
    ],
)
def test_message_names_a_pipeline_that_works(tmp_path, name, program, passes):
    source = tmp_path / f"{name}.mlir"
    source.write_text(program)
    done = run_cli("compile", str(source), "--offload-arch", "sm_80", "-o", str(tmp_path / "out.bc"))
    assert done.returncode == 1
    [line] = done.stderr.splitlines()
    assert line.startswith(f"{source}:") and passes in line
    pipeline = line.split("--pass-pipeline='")[1].split("'")[0]
    done = run_cli(
        "compile", str(source), "--offload-arch", "sm_80", "--pass-pipeline", pipeline, "-o", str(tmp_path / "out.bc")
    )
    assert done.returncode == 0, done.stderr


@pytest.mark.fast
def test_unknown_dialect_gets_the_generic_advice():
    from offload.mlir.lowering_hints import pipeline_hint

    assert "builtin.module(...)" in worded(pipeline_hint("mydialect.op"), FLAG)
    hint = pipeline_hint("linalg.matmul")
    assert worded(hint, FLAG).endswith("--pass-pipeline='builtin.module(convert-linalg-to-loops)'")
    assert worded(hint, KEYWORD).endswith("pass_pipeline='builtin.module(convert-linalg-to-loops)'")

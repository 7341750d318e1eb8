"""gpu.all_reduce with a reduction region and no `uniform` keyword, as upstream's pipeline treats it: in the
entry block of a gpu.launch body it is made uniform (upstream's fold) and lowered to warp shuffles; under
control flow it is refused with a located error naming the reason."""

from __future__ import annotations

import pytest

from conftest import require_tool, run_cli
from fakert import arg_i64

LAUNCH = """module {{
  func.func @main() {{
    %c1 = arith.constant 1 : index
    %c48 = arith.constant 48 : index
    %out = memref.alloc() : memref<48xi32>
    %u = memref.cast %out : memref<48xi32> to memref<*xi32>
    gpu.host_register %u : memref<*xi32>
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%nx = %c48, %ny = %c1, %nz = %c1) {{
      %v = arith.index_cast %tx : index to i32
{body}
      gpu.terminator
    }}
    return
  }}
}}
"""

ENTRY_BLOCK = """      %r = gpu.all_reduce %v {
      ^bb(%a : i32, %b : i32):
        %m = arith.maxsi %a, %b : i32
        gpu.yield %m : i32
      } : (i32) -> (i32)
      memref.store %r, %out[%tx] : memref<48xi32>"""

UNDER_BRANCH = """      %odd = arith.trunci %v : i32 to i1
      scf.if %odd {
        %r = gpu.all_reduce %v {
        ^bb(%a : i32, %b : i32):
          %m = arith.addi %a, %b : i32
          gpu.yield %m : i32
        } : (i32) -> (i32)
        memref.store %r, %out[%tx] : memref<48xi32>
      }"""


def write(tmp_path, body):
    program = tmp_path / "reduce.mlir"
    program.write_text(LAUNCH.format(body=body))
    return program


def test_region_reduction_in_launch_body_runs(tmp_path, fake_cuda):
    require_tool("clang-22", 22)
    program = write(tmp_path, ENTRY_BLOCK)
    done = run_cli(
        "compile", str(program), "--offload-arch", "sm_80", "--device-image=ptx", "-o", str(tmp_path / "app.bc")
    )
    assert done.returncode == 0, done.stderr
    ptx = (tmp_path / "app.bc.sm_80.ptx").read_text()
    assert "shfl.sync.bfly.b32" in ptx and "max.s32" in ptx
    done = run_cli("link", str(tmp_path / "app.bc"), "-o", str(tmp_path / "app"))
    assert done.returncode == 0, done.stderr
    result = fake_cuda.run(tmp_path / "app")
    assert result.stderr == ""
    (launch,) = result.launches()
    assert launch["grid"] == [1, 1, 1] and launch["block"] == [48, 1, 1] and launch["ret"] == 0
    assert [arg_i64(a) for a in launch["args"][2:]] == [0, 48, 1]  # offset, size, stride of %out


@pytest.mark.parametrize("arch", ["sm_80", "gfx90a"])
def test_region_reduction_in_launch_body_compiles_for_both_vendors(tmp_path, arch):
    program = write(tmp_path, ENTRY_BLOCK)
    done = run_cli("compile", str(program), "--offload-arch", arch, "-o", str(tmp_path / "app.bc"))
    assert done.returncode == 0, done.stderr


def test_region_reduction_under_branch_is_refused(tmp_path):
    program = write(tmp_path, UNDER_BRANCH)
    done = run_cli("compile", str(program), "--offload-arch", "sm_80", "-o", str(tmp_path / "app.bc"))
    assert done.returncode == 1
    assert done.stderr.startswith(f"{program}:13:14: error: gpu.all_reduce is not uniform"), done.stderr
    assert done.stderr.count("\n") == 1 and not (tmp_path / "app.bc").exists()

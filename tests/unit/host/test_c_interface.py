"""C calls an MLIR function taking a memref through llvm.emit_c_interface (_mlir_ciface_scale, the
example of docs/programs.md, examples/c_interface/): the kernel launches with the caller's values; link
optimizes the host part at -O2 unless the user's -O replaces it."""

from __future__ import annotations

import shlex
import subprocess

import pytest

from conftest import REPO, require_tool, run_cli
from fakert import arg_f32, arg_i64, ptr_value

EXAMPLE = REPO / "examples" / "c_interface"


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    require_tool("clang-22", 22)
    tmp = tmp_path_factory.mktemp("ciface")
    done = run_cli("compile", str(EXAMPLE / "scale.mlir"), "--offload-arch", "sm_80", cwd=tmp)
    assert done.returncode == 0, done.stderr
    return tmp / "scale.offload.bc"


def test_c_main_calls_the_mlir_function(bundle, fake_cuda):
    tmp = bundle.parent
    subprocess.run([require_tool("cc"), "-c", str(EXAMPLE / "main.c"), "-o", str(tmp / "main.o")], check=True)
    done = run_cli("link", str(bundle), str(tmp / "main.o"), "-o", str(tmp / "scale"))
    assert done.returncode == 0, done.stderr
    result = fake_cuda.run(tmp / "scale")
    (launch,) = result.launches()
    assert (launch["kernel"], launch["grid"], launch["block"]) == ("scale_kernel", [8, 1, 1], [128, 1, 1])
    args = launch["args"]
    (device,) = [ptr_value(c["ptr"]) for c in result.calls("cudaMalloc")]
    assert arg_f32(args[0]) == 2.0
    assert [arg_i64(a) for a in args[1:7]] == [device, device, 0, 1000, 1, 1000]
    assert [c["size"] for c in result.calls("cudaMalloc")] == [4000]


def test_host_part_optimized_unless_the_user_says(bundle):
    def clang_words(*flags):
        done = run_cli("link", str(bundle), *flags, "--dry-run", "-o", str(bundle.parent / "never"))
        assert done.returncode == 0, done.stderr
        return shlex.split(done.stdout)

    assert [w for w in clang_words() if w.startswith("-O")] == ["-O2"]
    assert [w for w in clang_words("-O0") if w.startswith("-O")] == ["-O0"]

"""Hopper programs (sm_90a): nvgpu TMA + mbarrier lowered on the device side, the TMA descriptor made by the
bundle's mgpuTensorMapEncodeTiledMemref through cudaGetDriverEntryPointByVersion (no -lcuda), and
`clusters in (...)` launches through cudaLaunchKernelExC; built with clang 22, run on the fake runtime."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import REPO, require_tool, run_cli
from fakert import arg_i32, arg_ptr, ptr_value

PROGRAMS = REPO / "tests" / "data" / "hopper"


def build(tmp: Path, program: str, *flags: str) -> Path:
    require_tool("clang-22", 22)
    bundle, app = tmp / f"{program}.bc", tmp / program
    done = run_cli("compile", str(PROGRAMS / f"{program}.mlir"), "--offload-arch", "sm_90a", *flags, "-o", str(bundle))
    assert done.returncode == 0, done.stderr
    done = run_cli("link", str(bundle), "-o", str(app))
    assert done.returncode == 0, done.stderr
    return app


def test_tma_descriptor_and_launch(tmp_path, fake_cuda):
    result = fake_cuda.run(build(tmp_path, "tma_tile"))
    assert result.stderr == ""
    (query,) = result.calls("cudaGetDriverEntryPointByVersion")
    assert (query["symbol"], query["version"], query["flags"], query["ret"]) == ("cuTensorMapEncodeTiled", 12000, 0, 0)
    (encode,) = result.calls("cuTensorMapEncodeTiled")
    matrix = next(c for c in result.calls("cudaMalloc") if c["size"] == 48 * 32 * 4)
    # f32 (CU_TENSOR_MAP_DATA_TYPE_FLOAT32 = 7), innermost dimension first, byte strides, box 32x16.
    assert encode["data_type"] == 7 and encode["rank"] == 2
    assert ptr_value(encode["address"]) == ptr_value(matrix["ptr"])
    assert encode["global_dim"] == [32, 48] and encode["global_strides"] == [32 * 4]
    assert encode["box_dim"] == [32, 16] and encode["element_strides"] == [1, 1]
    assert (encode["interleave"], encode["swizzle"], encode["l2_promotion"], encode["oob_fill"]) == (0, 0, 1, 0)
    # The 128-byte map is copied to device memory, and that pointer is the kernel's descriptor argument.
    device_map = next(c for c in result.calls("cudaMalloc") if c["size"] == 128)
    copy = next(c for c in result.calls("cudaMemcpyAsync") if c["size"] == 128)
    assert ptr_value(copy["dst"]) == ptr_value(device_map["ptr"]) and ptr_value(copy["src"]) == ptr_value(encode["map"])
    (launch,) = result.launches()
    assert launch["api"] == "cudaLaunchKernel" and launch["grid"] == [2, 1, 1] and launch["block"] == [64, 1, 1]
    pointers = [arg_ptr(a) for a in launch["args"] if len(a) == 16]
    assert ptr_value(device_map["ptr"]) in pointers


def test_tma_device_code_is_hopper_ptx(tmp_path):
    require_tool("clang-22", 22)
    bundle = tmp_path / "tma.bc"
    done = run_cli(
        "compile", str(PROGRAMS / "tma_tile.mlir"), "--offload-arch", "sm_90a", "--device-image=ptx", "-o", str(bundle)
    )
    assert done.returncode == 0, done.stderr
    ptx = (tmp_path / "tma.bc.sm_90a.ptx").read_text()
    for instruction in (
        "mbarrier.init.shared.b64",
        "mbarrier.arrive.expect_tx.shared.b64",
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
        "mbarrier.try_wait.parity.shared.b64",
    ):
        assert instruction in ptx, instruction
    ptxas = shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas"
    if not Path(ptxas).exists():
        pytest.skip("no ptxas")
    done = subprocess.run(
        [ptxas, "-arch=sm_90a", str(tmp_path / "tma.bc.sm_90a.ptx"), "-o", str(tmp_path / "t.cubin")],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr


def test_cluster_launch_through_launch_kernel_ex(tmp_path, fake_cuda):
    result = fake_cuda.run(build(tmp_path, "cluster_launch"))
    assert result.stderr == "" and result.returncode == 0
    clustered, plain, large, plain_large = result.launches()
    # Cluster dimension (4) and the spread scheduling policy (5), as upstream's mgpuLaunchClusterKernel.
    assert clustered["api"] == "cudaLaunchKernelExC" and clustered["kernel"] == "tagged"
    assert clustered["attrs"] == [4, 5] and clustered["cluster"] == [2, 3, 1]
    assert clustered["grid"] == [6, 3, 2] and clustered["block"] == [32, 1, 1] and clustered["shared_mem"] == 0
    assert [arg_i32(a) for a in clustered["args"]] == [5] and clustered["ret"] == 0
    assert plain["api"] == "cudaLaunchKernel" and plain["grid"] == [2, 1, 1]
    assert [arg_i32(a) for a in plain["args"]] == [5]
    assert clustered["handle"] == plain["handle"] and clustered["stream"] == plain["stream"]
    # 16-block clusters and 64 KiB of dynamic shared memory: the kernel's opt-ins come first (the fake
    # refuses the launch without them, as the real runtime does).
    assert large["api"] == "cudaLaunchKernelExC" and large["cluster"] == [4, 4, 1] and large["grid"] == [16, 16, 1]
    assert large["shared_mem"] == 65536 and large["ret"] == 0
    assert plain_large["api"] == "cudaLaunchKernel" and plain_large["shared_mem"] == 65536 and plain_large["ret"] == 0
    settings = [(c["kernel"], c["attr"], c["value"]) for c in result.calls("cudaFuncSetAttribute")]
    assert settings == [("tagged", 8, 65536), ("tagged", 14, 1), ("tagged", 8, 65536)]
    apis = result.apis()
    assert apis.index("cudaFuncSetAttribute") < [i for i, a in enumerate(apis) if a == "cudaLaunchKernelExC"][1]


def test_cluster_launch_failure_is_checked(tmp_path, fake_cuda):
    result = fake_cuda.run(build(tmp_path, "cluster_launch"), env={"FAKE_RT_FAIL": "cudaLaunchKernelExC"})
    assert result.returncode == 1
    assert result.stderr == "cudaLaunchKernelExC: unspecified launch failure\n"


def test_cluster_launch_refused_for_hip(tmp_path):
    program = PROGRAMS / "hip_cluster_launch.mlir"
    done = run_cli("compile", str(program), "--offload-arch", "gfx90a", "-o", str(tmp_path / "x.bc"))
    assert done.returncode == 1
    assert re.fullmatch(
        rf"{re.escape(str(program))}:7:5: error: launch of 'plain' with clusters: .*hip.*\n", done.stderr
    ), done.stderr
    assert not (tmp_path / "x.bc").exists()

"""Self-tests of the fake HIP runtime: a hand-written gfx90a device module and HIP host module
(tests/fake_runtime/hip_*.ll) linked by the real clang 22 (no ROCm runtime needed at link time: the fake
libamdhip64 provides -lamdhip64), then run against the fake."""

from __future__ import annotations

from pathlib import Path

import pytest

from fakert import arg_f64, arg_i32, arg_ptr, build_reference_hip_app, fatbin_cubins, ptr_value


@pytest.fixture(scope="module")
def hip_app(tmp_path_factory, fake_hip) -> Path:
    return build_reference_hip_app(tmp_path_factory.mktemp("hip22"), fake_hip.lib_dir)


def test_hip_app_registers_and_launches(hip_app, fake_hip):
    result = fake_hip.run(hip_app, env={"FAKE_RT_ARG_SIZES": "fill:4,4,8;scale:4,8,8"})
    assert result.returncode == 0, result.stderr
    assert result.stdout == "launch=0,0 sync=0\n"
    (fatbin,) = result.fatbins()
    assert fatbin["wrapper_magic"] == 0x48495046  # "HIPF"
    assert fatbin["bundle"] == "clang-offload-bundle"
    assert [i["id"] for i in fatbin["images"]] == ["host-x86_64-unknown-linux-gnu-", "hip-amdgcn-amd-amdhsa--gfx90a"]
    assert result.kernels_registered() == ["fill", "scale"]
    (malloc,) = result.calls("hipMalloc")
    pointer = ptr_value(malloc["ptr"])
    (stream,) = result.calls("hipStreamCreate")
    fill, scale = result.launches()
    assert (fill["kernel"], fill["grid"], fill["block"], fill["shared_mem"], fill["stream"]) == (
        "fill",
        [4, 1, 1],
        [256, 1, 1],
        0,
        0,
    )
    assert (scale["kernel"], scale["grid"], scale["block"], scale["shared_mem"], scale["stream"]) == (
        "scale",
        [2, 3, 1],
        [64, 2, 1],
        128,
        stream["stream"],
    )
    assert fill["arg_sizes_from"] == "env"
    assert arg_i32(fill["args"][0]) == 1000 and arg_ptr(fill["args"][2]) == pointer
    assert arg_i32(scale["args"][0]) == 1000 and arg_ptr(scale["args"][1]) == pointer
    assert arg_f64(scale["args"][2]) == 0.5
    assert result.apis()[-3:] == ["hipStreamDestroy", "hipFree", "__hipUnregisterFatBinary"]


def test_hip_launch_without_sizes_logs_no_bytes(hip_app, fake_hip):
    result = fake_hip.run(hip_app)
    assert [launch["args"] for launch in result.launches()] == [None, None]


def test_hip_injected_failure_uses_hip_error_names(hip_app, fake_hip):
    result = fake_hip.run(hip_app, env={"FAKE_RT_FAIL": "hipMalloc,hipStreamCreate"})
    assert (result.calls("hipMalloc")[0]["ret"], result.calls("hipMalloc")[0]["error"]) == (2, "hipErrorOutOfMemory")
    assert result.calls("hipStreamCreate")[0]["ret"] == 1


def test_hip_executable_holds_a_code_object_with_every_kernel(hip_app):
    assert fatbin_cubins(hip_app) == {"gfx90a": {"fill", "scale"}}

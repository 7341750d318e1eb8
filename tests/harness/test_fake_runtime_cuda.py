"""Self-tests of the fake CUDA runtime harness: the hand-written reference modules (tests/data/reference/README.md)
linked by the real clang 22 and clang 19 (through offload/data/scripts/fatbinary) against CUDA 13, then run
against the fake runtime. These are also the working link command lines the `link` command uses."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import SHARED_REFERENCE
from fakert import arg_f32, arg_i32, arg_ptr, build_reference_cuda_app, fatbin_cubins, ptr_value


@pytest.fixture(scope="module")
def app22(tmp_path_factory) -> Path:
    return build_reference_cuda_app(
        tmp_path_factory.mktemp("ref22"),
        22,
        SHARED_REFERENCE / "handwritten_host_clang22.ll",
        [(SHARED_REFERENCE / "handwritten_device.ll", "sm_80")],
    )


@pytest.fixture(scope="module")
def app19(tmp_path_factory) -> Path:
    return build_reference_cuda_app(
        tmp_path_factory.mktemp("ref19"),
        19,
        SHARED_REFERENCE / "handwritten_host_clang19.ll",
        [(SHARED_REFERENCE / "handwritten_device.ll", "sm_80")],
    )


def assert_reference_run(result) -> None:
    # No kernel runs on the fake, so h[0] stays 0 and the program exits 2 after printing.
    assert result.returncode == 2, result.stderr
    assert "launch=0 sync=0" in result.stdout
    assert result.apis()[:4] == [
        "__cudaRegisterFatBinary",
        "__cudaRegisterFunction",
        "__cudaRegisterFunction",
        "__cudaRegisterFatBinaryEnd",
    ]
    fatbin = result.fatbins()[0]
    assert fatbin["wrapper_magic"] == 0x466243B1
    assert fatbin["fatbin_magic"] == 0xBA55ED50
    assert fatbin["fatbin_size"] > 0
    assert [(i["kind"], i["sm"]) for i in fatbin["images"]] == [("elf", 80)]
    assert result.kernels_registered() == ["fill", "vsqrt"]
    (malloc,) = result.calls("cudaMalloc")
    assert malloc["size"] == 4096 and malloc["ret"] == 0
    device_pointer = ptr_value(malloc["ptr"])
    fill, vsqrt = result.launches()
    for launch in (fill, vsqrt):
        assert launch["grid"] == [4, 1, 1] and launch["block"] == [256, 1, 1]
        assert launch["shared_mem"] == 0 and launch["stream"] == 0 and launch["ret"] == 0
        assert launch["arg_sizes_from"] == "cubin"
    assert fill["kernel"] == "fill" and vsqrt["kernel"] == "vsqrt"
    assert [len(a) // 2 for a in fill["args"]] == [4, 4, 8]
    assert arg_i32(fill["args"][0]) == 1024
    assert arg_f32(fill["args"][1]) == 4.0
    assert arg_ptr(fill["args"][2]) == device_pointer
    assert arg_i32(vsqrt["args"][0]) == 1024 and arg_ptr(vsqrt["args"][1]) == device_pointer
    (copy,) = result.calls("cudaMemcpy")
    assert (copy["size"], copy["kind_name"], ptr_value(copy["src"])) == (16, "DeviceToHost", device_pointer)
    assert result.calls("cudaFree")[0]["ret"] == 0
    assert result.apis()[-1] == "__cudaUnregisterFatBinary"


def test_clang22_reference_app_registers_and_launches(app22, fake_cuda):
    assert_reference_run(fake_cuda.run(app22))


def test_clang19_reference_app_links_through_fatbinary_wrapper(app19, fake_cuda):
    assert_reference_run(fake_cuda.run(app19))


def test_fatbin_holds_a_cubin_with_every_kernel(app22, app19):
    assert fatbin_cubins(app22) == {"sm_80": {"fill", "vsqrt"}}
    assert fatbin_cubins(app19) == {"sm_80": {"fill", "vsqrt"}}


def test_injected_failure_returns_the_real_error_code(app22, fake_cuda):
    result = fake_cuda.run(app22, env={"FAKE_RT_FAIL": "cudaLaunchKernel:2,cudaMalloc"})
    (malloc,) = result.calls("cudaMalloc")
    assert (malloc["ret"], malloc["error"], malloc["injected"]) == (2, "cudaErrorMemoryAllocation", 1)
    first, second = result.launches()
    assert first["ret"] == 0
    assert (second["ret"], second["error"]) == (719, "cudaErrorLaunchFailure")


def test_argument_sizes_from_environment_override_the_cubin(app22, fake_cuda):
    result = fake_cuda.run(app22, env={"FAKE_RT_ARG_SIZES": "fill:4,4;other:8"})
    fill, vsqrt = result.launches()
    assert fill["arg_sizes_from"] == "env" and fill["args"] == ["00040000", "00008040"]
    assert vsqrt["arg_sizes_from"] == "cubin" and len(vsqrt["args"]) == 2

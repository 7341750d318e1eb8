"""One record per vendor (offload/formats/vendors.py): its facts are spelled nowhere else in the package,
and the build side (host runtime shims, device lowering, native codegen) and the target side (link line,
verify, ship) read them from it."""

from __future__ import annotations

import pytest

from conftest import REPO
from offload.formats.profiles import load_profile
from offload.formats.targets import parse_offload_arch
from offload.formats.vendors import CUDA, HIP, VENDORS, vendor_of_triple

pytestmark = pytest.mark.no_toolchain

PACKAGE = REPO / "offload"


def test_vendor_facts_are_written_once():
    facts = {
        f'"{value}"'
        for vendor in VENDORS.values()
        for value in (
            vendor.triple,
            vendor.lowering,
            vendor.link_library,
            vendor.device_section,
            vendor.register_function,
        )
    }
    copies = sorted(
        f"{path.relative_to(PACKAGE)}: {fact}"
        for path in PACKAGE.rglob("*.py")
        if path.name != "vendors.py"
        for fact in facts
        if fact in path.read_text()
    )
    assert copies == []


def test_both_sides_use_the_records():
    from offload.device.kinds import KINDS
    from offload.device.native import CODEGEN_HOOKS, bitcode_to_amdgpu_object, bitcode_to_cubin
    from offload.host.runtime import RUNTIMES
    from offload.packager import ImageKind
    from offload.toolchain.ship import target_link_words
    from offload.toolchain.tools import TOOLKIT_FINDERS, find_cuda, find_rocm

    for kind, vendor in VENDORS.items():
        assert RUNTIMES[kind].library == vendor.link_library
        assert RUNTIMES[kind].api["LaunchKernel"] == f"{vendor.api_prefix}LaunchKernel"
        assert ImageKind[vendor.native_image]
        assert f"-l{vendor.link_library}" in target_link_words(load_profile(), kind, "b.o")
    # Each vendor's functions, by its record, where they live (the records name no function).
    assert CODEGEN_HOOKS == {CUDA: bitcode_to_cubin, HIP: bitcode_to_amdgpu_object}
    assert TOOLKIT_FINDERS == {CUDA: find_cuda, HIP: find_rocm}
    assert KINDS["cuda"].gpu_conversion(parse_offload_arch("sm_80")[0]).startswith(CUDA.lowering + "{")
    assert vendor_of_triple("nvptx64-nvidia-cuda") is CUDA and vendor_of_triple("amdgcn-amd-amdhsa") is HIP
    assert vendor_of_triple("x86_64-pc-linux-gnu") is None


@pytest.mark.fast
def test_link_cudart_modes_are_the_vendor_records_runtime_variants():
    from offload.formats.vendors import VENDORS
    from offload.options.link import CUDART_MODES

    assert CUDART_MODES == tuple(dict.fromkeys(mode for v in VENDORS.values() for mode, _ in v.runtime_variants))
    assert CUDART_MODES == ("shared", "static", "none")

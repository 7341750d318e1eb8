"""Device serialization: every feature kernel for sm_80, sm_90 and gfx90a, float controls,
user bitcode, RDC symbol rules. Shared inputs are compiled once per session."""

from __future__ import annotations

import subprocess

import pytest

from conftest import DATA, require_tool
from offload.device.llvmlite_backend import fresh_context

DEVICE_DATA = DATA / "device"
TARGETS = ("sm_80", "sm_90", "gfx90a")
FEATURE_KERNELS = {
    "math_ops",
    "row_sum",
    "reverse_block",
    "dyn_shared",
    "reduce_shuffle",
    "hello",
    "scale",
    "host_kernel",
}
LIBRARY_PREFIXES = ("__nv_", "__ocml_", "__ockl_")


@pytest.fixture(scope="session")
def feature_images():
    from offload.device import CompileOptions, compile_device, parse_offload_arch
    from offload.mlir.frontend import load_program

    program = load_program(str(DEVICE_DATA / "features.mlir"))
    images = compile_device(program, parse_offload_arch(",".join(TARGETS)), CompileOptions())
    return {image.target.arch: image for image in images}


@pytest.fixture(scope="session")
def feature_assembly(feature_images, tmp_path_factory):
    """PTX (llvmlite) per NVPTX target; an object per AMDGPU target (llc-22: llvmlite has no AMDGPU asm
    parser for ockl's inline asm)."""
    from offload.device import emit_assembly

    folder = tmp_path_factory.mktemp("device_asm")
    out = {}
    for arch, image in feature_images.items():
        if image.target.offload_kind == "cuda":
            out[arch] = emit_assembly(image.bitcode, image.target)
        else:
            bitcode = folder / f"{arch}.bc"
            bitcode.write_bytes(image.bitcode)
            llc = require_tool("llc-22", 22)
            subprocess.run(
                [
                    llc,
                    "-mtriple=amdgcn-amd-amdhsa",
                    f"-mcpu={arch}",
                    "-filetype=obj",
                    str(bitcode),
                    "-o",
                    str(folder / f"{arch}.o"),
                ],
                check=True,
            )
            out[arch] = folder / f"{arch}.o"
    return out


@pytest.mark.parametrize("arch", TARGETS)
def test_image_is_bitcode_for_its_triple_with_every_kernel(feature_images, arch):
    import llvmlite.binding as llvm

    image = feature_images[arch]
    module = llvm.parse_bitcode(image.bitcode, fresh_context())
    assert module.triple == image.target.triple
    assert set(image.kernels) == FEATURE_KERNELS
    defined = {f.name for f in module.functions if not f.is_declaration}
    assert FEATURE_KERNELS <= defined
    assert image.globals == ["device_counter"]


@pytest.mark.parametrize("arch", TARGETS)
def test_no_unresolved_device_library_call(feature_images, arch):
    import llvmlite.binding as llvm

    module = llvm.parse_bitcode(feature_images[arch].bitcode, fresh_context())
    declared = [f.name for f in module.functions if f.is_declaration]
    assert not [name for name in declared if name.startswith(LIBRARY_PREFIXES)]
    # Only intrinsics and what the CUDA toolchain provides stay declared.
    assert all(name.startswith("llvm.") or name == "vprintf" for name in declared)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_ptxas_accepts_ptx_with_an_entry_per_kernel(feature_assembly, arch, tmp_path, ptxas):
    ptx = feature_assembly[arch]
    entries = {line.split()[2].split("(")[0] for line in ptx.splitlines() if line.startswith(".visible .entry")}
    assert entries == FEATURE_KERNELS
    assert ".extern .shared .align 16 .b8 __dynamic_shmem__0[]" in ptx  # dynamic shared memory stays dynamic
    source = tmp_path / f"{arch}.ptx"
    source.write_text(ptx)
    result = subprocess.run(
        [ptxas, "-arch", arch, str(source), "-o", str(tmp_path / "out.cubin")], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr


def test_gfx90a_object_has_a_kernel_descriptor_per_kernel(feature_assembly):
    nm = require_tool("llvm-nm-22", 22)
    symbols = subprocess.run(
        [nm, str(feature_assembly["gfx90a"])], capture_output=True, text=True, check=True
    ).stdout.split()
    assert {f"{kernel}.kd" for kernel in FEATURE_KERNELS} <= set(symbols)


def _sqrt_div_ptx(**options) -> list[str]:
    from offload.device import CompileOptions, compile_device, emit_assembly, parse_offload_arch
    from offload.mlir.frontend import load_program

    (image,) = compile_device(
        load_program(str(DEVICE_DATA / "sqrt_div.mlir")), parse_offload_arch("sm_80"), CompileOptions(**options)
    )
    return [
        line.split()[0]
        for line in emit_assembly(image.bitcode, image.target).splitlines()
        if line.strip().startswith(("sqrt.", "div.", "rcp."))
    ]


def test_sqrt_is_ieee_by_default():
    ops = _sqrt_div_ptx()
    assert "sqrt.rn.f32" in ops and "div.rn.f32" in ops
    assert not any("approx" in op for op in ops)


def test_fast_math_gives_approximate_sqrt():
    ops = _sqrt_div_ptx(fast_math=True)
    assert any(op.startswith("sqrt.approx") for op in ops)
    assert "sqrt.rn.f32" not in ops


def test_no_prec_sqrt_and_ftz():
    assert "sqrt.approx.ftz.f32" in _sqrt_div_ptx(prec_sqrt=False, ftz=True)
    # The process-wide reflect option is switched back for the next compile.
    assert "sqrt.rn.f32" in _sqrt_div_ptx()


def test_no_prec_div_gives_approximate_division():
    ops = _sqrt_div_ptx(prec_div=False)
    assert "div.rn.f32" not in ops and "sqrt.rn.f32" in ops


def test_opt_level_zero_still_resolves_libdevice():
    assert "sqrt.rn.f32" in _sqrt_div_ptx(opt_level=0)


def test_user_bitcode_resolves_external_call(tmp_path):
    import llvmlite.binding as llvm
    import llvmlite.ir as lir

    from offload.device import CompileOptions, compile_device, parse_offload_arch
    from offload.errors import OffloadError
    from offload.mlir.frontend import load_program

    program = load_program(str(DEVICE_DATA / "unresolved.mlir"))
    targets = parse_offload_arch("sm_80")
    with pytest.raises(OffloadError) as error:
        compile_device(program, targets, CompileOptions())
    assert "'user_helper'" in error.value.message and "calls_helper" in error.value.message

    library = lir.Module(name="helper")
    library.triple = "nvptx64-nvidia-cuda"
    f32 = lir.FloatType()
    helper = lir.Function(library, lir.FunctionType(f32, [f32]), "user_helper")
    builder = lir.IRBuilder(helper.append_basic_block())
    builder.ret(builder.fmul(helper.args[0], helper.args[0]))
    path = tmp_path / "helper.bc"
    path.write_bytes(llvm.parse_assembly(str(library)).as_bitcode())
    (image,) = compile_device(program, targets, CompileOptions(link_bitcode=[str(path)]))
    module = llvm.parse_bitcode(image.bitcode, fresh_context())
    assert not [f.name for f in module.functions if f.is_declaration and not f.name.startswith("llvm.")]


def test_clashing_kernels_are_an_error_unless_renamed():
    from offload.device import CompileOptions, compile_device, parse_offload_arch, symbol_name
    from offload.errors import OffloadError
    from offload.mlir.frontend import load_program

    program = load_program(str(DEVICE_DATA / "clash.mlir"))
    targets = parse_offload_arch("sm_80,gfx90a")
    with pytest.raises(OffloadError) as error:
        compile_device(program, targets, CompileOptions())
    assert "clash.mlir:4:5" in error.value.message and error.value.location is not None
    assert error.value.location.line == 9
    images = compile_device(program, targets, CompileOptions(rename="module-prefix"))
    assert all(image.kernels == ["first_scale", "second_scale"] for image in images)
    assert symbol_name("first", "scale", "module-prefix") == "first_scale"
    assert symbol_name("first", "scale", None) == "scale"


def test_bytecode_input_and_outlining(tmp_path):
    from offload.mlir.frontend import load_program

    program = load_program(str(DEVICE_DATA / "features.mlir"))
    names = [str(m.attributes["sym_name"]) for m in program.gpu_modules()]
    assert names == ['"math_kernels"', '"second_module"', '"host_kernel"']
    bytecode = tmp_path / "features.mlirbc"
    with open(bytecode, "wb") as f:
        program.module.operation.write_bytecode(f)
    assert len(load_program(str(bytecode)).gpu_modules()) == 3


def test_arch_table_rules():
    from offload.device import parse_offload_arch
    from offload.errors import OffloadError

    sm80, sm90, sm90a, gfx90a, gfx1100 = parse_offload_arch("sm_80,sm_90,sm_90a,gfx90a,gfx1100,sm_80")
    assert (sm80.features, sm90.features, sm90a.features) == ("+ptx70", "+ptx78", "+ptx80")
    assert (gfx90a.wavefront_size, gfx1100.wavefront_size) == (64, 32)
    assert gfx90a.triple == "amdgcn-amd-amdhsa" and sm80.triple == "nvptx64-nvidia-cuda"
    for bad in ("sm_9x", "gfx9999", "", "x86"):
        with pytest.raises(OffloadError):
            parse_offload_arch(bad)

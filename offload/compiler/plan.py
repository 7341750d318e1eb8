"""A compile's settings, resolved once into a frozen plan: the options record (offload/options/compile.py: flags >
mlir-offload.toml > defaults, resolved by the command or the API) and what it leaves open, decided by the
target clang's profile (offload/compiler/stages.py plan_bundle). The compile stages take the plan; no
command-line framework and no configuration file is involved past this point."""

from __future__ import annotations

import os
from dataclasses import dataclass

from offload.compiler.outputs import BuildSettings, asked_formats, build_settings
from offload.compiler.stages import BundlePlan, plan_bundle
from offload.errors import OffloadError
from offload.formats.hosts import resolve_host
from offload.formats.profiles import load_profile
from offload.formats.targets import Target, parse_offload_arch, ptx_only_archs
from offload.options import CompileOptions, compile_option


@dataclass(frozen=True)
class CompilePlan:
    input_path: str
    output: str
    emit: str  # "bc" | "ll" (-S)
    target_clang: int  # the profile's clang major
    targets: tuple[Target, ...]
    options: CompileOptions
    build: BuildSettings
    bundle: BundlePlan  # the formats, decided once


# The arch an emulated compile takes when none is given: any CUDA arch runs alike on the CPU, and sm_80's
# image is what a GPU build of the examples makes too.
EMULATION_DEFAULT_ARCH = "sm_80"


def offload_targets(options: CompileOptions) -> list[Target]:
    """The targets of --offload-arch (or the file's offload-arch); none is an error, but for --emulate."""
    if not options.offload_arch:
        if options.emulate:
            return parse_offload_arch(EMULATION_DEFAULT_ARCH)
        raise OffloadError(
            (
                "no offload target: pass ",
                compile_option("offload_arch"),
                ", e.g. ",
                compile_option("offload_arch", "sm_80"),
                " (CUDA) or ",
                compile_option("offload_arch", "gfx90a"),
                " (HIP)",
            )
        )
    return parse_offload_arch(native_archs(options.offload_arch))


def native_archs(spec: str) -> str:
    """--offload-arch with `native` replaced by the archs of this machine's GPUs (as clang's)."""
    from offload.toolchain.gpus import NATIVE, local_gpu_archs

    names = [name.strip() for name in spec.split(",")]
    if NATIVE not in names:
        return spec
    found, asked = local_gpu_archs()
    if not found:
        tools = ", ".join(asked) if asked else "no offload-arch, nvptx-arch, amdgpu-arch or nvidia-smi installed"
        raise OffloadError(
            (
                compile_option("offload_arch", "native", joined=True),
                f": no GPU found on this machine ({tools}): name the target's arch, e.g. ",
                compile_option("offload_arch", "sm_80"),
                " or gfx90a",
            )
        )
    return ",".join(part for name in names for part in (found if name == NATIVE else [name]))


def default_output(input_path: str, textual: bool, bundle: BundlePlan) -> str:
    """<input stem>.offload.bc, .offload.ll with -S, or <input stem>.o when the bundle is an ELF object."""
    stem = os.path.splitext(os.path.basename(input_path))[0] or "out"
    if textual:
        return f"{stem}.offload.ll"
    return f"{stem}.o" if bundle.host_format == "obj" else f"{stem}.offload.bc"


def compile_plan(
    input_path: str, output: str | None, textual: bool, options: CompileOptions, config_file: str | None = None
) -> CompilePlan:
    """The plan of compiling `input_path` with `options` (config_file: the mlir-offload.toml they came
    from, a prerequisite of -MD's rule). `output` None: named after the input (default_output), in the
    current folder, as clang does."""
    device_image, host_format = asked_formats(options, output, textual)
    host_triple = resolve_host(options.host_triple).name  # an unsupported one fails before any work
    if options.emulate:
        device_image = emulation_format(options, device_image)
    elif options.sanitizers or options.sanitize_keep_going:
        raise OffloadError(
            (compile_option("sanitize"), " runs its checks in the CPU emulator: add ", compile_option("emulate", True))
        )
    target_clang = load_profile(options.target_clang).clang_major  # unknown: fails before any work
    targets = offload_targets(options)
    if options.device_debug:
        from offload.formats.targets import with_debug_ptx

        targets = [with_debug_ptx(target) for target in targets]
    ptx_only = ptx_only_archs(options.offload_arch)
    if ptx_only:
        refuse_dropping_ptx(options, device_image, ptx_only)
    # compute_XX: its image is a cubin with its PTX beside the bundle (link puts the PTX in the fatbin and
    # leaves out the cubin); the sm_XX archs keep the image kind they would have had.
    bundle = plan_bundle(targets, target_clang, device_image, host_format, host_triple, ptx_only)
    output = output or default_output(input_path, textual, bundle)
    build = build_settings(options, output, config_file, (device_image, host_format))  # once, as planned
    return CompilePlan(
        input_path, output, "ll" if textual else "bc", target_clang, tuple(targets), options, build, bundle
    )


def refuse_dropping_ptx(options: CompileOptions, device_image: str | None, ptx_only: tuple[str, ...]) -> None:
    """compute_XX asks for PTX: an image format that cannot carry it is refused, never the PTX dropped."""
    computes = ", ".join("compute_" + arch[len("sm_") :] for arch in ptx_only)
    if options.emulate:
        raise OffloadError(
            (
                compile_option("emulate", True),
                f" runs the bitcode image of an sm_XX arch; {computes} is PTX only, for a GPU driver to "
                f"JIT-compile: name {', '.join(ptx_only)} instead",
            )
        )
    if device_image in ("bitcode", "cubin"):
        raise OffloadError(
            (
                f"{computes} is PTX only, which ",
                compile_option("device_image", device_image, joined=True),
                " leaves out: drop ",
                compile_option("device_image"),
                f" (the sm_XX archs keep their images, {computes} gets PTX) or use ",
                compile_option("device_image", "ptx", joined=True),
            )
        )


# The clang whose entry layout the emulator reads (offload/toolchain/emulate.py links with it).
EMULATION_CLANG = 22


def emulation_format(options: CompileOptions, device_image: str | None) -> str:
    """--emulate's device image: bitcode, which the emulator retargets (it links with clang 22)."""
    if options.portable or device_image not in (None, "bitcode"):
        raise OffloadError(
            (
                compile_option("emulate", True),
                " keeps the device code as bitcode (the emulator retargets it): drop ",
                compile_option("portable"),
                " and ",
                compile_option("device_image"),
            )
        )
    if options.target_clang != EMULATION_CLANG:
        raise OffloadError(
            (
                compile_option("emulate", True),
                f" links with clang {EMULATION_CLANG}: drop ",
                compile_option("target_clang"),
            )
        )
    return "bitcode"

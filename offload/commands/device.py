"""Command `device`: serialize every gpu.module of an MLIR program to one LLVM bitcode image per target,
bundled as an OffloadBinary (or written per target for inspection). Its options are a reusable decorator
(`device_options`); offload/compiler/plan.py turns them into (targets, DeviceOptions), for `compile` too."""

from __future__ import annotations

from pathlib import Path

import click

from offload.errors import OffloadError
from offload.fsutil import STDOUT, atomic_write, refuse_input_as_output, write_all

def device_options(command):
    """Decorator adding the device-compilation options to a click command. Every option defaults to None
    ("not given"): mlir-offload.toml and then offload/config.py's KEYS fill them (offload/compiler/plan.py)."""
    options = [
        click.option("--offload-arch", "offload_arch", multiple=True, metavar="ARCH[,ARCH...]",
                     help="Targets of one vendor, e.g. sm_80,sm_90 or gfx90a; also 80, 90a (CMake, Spack) and compute_80 (PTX beside the bundle, JIT-compiled by the driver) (repeatable)."),
        click.option("-O", "opt_level", type=click.Choice(["0", "1", "2", "3"]), default=None,
                     help="Device optimization level (-O0..-O3, default 3)."),
        click.option("--prec-sqrt/--no-prec-sqrt", "prec_sqrt", default=None,
                     help="IEEE-rounded f32 square root (default) or approximate."),
        click.option("--prec-div/--no-prec-div", "prec_div", default=None,
                     help="IEEE-rounded f32 division (default) or approximate."),
        click.option("--ftz", "ftz", is_flag=True, default=None, help="Flush f32 denormals to zero."),
        click.option("--fast-math", "fast_math", is_flag=True, default=None,
                     help="Approximate sqrt/div, flush denormals, finite math only (as nvcc --use_fast_math)."),
        click.option("--link-bitcode", "link_bitcode", multiple=True, type=click.Path(dir_okay=False),
                     help="Link this device bitcode library into every image of its triple (repeatable)."),
        click.option("--libdevice", "libdevice", default=None, type=click.Path(),
                     help="libdevice.10.bc (default: $CUDA_HOME, the standard toolkit, the nvidia-nvvm wheel)."),
        click.option("--rocm-device-lib-path", "rocm_device_lib_path", default=None, type=click.Path(),
                     help="Folder with ocml.bc/ockl.bc/oclc_*.bc (default: $ROCM_PATH, /opt/rocm, system)."),
        click.option("--rename", "rename", default=None, metavar="module-prefix|prefix:NAME",
                     help="module-prefix: every gpu.module's exported symbol becomes <module>_<symbol>, "
                          "so two gpu.modules may define the same name; prefix:NAME: every exported device "
                          "symbol becomes NAME_<symbol> (host launches follow), so separately compiled "
                          "bundles never collide."),
        click.option("--symbol-prefix", "symbol_prefix", default=None, metavar="NAME",
                     help="Same as --rename=prefix:NAME."),
        click.option("--cache/--no-cache", "cache", default=None,
                     help="Reuse device images of an unchanged program from the cache (default) "
                          "or rebuild them (MLIR_OFFLOAD_CACHE_DIR, else ~/.cache/mlir-offload)."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


@click.command("device")
@click.argument("input_path", metavar="IN.mlir", type=click.Path(dir_okay=False))
@click.option("-o", "output", required=True, type=click.Path(),
              help="Output OffloadBinary (or, with --emit=bc|ll, a folder for one module per target).")
@click.option("--emit", "emit", type=click.Choice(["offload", "bc", "ll"]), default="offload", show_default=True,
              help="offload: one OffloadBinary with an image per target; bc/ll: per-target modules.")
@click.option("--target-clang", "target_clang", default=None, metavar="N",
              help="Major version of the clang that links the result (default 22): sets the HIP kind value.")
@device_options
def device_command(input_path: str, output: str, emit: str, target_clang: str | None, **device_kwargs) -> None:
    """Serialize the gpu.modules of IN.mlir to LLVM bitcode per target, device libraries linked."""
    from offload.compiler.frontend import load_program
    from offload.formats.profiles import load_profile
    from offload.serialize import compile_device

    from offload.compiler.plan import device_plan
    from offload.config import project_config

    targets, options = device_plan(device_kwargs, project_config(input_path))
    profile = load_profile(target_clang)
    refuse_input_as_output(output, [input_path, *options.link_bitcode, options.libdevice])
    if emit != "offload" and output == STDOUT:
        raise OffloadError(f"--emit={emit} writes one file per target into a folder: name a folder with -o, "
                           "not '-' (standard output)")
    # Every image here is bitcode the target clang LTO-links: the pre-link pipeline.
    images = compile_device(load_program(input_path), targets, options, lto_pre_link=True)
    if emit == "offload":
        atomic_write(output, offload_binary(images, profile))
        return
    folder = Path(output)
    if folder.exists() and not folder.is_dir():
        raise OffloadError(f"--emit={emit} writes one file per target into a folder; '{output}' is a file")
    # Render everything first: nothing is written unless every target succeeded.
    rendered = [(folder / f"{Path(input_path).stem}.{image.target.arch}.{emit}", _render(image, emit))
                for image in images]
    folder.mkdir(parents=True, exist_ok=True)
    write_all(dict(rendered))


def offload_binary(images, profile) -> bytes:
    """The OffloadBinary of device images: one bitcode image per target, strings triple and arch."""
    from offload.packager import ImageKind, OffloadImage, write_binary

    return write_binary([
        OffloadImage(image_kind=ImageKind.BITCODE, offload_kind=profile.offload_kind_value(image.target.offload_kind),
                     flags=0, strings={"triple": image.target.triple, "arch": image.target.arch}, data=image.bitcode)
        for image in images
    ])


def _render(image, emit: str) -> bytes:
    if emit == "bc":
        return image.bitcode
    if image.cached:  # LLVM never parses a cached image's bytes in this process
        from offload.serialize.processes import call_forked

        return call_forked(_as_text, image.bitcode, f"printing the cached {image.target.arch} image")
    return _as_text(image.bitcode)


def _as_text(bitcode: bytes) -> bytes:
    import llvmlite.binding as llvm

    from offload.serialize.pipeline import fresh_context

    return str(llvm.parse_bitcode(bitcode, fresh_context())).encode()


COMMAND = device_command

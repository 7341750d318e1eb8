"""Command `device`: serialize every gpu.module of an MLIR program to one LLVM bitcode image per target,
bundled as an OffloadBinary (or written per target for inspection). Its options are the table's
(offload/options/compile.py) that name `device` among their commands."""

from __future__ import annotations

from pathlib import Path

import click

from offload.errors import OffloadError
from offload.formats.profiles import load_profile
from offload.fsutil import STDOUT, atomic_write, output_folder, refuse_input_as_output, write_all
from offload.options import ClangStyleCommand, command_options, given_flags, resolve

PTX_SUFFIX = ".ptx"


@click.command("device", cls=ClangStyleCommand)
@click.argument("input_path", metavar="IN.mlir", type=click.Path())
@click.option(
    "-o",
    "output",
    required=True,
    type=click.Path(),
    help="Output OffloadBinary (or, with --emit=bc|ll|ptx, a folder for one file per target; "
    "with --emit=ptx and one arch, a file named *.ptx).",
)
@click.option(
    "--emit",
    "emit",
    type=click.Choice(["offload", "bc", "ll", "ptx"]),
    default="offload",
    show_default=True,
    help="offload: one OffloadBinary with an image per target; bc/ll: per-target modules; "
    "ptx: one PTX file per CUDA arch (nvcc's -ptx, also accepted).",
)
@command_options("device")
def device_command(input_path: str, output: str, emit: str, **flags) -> None:
    """Serialize the gpu.modules of IN.mlir to LLVM bitcode per target, device libraries linked."""
    from offload.config import project_config
    from offload.device import compile_device
    from offload.driver.plan import offload_targets
    from offload.mlir.frontend import load_program

    options = resolve(given_flags(flags), project_config(input_path)).options
    targets = offload_targets(options)
    profile = load_profile(options.target_clang)
    if emit == "ptx":
        not_cuda = [target.arch for target in targets if target.offload_kind != "cuda"]
        if not_cuda:
            raise OffloadError(
                f"--emit=ptx: {', '.join(not_cuda)} has no PTX (PTX is CUDA's): --emit=ll shows its device code"
            )
    single_file = emit == "ptx" and len(targets) == 1 and output.endswith(PTX_SUFFIX)  # nvcc's -ptx -o k.ptx
    if emit == "offload" or single_file:  # the per-target files of --emit=bc|ll are checked one by one when written
        refuse_input_as_output(output, [input_path, *options.link_bitcode, options.libdevice])
    elif output == STDOUT:
        raise OffloadError(
            f"--emit={emit} writes one file per target into a folder: name a folder with -o, not '-' (standard output)"
        )
    # Bitcode the target clang LTO-links gets the pre-link pipeline; PTX is final code, optimized whole.
    images = compile_device(load_program(input_path), targets, options, lto_pre_link=emit != "ptx")
    if single_file:
        (image,) = images
        atomic_write(
            output,
            _render(image, emit, options.opt_level),
            inputs=[input_path, *options.link_bitcode, options.libdevice],
        )
        return
    if emit == "offload":
        atomic_write(
            output, offload_binary(images, profile), inputs=[input_path, *options.link_bitcode, options.libdevice]
        )
        return
    folder = Path(output)
    if folder.exists() and not folder.is_dir():
        raise OffloadError(f"--emit={emit} writes one file per target into a folder; '{output}' is a file")
    # Render everything first: nothing is written unless every target succeeded.
    rendered = [
        (folder / f"{Path(input_path).stem}.{image.target.arch}.{emit}", _render(image, emit, options.opt_level))
        for image in images
    ]
    with output_folder(folder):
        write_all(dict(rendered), inputs=[input_path, *options.link_bitcode, options.libdevice])


def offload_binary(images, profile) -> bytes:
    """The OffloadBinary of device images: one bitcode image per target, strings triple and arch."""
    from offload.packager import ImageKind, OffloadImage, write_binary

    return write_binary(
        [
            OffloadImage(
                image_kind=ImageKind.BITCODE,
                offload_kind=profile.offload_kind_value(image.target.offload_kind),
                flags=0,
                strings={"triple": image.target.triple, "arch": image.target.arch},
                data=image.bitcode,
            )
            for image in images
        ]
    )


def _render(image, emit: str, opt_level: int) -> bytes:
    if emit == "bc":
        return image.bitcode
    if emit == "ptx":
        from offload.processes import call_forked

        # In a forked child: an image from the cache is bytes LLVM never parses in this process.
        return call_forked(_as_ptx, (image.bitcode, image.target, opt_level), f"PTX for {image.target.arch}")
    if image.cached:  # LLVM never parses a cached image's bytes in this process
        from offload.processes import call_forked

        return call_forked(_as_text, image.bitcode, f"printing the cached {image.target.arch} image")
    return _as_text(image.bitcode)


def _as_ptx(work) -> bytes:
    from offload.device.codegen import emit_assembly

    bitcode, target, opt_level = work
    return emit_assembly(bitcode, target, opt_level).encode()


def _as_text(bitcode: bytes) -> bytes:
    import llvmlite.binding as llvm

    from offload.device.llvmlite_backend import fresh_context

    return str(llvm.parse_bitcode(bitcode, fresh_context())).encode()


COMMAND = device_command

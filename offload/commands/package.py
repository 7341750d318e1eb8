"""Command `package`: an OffloadBinary from images, byte-identical to llvm-offload-binary's."""

from __future__ import annotations

import click

from offload.fsutil import atomic_write, refuse_input_as_output


@click.command("package")
@click.option("-o", "output", required=True, type=click.Path(), help="Output OffloadBinary file.")
@click.option(
    "--image",
    "images",
    multiple=True,
    required=True,
    metavar="file=F,triple=T,arch=A,kind=K[,key=value...]",
    help="An image, as llvm-offload-binary's --image (kind=cuda|hip|openmp; image-kind=KIND overrides "
    "the kind detected from the content). Repeat for several images.",
)
@click.option(
    "--target-clang",
    "target_clang",
    default=None,
    metavar="N",
    help="Major version of the clang that will link the result (default 22): sets the HIP kind value.",
)
def package_command(output: str, images: tuple[str, ...], target_clang: str | None) -> None:
    """Bundle device images into one OffloadBinary, byte-identical to llvm-offload-binary."""
    from offload.formats.profiles import load_profile
    from offload.packager import write_binary
    from offload.packager.image_spec import build_image, parse_image_spec

    profile = load_profile(target_clang)
    specs = [parse_image_spec(spec) for spec in images]
    refuse_input_as_output(output, [spec.file for spec in specs])
    built = [build_image(spec, profile.offload_kind_value) for spec in specs]
    atomic_write(output, write_binary(built), inputs=[spec.file for spec in specs])


COMMAND = package_command

"""Command `extract`: write each image of an OffloadBinary under a generated safe name."""

from __future__ import annotations

import os

import click

from offload.driver.textual_ir import load_offload_images
from offload.errors import OffloadError
from offload.formats.profiles import offload_kind_label
from offload.fsutil import output_folder, refuse_input_as_output, write_all
from offload.packager import IMAGE_KIND_EXTENSION
from offload.packager.model import ImageKind

# The characters an extracted file's generated name may contain.
_SAFE_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_+-.")
_MAX_NAME_PART = 64


def _safe_part(text: str, fallback: str) -> str:
    part = "".join(c if c in _SAFE_NAME_CHARS else "_" for c in text)[:_MAX_NAME_PART].strip(".")
    return part or fallback


def extracted_name(index: int, image) -> str:
    """`<index>-<offload kind>-<arch>.<ext>`, from a fixed character set whatever the strings say."""
    kind_name, _ = offload_kind_label(image.offload_kind)
    try:
        extension = IMAGE_KIND_EXTENSION[ImageKind(image.image_kind)]
    except ValueError:
        extension = "bin"
    return f"{index}-{_safe_part(kind_name, 'unknown')}-{_safe_part(image.arch, 'noarch')}.{extension}"


@click.command("extract")
@click.argument("file", type=click.Path())
@click.option("-o", "directory", required=True, type=click.Path(), help="Directory to write into.")
def extract_command(file: str, directory: str) -> None:
    """Write each image under a generated safe name in DIR."""
    images = load_offload_images(file)
    with output_folder(directory):
        write_images(file, directory, images)


def write_images(file: str, directory: str, images) -> None:
    """Every image of `file` into `directory` under its generated name, all or nothing."""
    root = os.path.realpath(directory)
    outputs = {}
    for index, image in enumerate(images):
        name = extracted_name(index, image)
        path = os.path.join(root, name)
        # The name is built from a fixed character set; check anyway that it stays directly in DIR.
        if os.path.dirname(path) != root or name in (".", ".."):
            raise OffloadError(f"refusing to write '{name}' outside '{directory}'")
        refuse_input_as_output(path, [file])
        outputs[path] = image.data
    write_all(outputs, inputs=[file])  # every image or none
    for path in outputs:
        click.echo(os.path.join(directory, os.path.basename(path)))


COMMAND = extract_command

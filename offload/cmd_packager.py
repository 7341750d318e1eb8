"""Commands `package`, `inspect` and `extract`: OffloadBinary files as llvm-offload-binary makes them."""

from __future__ import annotations

import hashlib
import json
import os

import click

from offload.errors import OffloadError
from offload.fsutil import atomic_write, read_input, refuse_input_as_output

# The characters an extracted file's generated name may contain.
_SAFE_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_+-.")
_MAX_NAME_PART = 64


def offload_kind_label(value: int) -> tuple[str, list[int]]:
    """The kind's name and the target clangs (profiles) that give it this value: HIP is 3 up to
    LLVM 20 and 4 from 21, so the value alone does not say which clang it is for."""
    from offload.profiles import available_profiles, load_profile

    names: dict[str, list[int]] = {}
    for major in available_profiles():
        for kind, kind_value in load_profile(major).offload_kind.items():
            if kind_value == value:
                names.setdefault(kind, []).append(major)
    if not names:
        return ("none" if value == 0 else "unknown"), []
    name = "/".join(sorted(names))
    return name, sorted({m for majors in names.values() for m in majors})


@click.command("package")
@click.option("-o", "output", required=True, type=click.Path(dir_okay=False), help="Output OffloadBinary file.")
@click.option("--image", "images", multiple=True, required=True, metavar="file=F,triple=T,arch=A,kind=K[,key=value...]",
              help="An image, as llvm-offload-binary's --image (kind=cuda|hip|openmp; image-kind=KIND overrides "
                   "the kind detected from the content). Repeat for several images.")
@click.option("--target-clang", "target_clang", default=None, metavar="N",
              help="Major version of the clang that will link the result (default 22): sets the HIP kind value.")
def package_command(output: str, images: tuple[str, ...], target_clang: str | None) -> None:
    """Bundle device images into one OffloadBinary, byte-identical to llvm-offload-binary."""
    from offload.packager import write_binary
    from offload.packager.image_spec import build_image, parse_image_spec
    from offload.profiles import load_profile

    profile = load_profile(target_clang)
    specs = [parse_image_spec(spec) for spec in images]
    refuse_input_as_output(output, [spec.file for spec in specs])
    built = [build_image(spec, profile.offload_kind_value) for spec in specs]
    atomic_write(output, write_binary(built))


def _image_record(index: int, image) -> dict:
    from offload.packager import image_kind_name
    from offload.packager.bitcode_ident import bitcode_producer
    from offload.packager.model import ImageKind

    kind_name, clangs = offload_kind_label(image.offload_kind)
    record = {
        "index": index,
        "offload_kind": {"name": kind_name, "value": image.offload_kind, "target_clang": clangs},
        "image_kind": {"name": image_kind_name(image.image_kind), "value": image.image_kind},
        "flags": image.flags,
        "triple": image.triple,
        "arch": image.arch,
        "strings": dict(image.strings),
        "size": len(image.data),
        "sha256": hashlib.sha256(image.data).hexdigest(),
    }
    if image.image_kind == ImageKind.BITCODE:
        record["producer"] = bitcode_producer(image.data)
    return record


def _shown(text: str) -> str:
    """A string as it can be printed on one line: as-is when plain, JSON-quoted otherwise."""
    plain = text and all(c.isprintable() and not c.isspace() or c == " " for c in text) and text.strip() == text
    return text if plain else json.dumps(text)


def _load_images(file: str) -> list:
    from offload.packager import read_offload_images

    images = read_offload_images(read_input(file), file)
    if not images:
        raise OffloadError(f"'{file}' contains no offloading images")
    return images


@click.command("inspect")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def inspect_command(file: str, as_json: bool) -> None:
    """List the images of an OffloadBinary, or of the bitcode, IR or ELF object that embeds them."""
    records = [_image_record(i, image) for i, image in enumerate(_load_images(file))]
    if as_json:
        click.echo(json.dumps({"file": file, "images": records}, indent=2))
        return
    click.echo(f"{_shown(file)}: {len(records)} image{'s' if len(records) != 1 else ''}")
    for r in records:
        kind = r["offload_kind"]
        clangs = f"; target clang {', '.join(map(str, kind['target_clang']))}" if kind["target_clang"] else ""
        click.echo(f"image {r['index']}:")
        click.echo(f"  offload kind  {kind['name']} ({kind['value']}{clangs})")
        click.echo(f"  image kind    {r['image_kind']['name']} ({r['image_kind']['value']})")
        click.echo(f"  triple        {_shown(r['triple'])}")
        click.echo(f"  arch          {_shown(r['arch'])}")
        click.echo(f"  flags         {r['flags']}")
        for key, value in r["strings"].items():
            click.echo(f"  string        {_shown(key)}={_shown(value)}")
        click.echo(f"  size          {r['size']}")
        click.echo(f"  sha256        {r['sha256']}")
        if "producer" in r:
            click.echo(f"  producer      {r['producer'] or 'unknown'}")


def _safe_part(text: str, fallback: str) -> str:
    part = "".join(c if c in _SAFE_NAME_CHARS else "_" for c in text)[:_MAX_NAME_PART].strip(".")
    return part or fallback


def extracted_name(index: int, image) -> str:
    """`<index>-<offload kind>-<arch>.<ext>`, from a fixed character set whatever the strings say."""
    from offload.packager import IMAGE_KIND_EXTENSION
    from offload.packager.model import ImageKind

    kind_name, _ = offload_kind_label(image.offload_kind)
    try:
        extension = IMAGE_KIND_EXTENSION[ImageKind(image.image_kind)]
    except ValueError:
        extension = "bin"
    return f"{index}-{_safe_part(kind_name, 'unknown')}-{_safe_part(image.arch, 'noarch')}.{extension}"


@click.command("extract")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("-o", "directory", required=True, type=click.Path(file_okay=False), help="Directory to write into.")
def extract_command(file: str, directory: str) -> None:
    """Write each image under a generated safe name in DIR."""
    images = _load_images(file)
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as e:
        raise OffloadError(f"cannot create directory '{directory}': {e.strerror}") from None
    root = os.path.realpath(directory)
    for index, image in enumerate(images):
        name = extracted_name(index, image)
        path = os.path.join(root, name)
        # The name is built from a fixed character set; check anyway that it stays directly in DIR.
        if os.path.dirname(path) != root or name in (".", ".."):
            raise OffloadError(f"refusing to write '{name}' outside '{directory}'")
        atomic_write(path, image.data)
        click.echo(os.path.join(directory, name))


COMMANDS = [package_command, inspect_command, extract_command]

"""Command `inspect`: the images (and bundle record) of an OffloadBinary or a file that embeds one."""

from __future__ import annotations

import hashlib
import json

import click

from offload.errors import OffloadError
from offload.fsutil import read_input
from offload.packager import image_kind_name
from offload.packager.bitcode_ident import bitcode_producer
from offload.packager.bundle import RECORD_PREFIX
from offload.packager.model import ImageKind


def _image_record(index: int, image) -> dict:
    from offload.formats.profiles import offload_kind_label

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
    ptx_only = image.strings.get(RECORD_PREFIX + "ptx-only", "").split(",")
    if image.arch.startswith("sm_") and image.arch in ptx_only:
        # compute_XX: the executable gets the PTX written beside the bundle, never this cubin.
        record["ships_as"] = "compute_" + image.arch[len("sm_") :]
    function = image.strings.get(RECORD_PREFIX + "sparse-tensor-runtime", "")
    if function:
        from offload.formats.sparse_tensor_runtime import requirement

        # What the link must be given (the record names the first function; link refuses without it).
        record["needs"] = requirement(function)
    return record


def _shown(text: str) -> str:
    """A string as it can be printed on one line: as-is when plain, JSON-quoted otherwise."""
    plain = text and all(c.isprintable() and not c.isspace() or c == " " for c in text) and text.strip() == text
    return text if plain else json.dumps(text)


def _linked_executable(file: str):
    """The executable's reading (offload.toolchain.executable) when `file` is a linked executable with
    device images (a .nv_fatbin or .hip_fatbin section), else None."""
    from offload.formats.elf import ELF_MAGIC
    from offload.toolchain.executable import executable_from_bytes

    data = read_input(file)
    if data[:4] != ELF_MAGIC:
        return None
    exe = executable_from_bytes(data, file)
    return exe if any(exe.device_sections.values()) else None


def _executable_record(exe) -> dict:
    for section in exe.entry_sections:  # the reader decodes names with U+FFFD for bytes that are not UTF-8
        bad = next((e for e in section.entries if "\ufffd" in e.name), None)
        if bad is not None:
            raise OffloadError(
                f"'{exe.path}': offload entry name {json.dumps(bad.name)} in {section.name} is not "
                "valid UTF-8: the executable is damaged"
            )
    images = [
        {
            "section": section,
            "arch": image.arch,
            "kind": image.kind,
            "compressed": image.compressed,
            "size": len(image.data),
            "kernels": sorted(image.kernels()),
        }
        for section, found in exe.device_sections.items()
        for image in found
    ]
    entries = [
        {
            "section": section.name,
            "target_clang": section.profile_major,
            "registered": section.registered,
            "entries": [
                {"name": e.name, "kind": "kernel" if e.is_kernel else "variable", "size": e.size, "flags": e.flags}
                for e in section.entries
            ],
        }
        for section in exe.entry_sections
    ]
    return {"file": exe.path, "executable": True, "device_images": images, "entry_sections": entries}


def _echo_executable(record: dict) -> None:
    """As cuobjdump --list-elf: one line per device image, then the offload entries."""
    images = record["device_images"]
    plural = "s" if len(images) != 1 else ""
    click.echo(f"{_shown(record['file'])}: linked executable, {len(images)} device image{plural}")
    for index, image in enumerate(images, 1):
        packed = ", compressed" if image["compressed"] else ""
        kernels = f"  kernels: {' '.join(map(_shown, image['kernels']))}" if image["kernels"] else ""
        click.echo(
            f"  image {index}: {_shown(image['arch'])} {image['kind']}{packed}, {image['size']} bytes "
            f"({image['section']}){kernels}"
        )
    for section in record["entry_sections"]:
        registered = {True: "registered", False: "NOT registered", None: "registration unknown"}[section["registered"]]
        click.echo(f"  offload entries {section['section']} (clang {section['target_clang']} layout, {registered}):")
        for entry in section["entries"]:
            size = f" ({entry['size']} bytes, flags {entry['flags']})" if entry["kind"] == "variable" else ""
            click.echo(f"    {entry['kind']:8s} {_shown(entry['name'])}{size}")


@click.command("inspect")
@click.argument("file", type=click.Path())
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def inspect_command(file: str, as_json: bool) -> None:
    """List the images of an OffloadBinary, or of the bitcode, IR or ELF object that embeds them; of a
    linked executable, its device images (arch, kind, size, kernels) and offload entries."""
    exe = _linked_executable(file)
    if exe is not None:
        record = _executable_record(exe)
        if as_json:
            click.echo(json.dumps(record, indent=2))
        else:
            _echo_executable(record)
        return
    from offload.compiler.textual_ir import load_offload_images

    records = [_image_record(i, image) for i, image in enumerate(load_offload_images(file))]
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
        if "ships_as" in r:
            click.echo(f"  ships as      {r['ships_as']} (PTX only: link puts the PTX beside the bundle in the fatbin)")
        click.echo(f"  flags         {r['flags']}")
        if "needs" in r:
            click.echo(f"  needs         {_shown(r['needs'])}")
        for key, value in r["strings"].items():
            click.echo(f"  string        {_shown(key)}={_shown(value)}")
        click.echo(f"  size          {r['size']}")
        click.echo(f"  sha256        {r['sha256']}")
        if "producer" in r:
            click.echo(f"  producer      {r['producer'] or 'unknown'}")


COMMAND = inspect_command

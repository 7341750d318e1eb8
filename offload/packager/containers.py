"""Offload images from wherever they are stored: a raw OffloadBinary, LLVM bitcode with
`@llvm.embedded.object` (read by our own bitstream reader, no LLVM), or the `.llvm.offloading` section of
an ELF object or executable. Textual IR is the build side's (offload/driver/textual_ir.py)."""

from __future__ import annotations

from offload.errors import OffloadError
from offload.packager.bitcode_ident import bitcode_globals
from offload.packager.detect import ELF_MAGIC, is_bitcode
from offload.packager.layout import MAGIC
from offload.packager.model import OffloadBinaryError, OffloadImage
from offload.packager.reader import read_binary

OFFLOADING_SECTION = ".llvm.offloading"


def read_offload_images(data: bytes, name: str) -> list[OffloadImage]:
    """Every offload image in `data` (the file `name`); [] when a valid container holds none."""
    data = bytes(data)
    kind = container_kind(data)
    if kind == "offload-binary":
        return _in_context(read_binary, data, name)
    if kind == "elf":
        return _from_elf(data, name)
    if kind == "bitcode":
        return _from_bitcode(data, name)
    if kind == "text":
        raise OffloadError(
            f"'{name}' is textual LLVM IR, which the target side does not read: assemble it "
            "(llvm-as) or compile without -S"
        )
    raise OffloadError(f"'{name}' is not an offload binary, LLVM bitcode or IR, or an ELF object")


def container_kind(data: bytes) -> str | None:
    """ "offload-binary", "elf", "bitcode", "text" (textual IR, maybe) or None, from the first bytes."""
    if data[:4] == MAGIC:
        return "offload-binary"
    if data[:4] == ELF_MAGIC:
        return "elf"
    if is_bitcode(data):
        return "bitcode"
    return "text" if b"\0" not in data[:4096] else None


def _in_context(read, data: bytes, name: str) -> list[OffloadImage]:
    try:
        return read(data)
    except OffloadBinaryError as e:
        raise OffloadBinaryError(f"'{name}': {e.message}") from None


def _from_elf(data: bytes, name: str) -> list[OffloadImage]:
    from offload.formats.elf import read_elf

    elf = read_elf(data, name)
    images: list[OffloadImage] = []
    for section in elf.sections:
        if section.name == OFFLOADING_SECTION:
            images.extend(_in_context(read_binary, elf.section_data(section), name))
    return images


def _from_bitcode(data: bytes, name: str) -> list[OffloadImage]:
    """The images in the module's globals placed in .llvm.offloading (clang's and mlir-offload's
    @llvm.embedded.object; llvm-link may add .N suffixes to the name, never change the section)."""
    found = bitcode_globals(data)
    if found is None:
        raise OffloadError(f"'{name}': cannot read bitcode: malformed or unsupported bitstream")
    images: list[OffloadImage] = []
    for variable in found:
        if variable.section != OFFLOADING_SECTION:
            continue
        if variable.initializer is None:
            raise OffloadError(f"'{name}': global @{variable.name} in {OFFLOADING_SECTION} is not a byte array")
        images.extend(_in_context(read_binary, variable.initializer, name))
    return images

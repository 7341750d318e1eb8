"""Which kind of device image a file holds, from its content (not its name)."""

from __future__ import annotations

from offload.errors import OffloadError
from offload.packager.layout import MAGIC as OFFLOAD_BINARY_MAGIC
from offload.packager.model import ImageKind

BITCODE_MAGIC = b"BC\xc0\xde"
BITCODE_WRAPPER_MAGIC = b"\xde\xc0\x17\x0b"
ELF_MAGIC = b"\x7fELF"
FATBIN_MAGIC = b"\x50\xed\x55\xba"  # 0xBA55ED50, little endian
SPIRV_MAGIC = b"\x03\x02\x23\x07"  # 0x07230203, little endian
EM_CUDA = 190


def is_bitcode(data: bytes) -> bool:
    return data[:4] in (BITCODE_MAGIC, BITCODE_WRAPPER_MAGIC)


def detect_image_kind(data: bytes) -> ImageKind:
    """LLVM bitcode, ELF cubin (EM_CUDA), other ELF objects, CUDA fatbinary, SPIR-V or PTX text."""
    head = bytes(data[:20])
    if is_bitcode(head):
        return ImageKind.BITCODE
    if head[:4] == ELF_MAGIC and len(head) >= 20:
        machine = int.from_bytes(head[18:20], "big" if head[5] == 2 else "little")
        return ImageKind.CUBIN if machine == EM_CUDA else ImageKind.OBJECT
    if head[:4] == FATBIN_MAGIC:
        return ImageKind.FATBINARY
    if head[:4] == SPIRV_MAGIC:
        return ImageKind.SPIRV
    if _is_ptx(data):
        return ImageKind.PTX
    if head[:4] == OFFLOAD_BINARY_MAGIC:
        raise OffloadError("the image is itself an offload binary; package its images instead")
    raise OffloadError(
        "unrecognized image content (not LLVM bitcode, an ELF object or cubin, a CUDA "
        "fatbinary, SPIR-V or PTX); give its kind with image-kind=KIND"
    )


def _is_ptx(data: bytes) -> bool:
    """PTX is text whose first directive is `.version`, with a `.target` directive after it."""
    try:
        text = bytes(data[:65536]).decode("ascii")
    except UnicodeDecodeError:
        return False
    directives = []
    in_block_comment = False
    for raw in text.splitlines():
        line = raw.strip()
        if in_block_comment:
            if "*/" not in line:
                continue
            line = line.split("*/", 1)[1].strip()
            in_block_comment = False
        if line.startswith("/*"):
            in_block_comment = "*/" not in line[2:]
            continue
        if not line or line.startswith("//"):
            continue
        directives.append(line.split()[0])
        if len(directives) == 2:
            break
    return directives[:1] == [".version"] and ".target" in directives

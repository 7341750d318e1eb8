"""What an OffloadBinary holds: images with their kinds and strings, and the reader's error type."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum

from offload.errors import OffloadError


class ImageKind(IntEnum):
    """llvm::object::ImageKind."""

    NONE = 0
    OBJECT = 1
    BITCODE = 2
    CUBIN = 3
    FATBINARY = 4
    PTX = 5
    SPIRV = 6


# llvm::object::getImageKindName: the file extension LLVM's tools give each image kind.
IMAGE_KIND_EXTENSION = {
    ImageKind.NONE: "bin",
    ImageKind.OBJECT: "o",
    ImageKind.BITCODE: "bc",
    ImageKind.CUBIN: "cubin",
    ImageKind.FATBINARY: "fatbin",
    ImageKind.PTX: "s",
    ImageKind.SPIRV: "spv",
}


def image_kind_name(value: int) -> str:
    try:
        return ImageKind(value).name.lower()
    except ValueError:
        return "unknown"


@dataclass(frozen=True)
class OffloadImage:
    image_kind: int
    offload_kind: int
    flags: int
    strings: dict[str, str] = field(default_factory=dict)  # insertion-ordered: "triple", "arch", extras
    data: bytes = b""

    @property
    def triple(self) -> str:
        return self.strings.get("triple", "")

    @property
    def arch(self) -> str:
        return self.strings.get("arch", "")


class OffloadBinaryError(OffloadError):
    """Malformed or unsupported OffloadBinary content: the only error the reader raises."""

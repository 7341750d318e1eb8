"""OffloadBinary (the `.llvm.offloading` payload of LLVM's offload driver): writer and reader.

Modeled on llvm/lib/Object/OffloadBinary.cpp: the layout is declared once (layout.py); writer.py and
reader.py mirror each other. containers.py finds blobs in bitcode, IR and ELF objects.
"""

from offload.packager.containers import read_offload_images
from offload.packager.detect import detect_image_kind
from offload.packager.model import IMAGE_KIND_EXTENSION, ImageKind, OffloadBinaryError, OffloadImage, image_kind_name
from offload.packager.reader import read_binary
from offload.packager.writer import write_binary, write_binary_v2

__all__ = [
    "IMAGE_KIND_EXTENSION",
    "ImageKind",
    "OffloadBinaryError",
    "OffloadImage",
    "detect_image_kind",
    "image_kind_name",
    "read_binary",
    "read_offload_images",
    "write_binary",
    "write_binary_v2",
]

"""The CUDA C++ and HIP objects among an emulated link's inputs: `.cu`/`.hip` files compiled by clang's
offload driver (`-x cuda -fgpu-rdc --offload-new-driver -foffload-lto -c`), whose `.llvm.offloading`
section holds the device code as LLVM bitcode (OffloadBinary images, read by offload.packager) and whose
host code launches through the offload entries, as a bundle's does. Their bitcode is emulated beside the
bundles' (offload/toolchain/emulate.py). Device code in any other form cannot be retargeted: nvcc's
fatbinary, clang's without -fgpu-rdc (a fatbinary registered at start-up) or without -foffload-lto (a
cubin, an AMDGPU object) is refused in one line naming the object and the flags that fix it."""

from __future__ import annotations

import os
from dataclasses import dataclass

from offload.errors import OffloadError
from offload.formats.vendors import CUDA, HIP, VENDORS, vendor_of_triple
from offload.options.link import link_option

EMULATE = link_option("emulate", True)  # how its errors name it: --emulate, or emulate=True in Python

# Sections of device code registered at start-up (nvcc; clang without -fgpu-rdc or --offload-new-driver),
# and the vendor whose source language fixes it: each vendor's fatbinary section, nvcc's relocatable one,
# the segment descriptors.
FATBINARY_SECTIONS = {
    **{vendor.device_section: vendor.offload_kind for vendor in VENDORS.values()},
    "__nv_relfatbin": CUDA.offload_kind,
    ".nvFatBinSegment": CUDA.offload_kind,
    ".hipFatBinSegment": HIP.offload_kind,
}
# Offload entries of clang 19/20 (docs/targets-and-shipping.md): the emulation runtime reads clang 22's.
OLD_ENTRY_SECTIONS = {f"{kind}_offloading_entries": kind for kind in VENDORS}
OFFLOAD_COMPILE_FLAGS = "-fgpu-rdc --offload-new-driver -foffload-lto"


@dataclass(frozen=True)
class DeviceObject:
    path: str  # the link input (an object, or an archive holding such objects)
    images: tuple  # its OffloadImages of LLVM bitcode, CUDA or HIP


def _fix(language: str) -> str:
    return f"compile it with clang++-22 -x {language} {OFFLOAD_COMPILE_FLAGS} -c"


def _object_images(data: bytes, path: str) -> list:
    """The CUDA/HIP bitcode images of one ELF object; a refusal where its device code is in another form."""
    from offload.formats.elf import ElfError, read_elf
    from offload.packager import ImageKind, image_kind_name, read_offload_images

    try:
        elf = read_elf(data, path)
    except ElfError:
        return []  # not an ELF object: the linker judges it
    names = {section.name for section in elf.sections}
    fatbinary = next((name for name in FATBINARY_SECTIONS if name in names), None)
    if fatbinary:
        language = FATBINARY_SECTIONS[fatbinary]
        raise OffloadError(
            (
                f"{path}: its device code is a fatbinary ({fatbinary}: nvcc, or clang without -fgpu-rdc "
                "--offload-new-driver), which ",
                EMULATE,
                f" cannot run: {_fix(language)}",
            )
        )
    old = next((name for name in OLD_ENTRY_SECTIONS if name in names), None)
    if old:
        raise OffloadError(
            (
                f"{path}: its offload entries ({old}) are an older clang's; ",
                EMULATE,
                f" reads clang 22's: {_fix(OLD_ENTRY_SECTIONS[old])}",
            )
        )
    images = []
    for image in read_offload_images(data, path):
        vendor = vendor_of_triple(image.strings.get("triple", ""))
        if vendor is None:
            continue
        if image.image_kind != ImageKind.BITCODE:
            arch = image.strings.get("arch", "?")
            kind = image_kind_name(image.image_kind)
            raise OffloadError(
                (
                    f"{path}: its {arch} device code is native code (an image of kind {kind}), not LLVM bitcode, "
                    "which ",
                    EMULATE,
                    f" cannot run: {_fix(vendor.offload_kind)}",
                )
            )
        images.append(image)
    return images


def device_objects(files: list[str], bundle_paths: set[str]) -> list[DeviceObject]:
    """The link's input `files` other than the bundles that carry CUDA/HIP device bitcode (archives: in
    any member), in link order."""
    from offload.toolchain.cxx_inputs import ARCHIVE_MAGIC, archive_members

    found = []
    for path in files:
        if path in bundle_paths or not os.path.isfile(path):
            continue
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            continue  # clang reports it
        members = list(archive_members(data)) if data.startswith(ARCHIVE_MAGIC) else [data]
        images = [image for member in members for image in _object_images(member, path)]
        if images:
            found.append(DeviceObject(path, tuple(images)))
    return found


__all__ = ["OFFLOAD_COMPILE_FLAGS", "DeviceObject", "device_objects"]

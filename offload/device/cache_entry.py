"""One device image cache entry, the same bytes in the local folder and in the remote tier: an envelope
(offload/cache/sealed.py) whose body is the image bytes.

The header records the entry's full key, its target and what the image defines; the image bytes are the
LLVM bitcode, then, for an image packaged as native code (cubin, AMDGPU object), that code and the PTX it
was assembled from (the header gives their sizes). An entry is taken only when it is whole (the
checksum), bound to the key asked for (an entry copied or swapped from another key is a miss), for the
target asked for, and when its bytes are what the header says: LLVM bitcode that our own bounds-checked
reader (offload/packager/bitcode_ident.py) reads and that defines every kernel and global the header
lists; native code that our own ELF reader (offload/formats/elf.py) reads, for the vendor's machine,
with a symbol for every kernel; PTX that is text. Nothing here hands the bytes to LLVM."""

from __future__ import annotations

from offload.cache.sealed import seal, unseal
from offload.device.images import DeviceImage, NativeCode
from offload.formats.vendors import vendor_for
from offload.packager import ImageKind
from offload.packager.bitcode_ident import bitcode_module
from offload.packager.detect import is_bitcode

MAGIC = b"MLIR-OFFLOAD-IMAGE-3\n"


def encode(key: str, image) -> bytes:
    """The entry of a DeviceImage (with its native code, if it has some) under `key`."""
    native = image.native
    ptx = native.ptx.encode() if native is not None and native.ptx is not None else b""
    header = {
        "key": key,
        "format": "bitcode" if native is None else "native",
        "offload-kind": image.target.offload_kind,
        "arch": image.target.arch,
        "triple": image.target.triple,
        "kernels": list(image.kernels),
        "globals": list(image.globals),
        "bitcode-size": len(image.bitcode),
    }
    if native is not None:
        header.update(
            {
                "image-kind": native.image_kind,
                "native-size": len(native.data),
                "ptx-size": len(ptx) if native.ptx is not None else None,
            }
        )
    return seal(MAGIC, header, image.bitcode + (native.data + ptx if native is not None else b""))


def decode(data: bytes, key: str, target, native: bool = False):
    """The DeviceImage an entry holds for `key` and `target`, or None: not an entry, damaged, written
    under another key or for another target, without native code when `native` (or with it when not),
    or bytes that are not what its header says."""
    parts = _parts(data)
    if parts is None:
        return None
    header, body = parts
    if header.get("key") != key or header.get("format") != ("native" if native else "bitcode"):
        return None
    if (header.get("offload-kind"), header.get("arch"), header.get("triple")) != (
        target.offload_kind,
        target.arch,
        target.triple,
    ):
        return None
    kernels, globals_ = header.get("kernels"), header.get("globals")
    if not _names(kernels) or not _names(globals_):
        return None
    sizes = [header.get("bitcode-size"), *((header.get("native-size"), header.get("ptx-size") or 0) if native else ())]
    if not all(_size(n) for n in sizes) or sum(sizes) != len(body):
        return None
    bitcode = body[: sizes[0]]
    if not is_bitcode_defining(bitcode, kernels, globals_):
        return None
    code = None
    if native:
        code = _native_code(header, body[sizes[0] : sizes[0] + sizes[1]], body[sizes[0] + sizes[1] :], target, kernels)
        if code is None:
            return None
    return DeviceImage(target=target, bitcode=bitcode, kernels=kernels, globals=globals_, native=code, cached=True)


def _size(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _native_code(header: dict, data: bytes, ptx: bytes, target, kernels: list[str]):
    """The NativeCode of an entry when `data` is an ELF file of the vendor's native image kind and machine
    with a symbol for every kernel, and `ptx` is text; else None."""
    from offload.formats.elf import ElfError, read_elf

    vendor = vendor_for(target.offload_kind)
    if header.get("image-kind") != int(ImageKind[vendor.native_image]):
        return None
    try:
        elf = read_elf(data, "cached native image")
    except ElfError:
        return None
    symbols = {symbol.name for symbol in elf.symbols}
    if elf.machine != vendor.native_elf_machine or not all(kernel in symbols for kernel in kernels):
        return None
    if header.get("ptx-size") is None:
        return NativeCode(header["image-kind"], data, None) if not ptx else None
    try:
        text = ptx.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return NativeCode(header["image-kind"], data, text)


def entry_key(data: bytes) -> str | None:
    """The key a well-formed entry records (for listing and eviction), else None."""
    parts = _parts(data)
    key = parts[0].get("key") if parts else None
    return key if isinstance(key, str) else None


def _parts(data: bytes):
    """(header dict, image bytes) of a whole entry, else None."""
    opened = unseal(data, MAGIC)
    return None if opened is None else (opened[0], bytes(opened[1]))


def _names(value) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def is_bitcode_defining(data: bytes, kernels: list[str], globals_: list[str]) -> bool:
    """Whether `data` is LLVM bitcode (its magic, then a module our own reader reads whole enough to list
    its functions and globals) that defines every kernel and global named."""
    if not is_bitcode(data):
        return False
    module = bitcode_module(data)
    if module is None:
        return False
    defined = {f.name for f in module.functions if not f.is_declaration}
    variables = {g.name for g in module.globals}
    return all(k in defined for k in kernels) and all(g in variables for g in globals_)

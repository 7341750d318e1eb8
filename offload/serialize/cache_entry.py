"""One device image cache entry, the same bytes in the local folder and in the remote tier:

    MAGIC, sha256(payload), payload = header size (4 bytes, little-endian), header (JSON), image bytes

The header records the entry's full key, its target and what the image defines. An entry is taken only
when it is whole (the checksum), bound to the key asked for (an entry copied or swapped from another key
is a miss), for the target asked for, and when its image is what the header says: LLVM bitcode that our
own bounds-checked reader (offload/packager/bitcode_ident.py) reads and that defines every kernel and
global the header lists. Nothing here hands the bytes to LLVM."""

from __future__ import annotations

import hashlib
import json

MAGIC = b"MLIR-OFFLOAD-IMAGE-2\n"
_DIGEST = 32
_HEADER_SIZE = 4
# A header holds the key, the target and symbol names: far below this.
MAX_HEADER_BYTES = 16 << 20


def encode(key: str, image) -> bytes:
    """The entry of a DeviceImage under `key`."""
    header = json.dumps({"key": key, "format": "bitcode", "offload-kind": image.target.offload_kind,
                         "arch": image.target.arch, "triple": image.target.triple,
                         "kernels": list(image.kernels), "globals": list(image.globals)},
                        sort_keys=True).encode()
    payload = len(header).to_bytes(_HEADER_SIZE, "little") + header + image.bitcode
    return MAGIC + hashlib.sha256(payload).digest() + payload


def decode(data: bytes, key: str, target):
    """The DeviceImage an entry holds for `key` and `target`, or None: not an entry, damaged, written
    under another key or for another target, or an image that is not the bitcode its header says."""
    from offload.serialize.pipeline import DeviceImage

    parts = _parts(data)
    if parts is None:
        return None
    header, image = parts
    if header.get("key") != key or header.get("format") != "bitcode":
        return None
    if (header.get("offload-kind"), header.get("arch"), header.get("triple")) != \
            (target.offload_kind, target.arch, target.triple):
        return None
    kernels, globals_ = header.get("kernels"), header.get("globals")
    if not _names(kernels) or not _names(globals_):
        return None
    if not is_bitcode_defining(image, kernels, globals_):
        return None
    return DeviceImage(target=target, bitcode=image, kernels=kernels, globals=globals_, cached=True)


def entry_key(data: bytes) -> str | None:
    """The key a well-formed entry records (for listing and eviction), else None."""
    parts = _parts(data)
    key = parts[0].get("key") if parts else None
    return key if isinstance(key, str) else None


def _parts(data: bytes):
    """(header dict, image bytes) of a whole entry, else None."""
    start = len(MAGIC) + _DIGEST
    if len(data) < start + _HEADER_SIZE or not data.startswith(MAGIC):
        return None
    payload = memoryview(data)[start:]
    if hashlib.sha256(payload).digest() != data[len(MAGIC):start]:
        return None
    size = int.from_bytes(payload[:_HEADER_SIZE], "little")
    if size > min(MAX_HEADER_BYTES, len(payload) - _HEADER_SIZE):
        return None
    try:
        header = json.loads(bytes(payload[_HEADER_SIZE:_HEADER_SIZE + size]))
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(header, dict):
        return None
    return header, bytes(payload[_HEADER_SIZE + size:])


def _names(value) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def is_bitcode_defining(data: bytes, kernels: list[str], globals_: list[str]) -> bool:
    """Whether `data` is LLVM bitcode (its magic, then a module our own reader reads whole enough to list
    its functions and globals) that defines every kernel and global named."""
    from offload.packager.bitcode_ident import bitcode_module
    from offload.serialize.libraries import is_bitcode

    if not is_bitcode(data):
        return False
    module = bitcode_module(data)
    if module is None:
        return False
    defined = {f.name for f in module.functions if not f.is_declaration}
    variables = {g.name for g in module.globals}
    return all(k in defined for k in kernels) and all(g in variables for g in globals_)

"""OffloadBinary reader for raw blobs (v1, v2 and uncompressed v3, single or concatenated).

Safe on hostile input: every offset and size is checked against the blob before use, nothing is
allocated beyond slices of the input, and every loop is bounded by the input size. Only
OffloadBinaryError escapes.
"""

from __future__ import annotations

from offload.packager.layout import ENTRY, HEADER, MAGIC, NEWEST_VERSION, align_to, header_struct, string_entry_struct
from offload.packager.model import OffloadBinaryError, OffloadImage


def read_binary(data: bytes) -> list[OffloadImage]:
    """Every image of the blob(s) in `data`, in order."""
    data = bytes(data)
    if not data:
        raise OffloadBinaryError("empty offload binary")
    images: list[OffloadImage] = []
    offset = 0
    while offset < len(data):  # each blob is at least a header long: bounded by len(data) / 32
        blob_size = _blob_size(data, offset)
        images.extend(_read_blob(data[offset : offset + blob_size], offset))
        offset = align_to(offset + blob_size)
    return images


def _blob_size(data: bytes, at: int) -> int:
    if len(data) - at < HEADER.size:
        raise OffloadBinaryError(f"truncated offload binary header at offset {at}")
    magic, version, size, _, _ = HEADER.unpack_from(data, at)
    if magic != MAGIC:
        raise OffloadBinaryError(f"bad offload binary magic at offset {at}: {magic.hex()} (expected {MAGIC.hex()})")
    if not 1 <= version <= NEWEST_VERSION:
        raise OffloadBinaryError(f"unsupported offload binary version {version} at offset {at}")
    if size < header_struct(version).size or size > len(data) - at:
        raise OffloadBinaryError(f"offload binary at offset {at} claims size {size}, but {len(data) - at} bytes remain")
    return size


def _read_blob(blob: bytes, at: int) -> list[OffloadImage]:
    header = header_struct(HEADER.unpack_from(blob, 0)[1])
    fields = header.unpack_from(blob, 0)
    version, entries_offset, count_or_size = fields[1], fields[3], fields[4]
    if version >= 3 and fields[5] != 0:
        raise OffloadBinaryError(
            f"offload binary at offset {at} is compressed (version {version}), which is not supported"
        )
    count = 1 if version == 1 else count_or_size
    if count * ENTRY.size > len(blob) or entries_offset > len(blob) - count * ENTRY.size:
        raise OffloadBinaryError(
            f"offload binary at offset {at}: {count} entries at offset "
            f"{entries_offset} exceed the blob's {len(blob)} bytes"
        )
    string_entry = string_entry_struct(version)
    images = []
    for index in range(count):
        kind, offload_kind, flags, string_offset, num_strings, image_offset, image_size = ENTRY.unpack_from(
            blob, entries_offset + index * ENTRY.size
        )
        where = f"offload binary at offset {at}, entry {index}"
        if image_offset > len(blob) or image_size > len(blob) - image_offset:
            raise OffloadBinaryError(
                f"{where}: image [{image_offset}, +{image_size}) exceeds the blob's {len(blob)} bytes"
            )
        if string_offset > len(blob) or num_strings * string_entry.size > len(blob) - string_offset:
            raise OffloadBinaryError(
                f"{where}: {num_strings} strings at offset {string_offset} exceed the blob's {len(blob)} bytes"
            )
        strings: dict[str, str] = {}
        for i in range(num_strings):
            fields = string_entry.unpack_from(blob, string_offset + i * string_entry.size)
            key = _c_string(blob, fields[0], where)
            value = _c_string(blob, fields[1], where) if version == 1 else _sized(blob, fields[1], fields[2], where)
            strings[key] = value  # a repeated key keeps its first position, last value (llvm::MapVector)
        images.append(OffloadImage(kind, offload_kind, flags, strings, blob[image_offset : image_offset + image_size]))
    return images


def _c_string(blob: bytes, offset: int, where: str) -> str:
    end = blob.find(b"\0", offset) if offset < len(blob) else -1
    if end < 0:
        raise OffloadBinaryError(f"{where}: string at offset {offset} is not NUL-terminated inside the blob")
    return blob[offset:end].decode("utf-8", "surrogateescape")


def _sized(blob: bytes, offset: int, size: int, where: str) -> str:
    if offset > len(blob) or size > len(blob) - offset:
        raise OffloadBinaryError(f"{where}: string [{offset}, +{size}) exceeds the blob's {len(blob)} bytes")
    return blob[offset : offset + size].decode("utf-8", "surrogateescape")

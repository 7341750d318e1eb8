"""OffloadBinary writer, mirroring llvm::object::OffloadBinary::write (LLVM 19-22 write version 1)."""

from __future__ import annotations

from offload.packager.layout import ALIGNMENT, ENTRY, HEADER, MAGIC, STRING_ENTRY_V1, STRING_ENTRY_V2, align_to
from offload.packager.model import OffloadBinaryError, OffloadImage
from offload.packager.strtab import build_string_table


def encode_string(s: str, what: str) -> bytes:
    """Strings are UTF-8; bytes the reader could not decode come back through surrogateescape."""
    try:
        data = s.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        raise OffloadBinaryError(f"{what} {s!r} cannot be encoded as UTF-8") from None
    if b"\0" in data:
        raise OffloadBinaryError(f"{what} {s!r} contains a NUL byte, which the format cannot store")
    return data


def _encoded_strings(image: OffloadImage) -> list[tuple[bytes, bytes]]:
    return [(encode_string(k, "string key"), encode_string(v, f"value of '{k}'")) for k, v in image.strings.items()]


def _check_fields(image: OffloadImage) -> None:
    for name, value, bits in (
        ("image kind", image.image_kind, 16),
        ("offload kind", image.offload_kind, 16),
        ("flags", image.flags, 32),
    ):
        if not 0 <= int(value) < (1 << bits):
            raise OffloadBinaryError(f"{name} {value} does not fit in {bits} bits")


def write_blob_v1(image: OffloadImage) -> bytes:
    """One version-1 blob holding one image, byte for byte as LLVM 19-22 write it."""
    _check_fields(image)
    strings = _encoded_strings(image)
    table, offsets = build_string_table([s for pair in strings for s in pair])
    string_map_offset = HEADER.size + ENTRY.size
    table_offset = string_map_offset + STRING_ENTRY_V1.size * len(strings)
    image_offset = align_to(table_offset + len(table))
    size = align_to(image_offset + len(image.data))

    out = bytearray(HEADER.pack(MAGIC, 1, size, HEADER.size, ENTRY.size))
    out += ENTRY.pack(
        int(image.image_kind),
        int(image.offload_kind),
        int(image.flags),
        string_map_offset,
        len(strings),
        image_offset,
        len(image.data),
    )
    for key, value in strings:
        out += STRING_ENTRY_V1.pack(table_offset + offsets[key], table_offset + offsets[value])
    out += table
    out += bytes(image_offset - len(out))
    out += image.data
    out += bytes(size - len(out))
    return bytes(out)


def write_binary(images: list[OffloadImage]) -> bytes:
    """Concatenated 8-aligned version-1 blobs, one per image: what llvm-offload-binary writes."""
    if not images:
        raise OffloadBinaryError("an offload binary needs at least one image")
    return b"".join(write_blob_v1(image) for image in images)


def write_binary_v2(images: list[OffloadImage]) -> bytes:
    """One version-2 blob holding all images (LLVM after 22; read by us, written only for tests)."""
    if not images:
        raise OffloadBinaryError("an offload binary needs at least one image")
    for image in images:
        _check_fields(image)
    all_strings = [_encoded_strings(image) for image in images]
    table, offsets = build_string_table([s for strings in all_strings for pair in strings for s in pair])
    entries_size = ENTRY.size * len(images)
    string_map_offset = HEADER.size + entries_size
    table_offset = string_map_offset + STRING_ENTRY_V2.size * sum(len(s) for s in all_strings)
    data_offset = align_to(table_offset + len(table))
    size = align_to(data_offset + sum(len(image.data) for image in images))

    out = bytearray(HEADER.pack(MAGIC, 2, size, HEADER.size, len(images)))
    image_offset = data_offset
    for image, strings in zip(images, all_strings, strict=True):
        out += ENTRY.pack(
            int(image.image_kind),
            int(image.offload_kind),
            int(image.flags),
            string_map_offset,
            len(strings),
            image_offset,
            len(image.data),
        )
        string_map_offset += STRING_ENTRY_V2.size * len(strings)
        image_offset += len(image.data)
    for strings in all_strings:
        for key, value in strings:
            out += STRING_ENTRY_V2.pack(table_offset + offsets[key], table_offset + offsets[value], len(value))
    out += table
    out += bytes(data_offset - len(out))
    for image in images:
        out += image.data
    out += bytes(size - len(out))
    assert len(out) == size and size % ALIGNMENT == 0
    return bytes(out)

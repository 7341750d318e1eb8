"""One member of a .tar.gz as `mlir-offload ship` writes it (USTAR: regular files and folders only), read
in bounded chunks: a header's size is checked before anything is read, every member type a shipped archive
never holds (links, devices, pax or GNU headers) is refused, and at most MAX_ARCHIVE_BYTES are unpacked."""

from __future__ import annotations

import gzip
import zlib

from offload.errors import OffloadError

BLOCK = 512
MAX_ARCHIVE_BYTES = 256 << 20  # unpacked: a shipped bundle is a few MiB; a gzip bomb stops here
_CHUNK = 1 << 16
_TYPE_NAMES = {
    b"1": "a hard link",
    b"2": "a symbolic link",
    b"3": "a character device",
    b"4": "a block device",
    b"6": "a FIFO",
    b"7": "a contiguous file",
    b"x": "a pax header",
    b"g": "a pax global header",
    b"L": "a GNU long name",
    b"K": "a GNU long link",
}


def read_member(path: str, wanted, max_size: int) -> bytes | None:
    """The data of the first regular-file member whose name satisfies `wanted` (None when there is none),
    at most `max_size` bytes."""
    try:
        with open(path, "rb") as raw, gzip.GzipFile(fileobj=raw, mode="rb") as stream:
            return _scan(stream, path, wanted, max_size)
    except FileNotFoundError:
        raise OffloadError(f"no such file: '{path}'") from None
    except IsADirectoryError:
        raise OffloadError(f"'{path}' is a directory, not a file") from None
    except (OSError, EOFError, zlib.error) as e:  # gzip.BadGzipFile is an OSError
        raise OffloadError(f"{path}: damaged archive ({e})") from None


def _scan(stream, path: str, wanted, max_size: int) -> bytes | None:
    unpacked = 0
    while True:
        header = stream.read(BLOCK)
        unpacked += len(header)
        if not header or not any(header):
            return None  # the end-of-archive blocks (or a plain end)
        if len(header) < BLOCK:
            raise OffloadError(f"{path}: damaged archive (truncated member header)")
        name = (
            _text(header[345:500]) + "/" + _text(header[:100])
            if header[257:262] == b"ustar" and header[345]
            else _text(header[:100])
        )
        type_flag = header[156:157]
        size = _octal(header[124:136], path, name)
        if type_flag in _TYPE_NAMES:
            raise OffloadError(
                f"{path}: member {_shown(name)} is {_TYPE_NAMES[type_flag]}, which an archive made "
                "by mlir-offload ship never holds"
            )
        if type_flag not in (b"0", b"\0", b"5"):
            raise OffloadError(f"{path}: member {_shown(name)} has unknown type {type_flag!r}")
        if unpacked + size > MAX_ARCHIVE_BYTES:
            raise OffloadError(
                f"{path}: member {_shown(name)} claims {size} bytes, more than an archive made by "
                f"mlir-offload ship holds ({MAX_ARCHIVE_BYTES >> 20} MiB unpacked)"
            )
        padded = (size + BLOCK - 1) // BLOCK * BLOCK
        if type_flag != b"5" and wanted(name):
            if size > max_size:
                raise OffloadError(f"{path}: member {_shown(name)} claims {size} bytes (at most {max_size})")
            data = stream.read(size)
            if len(data) < size:
                raise OffloadError(f"{path}: damaged archive (member {_shown(name)} is truncated)")
            return data
        while padded:  # skipped in chunks: memory stays bounded whatever the member's size
            chunk = stream.read(min(padded, _CHUNK))
            if not chunk:
                raise OffloadError(f"{path}: damaged archive (member {_shown(name)} is truncated)")
            padded -= len(chunk)
        unpacked += size


def _text(field: bytes) -> str:
    return field.split(b"\0", 1)[0].decode("utf-8", "replace")


def _octal(field: bytes, path: str, name: str) -> int:
    digits = field.replace(b"\0", b" ").strip()
    if not digits or not all(48 <= c <= 55 for c in digits):  # base-256 sizes are for members > 8 GiB
        raise OffloadError(f"{path}: member {_shown(name)} has a bad size field {field!r}")
    return int(digits, 8)


def _shown(name: str) -> str:
    return repr(name) if not name.isprintable() else f"'{name}'"

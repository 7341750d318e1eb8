"""The envelope of a cache entry, shared by the device image cache (offload/device/cache_entry.py) and the whole-compile
cache (compiles.py), the same bytes in the local folder and in the remote tier:

    MAGIC, sha256(payload), payload = header size (4 bytes, little-endian), header (JSON), body

`unseal` takes only a whole envelope of the kind asked for (its magic and checksum) with a JSON object
for a header; what the header must say is each cache's own check."""

from __future__ import annotations

import hashlib
import json

_DIGEST = 32
_HEADER_SIZE = 4
# A header holds a key, a target, names and sizes: far below this.
MAX_HEADER_BYTES = 16 << 20


def seal(magic: bytes, header: dict, body: bytes) -> bytes:
    """The envelope of `header` (JSON, keys sorted: the same header gives the same bytes) and `body`."""
    encoded = json.dumps(header, sort_keys=True).encode()
    payload = len(encoded).to_bytes(_HEADER_SIZE, "little") + encoded + body
    return magic + hashlib.sha256(payload).digest() + payload


def unseal(data: bytes, magic: bytes) -> tuple[dict, memoryview] | None:
    """(header, body) of a whole `magic` envelope, else None."""
    start = len(magic) + _DIGEST
    if len(data) < start + _HEADER_SIZE or not data.startswith(magic):
        return None
    payload = memoryview(data)[start:]
    if hashlib.sha256(payload).digest() != data[len(magic) : start]:
        return None
    size = int.from_bytes(payload[:_HEADER_SIZE], "little")
    if size > min(MAX_HEADER_BYTES, len(payload) - _HEADER_SIZE):
        return None
    try:
        header = json.loads(bytes(payload[_HEADER_SIZE : _HEADER_SIZE + size]))
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(header, dict):
        return None
    return header, payload[_HEADER_SIZE + size :]

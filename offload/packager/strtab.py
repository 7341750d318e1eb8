"""LLVM's ELF-style StringTableBuilder (finalize(): suffix-merged), as OffloadBinary::write uses it."""

from __future__ import annotations


def build_string_table(strings: list[bytes]) -> tuple[bytes, dict[bytes, int]]:
    """The table bytes and each string's offset: leading NUL, strings sorted by their reversed bytes
    (descending, as LLVM's multikey sort leaves them) so that a string which is the tail of the
    previous one is stored once, inside it."""
    offsets: dict[bytes, int] = {b"": 0}
    table = bytearray(b"\0")
    previous = b""
    for s in sorted(set(strings) - {b""}, key=lambda s: s[::-1], reverse=True):
        if previous.endswith(s):
            offsets[s] = len(table) - len(s) - 1
            continue
        offsets[s] = len(table)
        table += s + b"\0"
        previous = s
    return bytes(table), offsets

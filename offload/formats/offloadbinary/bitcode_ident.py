"""The producer of LLVM bitcode ("LLVM22.1.8"), from its IDENTIFICATION block.

llvmlite has no API for it; the block is the first in the stream and tiny, so a minimal bitstream
reader (abbreviations defined inside the block, fixed/VBR/array/char6/blob operands) reads it.
Every read is bounds-checked; malformed input gives None.
"""

from __future__ import annotations

_IDENTIFICATION_BLOCK_ID = 13
_STRING_CODE = 1
_CHAR6 = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._"
_END_BLOCK, _ENTER_SUBBLOCK, _DEFINE_ABBREV, _UNABBREV_RECORD = 0, 1, 2, 3


class _Truncated(Exception):
    pass


class _Bits:
    def __init__(self, data: bytes):
        self.data = data
        self.pos = 0

    def read(self, width: int) -> int:
        if width > 64 or self.pos + width > 8 * len(self.data):
            raise _Truncated
        value = 0
        for i in range(width):
            bit = self.pos + i
            value |= ((self.data[bit >> 3] >> (bit & 7)) & 1) << i
        self.pos += width
        return value

    def vbr(self, width: int) -> int:
        if width < 2:
            raise _Truncated
        value, shift = 0, 0
        while True:
            piece = self.read(width)
            value |= (piece & ((1 << (width - 1)) - 1)) << shift
            if not piece >> (width - 1):
                return value
            shift += width - 1
            if shift > 64:
                raise _Truncated

    def align32(self) -> None:
        self.pos = (self.pos + 31) & ~31

    def remaining(self) -> int:
        return 8 * len(self.data) - self.pos


def bitcode_producer(data: bytes) -> str | None:
    data = bytes(data)
    if data[:4] == b"\xde\xc0\x17\x0b" and len(data) >= 20:  # wrapper: magic, version, offset, size, cpu
        offset = int.from_bytes(data[8:12], "little")
        size = int.from_bytes(data[12:16], "little")
        data = data[offset:offset + size]
    if data[:4] != b"BC\xc0\xde":
        return None
    try:
        return _read_identification(_Bits(data[4:]))
    except _Truncated:
        return None


def _read_identification(bits: _Bits) -> str | None:
    if bits.read(2) != _ENTER_SUBBLOCK or bits.vbr(8) != _IDENTIFICATION_BLOCK_ID:
        return None
    width = bits.vbr(4)
    bits.align32()
    bits.read(32)  # block length in words
    abbrevs: list[list[tuple]] = []
    while bits.remaining() > 0:
        code = bits.read(width)
        if code == _END_BLOCK:
            return None
        if code == _DEFINE_ABBREV:
            abbrevs.append(_define_abbrev(bits))
        elif code == _UNABBREV_RECORD:
            record = bits.vbr(6)
            count = bits.vbr(6)
            if count > bits.remaining():
                return None
            ops = [bits.vbr(6) for _ in range(count)]
            if record == _STRING_CODE:
                return _text(ops)
        elif code >= 4 and code - 4 < len(abbrevs):
            ops = _read_abbreviated(bits, abbrevs[code - 4])
            if ops and ops[0] == _STRING_CODE:
                return _text(ops[1:])
        else:
            return None
    return None


def _define_abbrev(bits: _Bits) -> list[tuple]:
    count = bits.vbr(5)
    if count > bits.remaining():
        raise _Truncated
    ops = []
    for _ in range(count):
        if bits.read(1):
            ops.append(("literal", bits.vbr(8)))
            continue
        encoding = bits.read(3)
        if encoding in (1, 2):
            ops.append(("fixed" if encoding == 1 else "vbr", bits.vbr(5)))
        elif encoding in (3, 4, 5):
            ops.append(({3: "array", 4: "char6", 5: "blob"}[encoding], 0))
        else:
            raise _Truncated
    return ops


def _scalar(bits: _Bits, op: tuple) -> int:
    kind, value = op
    if kind == "literal":
        return value
    if kind == "fixed":
        return bits.read(value)
    if kind == "vbr":
        return bits.vbr(value)
    if kind == "char6":
        return ord(_CHAR6[bits.read(6)])
    raise _Truncated


def _read_abbreviated(bits: _Bits, abbrev: list[tuple]) -> list[int]:
    values: list[int] = []
    i = 0
    while i < len(abbrev):
        kind = abbrev[i][0]
        if kind == "array":
            if i + 1 >= len(abbrev):
                raise _Truncated
            count = bits.vbr(6)
            if count > bits.remaining():
                raise _Truncated
            values.extend(_scalar(bits, abbrev[i + 1]) for _ in range(count))
            i += 2
        elif kind == "blob":
            count = bits.vbr(6)
            bits.align32()
            if 8 * count > bits.remaining():
                raise _Truncated
            values.extend(bits.read(8) for _ in range(count))
            bits.align32()
            i += 1
        else:
            values.append(_scalar(bits, abbrev[i]))
            i += 1
    return values


def _text(values: list[int]) -> str | None:
    if any(not 0 <= v < 128 for v in values):
        return None
    return "".join(chr(v) for v in values)

"""What the target side needs from LLVM bitcode, read without LLVM: the producer ("LLVM22.1.8", from the
IDENTIFICATION block) and the module's global variables (name, section, byte-array initializer), which
hold @llvm.embedded.object (.llvm.offloading) and the offload entries. The build side reads the functions
(name, declaration or not) and the data layout of the images its LLVM tools write the same way.

A minimal bitstream reader (BLOCKINFO and in-block abbreviations, fixed/VBR/array/char6/blob operands;
blocks it does not need are skipped by their length). Every read is bounds-checked; malformed input
gives None.
"""

from __future__ import annotations

from dataclasses import dataclass

from offload.packager.detect import BITCODE_MAGIC, BITCODE_WRAPPER_MAGIC

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
        start, shift = self.pos >> 3, self.pos & 7
        # The bytes that hold the field, as one little-endian integer (a loop over its bits costs 10x more).
        value = int.from_bytes(self.data[start : (self.pos + width + 7) >> 3], "little") >> shift
        self.pos += width
        return value & ((1 << width) - 1)

    def vbr(self, width: int) -> int:
        if width < 2 or width > 64:
            raise _Truncated
        # read() inlined: a module's function records are thousands of these.
        data, pos, end = self.data, self.pos, 8 * len(self.data)
        field, payload, more = (1 << width) - 1, (1 << (width - 1)) - 1, 1 << (width - 1)
        value, shift = 0, 0
        while True:
            if pos + width > end:
                raise _Truncated
            piece = (int.from_bytes(data[pos >> 3 : (pos + width + 7) >> 3], "little") >> (pos & 7)) & field
            pos += width
            value |= (piece & payload) << shift
            if not piece & more:
                self.pos = pos
                return value
            shift += width - 1
            if shift > 64:
                raise _Truncated

    def read_bytes(self, count: int) -> bytes:
        """`count` fixed(8) values at once (array payloads and blobs can be megabytes)."""
        if count < 0 or self.pos + 8 * count > 8 * len(self.data):
            raise _Truncated
        start, shift = self.pos >> 3, self.pos & 7
        if shift == 0:
            chunk = self.data[start : start + count]
        else:
            value = int.from_bytes(self.data[start : start + count + 1], "little") >> shift
            chunk = (value & ((1 << (8 * count)) - 1)).to_bytes(count, "little")
        self.pos += 8 * count
        return chunk

    def align32(self) -> None:
        self.pos = (self.pos + 31) & ~31

    def remaining(self) -> int:
        return 8 * len(self.data) - self.pos


def _stream(data: bytes) -> bytes | None:
    """The bitstream after the magic, unwrapped from the bitcode wrapper header if there is one."""
    data = bytes(data)
    if data[:4] == BITCODE_WRAPPER_MAGIC and len(data) >= 20:  # wrapper: magic, version, offset, size, cpu
        offset = int.from_bytes(data[8:12], "little")
        size = int.from_bytes(data[12:16], "little")
        data = data[offset : offset + size]
    return data[4:] if data[:4] == BITCODE_MAGIC else None


def bitcode_producer(data: bytes) -> str | None:
    stream = _stream(data)
    if stream is None:
        return None
    try:
        return _read_identification(_Bits(stream))
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
            if abbrev[i + 1] == ("fixed", 8):
                values.extend(bits.read_bytes(count))
            else:
                values.extend(_scalar(bits, abbrev[i + 1]) for _ in range(count))
            i += 2
        elif kind == "blob":
            count = bits.vbr(6)
            bits.align32()
            values.extend(bits.read_bytes(count))
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


# ---- the module's global variables ----------------------------------------------------------------

_BLOCKINFO_BLOCK_ID, _MODULE_BLOCK_ID, _CONSTANTS_BLOCK_ID, _STRTAB_BLOCK_ID = 0, 8, 11, 23
_SETBID = 1  # BLOCKINFO: the block the following abbreviations are for
_MODULE_VERSION, _MODULE_TRIPLE, _MODULE_DATALAYOUT, _MODULE_SECTIONNAME, _MODULE_GLOBALVAR, _MODULE_FUNCTION = (
    1,
    2,
    3,
    5,
    7,
    8,
)
_MODULE_ALIAS_OLD, _MODULE_ALIAS, _MODULE_IFUNC = 9, 14, 15
_CST_SETTYPE, _CST_STRING, _CST_CSTRING, _CST_DATA = 1, 8, 9, 22
_STRTAB_BLOB = 1


@dataclass(frozen=True)
class BitcodeGlobal:
    name: str
    section: str  # "" when none
    initializer: bytes | None  # the bytes of a byte-array initializer; None for any other (or none)


def _block_header(bits: _Bits) -> tuple[int, int, int]:
    """After ENTER_SUBBLOCK: (block id, abbreviation width, bit position of the block's end)."""
    block_id, width = bits.vbr(8), bits.vbr(4)
    bits.align32()
    words = bits.read(32)
    end = bits.pos + 32 * words
    if end > 8 * len(bits.data) or width < 1:
        raise _Truncated
    return block_id, width, end


class _Block:
    """Records of one block: (code, operands) in order; sub-blocks are handed to `enter(block_id, bits)`,
    which reads the sub-block (through _Block) or returns False to skip it by its length."""

    def __init__(self, bits: _Bits, width: int, block_id: int, blockinfo: dict[int, list]):
        self.bits, self.width, self.block_id, self.blockinfo = bits, width, block_id, blockinfo
        self.abbrevs = list(blockinfo.get(block_id, []))

    def records(self, enter=lambda block_id, bits: False):
        bits, current = self.bits, None
        while True:
            code = bits.read(self.width)
            if code == _END_BLOCK:
                bits.align32()
                return
            if code == _ENTER_SUBBLOCK:
                block_id, width, end = _block_header(bits)
                if block_id == _BLOCKINFO_BLOCK_ID:
                    for _ in _Block(bits, width, block_id, self.blockinfo).records():
                        pass
                elif not enter(block_id, _Block(bits, width, block_id, self.blockinfo)):
                    bits.pos = end
                continue
            if code == _DEFINE_ABBREV:
                abbrev = _define_abbrev(bits)
                if self.block_id == _BLOCKINFO_BLOCK_ID:
                    if current is None:
                        raise _Truncated
                    self.blockinfo.setdefault(current, []).append(abbrev)
                else:
                    self.abbrevs.append(abbrev)
                continue
            if code == _UNABBREV_RECORD:
                record, count = bits.vbr(6), bits.vbr(6)
                if count > bits.remaining():
                    raise _Truncated
                ops = [bits.vbr(6) for _ in range(count)]
            elif 4 <= code < 4 + len(self.abbrevs):
                values = _read_abbreviated(bits, self.abbrevs[code - 4])
                if not values:
                    raise _Truncated
                record, ops = values[0], values[1:]
            else:
                raise _Truncated
            if self.block_id == _BLOCKINFO_BLOCK_ID:
                if record == _SETBID and ops:
                    current = ops[0]
                continue
            yield record, ops


@dataclass(frozen=True)
class BitcodeFunction:
    name: str
    is_declaration: bool


@dataclass(frozen=True)
class BitcodeModule:
    globals: list[BitcodeGlobal]
    functions: list[BitcodeFunction]
    data_layout: str  # "" when the module has none
    triple: str = ""  # "" when the module has none


def bitcode_module(data: bytes) -> BitcodeModule | None:
    """The global variables, functions and data layout of the (first) module in bitcode `data`; None when
    it is not readable bitcode of a module whose names are in a string table (LLVM >= 5)."""
    stream = _stream(data)
    if stream is None:
        return None
    try:
        return _read_module(_Bits(stream))
    except (_Truncated, IndexError):
        return None


def bitcode_globals(data: bytes) -> list[BitcodeGlobal] | None:
    """The global variables of the (first) module in bitcode `data`, or None (see bitcode_module)."""
    module = bitcode_module(data)
    return module.globals if module else None


def _read_module(bits: _Bits) -> BitcodeModule | None:
    blockinfo: dict[int, list] = {}
    module: dict = {
        "globals": [],
        "functions": [],
        "sections": [],
        "values": 0,
        "constants": {},
        "strtab": None,
        "seen": False,
        "layout": "",
        "triple": "",
    }

    def enter_module(block_id: int, block: _Block) -> bool:
        if block_id != _CONSTANTS_BLOCK_ID:
            return False
        wanted = {initializer - 1 for _, _, initializer, _ in module["globals"] if initializer}
        value = module["values"]
        for code, ops in block.records():
            if code == _CST_SETTYPE:
                continue
            if value in wanted and code in (_CST_STRING, _CST_CSTRING, _CST_DATA):
                try:  # checked by bytes() itself: the embedded images are megabytes of operands
                    data = bytes(ops)
                except ValueError:  # an array of wider elements (an i32 or float table): no byte initializer
                    data = None
                if data is not None:
                    module["constants"][value] = data + (b"\0" if code == _CST_CSTRING else b"")
            value += 1
        return True

    def enter_top(block_id: int, block: _Block) -> bool:
        if block_id == _MODULE_BLOCK_ID and not module["seen"]:
            module["seen"] = True
            strtab_names = False
            for code, ops in block.records(enter_module):
                if code == _MODULE_VERSION and ops:
                    strtab_names = ops[0] >= 2
                elif code == _MODULE_TRIPLE:
                    module["triple"] = _text(ops)
                    if module["triple"] is None:
                        raise _Truncated
                elif code == _MODULE_DATALAYOUT:
                    module["layout"] = _text(ops)
                    if module["layout"] is None:
                        raise _Truncated
                elif code == _MODULE_SECTIONNAME:
                    if any(not 0 <= op < 256 for op in ops):  # a char6/array record of other values
                        raise _Truncated
                    module["sections"].append(bytes(ops).decode("utf-8", "replace"))
                elif code == _MODULE_GLOBALVAR:
                    if not strtab_names or len(ops) < 8:
                        raise _Truncated
                    # [strtab offset, size, type, flags, initializer id + 1, linkage, alignment, section]
                    module["globals"].append((ops[0], ops[1], ops[4], ops[7]))
                    module["values"] += 1
                elif code == _MODULE_FUNCTION:
                    if not strtab_names or len(ops) < 5:
                        raise _Truncated
                    # [strtab offset, size, type, calling convention, is declaration, linkage, ...]
                    module["functions"].append((ops[0], ops[1], ops[4] != 0))
                    module["values"] += 1
                elif code in (_MODULE_ALIAS_OLD, _MODULE_ALIAS, _MODULE_IFUNC):
                    module["values"] += 1
            return True
        if block_id == _STRTAB_BLOCK_ID and module["strtab"] is None:
            for code, ops in block.records():
                if code == _STRTAB_BLOB:
                    module["strtab"] = bytes(ops)
            return True
        return False

    while bits.remaining() >= 32 and (module["strtab"] is None or not module["seen"]):
        if bits.read(2) != _ENTER_SUBBLOCK:
            return None
        block_id, width, end = _block_header(bits)
        if not enter_top(block_id, _Block(bits, width, block_id, blockinfo)):
            bits.pos = end
    strtab = module["strtab"]
    if not module["seen"] or strtab is None:
        return None
    found = []
    for offset, size, initializer, section in module["globals"]:
        if offset + size > len(strtab) or section > len(module["sections"]):
            return None
        name = strtab[offset : offset + size].decode("utf-8", "replace")
        found.append(
            BitcodeGlobal(
                name,
                module["sections"][section - 1] if section else "",
                module["constants"].get(initializer - 1) if initializer else None,
            )
        )
    functions = []
    for offset, size, declaration in module["functions"]:
        if offset + size > len(strtab):
            return None
        functions.append(BitcodeFunction(strtab[offset : offset + size].decode("utf-8", "replace"), declaration))
    return BitcodeModule(found, functions, module["layout"], module["triple"])

"""The OffloadBinary layout, declared once (llvm/include/llvm/Object/OffloadBinary.h); little endian.

    Header   v1/v2: magic[4], u32 version, u64 size, u64 entries offset, u64 entry size (v1: 40)
                    or entries count (v2); v3 appends u64 inflated size (compressed when nonzero)
    Entry    u16 image kind, u16 offload kind, u32 flags, u64 string-map offset, u64 string count,
             u64 image offset, u64 image size
    Strings  v1: {u64 key offset, u64 value offset}, NUL-terminated values
             v2+: {u64 key offset, u64 value offset, u64 value size}
All offsets are absolute within the blob; blobs are 8-aligned and may be concatenated.
"""

from __future__ import annotations

import struct

MAGIC = b"\x10\xff\x10\xad"
ALIGNMENT = 8
NEWEST_VERSION = 3  # the newest version current LLVM readers accept

HEADER = struct.Struct("<4sIQQQ")  # magic, version, size, entries offset, entry size | entries count
HEADER_V3 = struct.Struct("<4sIQQQQ")  # ... + inflated size
ENTRY = struct.Struct("<HHIQQQQ")
STRING_ENTRY_V1 = struct.Struct("<QQ")
STRING_ENTRY_V2 = struct.Struct("<QQQ")


def header_struct(version: int) -> struct.Struct:
    return HEADER_V3 if version >= 3 else HEADER


def string_entry_struct(version: int) -> struct.Struct:
    return STRING_ENTRY_V1 if version == 1 else STRING_ENTRY_V2


def align_to(n: int, alignment: int = ALIGNMENT) -> int:
    return (n + alignment - 1) // alignment * alignment

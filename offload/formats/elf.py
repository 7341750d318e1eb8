"""ELF64 little-endian files, read by a small struct-based reader (no LLVM): sections by name, symbols
(.symtab and .dynsym), RELATIVE relocations. Used for linked executables, the cubins inside their fatbins
and bundles' host objects alike (offload/toolchain/executable.py, offload/packager/containers.py).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from offload.errors import OffloadError

ELF_MAGIC = b"\x7fELF"
SHT_SYMTAB, SHT_RELA, SHT_DYNSYM, SHT_NOBITS, SHT_DYNAMIC = 2, 4, 11, 8, 6
DT_NEEDED, DT_RPATH, DT_RUNPATH = 1, 15, 29
STT_FUNC, STT_OBJECT = 2, 1


class ElfError(OffloadError):
    """A file that is not the kind of executable or image the reader expects."""


@dataclass(frozen=True)
class Section:
    index: int
    name: str
    type: int
    address: int
    offset: int
    size: int


@dataclass(frozen=True)
class Symbol:
    name: str
    value: int
    size: int
    type: int
    bind: int
    section_index: int


@dataclass
class ElfFile:
    """An ELF64 little-endian file: sections by name, symbols (.symtab and .dynsym)."""

    name: str
    data: bytes
    machine: int
    sections: list[Section]
    symbols: list[Symbol]
    dynamic_symbols: list[Symbol]

    def section(self, name: str) -> Section | None:
        return next((s for s in self.sections if s.name == name), None)

    def section_data(self, section: Section) -> bytes:
        """The section's bytes, which read_elf checked lie inside the file. A NOBITS section has none: the
        sections read for their contents never are NOBITS, and its size is not bounded by the file."""
        if section.type == SHT_NOBITS:
            raise ElfError(
                f"'{self.name}': section {section.name or section.index} has no contents in the file "
                f"(NOBITS, claiming {section.size} bytes)"
            )
        return self.data[section.offset : section.offset + section.size]

    def dynamic_strings(self, tag: int) -> list[str]:
        """The strings of the .dynamic section's `tag` entries (DT_NEEDED: the shared libraries it loads;
        DT_RUNPATH, DT_RPATH: where it looks), read from .dynstr; none in a static file."""
        dynamic = next((s for s in self.sections if s.type == SHT_DYNAMIC), None)
        strings = self.section(".dynstr")
        if dynamic is None or strings is None or strings.type == SHT_NOBITS:
            return []
        table = self.section_data(strings)
        raw = self.section_data(dynamic)
        found = []
        for entry_tag, value in struct.iter_unpack("<qQ", raw[: len(raw) // 16 * 16]):
            if entry_tag == tag and value < len(table):
                end = table.find(b"\0", value)
                found.append(table[value : end if end >= 0 else len(table)].decode("utf-8", errors="replace"))
        return found

    def symbol(self, name: str) -> Symbol | None:
        return next((s for s in self.symbols if s.name == name), None)

    def read_c_string(self, address: int) -> str | None:
        for s in self.sections:
            if s.address and s.type != SHT_NOBITS and s.address <= address < s.address + s.size:
                start = s.offset + address - s.address
                end = self.data.find(b"\0", start, s.offset + s.size)
                if end < 0:
                    return None
                return self.data[start:end].decode("utf-8", errors="replace")
        return None

    def relative_relocations(self) -> dict[int, int]:
        """address -> addend of the machine's R_*_RELATIVE relocations (pointer values of a PIE; the
        relocation type is the host record's, offload.formats.hosts)."""
        from offload.formats.hosts import host_of_elf_machine

        host = host_of_elf_machine(self.machine)
        found: dict[int, int] = {}
        if host is None:  # not a host CPU mlir-offload knows: no pointer is read through relocations
            return found
        for s in self.sections:
            if s.type != SHT_RELA:
                continue
            raw = self.section_data(s)
            for offset, info, addend in struct.iter_unpack("<QQq", raw[: len(raw) // 24 * 24]):
                if info & 0xFFFFFFFF == host.elf_relative_reloc:
                    found[offset] = addend
        return found


SECTION_HEADER = struct.Struct("<IIQQQQIIQQ")
SYMBOL = struct.Struct("<IBBHQQ")


def read_elf(data: bytes, name: str) -> ElfFile:
    """Every size, offset and count is checked against the file before use: only ElfError escapes."""
    data = bytes(data)
    if data[:4] != ELF_MAGIC:
        raise ElfError(f"'{name}' is not an ELF file")
    if data[4:6] != b"\x02\x01":
        raise ElfError(f"'{name}' is not a 64-bit little-endian ELF file")
    if len(data) < 0x40:
        raise ElfError(f"'{name}': truncated ELF header ({len(data)} bytes), so no ELF section header table")
    (machine,) = struct.unpack_from("<H", data, 0x12)
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    if shnum and (shentsize < SECTION_HEADER.size or shoff > len(data) or shnum * shentsize > len(data) - shoff):
        raise ElfError(
            f"'{name}': truncated ELF section header table ({shnum} headers of {shentsize} bytes "
            f"at offset {shoff}, file of {len(data)} bytes)"
        )
    headers = [SECTION_HEADER.unpack_from(data, shoff + i * shentsize) for i in range(shnum)]
    for i, h in enumerate(headers):
        size = h[5]
        if h[1] != SHT_NOBITS and (h[4] > len(data) or size > len(data) - h[4]):
            raise ElfError(f"'{name}': section {i} [{h[4]}, +{size}) runs past the end of the file ({len(data)} bytes)")
    if shnum and shstrndx >= shnum:
        raise ElfError(f"'{name}': bad section name table index")

    def c_string(table: int, offset: int) -> str:
        """A NUL-terminated name inside section `table` (a bad index or offset reads as "")."""
        if not 0 <= table < shnum or headers[table][1] == SHT_NOBITS:
            return ""
        start, size = headers[table][4], headers[table][5]
        if offset >= size:
            return ""
        end = data.find(b"\0", start + offset, start + size)
        return data[start + offset : end if end >= 0 else start + size].decode("utf-8", errors="replace")

    sections = [Section(i, c_string(shstrndx, h[0]), h[1], h[3], h[4], h[5]) for i, h in enumerate(headers)]
    elf = ElfFile(name, data, machine, sections, [], [])
    for i, h in enumerate(headers):
        if h[1] not in (SHT_SYMTAB, SHT_DYNSYM):
            continue
        table = elf.section_data(sections[i])
        symbols = [
            Symbol(c_string(h[6], st_name), st_value, st_size, st_info & 0xF, st_info >> 4, st_shndx)
            for st_name, st_info, _other, st_shndx, st_value, st_size in SYMBOL.iter_unpack(
                table[: len(table) // SYMBOL.size * SYMBOL.size]
            )
        ]
        (elf.symbols if h[1] == SHT_SYMTAB else elf.dynamic_symbols).extend(symbols)
    return elf

"""Reading a linked executable: its ELF sections and symbols, the device images in its fatbin
(CUDA `.nv_fatbin` cubins, HIP `.hip_fatbin` offload bundle code objects) and its offload entries.

ELF is read with offload/formats/elf.py (no LLVM): llvmlite's ObjectFileRef lists sections but not
symbol tables or relocations, and the cubins inside a fatbin need the same reader.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from offload.formats.elf import ELF_MAGIC, STT_FUNC, STT_OBJECT, ElfFile, Section, read_elf
from offload.formats.elf import ElfError as ExecutableError
from offload.formats.vendors import CUDA, HIP

CUDA_FATBIN_SECTION, HIP_FATBIN_SECTION = CUDA.device_section, HIP.device_section
CUDA_FATBIN_MAGIC = 0xBA55ED50
FATBIN_ENTRY_ELF, FATBIN_ENTRY_PTX = 2, 1
FATBIN_FLAG_COMPRESSED = 0x2000
FATBIN_FLAG_COMPRESSED_ZSTD = 0x8000  # CUDA 13 fatbinary compresses PTX with zstd by default
CLANG_OFFLOAD_BUNDLE_MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"
COMPRESSED_BUNDLE_MAGIC = b"CCOB"


# ------------------------------------------------------------------------------------------------
# Device images


@dataclass(frozen=True)
class DeviceCodeObject:
    """One device image inside an executable: a cubin / PTX (CUDA) or an AMDGPU code object (HIP)."""

    arch: str  # "sm_80", "gfx90a"
    kind: str  # "elf", "ptx", "code-object"
    compressed: bool
    data: bytes
    container: int = 0  # which fatbinary of the section holds it (one per linker wrapper, nvcc object, ...)

    def symbols(self) -> set[str]:
        """Function/object symbol names of an uncompressed ELF image."""
        if self.compressed or self.data[:4] != ELF_MAGIC:
            return set()
        elf = read_elf(self.data, self.arch)
        return {s.name for s in elf.symbols if s.name and s.type in (STT_FUNC, STT_OBJECT)}

    def kernels(self) -> set[str]:
        """Kernel entry points. A cubin marks kernels with STT_FUNC in section .text.<name>; an AMDGPU
        code object pairs each kernel with its descriptor symbol <name>.kd."""
        if self.compressed or self.data[:4] != ELF_MAGIC:
            return set()
        elf = read_elf(self.data, self.arch)
        if self.kind == "code-object":
            names = {s.name for s in elf.symbols}
            return {n[:-3] for n in names if n.endswith(".kd")}
        return {
            s.name
            for s in elf.symbols
            if s.type == STT_FUNC
            and s.name
            and 0 < s.section_index < len(elf.sections)
            and elf.sections[s.section_index].name == f".text.{s.name}"
        }


def parse_cuda_fatbin(data: bytes) -> list[DeviceCodeObject]:
    """The images of one or more concatenated CUDA fatbins.

    Header: u32 magic 0xBA55ED50, u16 version, u16 header size, u64 size of the entries. Entry:
    u16 kind (1 PTX, 2 ELF), u16 version, u32 header size, u64 payload size, u32 compressed size,
    u32, u16 minor, u16 major, u32 sm, u32 name offset, u32 name size, u64 flags (0x2000:
    compressed), ...; the payload follows the entry header."""
    images = []
    position = 0
    container = 0
    while position + 16 <= len(data):  # every fatbin and entry is checked to advance: bounded by len(data)
        magic, _version, header_size, fat_size = struct.unpack_from("<IHHQ", data, position)
        if magic != CUDA_FATBIN_MAGIC:
            if any(data[position:]):
                raise ExecutableError(f"fatbin: bad magic 0x{magic:08x} at offset {position}")
            break
        if header_size < 16:
            raise ExecutableError(f"fatbin: header size {header_size} at offset {position} (at least 16)")
        entry = position + header_size
        if fat_size > len(data) or entry > len(data) - fat_size:
            raise ExecutableError(
                f"fatbin: entries of {fat_size} bytes at offset {position} run past the section's {len(data)} bytes"
            )
        end = entry + fat_size
        while entry + 0x30 <= end:
            kind, _ver, entry_header, payload = struct.unpack_from("<HHIQ", data, entry)
            (sm,) = struct.unpack_from("<I", data, entry + 0x1C)
            (flags,) = struct.unpack_from("<Q", data, entry + 0x28)
            if entry_header < 0x30 or entry_header > end - entry or payload > end - entry - entry_header:
                raise ExecutableError(
                    f"fatbin: entry at offset {entry} (header {entry_header} bytes, payload "
                    f"{payload} bytes) does not fit its fatbin's {fat_size} bytes"
                )
            body = data[entry + entry_header : entry + entry_header + payload]
            images.append(
                DeviceCodeObject(
                    arch=f"sm_{sm}" if kind == FATBIN_ENTRY_ELF else f"compute_{sm}",
                    kind={FATBIN_ENTRY_ELF: "elf", FATBIN_ENTRY_PTX: "ptx"}.get(kind, f"kind{kind}"),
                    compressed=bool(flags & (FATBIN_FLAG_COMPRESSED | FATBIN_FLAG_COMPRESSED_ZSTD)),
                    data=body,
                    container=container,
                )
            )
            entry += entry_header + payload
        # Fatbins placed one after another in the section are aligned.
        position = (end + 7) // 8 * 8
        container += 1
    return images


def parse_offload_bundle(data: bytes) -> list[DeviceCodeObject]:
    """clang-offload-bundler's format: magic, u64 count, then {u64 offset, u64 size, u64 id size, id}."""
    if data[:4] == COMPRESSED_BUNDLE_MAGIC:
        return [DeviceCodeObject(arch="?", kind="code-object", compressed=True, data=data)]
    if data[:24] != CLANG_OFFLOAD_BUNDLE_MAGIC:
        raise ExecutableError("offload bundle: bad magic")
    if len(data) < 32:
        raise ExecutableError("offload bundle: truncated header")
    (count,) = struct.unpack_from("<Q", data, 24)
    if count > (len(data) - 32) // 24:
        raise ExecutableError(f"offload bundle: {count} entries cannot fit its {len(data)} bytes")
    images = []
    position = 32
    for _ in range(count):
        if position + 24 > len(data):
            raise ExecutableError(f"offload bundle: truncated entry at offset {position}")
        offset, size, id_size = struct.unpack_from("<QQQ", data, position)
        if id_size > len(data) - position - 24 or offset > len(data) or size > len(data) - offset:
            raise ExecutableError(f"offload bundle: entry at offset {position} runs past its {len(data)} bytes")
        bundle_id = data[position + 24 : position + 24 + id_size].decode("utf-8", errors="replace")
        position += 24 + id_size
        # "hipv4-amdgcn-amd-amdhsa--gfx90a[:features]"; the host entry has an empty payload.
        if not bundle_id.startswith("hip") or size == 0:
            continue
        arch = bundle_id.rsplit("--", 1)[-1].split(":")[0]
        images.append(
            DeviceCodeObject(arch=arch, kind="code-object", compressed=False, data=data[offset : offset + size])
        )
    return images


# ------------------------------------------------------------------------------------------------
# Offload entries


@dataclass(frozen=True)
class OffloadEntry:
    section: str
    name: str
    address: int
    size: int
    flags: int
    kind: int | None  # the entry's offload kind (clang >= 20 layout); None for the legacy layout

    @property
    def is_kernel(self) -> bool:
        return self.size == 0


@dataclass
class EntrySection:
    name: str
    profile_major: int  # the target clang whose layout this section has
    entries: list[OffloadEntry]
    # Whether the executable's registration code iterates this section: the linker wrapper's code
    # walks __start_<name>..__stop_<name>, so both symbols exist exactly when it does (even for an
    # empty or absent section). None when the symbol table was stripped and that cannot be told.
    registered: bool | None
    range_bytes: int | None  # __stop_ - __start_ when registered


_FIELD_FORMATS = {"i16": "H", "i32": "I", "i64": "Q", "ptr": "Q"}


def entry_section_layouts() -> dict[str, tuple[int, dict]]:
    """section name -> (clang major, entries table) from the target-clang profiles. Profiles that share a
    section share its layout (clang 21 and 22): the newest names it, so adding an older profile changes
    no label; a bundle's own record (mlir-offload.profile) says which clang it was made for."""
    from offload.formats.profiles import available_profiles, load_profile

    layouts: dict[str, tuple[int, dict]] = {}
    for major in reversed(available_profiles()):
        entries = load_profile(major).entries
        for section in entries["section"].values():
            layouts.setdefault(section, (major, entries))
    return layouts


def _parse_entries(elf: ElfFile, section: Section, layout: dict) -> list[OffloadEntry]:
    names = [f.split(":")[0] for f in layout["fields"]]
    types = [f.split(":")[1] for f in layout["fields"]]
    fmt = "<" + "".join(_FIELD_FORMATS[t] for t in types)
    stride = layout["struct_size"]
    raw = elf.section_data(section)
    relocations = None
    entries = []
    for start in range(0, len(raw) - stride + 1, stride):
        values = dict(zip(names, struct.unpack_from(fmt, raw, start), strict=True))
        for index, (name, type_) in enumerate(zip(names, types, strict=True)):
            # A linker that leaves pointer fields to dynamic relocations (PIE) stores them as addends.
            if type_ == "ptr" and values[name] == 0:
                if relocations is None:
                    relocations = elf.relative_relocations()
                values[name] = relocations.get(section.address + start + struct.calcsize(fmt[: 1 + index]), 0)
        symbol_name = elf.read_c_string(values["name"]) if values["name"] else None
        entries.append(
            OffloadEntry(
                section.name, symbol_name or "", values["address"], values["size"], values["flags"], values.get("kind")
            )
        )
    return entries


def read_entry_sections(elf: ElfFile) -> list[EntrySection]:
    found = []
    for section_name, (major, layout) in sorted(entry_section_layouts().items()):
        section = elf.section(section_name)
        start = elf.symbol(f"__start_{section_name}")
        stop = elf.symbol(f"__stop_{section_name}")
        if section is None and start is None and stop is None:
            continue
        entries = _parse_entries(elf, section, layout) if section is not None else []
        if not elf.symbols:
            registered, range_bytes = None, None
        elif start is not None and stop is not None:
            registered, range_bytes = True, stop.value - start.value
        else:
            registered, range_bytes = False, None
        found.append(EntrySection(section_name, major, entries, registered, range_bytes))
    return found


# ------------------------------------------------------------------------------------------------
# The whole picture


@dataclass
class OffloadExecutable:
    path: str
    elf: ElfFile
    device_sections: dict[str, list[DeviceCodeObject]] = field(default_factory=dict)
    entry_sections: list[EntrySection] = field(default_factory=list)


def read_executable(path: str) -> OffloadExecutable:
    from offload.fsutil import read_input

    return executable_from_bytes(read_input(path), path)


def executable_from_bytes(data: bytes, path: str) -> OffloadExecutable:
    elf = read_elf(data, path)
    exe = OffloadExecutable(path, elf)
    for section_name, parse in ((CUDA_FATBIN_SECTION, parse_cuda_fatbin), (HIP_FATBIN_SECTION, parse_offload_bundle)):
        section = elf.section(section_name)
        if section is not None:
            try:
                exe.device_sections[section_name] = parse(elf.section_data(section))
            except struct.error:
                raise ExecutableError(f"{path}: section {section_name} is truncated") from None
            except ExecutableError as e:
                raise ExecutableError(f"{path}: section {section_name}: {e.message}") from None
    exe.entry_sections = read_entry_sections(elf)
    return exe


def fatbin_cubins(path: str) -> dict[str, set[str]]:
    """{arch: kernel symbol names} of every uncompressed device ELF image in the executable."""
    result: dict[str, set[str]] = {}
    for images in read_executable(path).device_sections.values():
        for image in images:
            if image.kind in ("elf", "code-object") and not image.compressed:
                result.setdefault(image.arch, set()).update(image.kernels())
    return result

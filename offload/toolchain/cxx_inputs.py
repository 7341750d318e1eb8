"""Which link inputs are C++: objects and archive members whose undefined symbols name the C++ runtime
(std::, operator new/delete, exceptions, RTTI), and C++ sources clang compiles at the link. nvcc links
with g++, so C++ objects just link there; link does the same by running clang as clang++
(--driver-mode=g++), which adds the C++ standard library clang is configured with."""

from __future__ import annotations

import os

# Mangled-name prefixes of symbols only the C++ runtime (libstdc++/libc++ and their ABI library) defines.
CXX_RUNTIME_PREFIXES = (
    "_ZNSt",
    "_ZNKSt",
    "_ZSt",
    "_ZTISt",
    "_ZTVSt",
    "_ZTVN10__cxxabiv",
    "_ZNSo",
    "_ZNSi",
    "_ZdlPv",
    "_ZdaPv",
    "_Znwm",
    "_Znam",
    "_ZNSt3__1",
    "__cxa_",
    "__gxx_personality_v0",
)
CXX_SOURCE_SUFFIXES = (".cpp", ".cc", ".cxx", ".c++", ".C", ".cu", ".hip", ".mm")
CXX_DRIVER_MODE = "--driver-mode=g++"
# Link words that already bring a C++ runtime, or choose the driver: then link adds nothing.
CXX_RUNTIME_WORDS = ("-lstdc++", "-lc++", "--driver-mode=")
ARCHIVE_MAGIC = b"!<arch>\n"
ARCHIVE_HEADER_SIZE = 60
SHN_UNDEF = 0


def uses_cxx_runtime(data: bytes, name: str) -> bool:
    """Whether an ELF object, or any ELF member of an ar archive, calls into the C++ runtime."""
    if data.startswith(ARCHIVE_MAGIC):
        return any(uses_cxx_runtime(member, name) for member in archive_members(data))
    from offload.formats.elf import ElfError, read_elf

    try:
        elf = read_elf(data, name)
    except ElfError:
        return False  # not an object link reads (bitcode, a shared library script): clang judges it
    return any(
        symbol.section_index == SHN_UNDEF and symbol.name.startswith(CXX_RUNTIME_PREFIXES) for symbol in elf.symbols
    )


def archive_members(data: bytes):
    """The member contents of a System V / GNU ar archive, each bounded by the file (a bad header ends
    the walk)."""
    offset = len(ARCHIVE_MAGIC)
    while offset + ARCHIVE_HEADER_SIZE <= len(data):
        header = data[offset : offset + ARCHIVE_HEADER_SIZE]
        size_field = header[48:58].strip()
        if header[58:60] != b"`\n" or not size_field.isdigit():
            return
        size = int(size_field)
        start = offset + ARCHIVE_HEADER_SIZE
        if size > len(data) - start:
            return
        name = header[:16].rstrip()
        if name not in (b"/", b"//", b"/SYM64/"):  # the symbol and long-name tables are no objects
            yield data[start : start + size]
        offset = start + size + (size & 1)


def static_libraries(words: list[str]) -> list[str]:
    """The archives the linker takes for the `-lNAME` words, searching the `-L` folders in order (a
    libNAME.so there wins, as ld prefers it: a shared library brings its own C++ runtime)."""
    from offload.formats.clang_arguments import parse

    folders, names = [], []
    for argument in parse(words):
        option, value = argument.words[0], argument.value
        if option == "-L" and value is not None:
            folders.append(value)
        elif option.startswith("-L") and len(option) > 2:
            folders.append(option[2:])
        elif option == "-l" and value is not None:
            names.append(value)
        elif option.startswith("-l") and len(option) > 2 and not argument.is_input:
            names.append(option[2:])
    found = []
    for name in names:
        for folder in folders:
            if os.path.exists(os.path.join(folder, f"lib{name}.so")):
                break
            archive = os.path.join(folder, f"lib{name}.a")
            if os.path.isfile(archive):
                found.append(archive)
                break
    return found


def cxx_inputs(files: list[str], words: list[str]) -> list[str]:
    """The C++ inputs among a link's `files` and the archives its -l words name, unless `words` already
    bring a C++ runtime."""
    if any(word.startswith(CXX_RUNTIME_WORDS) for word in words):
        return []
    found = []
    for path in [*files, *static_libraries(words)]:
        if path.endswith(CXX_SOURCE_SUFFIXES):
            found.append(path)
            continue
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            continue  # clang reports it
        if uses_cxx_runtime(data, path):
            found.append(path)
    return found


__all__ = ["CXX_DRIVER_MODE", "archive_members", "cxx_inputs", "static_libraries", "uses_cxx_runtime"]

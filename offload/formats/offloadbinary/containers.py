"""Offload images from wherever they are stored: a raw OffloadBinary, LLVM bitcode or textual IR with
`@llvm.embedded.object`, or the `.llvm.offloading` section of an ELF object or executable."""

from __future__ import annotations

from offload.errors import Location, OffloadError
from offload.formats.offloadbinary.detect import ELF_MAGIC, is_bitcode
from offload.formats.offloadbinary.layout import MAGIC
from offload.formats.offloadbinary.model import OffloadBinaryError, OffloadImage
from offload.formats.offloadbinary.reader import read_binary

OFFLOADING_SECTION = ".llvm.offloading"
EMBEDDED_OBJECT_PREFIX = "llvm.embedded.object"


def read_offload_images(data: bytes, name: str) -> list[OffloadImage]:
    """Every offload image in `data` (the file `name`); [] when a valid container holds none."""
    data = bytes(data)
    if data[:4] == MAGIC:
        return _in_context(read_binary, data, name)
    if data[:4] == ELF_MAGIC:
        return _from_elf(data, name)
    if is_bitcode(data):
        return _from_ir(data, name, bitcode=True)
    if _looks_like_text(data):
        return _from_ir(data, name, bitcode=False)
    raise OffloadError(f"'{name}' is not an offload binary, LLVM bitcode or IR, or an ELF object")


def _in_context(read, data: bytes, name: str) -> list[OffloadImage]:
    try:
        return read(data)
    except OffloadBinaryError as e:
        raise OffloadBinaryError(f"'{name}': {e.message}") from None


def _from_elf(data: bytes, name: str) -> list[OffloadImage]:
    import llvmlite.binding as llvm

    try:
        obj = llvm.ObjectFileRef.from_data(data)
        sections = [bytes(s.data()) for s in obj.sections() if s.name() == OFFLOADING_SECTION.encode()]
    except Exception as e:  # llvmlite reports malformed objects as various Python errors
        raise OffloadError(f"'{name}': cannot read ELF object: {e}") from None
    images: list[OffloadImage] = []
    for section in sections:
        images.extend(_in_context(read_binary, section, name))
    return images


def _from_ir(data: bytes, name: str, bitcode: bool) -> list[OffloadImage]:
    import llvmlite.binding as llvm

    try:
        module = llvm.parse_bitcode(data) if bitcode else llvm.parse_assembly(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise OffloadError(f"'{name}' is not an offload binary, LLVM bitcode or IR, or an ELF object") from None
    except RuntimeError as e:
        raise _ir_error(str(e), name, bitcode) from None
    # clang and mlir-offload name the global llvm.embedded.object (llvm-link adds .N suffixes).
    if not any(g.name.startswith(EMBEDDED_OBJECT_PREFIX) for g in module.global_variables):
        return []
    return _from_elf(_emit_object(module, name), name)


def _emit_object(module, name: str) -> bytes:
    """Let LLVM lay the module out as an object; its .llvm.offloading section is the embedded data.
    llvmlite cannot read a global's initializer, so this is how the bytes are reached. Function
    bodies are made available_externally first: the code generator then skips them."""
    import llvmlite.binding as llvm

    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    for function in module.functions:
        if not function.is_declaration:
            function.linkage = "available_externally"
    triple = module.triple or llvm.get_process_triple()
    try:
        target = llvm.Target.from_triple(triple)
    except RuntimeError:
        raise OffloadError(f"'{name}': cannot read embedded objects of a module for '{triple}'") from None
    machine = target.create_target_machine(opt=0, reloc="pic", codemodel="default")
    try:
        return machine.emit_object(module)
    except RuntimeError as e:
        raise OffloadError(f"'{name}': cannot lay out the module's embedded objects: {e}") from None


def _ir_error(message: str, name: str, bitcode: bool) -> OffloadError:
    # llvmlite: "LLVM IR parsing error\n<string>:LINE:COL: error: MESSAGE\n<source line>..."
    for line in message.splitlines():
        if line.startswith("<string>:") and ": error: " in line:
            where, _, text = line[len("<string>:"):].partition(": error: ")
            parts = where.split(":")
            if len(parts) == 2 and all(p.isdigit() for p in parts):
                return OffloadError(text, Location(name, int(parts[0]), int(parts[1])))
    detail = " ".join(message.split())
    return OffloadError(f"'{name}': cannot read {'bitcode' if bitcode else 'LLVM IR'}: {detail}")


def _looks_like_text(data: bytes) -> bool:
    sample = data[:4096]
    return b"\0" not in sample

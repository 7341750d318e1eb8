"""Offload images of textual LLVM IR (`compile -S` bundles, hand-written modules): LLVM parses the text,
and its bitcode goes through the target side's own reader (offload.packager.containers)."""

from __future__ import annotations

from offload.errors import Location, OffloadError
from offload.fsutil import read_input
from offload.packager import containers
from offload.packager.model import OffloadImage


def load_offload_images(path: str) -> list[OffloadImage]:
    """The offload images of the file at `path` (inspect, extract); a file without any is an error naming it."""
    images = read_offload_images(read_input(path), path)
    if not images:
        raise OffloadError(f"'{path}' contains no offloading images")
    return images


def read_offload_images(data: bytes, name: str) -> list[OffloadImage]:
    """containers.read_offload_images, textual IR included."""
    data = bytes(data)
    if containers.container_kind(data) != "text":
        return containers.read_offload_images(data, name)
    try:
        import llvmlite.binding  # noqa: F401
    except ImportError:  # a target machine (link): the target side says what it does not read
        return containers.read_offload_images(data, name)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise OffloadError(f"'{name}' is not an offload binary, LLVM bitcode or IR, or an ELF object") from None
    from offload.processes import call_forked

    # LLVM (an assertions build) parses untrusted text in a child: its death is one error naming the file.
    bitcode = call_forked(lambda source: _assemble(source, name), text, f"'{name}': cannot read LLVM IR")
    return containers.read_offload_images(bitcode, name)


def _assemble(text: str, name: str) -> bytes:
    import llvmlite.binding as llvm

    try:
        return llvm.parse_assembly(text).as_bitcode()
    except RuntimeError as e:
        raise _ir_error(str(e), name) from None


def _ir_error(message: str, name: str) -> OffloadError:
    # llvmlite: "LLVM IR parsing error\n<string>:LINE:COL: error: MESSAGE\n<source line>..."
    for line in message.splitlines():
        if line.startswith("<string>:") and ": error: " in line:
            where, _, text = line[len("<string>:") :].partition(": error: ")
            parts = where.split(":")
            if len(parts) == 2 and all(p.isdigit() for p in parts):
                return OffloadError(text, Location(name, int(parts[0]), int(parts[1])))
    detail = " ".join(message.split())
    return OffloadError(f"'{name}': cannot read LLVM IR: {detail}")

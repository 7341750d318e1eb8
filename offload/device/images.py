"""The records of the device skeleton: a gpu.module lowered to LLVM IR, the image of one target and its
native code."""

from __future__ import annotations

from dataclasses import dataclass, field

from offload.errors import Location
from offload.formats.targets import Target
from offload.options import PREFIX_SCHEME, check_rename


@dataclass(frozen=True)
class NativeCode:
    """A device image's native code: the image kind it is packaged as, its bytes, and for CUDA the PTX
    it was assembled from (shipped beside the bundle with --device-image=ptx)."""

    image_kind: int  # offload.packager.ImageKind value
    data: bytes
    ptx: str | None


@dataclass
class DeviceImage:
    target: Target
    bitcode: bytes
    kernels: list[str]
    globals: list[str]
    native: NativeCode | None = None  # set by the skeleton's to-object step when the image is packaged native
    cached: bool = False  # the bitcode came from the cache: LLVM parses it only in a forked child


@dataclass
class LoweredModule:
    """One gpu.module after MLIR lowering: its LLVM IR text and its symbols, named as in the image (the
    rename scheme applied): kernels, externally visible global variables and functions, and where
    each definition came from."""

    name: str
    llvm_ir: str
    kernels: list[str]
    locations: dict[str, Location]
    globals: list[str] = field(default_factory=list)
    exported: list[str] = field(default_factory=list)  # kernels, functions and globals other modules see


def symbol_name(module_name: str, symbol: str, rename: str | None) -> str:
    """The name a gpu.module's symbol has in the device image (and so in the host's offload entries).
    --rename=module-prefix makes it `<module>_<symbol>`, --rename=prefix:NAME (--symbol-prefix NAME)
    `NAME_<symbol>`; without renaming it is the symbol itself."""
    if rename is None:
        return symbol
    check_rename(rename)
    if rename == "module-prefix":
        return f"{module_name}_{symbol}"
    return f"{rename[len(PREFIX_SCHEME) :]}_{symbol}"


def image_symbols(lowered: list[LoweredModule]) -> tuple[list[str], list[str], dict[str, Location]]:
    """(kernels, externally visible globals, exported name -> Location) of all gpu.modules of an image."""
    kernels = [k for m in lowered for k in m.kernels]
    user_globals = [g for m in lowered for g in m.globals]
    exported = {name: m.locations[name] for m in lowered for name in m.exported}
    return kernels, user_globals, exported

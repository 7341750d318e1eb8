"""Version-proof bundles: device images as native code and the host part as an ELF object, so that
any clang whose entry profile matches links them whatever its LLVM version (bitcode is only backward
compatible: LLVM 22 bitcode can fail in clang 19).

Measured with clang 19.1.7 / 22.1.8 and CUDA 13 (tests/builds/test_ship_target.py, tests/builds/test_ship_mlir.py):
- a cubin image must be *relocatable* (`ptxas -c`): the linker wrapper runs nvlink over it, and
  nvlink rejects an executable cubin;
- a PTX image (kind 5) or a fatbinary image (kind 4) is rejected by clang-nvlink-wrapper
  ("Unsupported file type"), so PTX for forward compatibility travels beside the bundle, not in it;
  the target link adds it to the executable's fatbin through the fatbinary wrapper
  (offload/data/scripts/fatbinary, `mlir-offload link --ptx`, a shipped build.sh).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from offload import trace
from offload.about import LLVM_MAJOR
from offload.device.codegen import emit_assembly, emit_object, find_llc
from offload.device.images import DeviceImage, NativeCode
from offload.device.llvmlite_backend import fresh_context
from offload.errors import OffloadError
from offload.formats.targets import Target, parse_offload_arch
from offload.formats.toolkit_archs import unbuildable_arch
from offload.formats.vendors import CUDA, HIP, Vendor, vendor_for, vendor_of_triple
from offload.interrupts import temporary_folder
from offload.options import DEFAULT_OPT_LEVEL, compile_option
from offload.packager import ImageKind, read_offload_images
from offload.toolchain.tools import find_cuda, tool_output, tool_version


def _llvm():
    import llvmlite.binding as llvm

    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    return llvm


def find_ptxas(cuda_path: str | None = None) -> str:
    cuda = find_cuda(cuda_path)
    path = (cuda.ptxas if cuda else None) or shutil.which("ptxas")
    if path is None:
        raise OffloadError(
            (
                "cubin device images need ptxas from the CUDA toolkit: install it or set CUDA_PATH (or use ",
                compile_option("device_image", "bitcode", joined=True),
                ")",
            )
        )
    return path


def check_toolkit_archs(archs: Iterable[str], runs_ptxas: bool, cuda_path: str | None = None) -> None:
    """CUDA `archs` the local toolkit cannot build: refused where ptxas runs here (`runs_ptxas`), else
    (bitcode images, assembled at the target's link) a warning, as the target may have another toolkit."""
    import click

    cuda = find_cuda(cuda_path)
    if cuda is None:
        return
    for arch in archs:
        why = unbuildable_arch(arch, cuda.version)
        if why and runs_ptxas:
            raise OffloadError(
                (
                    f"{why} (the toolkit at {cuda.root}): compile for an arch in that range, or use ",
                    compile_option("device_image", "bitcode", joined=True),
                    " to leave ptxas to the target's toolkit",
                )
            )
        if why:
            click.echo(
                f"mlir-offload: warning: {why} (the toolkit at {cuda.root}): the bundle links only "
                "with a CUDA toolkit that builds it",
                err=True,
            )


@dataclass(frozen=True)
class PtxasRun:
    """What one ptxas run made: the relocatable cubin, and with `verbose` what `ptxas -v` said of it."""

    cubin: bytes
    report: str


def run_ptxas(
    ptx: str,
    arch: str,
    ptxas: str,
    opt_level: int = DEFAULT_OPT_LEVEL,
    flags: tuple[str, ...] = (),
    verbose: bool = False,
) -> PtxasRun:
    """PTX -> relocatable cubin (`ptxas -c`: the target's linker wrapper runs nvlink over it). `verbose`:
    also what `ptxas -v` reports (registers, spills, stack, shared memory per kernel) of that cubin, for
    compile --resource-usage (the image's cubin may come from the cache, so its PTX is assembled again)."""
    with temporary_folder("mlir-offload-ptxas-") as tmp:
        src, out = os.path.join(tmp, "image.ptx"), os.path.join(tmp, "image.cubin")
        with open(src, "w", encoding="utf-8") as f:
            f.write(ptx)
        command = [ptxas, *(["-v"] if verbose else []), "-c", f"-arch={arch}", f"-O{opt_level}", *flags, src]
        command += ["-o", out]
        trace.tool(command)
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            detail = " ".join((done.stderr or done.stdout).split())[:400]
            raise OffloadError(f"ptxas failed for {arch}: {detail}")
        with open(out, "rb") as f:
            return PtxasRun(f.read(), done.stderr + done.stdout if verbose else "")


def bitcode_to_cubin(bitcode: bytes, target: Target, opt_level: int, ptxas: Callable[[], str]) -> tuple[bytes, str]:
    """NVPTX bitcode image -> (relocatable cubin, its PTX); `ptxas()` finds ptxas. The PTX comes from the
    device side's one NVPTX code generator (offload.device.emit_assembly)."""
    ptx = emit_assembly(bitcode, target, opt_level)
    return run_ptxas(ptx, target.arch, ptxas(), opt_level, getattr(ptxas, "flags", ())).cubin, ptx


def bitcode_to_amdgpu_object(
    bitcode: bytes, target: Target, opt_level: int = DEFAULT_OPT_LEVEL, ptxas: Callable[[], str] | None = None
) -> tuple[bytes, None]:
    """AMDGCN bitcode image -> relocatable AMDGPU ELF object (linked by lld on the target), through the
    device side's emitter (which knows that inline asm needs llc)."""
    return emit_object(bitcode, target, opt_level), None


# (bitcode, target, opt level, ptxas finder) -> (native image bytes, its PTX or None)
CodegenHook = Callable[[bytes, Target, int, Callable[[], str]], tuple[bytes, "str | None"]]
# Each vendor's codegen hook: the function making its native image (vendor.native_image) from bitcode.
CODEGEN_HOOKS: dict[Vendor, CodegenHook] = {CUDA: bitcode_to_cubin, HIP: bitcode_to_amdgpu_object}


def native_code(bitcode: bytes, target: Target, opt_level: int, ptxas: Callable[[], str]) -> NativeCode:
    """The vendor's codegen hook (offload/formats/vendors.py) on one image's bitcode."""
    vendor = vendor_for(target.offload_kind)
    data, ptx = CODEGEN_HOOKS[vendor](bitcode, target, opt_level, ptxas)
    return NativeCode(int(ImageKind[vendor.native_image]), data, ptx)


class PtxasFinder:
    """Calling it returns ptxas, looked up once and only when a CUDA image needs it; `flags` are added to
    every ptxas run (-lineinfo keeps the PTX's .loc line information in the cubin)."""

    def __init__(self, cuda_path: str | None = None, flags: tuple[str, ...] = ()):
        self.cuda_path, self.flags = cuda_path, tuple(flags)
        self._found: str | None = None

    def __call__(self) -> str:
        self._found = self._found or find_ptxas(self.cuda_path)
        return self._found


def ptxas_finder(cuda_path: str | None = None, flags: tuple[str, ...] = ()) -> PtxasFinder:
    return PtxasFinder(cuda_path, flags)


class Codegen:
    """The device skeleton's to-object step when a compile packages native images: calling it on a
    DeviceImage gives it its native code (native_code); key(target) is what that code depends on beyond
    the image itself (the device image cache adds it to the image's key, so that a hit brings the native
    code along). device_lto: arch -> the target clang's CUDA device link run here
    (offload.device.device_lto), whose cubin is the one the link of the bitcode image would make;
    empty: the in-process code generation."""

    def __init__(self, opt_level: int, ptxas: PtxasFinder, device_lto: dict | None = None):
        self.opt_level, self.ptxas = opt_level, ptxas
        self.device_lto = dict(device_lto or {})
        self._keys: dict[str, str] = {}

    def __call__(self, image: DeviceImage) -> DeviceImage:
        lto = self.device_lto.get(image.target.arch)
        if lto is None:
            return replace(image, native=native_code(image.bitcode, image.target, self.opt_level, self.ptxas))
        ptx = lto.ptx(image.bitcode, image.target.arch, self.opt_level)
        flags = (*lto.ptxas_flags, *self.ptxas.flags)
        cubin = run_ptxas(ptx, image.target.arch, self.ptxas(), self.opt_level, flags).cubin
        return replace(image, native=NativeCode(int(ImageKind.CUBIN), cubin, ptx))

    def key(self, target: Target) -> str:
        vendor = vendor_for(target.offload_kind)
        lto = self.device_lto.get(target.arch)
        name = f"{vendor.offload_kind} {target.arch}" if lto else vendor.offload_kind
        if name not in self._keys:
            import llvmlite  # the package's version only: LLVM itself is not loaded for a key

            parts = [
                f"{vendor.offload_kind} {vendor.native_image}",
                f"O{self.opt_level}",
                f"llvmlite {llvmlite.__version__}",
            ]
            parts += CODEGEN_TOOLS[vendor](self) + (lto.identity() if lto else [])
            self._keys[name] = "|".join(parts)
        return self._keys[name]


def _ptxas_identity(codegen: Codegen) -> list[str]:
    """ptxas's own account of its release (`ptxas --version`) and the flags it runs with."""
    return [" ".join(tool_output([codegen.ptxas(), "--version"]).split()), " ".join(codegen.ptxas.flags)]


def _llc_identity(codegen: Codegen) -> list[str]:
    """The llc that assembles AMDGPU code with inline asm (codegen.emit_object), by its version."""
    llc = find_llc(LLVM_MAJOR)
    return [f"llc {tool_version(llc, 'LLVM') if llc else None}"]


# The tools each vendor's codegen hook runs beyond llvmlite, whose identity enters the cache key of its
# native code.
CODEGEN_TOOLS: dict[Vendor, Callable[[Codegen], list[str]]] = {CUDA: _ptxas_identity, HIP: _llc_identity}


def host_to_object(host_bitcode: bytes, opt_level: int = 2) -> bytes:
    """Host bundle bitcode -> ELF object for the module's own host triple (PIC, as clang's default PIE link
    wants), keeping the `.llvm.offloading` section the target's linker wrapper reads."""
    llvm = _llvm()
    module = _parse(llvm, host_bitcode, "host")
    if not module.triple:
        raise OffloadError("internal error: the host module has no target triple")
    machine = llvm.Target.from_triple(module.triple).create_target_machine(opt=opt_level, reloc="pic")
    return machine.emit_object(module)


def verified_module(parse, source, failure: str):
    """`parse(source)` (llvmlite's parse_bitcode or parse_assembly), verified; LLVM's complaint becomes
    one OffloadError line after `failure`."""
    try:
        module = parse(source)
        module.verify()
    except RuntimeError as e:
        raise OffloadError(f"{failure}: {' '.join(str(e).split())}") from None
    return module


def _parse(llvm, bitcode: bytes, what: str):
    context = fresh_context()  # never the global one: its named types would rename a later module's
    return verified_module(
        lambda data: llvm.parse_bitcode(data, context), bitcode, f"cannot read the {what} image as LLVM bitcode"
    )


# ---- the pipeline stage: images and host before emission ----------------------------------------


def convert_device_images(
    images: list, device_image: str, cuda_path: str | None = None, opt_level: int = DEFAULT_OPT_LEVEL
) -> tuple[list, dict[str, str]]:
    """OffloadImages with bitcode -> native images for `device_image` in (cubin, ptx), for images made
    outside the compile stages (whose `codegen` stage works on DeviceImages).

    Returns (new images, PTX texts by "<arch>" for NVPTX images). "bitcode" returns the images unchanged."""
    if device_image == "bitcode":
        return list(images), {}
    ptxas = ptxas_finder(cuda_path)
    converted, ptx_by_arch = [], {}  # type: list, dict[str, str]
    for image in images:
        if image.image_kind != ImageKind.BITCODE:
            converted.append(image)
            continue
        triple, arch = image.strings.get("triple", ""), image.strings.get("arch", "")
        if vendor_of_triple(triple) is None:
            raise OffloadError(f"no native image format for triple '{triple}'")
        (target,) = parse_offload_arch(arch)
        _parse(_llvm(), image.data, arch)  # an unreadable image is a one-line error, not an LLVM abort
        native = native_code(image.data, target, opt_level, ptxas)
        converted.append(replace(image, image_kind=native.image_kind, data=native.data))
        if native.ptx is not None:
            ptx_by_arch[arch] = ptx_by_arch.get(arch, "") + native.ptx
    return converted, (ptx_by_arch if device_image == "ptx" else {})


def check_offloading_section(obj: bytes) -> int:
    """Number of offloading images in an ELF object's .llvm.offloading section, read by our own ELF and
    OffloadBinary readers; an error when the section did not survive (the target would link an executable
    without GPU code)."""
    count = len(read_offload_images(obj, "host object"))
    if count == 0:
        raise OffloadError(
            "the host object has no .llvm.offloading images: the target would link an executable without GPU code"
        )
    return count

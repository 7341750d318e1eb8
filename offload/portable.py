"""Version-proof bundles: device images as native code and the host part as an ELF object, so that
any clang whose entry profile matches links them whatever its LLVM version (bitcode is only backward
compatible: LLVM 22 bitcode can fail in clang 19).

Measured with clang 19.1.7 / 22.1.8 and CUDA 13 (tests/test_ship_target.py, tests/test_ship_mlir.py):
- a cubin image must be *relocatable* (`ptxas -c`): the linker wrapper runs nvlink over it, and
  nvlink rejects an executable cubin;
- a PTX image (kind 5) or a fatbinary image (kind 4) is rejected by clang-nvlink-wrapper
  ("Unsupported file type"), so PTX for forward compatibility travels beside the bundle, not in it;
  the target link adds it to the executable's fatbin through the fatbinary wrapper
  (toolchain/scripts/fatbinary, `mlir-offload link --ptx`, a shipped build.sh).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, replace

from offload.errors import OffloadError

DEVICE_IMAGE_FORMATS = ("bitcode", "cubin", "ptx")
HOST_FORMATS = ("bc", "obj")
HOST_TRIPLE = "x86_64-pc-linux-gnu"
NVPTX_TRIPLE = "nvptx64-nvidia-cuda"


def _llvm():
    import llvmlite.binding as llvm

    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    return llvm


def find_ptxas(cuda_path: str | None = None) -> str:
    from offload.doctor import find_cuda

    cuda = find_cuda(cuda_path)
    path = (cuda.ptxas if cuda else None) or shutil.which("ptxas")
    if path is None:
        raise OffloadError("cubin device images need ptxas from the CUDA toolkit: install it or pass "
                           "--cuda-path (or use --device-image=bitcode)")
    return path


def ptx_feature(arch: str) -> str:
    """The PTX ISA feature (+ptxNN) the device side uses for `arch` (its arch table is the authority)."""
    from offload.serialize import parse_offload_arch

    (target,) = parse_offload_arch(arch)
    return target.features


# ---- PTX files for the target link ----------------------------------------------------------------

def _ptx_words(text: str) -> list[str]:
    """PTX as words, with parentheses, brackets, commas and semicolons standing alone."""
    for mark in "()[],;":
        text = text.replace(mark, f" {mark} ")
    return text.split()


def ptx_target_arch(text: str, name: str) -> str:
    """The arch of a PTX module's `.target sm_XX[, ...]` directive."""
    words = _ptx_words(text)
    for i, word in enumerate(words[:-1]):
        if word == ".target" and words[i + 1].startswith("sm_"):
            return words[i + 1]
    raise OffloadError(f"{name}: not PTX for an NVIDIA GPU (no '.target sm_XX' directive)")


def ptx_external_functions(text: str) -> list[str]:
    """Functions a PTX module declares `.extern .func` (defined elsewhere): such a module cannot be
    JIT-compiled on its own, so it is no forward-compatibility fallback."""
    words = _ptx_words(text)
    found = []
    for i in range(len(words) - 1):
        if words[i] == ".extern" and words[i + 1] == ".func":
            j = i + 2
            if j < len(words) and words[j] == "(":  # the return value parameter
                j = words.index(")", j) + 1 if ")" in words[j:] else len(words)
            if j < len(words):
                found.append(words[j])
    return found


@dataclass(frozen=True)
class PtxImage:
    """A PTX file the target link adds to the executable's fatbin as `kind=ptx,sm=NN`."""
    arch: str  # "sm_80", from the file's .target directive
    path: str  # as the fatbinary wrapper will open it


PTX_ENVIRONMENT = "MLIR_OFFLOAD_PTX"  # "sm_80=FILE" lines, read by toolchain/scripts/fatbinary
REAL_FATBINARY_ENVIRONMENT = "MLIR_OFFLOAD_FATBINARY"


def check_ptx_files(paths: list[str], bundle_archs: list[str], bundle: str) -> list[PtxImage]:
    """PTX files for `link --ptx`: each readable, for one of the bundle's CUDA archs (one file per arch),
    self-contained (a module with external functions cannot be JIT-compiled alone) and with a name the
    fatbinary option syntax can carry."""
    from offload.fsutil import read_input

    images: dict[str, PtxImage] = {}
    for path in paths:
        text = read_input(path).decode("utf-8", errors="replace")
        arch = ptx_target_arch(text, path)
        if arch not in bundle_archs:
            have = ", ".join(bundle_archs) or "no CUDA arch"
            raise OffloadError(f"{path}: PTX for {arch}, but {bundle} has {have}: pass the PTX that "
                               f"`mlir-offload compile` wrote beside this bundle (<bundle>.<arch>.ptx)")
        if arch in images:
            raise OffloadError(f"{path}: a second PTX file for {arch} (first: {images[arch].path})")
        external = ptx_external_functions(text)
        if external:
            raise OffloadError(f"{path}: the PTX calls {', '.join(external[:3])} defined elsewhere, so a GPU "
                               f"newer than {arch} could not JIT-compile it alone: link that device code into "
                               f"the bundle (--link-bitcode) or drop --ptx")
        absolute = os.path.abspath(path)
        if any(c in absolute for c in ",\n"):
            raise OffloadError(f"{path}: fatbinary cannot take a file name with a comma or newline: rename it")
        images[arch] = PtxImage(arch, absolute)
    return [images[arch] for arch in sorted(images)]


def ptx_environment(ptx: list[PtxImage]) -> str:
    return "\n".join(f"{image.arch}={image.path}" for image in ptx)


def inputs_with_device_code(inputs: list[str]) -> list[str]:
    """The link's other inputs that carry offload images (objects, bitcode) or may (archives that
    mention a .llvm.offloading section)."""
    from offload.packager import read_offload_images

    found = []
    for path in inputs:
        if path.startswith("-") or not os.path.isfile(path):
            continue
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            continue
        if data.startswith(b"!<arch>\n"):
            if b".llvm.offloading" in data:
                found.append(path)
            continue
        try:
            if read_offload_images(data, path):
                found.append(path)
        except OffloadError:
            continue  # not an offload container: clang judges it
    return found


def missing_ptx(executable: str, ptx: list[PtxImage]) -> list[str]:
    """Archs whose PTX the linked executable's .nv_fatbin lacks (the wrapper was not run)."""
    from offload.executable import CUDA_FATBIN_SECTION, read_executable

    images = read_executable(executable).device_sections.get(CUDA_FATBIN_SECTION, [])
    present = {i.arch for i in images if i.kind == "ptx"}
    return [image.arch for image in ptx if "compute_" + image.arch.removeprefix("sm_") not in present]


# ---- stages --------------------------------------------------------------------------------------

def bitcode_to_ptx(bitcode: bytes, arch: str, features: str, opt_level: int = 3) -> str:
    """NVPTX bitcode image -> PTX text (llvmlite's NVPTX back end)."""
    llvm = _llvm()
    module = _parse(llvm, bitcode, arch)
    machine = llvm.Target.from_triple(NVPTX_TRIPLE).create_target_machine(
        cpu=arch, features=features, opt=opt_level)
    return machine.emit_assembly(module)


def ptx_to_cubin(ptx: str, arch: str, ptxas: str, opt_level: int = 3) -> bytes:
    """PTX -> relocatable cubin (`ptxas -c`: the target's linker wrapper runs nvlink over it)."""
    with tempfile.TemporaryDirectory(prefix="mlir-offload-ptxas-") as tmp:
        src, out = os.path.join(tmp, "image.ptx"), os.path.join(tmp, "image.cubin")
        with open(src, "w", encoding="utf-8") as f:
            f.write(ptx)
        done = subprocess.run([ptxas, "-c", f"-arch={arch}", f"-O{opt_level}", src, "-o", out],
                              capture_output=True, text=True)
        if done.returncode != 0:
            detail = " ".join((done.stderr or done.stdout).split())[:400]
            raise OffloadError(f"ptxas failed for {arch}: {detail}")
        with open(out, "rb") as f:
            return f.read()


def bitcode_to_amdgpu_object(bitcode: bytes, arch: str, opt_level: int = 3) -> bytes:
    """AMDGCN bitcode image -> relocatable AMDGPU ELF object (linked by lld on the target), through the
    device side's emitter (which knows that inline asm needs llc)."""
    from offload.serialize import emit_object, parse_offload_arch

    _parse(_llvm(), bitcode, arch)  # an unreadable image is a one-line error, not an LLVM abort
    (target,) = parse_offload_arch(arch)
    return emit_object(bitcode, target, opt_level)


def host_to_object(host_bitcode: bytes, opt_level: int = 2) -> bytes:
    """Host bundle bitcode -> x86-64 ELF object (PIC, as clang's default PIE link wants), keeping the
    `.llvm.offloading` section the target's linker wrapper reads."""
    llvm = _llvm()
    module = _parse(llvm, host_bitcode, "host")
    machine = llvm.Target.from_triple(module.triple or HOST_TRIPLE).create_target_machine(
        opt=opt_level, reloc="pic")
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
    return verified_module(llvm.parse_bitcode, bitcode, f"cannot read the {what} image as LLVM bitcode")


# ---- the pipeline stage: images and host before emission ----------------------------------------

def convert_device_images(images: list, device_image: str, cuda_path: str | None = None,
                          opt_level: int = 3) -> tuple[list, dict[str, str]]:
    """OffloadImages with bitcode -> native images for `device_image` in (cubin, ptx).

    Returns (new images, PTX texts by "<arch>" for NVPTX images): the caller ships the PTX beside the
    bundle in "ptx" mode. "bitcode" returns the images unchanged."""
    from offload.packager import ImageKind

    if device_image == "bitcode":
        return list(images), {}
    ptxas = None
    converted, ptx_by_arch = [], {}
    for image in images:
        if image.image_kind != ImageKind.BITCODE:
            converted.append(image)
            continue
        triple, arch = image.strings.get("triple", ""), image.strings.get("arch", "")
        if triple.startswith("nvptx"):
            ptxas = ptxas or find_ptxas(cuda_path)
            ptx = bitcode_to_ptx(image.data, arch, ptx_feature(arch), opt_level)
            converted.append(replace(image, image_kind=int(ImageKind.CUBIN),
                                     data=ptx_to_cubin(ptx, arch, ptxas, opt_level)))
            ptx_by_arch[arch] = ptx_by_arch.get(arch, "") + ptx
        elif triple.startswith("amdgcn"):
            converted.append(replace(image, image_kind=int(ImageKind.OBJECT),
                                     data=bitcode_to_amdgpu_object(image.data, arch, opt_level)))
        else:
            raise OffloadError(f"no native image format for triple '{triple}'")
    return converted, (ptx_by_arch if device_image == "ptx" else {})


def check_offloading_section(obj: bytes, llvm_objdump: str | None = None) -> int:
    """Number of offloading images `llvm-objdump --offloading` finds in an ELF object; an error when the
    section did not survive (the target would link an executable without GPU code)."""
    tool = llvm_objdump or shutil.which("llvm-objdump-22") or shutil.which("llvm-objdump")
    if tool is None:
        raise OffloadError("llvm-objdump not found: cannot check the host object's .llvm.offloading section")
    with tempfile.TemporaryDirectory(prefix="mlir-offload-obj-") as tmp:
        path = os.path.join(tmp, "host.o")
        with open(path, "wb") as f:
            f.write(obj)
        done = subprocess.run([tool, "--offloading", path], capture_output=True, text=True)
    count = sum(1 for line in done.stdout.splitlines() if line.startswith("OFFLOADING IMAGE"))
    if done.returncode != 0 or count == 0:
        raise OffloadError("the host object has no .llvm.offloading images: the target would link an "
                           "executable without GPU code")
    return count

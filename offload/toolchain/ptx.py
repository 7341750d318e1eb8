"""PTX files for the target link: what `link --ptx` checks and hands to the fatbinary wrapper
(offload/data/scripts/fatbinary), which adds them to the executable's fatbin as `kind=ptx` images."""

from __future__ import annotations

import os
from dataclasses import dataclass

from offload.errors import OffloadError
from offload.options.compile import compile_option
from offload.options.link import link_option


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


PTX_ENVIRONMENT = "MLIR_OFFLOAD_PTX"  # "sm_80=FILE" lines, read by offload/data/scripts/fatbinary
PTX_ONLY_ENVIRONMENT = "MLIR_OFFLOAD_PTX_ONLY"  # "sm_80 sm_90": archs whose cubin the wrapper drops
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
            raise OffloadError(
                f"{path}: PTX for {arch}, but {bundle} has {have}: pass the PTX that "
                f"`mlir-offload compile` wrote beside this bundle (<bundle>.<arch>.ptx)"
            )
        if arch in images:
            raise OffloadError(f"{path}: a second PTX file for {arch} (first: {images[arch].path})")
        external = ptx_external_functions(text)
        if external:
            raise OffloadError(
                (
                    f"{path}: the PTX calls {', '.join(external[:3])} defined elsewhere, so a GPU "
                    f"newer than {arch} could not JIT-compile it alone: link that device code into the bundle (",
                    compile_option("link_bitcode"),
                    ") or drop ",
                    link_option("ptx"),
                )
            )
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
    from offload.toolchain.executable import CUDA_FATBIN_SECTION, read_executable

    images = read_executable(executable).device_sections.get(CUDA_FATBIN_SECTION, [])
    present = {i.arch for i in images if i.kind == "ptx"}
    return [image.arch for image in ptx if "compute_" + image.arch.removeprefix("sm_") not in present]

"""The target clang's CUDA device link, run at compile: a cubin that is what the link of a bitcode image
would make of it, byte for byte, so that `compile --device-image=cubin` leaves the link no device LTO and
no ptxas (and the device-image cache keeps the cubin: an unchanged image is never assembled again).

clang's linker wrapper hands a bitcode image to clang-nvlink-wrapper, which runs LLVM's full LTO over it
(`lto<O2>` without a -O of its own: the profile's `device_lto_opt_level`), NVPTX code generation at the
same level with the PTX feature the clang driver picks for the toolkit (`--plugin-opt=-mattr=+ptxNN`),
then `ptxas -m64 -c -O3`. Here the same image (NVVM reflect only, as for a bitcode image) goes through
opt and llc of our LLVM major, in processes of their own, and the same ptxas (measured with clang 22.1.8,
CUDA 13.0: the PTX and the cubin are byte-identical to the link's; tests/unit/toolchain/test_device_lto_cubin.py).
Without those tools, or a clang of the profile's major to ask for the feature, the in-process code
generation (offload.device.native) makes the cubin instead.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from dataclasses import dataclass

from offload import trace
from offload.about import LLVM_MAJOR
from offload.cache.facts import remembered
from offload.device.optimizer import IN_PROCESS, OPT_ENVIRONMENT, llvm_tool_names
from offload.errors import OffloadError
from offload.interrupts import temporary_folder
from offload.toolchain.tools import clang_candidates, tool_version


@dataclass(frozen=True)
class DeviceLto:
    """The tools and settings of the target's CUDA device link: opt and llc of our LLVM major, the LTO
    level, and the +ptxNN feature its driver gives the device link for this toolkit."""

    opt: str
    llc: str
    opt_level: int
    ptx_feature: str  # "+ptx88"
    ptxas_flags: tuple[str, ...] = ("-m64",)  # the nvlink wrapper's (-m64 changes the cubin's bytes, not its code)

    def identity(self) -> list[str]:
        """What the cubin depends on beyond the image and ptxas (the device-image cache key's part)."""
        return [
            f"device lto<O{self.opt_level}> {self.ptx_feature} ptxas {' '.join(self.ptxas_flags)}",
            f"opt {_llvm_version(self.opt)}",
            f"llc {_llvm_version(self.llc)}",
        ]

    def ptx(self, bitcode: bytes, arch: str, opt_level: int) -> str:
        """The PTX of an image: `lto<On>` then NVPTX code generation at n, the LTO level (or the user's -O if lower)."""
        level = min(opt_level, self.opt_level)
        with temporary_folder("mlir-offload-device-lto-") as tmp:
            image, linked = os.path.join(tmp, "image.bc"), os.path.join(tmp, "linked.bc")
            with open(image, "wb") as f:
                f.write(bitcode)
            _run([self.opt, f"-passes=lto<O{level}>", image, "-o", linked], "opt")
            # The linker wrapper's code generator prints no comments (asm-verbose off): the same PTX text.
            command = [self.llc, f"-O{level}", "-mtriple=nvptx64-nvidia-cuda", f"-mcpu={arch}"]
            command += [f"-mattr={self.ptx_feature}", "-asm-verbose=false", linked, "-o", "-"]
            return _run(command, "llc").decode("utf-8")


def _run(command: list[str], what: str) -> bytes:
    trace.tool(command)
    done = subprocess.run(command, capture_output=True)
    if done.returncode != 0:
        detail = " ".join(done.stderr.decode("utf-8", "replace").split())[:400]
        raise OffloadError(f"the device link's {what} failed: {detail}")
    return done.stdout


# The feature clang's driver passes its nvlink wrapper ("--plugin-opt=-mattr=+ptx88"), and its version line.
_PTX_FEATURE = re.compile(r'"--plugin-opt=-mattr=(\+ptx[0-9]+)"')
_CLANG_VERSION = re.compile(r"clang version ([0-9]+)\.")
_PTX_FEATURE_VALUE = re.compile(r"\+ptx[0-9]+")


# The toolkit's files clang's driver reads its CUDA version from: a changed one is asked again.
_CUDA_VERSION_FILES = ("version.json", "version.txt", "include/cuda.h")


def driver_ptx_feature(clang: str, arch: str, cuda_root: str, major: int | None = None) -> str | None:
    """The +ptxNN feature `clang` gives the device link of `arch` with the toolkit at `cuda_root` (its
    `-###` of an NVPTX link; the input only has to exist), if that clang is of `major` (its -### says).
    Asked once per clang, arch and toolkit, and remembered (offload.cache.facts)."""
    answer = remembered(
        "clang nvptx link feature",
        [clang],
        lambda: _ask_driver(clang, arch, cuda_root),
        _is_driver_answer,
        arguments=[arch, cuda_root],
        inputs=[os.path.join(cuda_root, name) for name in _CUDA_VERSION_FILES],
    )
    if answer is None:
        return None
    version, feature = answer
    if major is not None and version != major:
        return None
    return feature


def _ask_driver(clang: str, arch: str, cuda_root: str) -> list | None:
    """[clang's major or None, the +ptxNN feature or None] from its -### of an NVPTX link; None when it cannot run."""
    with temporary_folder("mlir-offload-device-lto-") as tmp:
        empty = os.path.join(tmp, "empty.o")
        open(empty, "wb").close()
        command = [clang, "--target=nvptx64-nvidia-cuda", f"-march={arch}", f"--cuda-path={cuda_root}", "-###", empty]
        try:
            done = subprocess.run(command, capture_output=True, text=True, errors="replace", timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            return None
    version = _CLANG_VERSION.search(done.stderr)
    found = _PTX_FEATURE.search(done.stderr)
    return [int(version.group(1)) if version else None, found.group(1) if found else None]


def _is_driver_answer(answer: object) -> bool:
    return (
        isinstance(answer, list)
        and len(answer) == 2
        and (answer[0] is None or (isinstance(answer[0], int) and not isinstance(answer[0], bool)))
        and (answer[1] is None or (isinstance(answer[1], str) and _PTX_FEATURE_VALUE.fullmatch(answer[1]) is not None))
    )


def find_device_lto(profile, arch: str, cuda_root: str | None) -> DeviceLto | None:
    """The target's device link for `arch`, where this machine can run it as the target would: the
    profile records the level, opt and llc of our LLVM major exist, and a clang of the profile's major
    (the link's clang discovery order) names the PTX feature. None otherwise (the in-process code
    generation then makes the cubin). One process per arch, the first time: the clang's -###, which also
    gives its version (remembered: offload.cache.facts)."""

    level = profile.cuda.get("device_lto_opt_level")
    if level is None or cuda_root is None or profile.llvm_major != LLVM_MAJOR:
        return None
    if os.environ.get(OPT_ENVIRONMENT) == IN_PROCESS:  # the user asked for no LLVM tools
        return None
    opt, llc = _llvm_tool("opt"), _llvm_tool("llc")
    if opt is None or llc is None:
        return None
    for candidate in clang_candidates(profile.clang_major):
        clang = shutil.which(candidate)
        feature = clang and driver_ptx_feature(clang, arch, cuda_root, profile.clang_major)
        if feature:
            return DeviceLto(opt, llc, int(level), feature)
    return None


@functools.cache
def _llvm_version(tool: str) -> str | None:
    return tool_version(tool, "LLVM")


@functools.cache
def _llvm_tool(tool: str) -> str | None:
    """An LLVM tool of our major: a versioned name (Debian's opt-22, /usr/lib/llvm-22/bin/opt) is taken as
    it says, a plain one only if its --version says so (once per process: each arch asks)."""
    for name in llvm_tool_names(tool, LLVM_MAJOR):
        path = shutil.which(name)
        if path and (name != tool or (_llvm_version(path) or "").split(".")[0] == str(LLVM_MAJOR)):
            return path
    return None

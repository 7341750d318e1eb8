"""The bitcode a device image links beside its own code: finding the vendor device libraries (libdevice,
ROCm ocml/ockl/oclc) and reading each bitcode file once per process (later links clone the parsed module
instead of parsing it again); reading and checking --link-bitcode libraries; the module flags the vendor
libraries read. Shared by both backends of the skeleton (llvm_tools.py, llvmlite_backend.py)."""

from __future__ import annotations

import glob
import os
import threading
from pathlib import Path

from offload.errors import OffloadError
from offload.formats.targets import Target
from offload.fsutil import read_input
from offload.options import compile_option
from offload.toolchain.tools import cuda_roots, rocm_device_lib_dirs, rocm_roots

LIBDEVICE_IN_TOOLKIT = Path("nvvm") / "libdevice" / "libdevice.10.bc"


def find_libdevice(explicit: str | None) -> str:
    """libdevice.10.bc: --libdevice, then the CUDA toolkits in offload/toolchain/tools.py's search order,
    Debian's toolkit, then the nvidia-nvvm wheel. Not found: an error that lists where it looked."""
    looked: list[str] = []
    if explicit:
        path = Path(explicit)
        if path.is_dir():
            path = path / "libdevice.10.bc"
        if path.is_file():
            return str(path)
        if Path(explicit).is_dir():
            raise OffloadError(
                (
                    compile_option("libdevice", f"'{explicit}'"),
                    " is a folder without libdevice.10.bc: name the file or the folder that holds it (CUDA: "
                    "nvvm/libdevice)",
                )
            )
        what = "is not a file" if path.exists() else "does not exist"
        raise OffloadError(
            (compile_option("libdevice", f"'{explicit}'"), f" {what} (expected libdevice.10.bc or its folder)")
        )
    candidates = [Path(root) / LIBDEVICE_IN_TOOLKIT for root in cuda_roots()]
    candidates.append(Path("/usr/lib/nvidia-cuda-toolkit/libdevice/libdevice.10.bc"))  # Debian's toolkit
    candidates += _nvidia_wheel_libdevice()
    for path in candidates:
        looked.append(str(path))
        if path.is_file():
            return str(path)
    looked.append("the nvidia-nvvm wheel (not installed)" if not _nvidia_wheel_roots() else "")
    raise OffloadError(
        (
            "libdevice.10.bc is needed (the device code calls __nv_* math functions) but was not "
            f"found; looked in: {', '.join(filter(None, looked))}; fix: pass ",
            compile_option("libdevice", "PATH"),
            ", set CUDA_HOME to a CUDA toolkit, or `pip install nvidia-nvvm`",
        )
    )


def _nvidia_wheel_roots() -> list[Path]:
    import importlib.util

    spec = importlib.util.find_spec("nvidia")
    return [Path(p) for p in (spec.submodule_search_locations or [])] if spec else []


def _nvidia_wheel_libdevice() -> list[Path]:
    found: list[Path] = []
    for root in _nvidia_wheel_roots():
        found += [Path(p) for p in sorted(glob.glob(str(root / "*" / "nvvm" / "libdevice" / "libdevice*.bc")))]
        found += [Path(p) for p in sorted(glob.glob(str(root / "nvvm" / "libdevice" / "libdevice*.bc")))]
    return found


def find_rocm_device_libs(explicit: str | None) -> str:
    """The folder holding ocml.bc/ockl.bc/oclc_*.bc: --rocm-device-lib-path, else the ROCm roots in
    offload/toolchain/tools.py's search order, then the distribution's folders (Debian's rocm-device-libs)."""
    if explicit:
        if (Path(explicit) / "ocml.bc").is_file():
            return explicit
        raise OffloadError((compile_option("rocm_device_lib_path", f"'{explicit}'"), " has no ocml.bc"))
    candidates = rocm_device_lib_dirs(rocm_roots())
    for folder in candidates:
        if (Path(folder) / "ocml.bc").is_file():
            return folder
    raise OffloadError(
        (
            "the ROCm device libraries (ocml.bc, ockl.bc, oclc_*.bc) are needed but were not found; "
            f"looked in: {', '.join(candidates)}; fix: pass ",
            compile_option("rocm_device_lib_path", "DIR"),
            ", set ROCM_PATH, or install rocm-device-libs",
        )
    )


# What an error about a device library the user pointed at says to do.
LIBRARY_FIX = (
    "point ",
    compile_option("libdevice"),
    " or ",
    compile_option("rocm_device_lib_path"),
    " at the toolkit's library",
)
_bytes: dict[str, bytes] = {}
_bytes_lock = threading.Lock()


def bitcode_bytes(path: str, what: str) -> bytes:
    """A device library's bytes, read once per process (parsing needs the caller's LLVM context)."""
    key = os.path.realpath(path)
    with _bytes_lock:
        if key not in _bytes:
            try:
                _bytes[key] = Path(path).read_bytes()
            except OSError as e:
                raise OffloadError(f"cannot read {what} '{path}': {e.strerror}") from None
        return _bytes[key]


def read_link_bitcode(path: str) -> bytes:
    """A --link-bitcode library's bytes; a missing file, a folder or a device is one error naming the flag."""
    try:
        return read_input(path)
    except OffloadError as e:
        raise OffloadError((compile_option("link_bitcode"), ": ", *e.parts)) from None


def check_library_triple(path: str, triple: str, target: Target) -> None:
    """A --link-bitcode library for another triple is refused (an empty triple links anywhere)."""
    if triple and triple != target.triple:
        raise OffloadError(
            (
                compile_option("link_bitcode", f"'{path}'"),
                f" is for '{triple}', not for {target.arch} ({target.triple}); give one library per target triple",
            )
        )


def module_flags_ir(flags, target: Target) -> str:
    """LLVM IR of a module holding only llvm.module.flags, built with llvmlite.ir (no LLVM loaded)."""
    import llvmlite.ir as lir  # 40 ms: imported while MLIR lowers (pipeline.py), not by every command

    holder = lir.Module(name="offload.flags")
    holder.triple = target.triple
    i32 = lir.IntType(32)
    for behaviour, name, value in flags:
        holder.add_named_metadata("llvm.module.flags", holder.add_metadata([i32(behaviour), name, i32(value)]))
    return str(holder)

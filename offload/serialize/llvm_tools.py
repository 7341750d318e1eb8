"""An image's LLVM stages through LLVM's tools (optimizer.py says which and why), one process each:

    llvm-link  the gpu.modules' IR into one module
    llvm-link  + module flags + the device libraries, only what the code calls (--only-needed), internalized
               (not in one: llvm-link applies --only-needed to every file after the first)
    opt        internalize all but the kernels and the user's globals, then the pipeline (pipeline_text)

then the unresolved-call check on the image's declarations, read by our own bitcode reader. The tools see
files in a private temporary folder; what they print goes into the error when one fails."""

from __future__ import annotations

import os
import subprocess
import tempfile

from offload.errors import OffloadError
from offload.compiler import trace
from offload.serialize.libraries import LIBRARY_FIX, is_bitcode
from offload.serialize.optimizer import Optimizer, pipeline_text


def link_and_optimize(lowered: list, target, kind, options, optimizer: Optimizer, lto_pre_link: bool,
                      keep: list[str]) -> bytes:
    """The optimized bitcode of one target's image. lowered: pipeline.LoweredModule; keep: the names that
    stay externally visible. The data layout is the one opt gives the triple, set by opt as it reads the
    linked module (the linker keeps whichever one it met first)."""
    from offload.serialize.pipeline import declares_call_into, module_flags_ir
    from offload.packager.bitcode_ident import bitcode_module

    if any("\n" in name or "\r" in name for name in keep):
        raise OffloadError("a device symbol name holds a line break, which opt's internalize list cannot name")
    with tempfile.TemporaryDirectory(prefix="mlir-offload-llvm-") as folder:
        def write(name: str, data: bytes) -> str:
            path = os.path.join(folder, name)
            with open(path, "wb") as out:
                out.write(data)
            return path

        sources = [write(f"module{i}.ll", m.llvm_ir.encode()) for i, m in enumerate(lowered)]
        own = os.path.join(folder, "own.bc")
        _run([optimizer.link, *sources, "-o", own],
             f"internal error: llvm-link failed to link the gpu.modules of the {target.arch} image")
        # What the code calls shows only now: the ROCDL translation itself adds __ockl_* calls.
        with open(own, "rb") as linked_own:
            module = bitcode_module(linked_own.read())
        if module is None:
            raise OffloadError(f"internal error: llvm-link wrote a {target.arch} module our bitcode reader cannot read")
        libraries = kind.plan_libraries(target, options, declares_call_into(module, kind.library_prefixes))
        libraries.show()
        flags = write("flags.ll", module_flags_ir(libraries.module_flags, target).encode())
        linked = os.path.join(folder, "linked.bc")
        for path in libraries.files:
            _check_bitcode_header(path)
        _run([optimizer.link, own, "--only-needed", "--internalize", flags, *libraries.files, "-o", linked],
             f"cannot link the device libraries into the {target.arch} image", LIBRARY_FIX)
        keep_file = write("keep.txt", "".join(f"{name}\n" for name in keep).encode())
        image = os.path.join(folder, "image.bc")
        command = [optimizer.path, *(f"-nvvm-reflect-add={name}={value}" for name, value in libraries.reflect),
                   f"-mcpu={target.arch}", *([f"-mattr={target.features}"] if target.features else []),
                   f"--data-layout={optimizer.data_layout(target.triple)}",
                   f"-internalize-public-api-file={keep_file}",
                   f"-passes=internalize,{pipeline_text(options.opt_level, lto_pre_link, kind.pre_link_passes)}",
                   linked, "-o", image]
        _run(command, f"internal error: {os.path.basename(optimizer.path)} failed to optimize the {target.arch} image")
        with open(image, "rb") as result:
            return result.read()


def _check_bitcode_header(path: str) -> None:
    try:
        with open(path, "rb") as library:
            head = library.read(4)
    except OSError as e:
        raise OffloadError(f"cannot read device library '{path}': {e.strerror}") from None
    if not is_bitcode(head):
        raise OffloadError(f"device library '{path}' is not valid LLVM bitcode (no bitcode header): {LIBRARY_FIX}")


def _run(command: list[str], failure: str, fix: str = "") -> None:
    """command, or an OffloadError: `failure`, what the tool printed (or how it ended), then `fix`."""
    trace.tool(command)
    try:
        done = subprocess.run(command, capture_output=True)
    except OSError as e:
        raise OffloadError(f"cannot run {command[0]}: {e.strerror}") from None
    if done.returncode != 0:
        how = (f"killed by signal {-done.returncode}" if done.returncode < 0 else f"exit status {done.returncode}")
        detail = " ".join(done.stderr.decode("utf-8", "replace").split())[:300] or how
        raise OffloadError(f"{failure}: {detail}" + (f": {fix}" if fix else ""))

"""An image's LLVM stages through LLVM's tools (optimizer.py says which and why), one process each:

    llvm-link  the gpu.modules' IR into one module (only when there are several)
    llvm-link  + module flags + the device libraries, only what the code calls (--only-needed), internalized
    opt        internalize all but the kernels and the user's globals, then the pipeline (pipeline_text)

then the unresolved-call check on the image's declarations, read by our own bitcode reader. The tools see
files in a private temporary folder; what they print goes into the error when one fails."""

from __future__ import annotations

import os
import subprocess
import tempfile

from offload.errors import OffloadError
from offload.build import trace
from offload.build.device.optimizer import Optimizer, pipeline_text


def link_and_optimize(lowered: list, target, kind, options, optimizer: Optimizer, lto_pre_link: bool,
                      libraries, keep: list[str]) -> bytes:
    """The optimized bitcode of one target's image. lowered: pipeline.LoweredModule; libraries:
    kinds.LibraryPlan; keep: the names that stay externally visible. The data layout is the one opt gives
    the triple, set by opt as it reads the linked module (the linker keeps whichever one it met first)."""
    from offload.build.device.pipeline import module_flags_ir

    if any("\n" in name or "\r" in name for name in keep):
        raise OffloadError("a device symbol name holds a line break, which opt's internalize list cannot name")
    with tempfile.TemporaryDirectory(prefix="mlir-offload-llvm-") as folder:
        def write(name: str, data: bytes) -> str:
            path = os.path.join(folder, name)
            with open(path, "wb") as out:
                out.write(data)
            return path

        sources = [write(f"module{i}.ll", m.llvm_ir.encode()) for i, m in enumerate(lowered)]
        own = sources[0]
        if len(sources) > 1:  # llvm-link applies --only-needed to every file after the first
            own = os.path.join(folder, "own.bc")
            _run([optimizer.link, *sources, "-o", own], "link the gpu.modules of", target)
        flags = write("flags.ll", module_flags_ir(libraries.module_flags, target).encode())
        linked = os.path.join(folder, "linked.bc")
        _run([optimizer.link, own, "--only-needed", "--internalize", flags, *libraries.files, "-o", linked],
             "link the device libraries into", target)
        keep_file = write("keep.txt", "".join(f"{name}\n" for name in keep).encode())
        image = os.path.join(folder, "image.bc")
        command = [optimizer.path, *(f"-nvvm-reflect-add={name}={value}" for name, value in libraries.reflect),
                   f"-mcpu={target.arch}", *([f"-mattr={target.features}"] if target.features else []),
                   f"--data-layout={optimizer.data_layout(target.triple)}",
                   f"-internalize-public-api-file={keep_file}",
                   f"-passes=internalize,{pipeline_text(options.opt_level, lto_pre_link)}", linked, "-o", image]
        _run(command, "optimize", target)
        with open(image, "rb") as result:
            return result.read()


def _run(command: list[str], what: str, target) -> None:
    trace.tool(command)
    try:
        done = subprocess.run(command, capture_output=True)
    except OSError as e:
        raise OffloadError(f"cannot run {command[0]}: {e.strerror}") from None
    if done.returncode != 0:
        how = (f"was killed by signal {-done.returncode}" if done.returncode < 0
               else f"exit status {done.returncode}")
        detail = " ".join(done.stderr.decode("utf-8", "replace").split())[:300] or how
        raise OffloadError(f"internal error: {os.path.basename(command[0])} failed to {what} the {target.arch} "
                           f"image: {detail}")

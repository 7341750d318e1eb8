"""Which LLVM optimizes a device image, and with which pipeline.

llvmlite's LLVM is a build with assertions; a release-build `opt` of the same LLVM major (Debian's
opt-22) runs the same passes in about two thirds of the CPU time, bitcode round trip included (measured
by scripts/bench_device.py), so it is used wherever the build machine has one. MLIR_OFFLOAD_OPT names
another opt, or `llvmlite` for the in-process optimizer.

The pipeline follows clang: an image the target clang LTO-links and optimizes again (a bitcode image)
gets the full-LTO pre-link pipeline (`lto-pre-link<On>`, what clang runs for -flto=full -emit-llvm-bc);
an image codegen turns into native code here (cubin, PTX, portable) gets the whole `default<On>`."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass

from offload.errors import OffloadError
from offload.formats.targets import Target

OPT_ENVIRONMENT = "MLIR_OFFLOAD_OPT"
IN_PROCESS = "llvmlite"


@dataclass(frozen=True)
class Optimizer:
    """An external opt (path and version), or llvmlite in-process (path None)."""

    path: str | None
    version: str

    def describe(self) -> str:
        return f"{self.path} {self.version}" if self.path else f"llvmlite LLVM {self.version}"


def find_optimizer(opt_level: int) -> Optimizer:
    """A release-build opt of our LLVM major where there is one (and the optimizer runs: at -O0 the
    process start would cost more than the few passes), else llvmlite."""
    import llvmlite.binding as llvm

    from offload.build.device.pipeline import find_llvm_tool
    from offload.target.toolchain import tool_version

    in_process = Optimizer(None, ".".join(map(str, llvm.llvm_version_info)))
    chosen = os.environ.get(OPT_ENVIRONMENT)
    if chosen == IN_PROCESS or (opt_level == 0 and not chosen):
        return in_process
    major = llvm.llvm_version_info[0]
    path = find_llvm_tool("opt", major, (chosen,) if chosen else None)
    if path is None:
        if chosen:
            raise OffloadError(f"{OPT_ENVIRONMENT}='{chosen}' is not an opt of LLVM {major}: name one "
                               f"(e.g. opt-{major}) or '{IN_PROCESS}'")
        return in_process
    return Optimizer(path, tool_version(path, "LLVM") or "")


def pipeline_text(opt_level: int, lto_pre_link: bool) -> str:
    """The new pass manager's pipeline: dead globals out before and after, clang's pre-link or default."""
    main = f"lto-pre-link<O{opt_level}>" if lto_pre_link else f"default<O{opt_level}>"
    return f"globaldce,{main},globaldce,strip-dead-prototypes"


def run_opt(optimizer: Optimizer, bitcode: bytes, target: Target, opt_level: int, reflect,
            lto_pre_link: bool) -> bytes:
    """The optimized bitcode of a linked image, from the external opt (which verifies its output)."""
    command = [optimizer.path, f"-mcpu={target.arch}", f"-passes={pipeline_text(opt_level, lto_pre_link)}",
               "-o", "-", "-"]
    if target.features:
        command.insert(2, f"-mattr={target.features}")
    command[1:1] = [f"-nvvm-reflect-add={name}={value}" for name, value in reflect]
    done = subprocess.run(command, input=bitcode, capture_output=True)
    if done.returncode != 0 or not done.stdout:
        detail = " ".join(done.stderr.decode("utf-8", "replace").split())[:300] or f"exit status {done.returncode}"
        raise OffloadError(f"internal error: {optimizer.path} failed to optimize the {target.arch} image: {detail}")
    return done.stdout

"""Native code from a device image in this process (llvmlite's code generators): PTX, AMDGPU objects; an
external llc where llvmlite cannot assemble the image (AMDGPU inline asm)."""

from __future__ import annotations

import subprocess

from offload import trace
from offload.device.llvmlite_backend import fresh_context, target_machine
from offload.device.optimizer import find_llvm_tool
from offload.errors import OffloadError
from offload.formats.targets import Target
from offload.formats.vendors import vendor_for
from offload.options import DEFAULT_OPT_LEVEL, compile_option
from offload.processes import call_forked, in_forked_child


def emit_assembly(bitcode: bytes, target: Target, opt_level: int = DEFAULT_OPT_LEVEL) -> str:
    """PTX (or AMDGPU assembly) for an image: the one NVPTX code generator (cubins are assembled from it).
    NVPTX numbers call sites with a counter that lives as long as the target's machine, made once per process
    (the PTX's `callseq N` comments): an image's assembly is emitted in a process that emitted none before,
    the child forked for the image or one forked now, so that it is the same whichever images were emitted
    before it (a second compile in one Python process, through the API, gave other comments)."""
    if in_forked_child():
        return _assembly(bitcode, target, opt_level)
    return call_forked(
        lambda _: _assembly(bitcode, target, opt_level), None, f"emitting the {target.arch} assembly crashed"
    )


def _assembly(bitcode: bytes, target: Target, opt_level: int) -> str:
    import llvmlite.binding as llvm

    return target_machine(target, opt_level).emit_assembly(llvm.parse_bitcode(bitcode, fresh_context()))


def emit_object(bitcode: bytes, target: Target, opt_level: int = DEFAULT_OPT_LEVEL) -> bytes:
    """A relocatable object for an image. llvmlite has no AMDGPU assembly parser: an AMDGPU module with
    inline asm (ockl has some) would abort the process in-process, so it goes through llc instead."""
    import llvmlite.binding as llvm

    module = llvm.parse_bitcode(bitcode, fresh_context())
    if not vendor_for(target.offload_kind).llvmlite_assembles_inline_asm and _has_inline_asm(module):
        return llc_object(bitcode, target, opt_level)
    return target_machine(target, opt_level).emit_object(module)


def find_llc(llvm_major: int, candidates: tuple[str, ...] | None = None) -> str | None:
    """An llc of our LLVM major (an older one could not read our bitcode), by Debian name first."""
    return find_llvm_tool("llc", llvm_major, candidates)


def llc_object(bitcode: bytes, target: Target, opt_level: int = DEFAULT_OPT_LEVEL, llc: str | None = None) -> bytes:
    """The object of an image through an external llc of our LLVM major, or a one-line refusal with the fix."""
    import llvmlite.binding as llvm

    major = llvm.llvm_version_info[0]
    llc = llc or find_llc(major)
    if llc is None:
        raise OffloadError(
            (
                f"cannot emit a {target.arch} object: its device code has inline asm (from the ROCm device "
                f"libraries), which llvmlite's AMDGPU target cannot assemble, and no llc of LLVM {major} was found "
                f"(looked for llc-{major}, /usr/lib/llvm-{major}/bin/llc, llc): install llvm-{major}, or keep "
                "bitcode device images (",
                compile_option("device_image", "bitcode", joined=True),
                f") for a clang that reads LLVM {major} bitcode",
            )
        )
    command = [
        llc,
        f"-mtriple={target.triple}",
        f"-mcpu={target.arch}",
        f"-O{opt_level}",
        "--relocation-model=pic",
        "-filetype=obj",
        "-o",
        "-",
        "-",
    ]
    if target.features:
        command.insert(3, f"-mattr={target.features}")
    trace.tool(command)
    done = subprocess.run(command, input=bitcode, capture_output=True)
    if done.returncode != 0 or not done.stdout:
        detail = " ".join(done.stderr.decode("utf-8", "replace").split()) or f"exit status {done.returncode}"
        raise OffloadError(f"llc failed to emit the {target.arch} object: {detail}")
    return done.stdout


def _has_inline_asm(module) -> bool:
    import llvmlite.binding as llvm

    return any(
        operand.value_kind == llvm.ValueKind.inline_asm
        for function in module.functions
        for block in function.blocks
        for instruction in block.instructions
        for operand in instruction.operands
    )

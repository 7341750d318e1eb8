"""Real device images for the packager tests, made once per session with the installed tools."""

from __future__ import annotations

import subprocess
from pathlib import Path

from conftest import SHARED_REFERENCE, require_tool

HIP_IR = """target triple = "amdgcn-amd-amdhsa"
define amdgpu_kernel void @fill(ptr addrspace(1) %x, float %a) {
  store float %a, ptr addrspace(1) %x, align 4
  ret void
}
"""


def nvptx_ir_without_libdevice() -> str:
    """The reference NVPTX module with only the kernel `fill` (no libdevice call)."""
    lines, skipping = [], False
    for line in (SHARED_REFERENCE / "handwritten_device.ll").read_text().splitlines():
        if line.startswith("define ptx_kernel void @vsqrt"):
            skipping = True
        if skipping:
            skipping = line != "}"
            continue
        if "__nv_sqrtf" in line or "!1 = " in line:
            continue
        lines.append(line.replace("!{!0, !1}", "!{!0}"))
    return "\n".join(lines) + "\n"


def make_inputs(directory: Path) -> dict[str, Path]:
    llvm_as = require_tool("llvm-as-22", 22)
    llc = require_tool("llc-22", 22)
    ptxas = require_tool("ptxas")
    (directory / "dev.ll").write_text(nvptx_ir_without_libdevice())
    (directory / "hip.ll").write_text(HIP_IR)
    subprocess.run([llvm_as, "dev.ll", "-o", "dev.bc"], cwd=directory, check=True)
    subprocess.run([llvm_as, "hip.ll", "-o", "hip.bc"], cwd=directory, check=True)
    subprocess.run([llc, "-march=nvptx64", "-mcpu=sm_80", "dev.ll", "-o", "dev.s"], cwd=directory, check=True)
    subprocess.run([ptxas, "-arch", "sm_80", "dev.s", "-o", "dev.cubin"], cwd=directory, check=True)
    return {name: directory / name for name in ("dev.bc", "hip.bc", "dev.s", "dev.cubin", "dev.ll")}


def host_module_embedding(blob: bytes, with_function: bool = False):
    """An llvmlite.ir host module embedding `blob` as clang's -fembed-offload-object does."""
    import llvmlite.ir as ir

    from offload.host.embed import embed_offload_binary

    module = ir.Module("host")
    module.triple = "x86_64-unknown-linux-gnu"
    embed_offload_binary(module, blob)
    if with_function:
        f = ir.Function(module, ir.FunctionType(ir.VoidType(), []), "main_stub")
        ir.IRBuilder(f.append_basic_block()).ret_void()
    return module

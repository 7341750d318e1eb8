"""Device-side serialization: every gpu.module of a program, for every target, becomes one LLVM bitcode
image with the vendor device libraries linked. Public API used by the device and host steps."""

from offload.formats.targets import AMDGPU_TRIPLE, NVPTX_TRIPLE, Target, parse_offload_arch
from offload.options import CompileOptions
from offload.serialize.codegen import emit_assembly, emit_object
from offload.serialize.images import DeviceImage, symbol_name
from offload.serialize.pipeline import compile_device

__all__ = [
    "AMDGPU_TRIPLE", "NVPTX_TRIPLE", "CompileOptions", "DeviceImage", "Target",
    "compile_device", "emit_assembly", "emit_object", "parse_offload_arch", "symbol_name",
]

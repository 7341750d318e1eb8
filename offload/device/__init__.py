"""Device-side serialization: every gpu.module of a program, for every target, becomes one LLVM bitcode
image with the vendor device libraries linked. Public API used by the device and host steps.

The names load on first use (PEP 562): importing one module of this package (its image cache entries',
for one) must not load the device pipeline, MLIR or LLVM."""

from importlib import import_module

_WHERE = {
    "AMDGPU_TRIPLE": "offload.formats.targets",
    "NVPTX_TRIPLE": "offload.formats.targets",
    "Target": "offload.formats.targets",
    "parse_offload_arch": "offload.formats.targets",
    "CompileOptions": "offload.options",
    "emit_assembly": "offload.device.codegen",
    "emit_object": "offload.device.codegen",
    "DeviceImage": "offload.device.images",
    "symbol_name": "offload.device.images",
    "compile_device": "offload.device.pipeline",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str):
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(_WHERE[name]), name)
    globals()[name] = value
    return value

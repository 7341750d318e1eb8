"""What this machine has for *making* bundles (the build side): the MLIR bindings and llvmlite."""

from __future__ import annotations

import os

from offload.errors import OffloadError


def report_compiler() -> list[str]:
    """What this machine has for *making* bundles (the build side): MLIR bindings and llvmlite.
    A target machine needs neither, so their absence is reported, never an error."""
    from importlib import metadata

    from offload.build.frontend import import_mlir

    lines = []
    try:
        ir, _ = import_mlir()
        try:
            version = metadata.version("xtc-mlir-python-bindings")
        except metadata.PackageNotFoundError:
            version = "version unknown"
        lines.append(f"MLIR Python bindings ({version}): {os.path.dirname(os.path.dirname(ir.__file__))}")
    except OffloadError:
        lines.append("MLIR Python bindings: not loadable (this machine can link bundles, not compile them)")
    try:
        import llvmlite
        import llvmlite.binding as llvm

        lines.append(f"llvmlite {llvmlite.__version__}: LLVM {'.'.join(map(str, llvm.llvm_version_info))}, "
                     f"assertions {llvm.llvm_assertions_state}")
    except (ImportError, OSError):
        lines.append("llvmlite: not loadable (this machine can link bundles, not compile them)")
    return lines

"""What this machine has for *making* bundles (the build side): the MLIR bindings and llvmlite."""

from __future__ import annotations

import os

from offload.errors import OffloadError

MLIR_BINDINGS_DISTRIBUTION = "xtc-mlir-python-bindings"
# The LLVM major of the pinned MLIR bindings (the IR they translate to) and of llvmlite (pyproject.toml):
# LLVM's tools must be of it. Known without loading either (tests/unit/device/test_device_optimizer.py checks both).
LLVM_MAJOR = 22


def version_lines() -> list[str]:
    """`--version`'s lines after mlir-offload's own: the MLIR bindings (from their installed metadata, without
    importing mlir) and the LLVM that llvmlite carries (which compile's device and host code generation use)."""
    from importlib import metadata

    try:
        lines = [f"MLIR Python bindings: {MLIR_BINDINGS_DISTRIBUTION} {metadata.version(MLIR_BINDINGS_DISTRIBUTION)}"]
    except metadata.PackageNotFoundError:
        lines = ["MLIR Python bindings: not installed (this machine can link bundles, not compile them)"]
    try:
        import llvmlite
        import llvmlite.binding as llvm

        lines.append(f"LLVM {'.'.join(map(str, llvm.llvm_version_info))} (llvmlite {llvmlite.__version__})")
    except (ImportError, OSError):
        lines.append("LLVM: llvmlite not loadable (this machine can link bundles, not compile them)")
    return lines


def report_compiler() -> list[str]:
    """What this machine has for *making* bundles (the build side): MLIR bindings and llvmlite.
    A target machine needs neither, so their absence is reported, never an error."""
    from importlib import metadata

    from offload.mlir.frontend import import_mlir

    lines = []
    try:
        ir, _ = import_mlir()
        try:
            version = metadata.version(MLIR_BINDINGS_DISTRIBUTION)
        except metadata.PackageNotFoundError:
            version = "version unknown"
        lines.append(f"MLIR Python bindings ({version}): {os.path.dirname(os.path.dirname(ir.__file__))}")
    except OffloadError:
        lines.append("MLIR Python bindings: not loadable (this machine can link bundles, not compile them)")
    try:
        import llvmlite
        import llvmlite.binding as llvm

        lines.append(
            f"llvmlite {llvmlite.__version__}: LLVM {'.'.join(map(str, llvm.llvm_version_info))}, "
            f"assertions {llvm.llvm_assertions_state}"
        )
    except (ImportError, OSError):
        lines.append("llvmlite: not loadable (this machine can link bundles, not compile them)")
    return lines

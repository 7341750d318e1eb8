"""mlir-offload: MLIR GPU-dialect programs to clang-compatible offload bundles."""

__version__ = "0.1.0"

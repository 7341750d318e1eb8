"""Build side: needs the MLIR bindings and llvmlite. Frontend, compile stages, device serialization,
host code generation, native device code."""

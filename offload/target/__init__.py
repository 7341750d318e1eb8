"""Target side: needs only clang and the vendor toolkit (never mlir, llvmlite or offload.build).
Toolchain discovery, link, verify, reading executables, ship archives, doctor findings."""

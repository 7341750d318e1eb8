"""Target side: needs only clang and the vendor toolkit (never mlir, llvmlite or offload.driver).
Toolchain discovery, link, verify, reading executables, ship archives, doctor findings."""

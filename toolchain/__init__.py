"""Data package (installed as offload.toolchain_data): target-clang profiles, Makefile and CMake fragments."""

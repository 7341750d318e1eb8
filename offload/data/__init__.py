"""Package data: target-clang profiles, Makefile and CMake fragments, ship templates, scripts."""

/* Empty on purpose (mlir-offload config --cflags adds this folder only where the CUDA toolkit lacks the
   header): clang 19's CUDA wrapper headers include it, and CUDA 13 no longer has it (clang 22 knows). */

/* Empty on purpose (mlir-offload config --cflags adds this folder only where the CUDA toolkit lacks the
   header): clang's CUDA wrapper headers include this curand header, which a toolkit without curand
   (such as a minimal CUDA 13 install) lacks. */

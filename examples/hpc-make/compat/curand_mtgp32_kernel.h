/* Empty on purpose: clang's CUDA wrapper headers include this curand header, which a CUDA toolkit
   without curand (such as a minimal CUDA 13 install) lacks. Nothing here uses curand. */

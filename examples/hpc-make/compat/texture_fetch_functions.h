/* Empty on purpose: clang 19's CUDA wrapper headers include this header, which CUDA 13 no longer has
   (clang 22 knows that). Nothing here uses texture fetches. */

// A device-only library: compiled to NVPTX bitcode (helpers.bc) and linked into the MLIR kernels by
// mlir-offload (link-bitcode in mlir-offload.toml); cube.mlir calls helper_cube.
extern "C" __device__ float helper_cube(float x) { return x * x * x; }

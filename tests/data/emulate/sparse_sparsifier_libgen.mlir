// Upstream's own GPU path for sparse tensors, given as written: the sparsifier with gpu-triple and
// enable-gpu-libgen turns a CSR matrix-vector product (linalg.generic) and a CSR matrix (i64 positions and
// coordinates) times a dense matrix (linalg.matmul), and a CSR matrix times itself (SpGEMM, its sparse
// result back to dense on the host) into the gpu dialect's library operations; the pipeline runs up to upstream's
// GPU lowering (gpu-to-llvm, gpu-module-to-binary), and mlir-offload lowers those operations itself.
//   A = [[1 0 2 0] [0 0 0 3] [4 5 0 0]], x = [1 2 3 4], y = 10: A x + y = [17 22 24]
//   A B with B = [[1 2] [3 4] [5 6] [7 8]]: [[11 14] [21 24] [19 28]]
//   S S with S = [[1 0 2] [0 3 0] [4 0 5]]: [[9 0 12] [0 9 0] [24 0 33]]
// ARCHS: sm_80
// PASS-PIPELINE: builtin.module(sparsifier{enable-runtime-library=false enable-gpu-libgen gpu-triple=nvptx64-nvidia-cuda gpu-chip=sm_80})
// WRONG: A's last row is [4 6 0 0]
// WRONG-FROM:     %d = arith.constant dense<[[1.0, 0.0, 2.0, 0.0], [0.0, 0.0, 0.0, 3.0], [4.0, 5.0, 0.0, 0.0]]> : tensor<3x4xf64>
// WRONG-TO:     %d = arith.constant dense<[[1.0, 0.0, 2.0, 0.0], [0.0, 0.0, 0.0, 3.0], [4.0, 6.0, 0.0, 0.0]]> : tensor<3x4xf64>
// CHECK: ( 17, 22, 24 )
// CHECK: ( ( 11, 14 ), ( 21, 24 ), ( 19, 28 ) )
// CHECK: ( ( 9, 0, 12 ), ( 0, 9, 0 ), ( 24, 0, 33 ) )
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed), posWidth = 32, crdWidth = 32 }>
#CSR64 = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
#matvec = {
  indexing_maps = [affine_map<(i,j) -> (i,j)>, affine_map<(i,j) -> (j)>, affine_map<(i,j) -> (i)>],
  iterator_types = ["parallel", "reduction"]
}
module {
  func.func @matvec(%a: tensor<?x?xf64, #CSR>, %x: tensor<?xf64>, %y: tensor<?xf64>) -> tensor<?xf64> {
    %r = linalg.generic #matvec ins(%a, %x: tensor<?x?xf64, #CSR>, tensor<?xf64>) outs(%y: tensor<?xf64>) {
      ^bb(%av: f64, %xv: f64, %yv: f64):
        %m = arith.mulf %av, %xv : f64
        %s = arith.addf %yv, %m : f64
        linalg.yield %s : f64
    } -> tensor<?xf64>
    return %r : tensor<?xf64>
  }
  func.func @matmul(%a: tensor<?x?xf64, #CSR64>, %b: tensor<?x?xf64>, %c: tensor<?x?xf64>) -> tensor<?x?xf64> {
    %r = linalg.matmul ins(%a, %b : tensor<?x?xf64, #CSR64>, tensor<?x?xf64>) outs(%c : tensor<?x?xf64>) -> tensor<?x?xf64>
    return %r : tensor<?x?xf64>
  }
  func.func @spgemm(%a: tensor<3x3xf64, #CSR>, %b: tensor<3x3xf64, #CSR>) -> tensor<3x3xf64, #CSR> {
    %e = tensor.empty() : tensor<3x3xf64, #CSR>
    %r = linalg.matmul ins(%a, %b : tensor<3x3xf64, #CSR>, tensor<3x3xf64, #CSR>) outs(%e : tensor<3x3xf64, #CSR>) -> tensor<3x3xf64, #CSR>
    return %r : tensor<3x3xf64, #CSR>
  }
  func.func @main() {
    %c0 = arith.constant 0 : index
    %f0 = arith.constant 0.0 : f64
    %d = arith.constant dense<[[1.0, 0.0, 2.0, 0.0], [0.0, 0.0, 0.0, 3.0], [4.0, 5.0, 0.0, 0.0]]> : tensor<3x4xf64>
    %csr = sparse_tensor.convert %d : tensor<3x4xf64> to tensor<3x4xf64, #CSR>
    %a = tensor.cast %csr : tensor<3x4xf64, #CSR> to tensor<?x?xf64, #CSR>
    %xs = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf64>
    %x = tensor.cast %xs : tensor<4xf64> to tensor<?xf64>
    %ys = arith.constant dense<10.0> : tensor<3xf64>
    %y = tensor.cast %ys : tensor<3xf64> to tensor<?xf64>
    %r = call @matvec(%a, %x, %y) : (tensor<?x?xf64, #CSR>, tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64>
    %v = vector.transfer_read %r[%c0], %f0 : tensor<?xf64>, vector<3xf64>
    vector.print %v : vector<3xf64>
    %csr64 = sparse_tensor.convert %d : tensor<3x4xf64> to tensor<3x4xf64, #CSR64>
    %a2 = tensor.cast %csr64 : tensor<3x4xf64, #CSR64> to tensor<?x?xf64, #CSR64>
    %bs = arith.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]> : tensor<4x2xf64>
    %b = tensor.cast %bs : tensor<4x2xf64> to tensor<?x?xf64>
    %cs = arith.constant dense<0.0> : tensor<3x2xf64>
    %c = tensor.cast %cs : tensor<3x2xf64> to tensor<?x?xf64>
    %p = call @matmul(%a2, %b, %c) : (tensor<?x?xf64, #CSR64>, tensor<?x?xf64>, tensor<?x?xf64>) -> tensor<?x?xf64>
    %w = vector.transfer_read %p[%c0, %c0], %f0 : tensor<?x?xf64>, vector<3x2xf64>
    vector.print %w : vector<3x2xf64>
    %sq = arith.constant dense<[[1.0, 0.0, 2.0], [0.0, 3.0, 0.0], [4.0, 0.0, 5.0]]> : tensor<3x3xf64>
    %s = sparse_tensor.convert %sq : tensor<3x3xf64> to tensor<3x3xf64, #CSR>
    %g = call @spgemm(%s, %s) : (tensor<3x3xf64, #CSR>, tensor<3x3xf64, #CSR>) -> tensor<3x3xf64, #CSR>
    %dg = sparse_tensor.convert %g : tensor<3x3xf64, #CSR> to tensor<3x3xf64>
    %u = vector.transfer_read %dg[%c0, %c0], %f0 : tensor<3x3xf64>, vector<3x3xf64>
    vector.print %u : vector<3x3xf64>
    bufferization.dealloc_tensor %csr : tensor<3x4xf64, #CSR>
    bufferization.dealloc_tensor %s : tensor<3x3xf64, #CSR>
    bufferization.dealloc_tensor %g : tensor<3x3xf64, #CSR>
    bufferization.dealloc_tensor %csr64 : tensor<3x4xf64, #CSR64>
    return
  }
}

// A sparse matrix (CSR) times a vector on the GPU by the sparsifier's own kernels, and a sparse result
// (2A, grown by memref.realloc on the host) times the same vector.
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
#matvec = {
  indexing_maps = [affine_map<(i,j) -> (i,j)>, affine_map<(i,j) -> (j)>, affine_map<(i,j) -> (i)>],
  iterator_types = ["parallel", "reduction"]
}
#scale = { indexing_maps = [affine_map<(i,j) -> (i,j)>, affine_map<(i,j) -> (i,j)>], iterator_types = ["parallel", "parallel"] }
module {
  func.func @matvec(%a: tensor<?x?xf32, #CSR>, %x: tensor<?xf32>, %y: tensor<?xf32>) -> tensor<?xf32> {
    %r = linalg.generic #matvec ins(%a, %x: tensor<?x?xf32, #CSR>, tensor<?xf32>) outs(%y: tensor<?xf32>) {
      ^bb(%av: f32, %xv: f32, %yv: f32):
        %m = arith.mulf %av, %xv : f32
        %s = arith.addf %yv, %m : f32
        linalg.yield %s : f32
    } -> tensor<?xf32>
    return %r : tensor<?xf32>
  }
  func.func @twice(%a: tensor<?x?xf32, #CSR>) -> tensor<?x?xf32, #CSR> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %d0 = tensor.dim %a, %c0 : tensor<?x?xf32, #CSR>
    %d1 = tensor.dim %a, %c1 : tensor<?x?xf32, #CSR>
    %init = tensor.empty(%d0, %d1) : tensor<?x?xf32, #CSR>
    %r = linalg.generic #scale ins(%a : tensor<?x?xf32, #CSR>) outs(%init : tensor<?x?xf32, #CSR>) {
      ^bb(%v: f32, %o: f32):
        %two = arith.constant 2.0 : f32
        %m = arith.mulf %v, %two : f32
        linalg.yield %m : f32
    } -> tensor<?x?xf32, #CSR>
    return %r : tensor<?x?xf32, #CSR>
  }
  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c5 = arith.constant 5 : index
    %c7 = arith.constant 7 : index
    %f0 = arith.constant 0.0 : f32
    %f1 = arith.constant 1.0 : f32
    // A(i, j) = i + 2j + 1 where (7i + 3j) mod 5 == 0, else 0
    %d = tensor.generate {
    ^bb0(%i: index, %j: index):
      %i7 = arith.muli %i, %c7 : index
      %j3 = arith.muli %j, %c3 : index
      %k = arith.addi %i7, %j3 : index
      %r = arith.remui %k, %c5 : index
      %on = arith.cmpi eq, %r, %c0 : index
      %j2 = arith.muli %j, %c2 : index
      %s = arith.addi %i, %j2 : index
      %s1 = arith.addi %s, %c1 : index
      %n = arith.index_cast %s1 : index to i64
      %v = arith.uitofp %n : i64 to f32
      %e = arith.select %on, %v, %f0 : f32
      tensor.yield %e : f32
    } : tensor<37x29xf32>
    %a = sparse_tensor.convert %d : tensor<37x29xf32> to tensor<?x?xf32, #CSR>
    // x(j) = j - 3
    %xs = tensor.generate {
    ^bb0(%j: index):
      %n = arith.index_cast %j : index to i64
      %v = arith.sitofp %n : i64 to f32
      %w = arith.constant 3.0 : f32
      %m = arith.subf %v, %w : f32
      tensor.yield %m : f32
    } : tensor<29xf32>
    %xd = tensor.cast %xs : tensor<29xf32> to tensor<?xf32>
    %ones = tensor.generate {
    ^bb0(%i: index):
      tensor.yield %f1 : f32
    } : tensor<37xf32>
    %y0 = tensor.cast %ones : tensor<37xf32> to tensor<?xf32>
    %zeros = tensor.generate {
    ^bb0(%i: index):
      tensor.yield %f0 : f32
    } : tensor<37xf32>
    %z0 = tensor.cast %zeros : tensor<37xf32> to tensor<?xf32>
    %y = call @matvec(%a, %xd, %y0) : (tensor<?x?xf32, #CSR>, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
    %b = call @twice(%a) : (tensor<?x?xf32, #CSR>) -> tensor<?x?xf32, #CSR>
    %z = call @matvec(%b, %xd, %z0) : (tensor<?x?xf32, #CSR>, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
    %vy = vector.transfer_read %y[%c0], %f0 : tensor<?xf32>, vector<37xf32>
    vector.print %vy : vector<37xf32>
    %vz = vector.transfer_read %z[%c0], %f0 : tensor<?xf32>, vector<37xf32>
    vector.print %vz : vector<37xf32>
    %nse = sparse_tensor.number_of_entries %b : tensor<?x?xf32, #CSR>
    vector.print %nse : index
    bufferization.dealloc_tensor %a : tensor<?x?xf32, #CSR>
    bufferization.dealloc_tensor %b : tensor<?x?xf32, #CSR>
    return
  }
}

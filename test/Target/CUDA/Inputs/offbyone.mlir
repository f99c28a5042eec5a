// A kernel with an index off by one: output i reads input i + 1, so the
// thread of the last element reads past the end of the input.
func.func @shift(%a: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
      outs(%e : tensor<8xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %c1 = arith.constant 1 : index
    %j = arith.addi %i, %c1 : index
    %v = tensor.extract %a[%j] : tensor<8xf32>
    linalg.yield %v : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// The same without the mistake (output i reads input 7 - i).
func.func @reverse(%a: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
      outs(%e : tensor<8xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %c7 = arith.constant 7 : index
    %j = arith.subi %c7, %i : index
    %v = tensor.extract %a[%j] : tensor<8xf32>
    linalg.yield %v : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// Scalars are rank-0 tensors, and zero-size tensors are allowed.
func.func @scalar_and_empty(%s: tensor<f32>, %e: tensor<0x4xf32>, %i: tensor<i64>) {
  %0 = tg.add %s, %s : tensor<f32>
  %1 = tg.compare gt, %s, %0 : tensor<f32>
  %2 = tg.select %1, %s, %0 : tensor<i1>, tensor<f32>
  %3 = tg.exp %e : tensor<0x4xf32>
  %4 = tg.convert %i : tensor<i64> -> tensor<f64>
  return
}

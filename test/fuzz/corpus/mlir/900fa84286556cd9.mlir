// neg and abs accept floats and integers.
func.func @neg_abs(%f: tensor<4xf32>, %i: tensor<4xi32>, %l: tensor<4xi64>,
                   %e: tensor<4xf8E4M3FN>) {
  %0 = tg.neg %f : tensor<4xf32>
  %1 = tg.neg %i : tensor<4xi32>
  %2 = tg.neg %l : tensor<4xi64>
  %3 = tg.abs %f : tensor<4xf32>
  %4 = tg.abs %i : tensor<4xi32>
  %5 = tg.abs %e : tensor<4xf8E4M3FN>
  return
}

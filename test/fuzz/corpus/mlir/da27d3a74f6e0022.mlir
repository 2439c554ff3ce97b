// select takes an i1 predicate of the result's shape and any element type.
func.func @select(%p: tensor<4x4xi1>, %a: tensor<4x4xf32>, %b: tensor<4x4xf32>,
                  %i: tensor<4x4xi64>, %q: tensor<4x4xi1>) {
  %0 = tg.select %p, %a, %b : tensor<4x4xi1>, tensor<4x4xf32>
  %1 = tg.select %p, %b, %a : tensor<4x4xi1>, tensor<4x4xf32>
  %2 = tg.select %p, %i, %i : tensor<4x4xi1>, tensor<4x4xi64>
  %3 = tg.select %p, %q, %p : tensor<4x4xi1>, tensor<4x4xi1>
  return
}

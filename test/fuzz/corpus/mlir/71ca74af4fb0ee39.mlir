// compare prints every direction and infers an i1 result of the operands' shape.
func.func @compare_directions(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xi1> {
  %0 = tg.compare eq, %a, %b : tensor<4xf32>
  %1 = tg.compare ne, %a, %b : tensor<4xf32>
  %2 = tg.compare lt, %a, %b : tensor<4xf32>
  %3 = tg.compare le, %a, %b : tensor<4xf32>
  %4 = tg.compare gt, %a, %b : tensor<4xf32>
  %5 = tg.compare ge, %b, %a : tensor<4xf32>
  return %5 : tensor<4xi1>
}

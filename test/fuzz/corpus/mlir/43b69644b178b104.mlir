// concat prints its inputs, dimension and functional type.
func.func @concat(%a: tensor<4x2xf32>, %b: tensor<4x3xf32>, %c: tensor<1x3xf32>,
                  %i: tensor<2xi32>) {
  %0 = tg.concat %a, %b dim = 1 : (tensor<4x2xf32>, tensor<4x3xf32>) -> tensor<4x5xf32>
  %1 = tg.concat %b, %c, %b dim = 0 : (tensor<4x3xf32>, tensor<1x3xf32>, tensor<4x3xf32>) -> tensor<9x3xf32>
  %2 = tg.concat %i dim = 0 : (tensor<2xi32>) -> tensor<2xi32>
  return
}

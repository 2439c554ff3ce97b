// Arithmetic on the narrow integer types: uint8 pixels widened and scaled,
// uint8 and int8 differences that wrap, uint32 values beyond 2^31 divided
// and compared as unsigned, an int16 product that wraps.
func.func @narrow(%pixels: tensor<4xui8> {tg.role = "input", tg.name = "pixels"},
                  %offset: tensor<4xui8> {tg.role = "input", tg.name = "offset"},
                  %signed: tensor<4xi8> {tg.role = "input", tg.name = "signed"},
                  %big: tensor<4xui32> {tg.role = "input", tg.name = "big"},
                  %short: tensor<4xi16> {tg.role = "input", tg.name = "short"})
    -> (tensor<4xf32> {tg.role = "output", tg.name = "scaled"},
        tensor<4xui8> {tg.role = "output", tg.name = "difference"},
        tensor<4xi8> {tg.role = "output", tg.name = "signed_sum"},
        tensor<4xui32> {tg.role = "output", tg.name = "quotient"},
        tensor<4xi1> {tg.role = "output", tg.name = "greater"},
        tensor<4xi16> {tg.role = "output", tg.name = "square"},
        tensor<4xui8> {tg.role = "output", tg.name = "saturated"}) {
  %f = tg.convert %pixels : tensor<4xui8> -> tensor<4xf32>
  %c = tg.constant dense<255.0> : tensor<4xf32>
  %scaled = tg.div %f, %c : tensor<4xf32>
  %difference = tg.sub %pixels, %offset : tensor<4xui8>
  %signed_sum = tg.add %signed, %signed : tensor<4xi8>
  %two = tg.constant dense<2> : tensor<4xui32>
  %quotient = tg.div %big, %two : tensor<4xui32>
  %limit = tg.constant dense<2147483648> : tensor<4xui32>
  %greater = tg.compare gt, %big, %limit : tensor<4xui32>
  %square = tg.mul %short, %short : tensor<4xi16>
  %wide = tg.constant dense<[-5.5, 0.4, 254.6, 1000.0]> : tensor<4xf32>
  %saturated = tg.convert %wide : tensor<4xf32> -> tensor<4xui8>
  return %scaled, %difference, %signed_sum, %quotient, %greater, %square, %saturated
      : tensor<4xf32>, tensor<4xui8>, tensor<4xi8>, tensor<4xui32>, tensor<4xi1>, tensor<4xi16>, tensor<4xui8>
}

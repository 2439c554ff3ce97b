// Round trip of the elementwise ops, in custom syntax and in generic form.

// Every binary op on f32 keeps its operand order.
func.func @binary_f32(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) {
  %0 = tg.add %a, %b : tensor<4x8xf32>
  %1 = tg.sub %a, %b : tensor<4x8xf32>
  %2 = tg.mul %a, %b : tensor<4x8xf32>
  %3 = tg.div %a, %b : tensor<4x8xf32>
  %4 = tg.max %a, %b : tensor<4x8xf32>
  %5 = tg.min %a, %b : tensor<4x8xf32>
  %6 = tg.pow %a, %b : tensor<4x8xf32>
  return
}

// A splat whose only reader comes late: the canonicalizer hoists it to the
// top of the step, while the memory plan starts its buffer just before the
// last product reads it (the products before it reuse the bytes).
func.func @main(%x: tensor<64x64xf32> {tg.role = "input", tg.name = "x"},
    %w: tensor<64x64xf32> {tg.role = "param", tg.name = "w"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %a = tg.matmul %x, %w : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %b = tg.matmul %a, %w : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %c = tg.matmul %b, %w : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %ones = tg.constant dense<1.0> : tensor<64x64xf32>
  %d = tg.matmul %c, %ones : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %loss = tg.reduce sum %d dims = [0, 1] : tensor<64x64xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// A token model with an integer input that is no token ids, labels,
// attention mask, token types or positions (train-inputs.mlir's @unknown):
// neither `tgc train` nor a generated trainer can fill it.
func.func @unknown(%ids: tensor<2x4xi64> {tg.role = "input", tg.name = "input_ids"},
                   %labels: tensor<2x4xi64> {tg.role = "label", tg.name = "labels"},
                   %table: tensor<8x8xf32> {tg.role = "param", tg.name = "table"},
                   %scale: tensor<2x4xi64> {tg.role = "input", tg.name = "scale"})
    -> (tensor<f32> {tg.role = "loss", tg.name = "loss"}) {
  %e = tg.embedding %table[%ids] : (tensor<8x8xf32>, tensor<2x4xi64>) -> tensor<2x4x8xf32>
  %scaleF = tg.convert %scale : tensor<2x4xi64> -> tensor<2x4xf32>
  %scaleB = tg.broadcast_in_dim %scaleF dims = [0, 1] : tensor<2x4xf32> -> tensor<2x4x8xf32>
  %logits = tg.mul %e, %scaleB : tensor<2x4x8xf32>
  %loss, %lse = tg.cross_entropy mean %logits, %labels : (tensor<2x4x8xf32>, tensor<2x4xi64>) -> (tensor<f32>, tensor<2x4xf32>)
  return %loss : tensor<f32>
}

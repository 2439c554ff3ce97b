// A linear model marked as pipelined (docs/pipeline.md), which the CUDA
// emitter refuses.
func.func @step(%x: tensor<4x8xf32> {tg.role = "input", tg.name = "x"},
                %w: tensor<8x2xf32> {tg.role = "param", tg.name = "w"})
    -> (tensor<f32> {tg.role = "loss", tg.name = "loss"})
    attributes {tg.pipeline_stages = {axis = "pp", stages = 1 : i64}} {
  %y = tg.matmul %x, %w : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  %loss = tg.reduce sum %y dims = [0, 1] : tensor<4x2xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

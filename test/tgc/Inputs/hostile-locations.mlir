// A step whose ops carry importer-style locations (a node name around its
// file's position 0:0) with hostile text: a node name with a newline and an
// escape sequence, a file name ending in a backslash (which, ending a //
// comment of the generated C++, would continue it on the next line).
func.func @step(
    %x: tensor<4x8xf32> {tg.role = "input", tg.name = "x"},
    %w: tensor<8x8xf32> {tg.role = "param", tg.name = "w"})
    -> (tensor<f32> {tg.role = "loss", tg.name = "loss"}) {
  %h = tg.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> loc("line\0A/*evil*/\1B[31m"("dir\\":0:0))
  %a = tg.tanh %h : tensor<4x8xf32> loc("tanh"("dir\\":0:0))
  %s = tg.reduce sum %a dims = [0, 1] : tensor<4x8xf32> -> tensor<f32> loc("sum"("model.onnx":0:0))
  return %s : tensor<f32>
}

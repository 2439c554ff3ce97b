// The unsharded two-layer MLP that the partitioned programs of ranks-*.mlir
// are compared with.
func.func @main(%x: tensor<8x4xf32> {tg.role = "input", tg.name = "x"},
                %w1: tensor<4x6xf32> {tg.role = "param", tg.name = "w1"},
                %w2: tensor<6x4xf32> {tg.role = "param", tg.name = "w2"})
    -> (tensor<8x4xf32> {tg.name = "y"}, tensor<f32> {tg.name = "loss"}) {
  %h = tg.matmul %x, %w1 : (tensor<8x4xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
  %a = tg.relu %h : tensor<8x6xf32>
  %y = tg.matmul %a, %w2 : (tensor<8x6xf32>, tensor<6x4xf32>) -> tensor<8x4xf32>
  %loss = tg.reduce sum %y dims = [0, 1] : tensor<8x4xf32> -> tensor<f32>
  return %y, %loss : tensor<8x4xf32>, tensor<f32>
}

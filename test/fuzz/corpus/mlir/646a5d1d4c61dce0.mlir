// A fusion of two elementwise ops: the inputs become the block arguments.
func.func @fusion_single_result(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tg.fusion (%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>, %y: tensor<4xf32>):
    %s = tg.add %x, %y : tensor<4xf32>
    %r = tg.relu %s : tensor<4xf32>
    tg.yield %r : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

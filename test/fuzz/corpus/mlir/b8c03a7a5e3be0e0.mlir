// A fusion without inputs: its block has no arguments and prints no header.
func.func @fusion_no_inputs() -> tensor<4xf32> {
  %0 = tg.fusion () : () -> tensor<4xf32> {
    %c = tg.constant dense<1.0> : tensor<4xf32>
    %e = tg.exp %c : tensor<4xf32>
    tg.yield %e : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

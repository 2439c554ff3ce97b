// A fusion without results ends with a bare tg.yield.
func.func @fusion_no_results(%a: tensor<4xf32>) {
  tg.fusion (%a) : (tensor<4xf32>) -> () {
  ^bb0(%x: tensor<4xf32>):
    tg.yield
  }
  return
}

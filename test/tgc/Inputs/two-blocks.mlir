// A function of two blocks (cf.br): the tg passes and the interpreter work
// on straight-line functions and refuse it (crash-classes.test).

func.func @two_blocks(%x: tensor<4xf32> {tg.role = "param"}) -> (tensor<f32> {tg.role = "loss"}) {
  cf.br ^next
^next:
  %0 = tg.mul %x, %x : tensor<4xf32>
  %1 = tg.reduce sum %0 dims = [0] : tensor<4xf32> -> tensor<f32>
  return %1 : tensor<f32>
}

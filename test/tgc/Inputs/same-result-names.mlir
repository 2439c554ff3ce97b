// Two results whose file names collide ("p/y" is written as p_y.npy, like
// "p_y"), data-loss.test: `tgc run --output-dir` fails on the second and
// must leave the directory as it was.

func.func @same(%x: tensor<2xf32>) -> (tensor<2xf32> {tg.name = "p/y"}, tensor<2xf32> {tg.name = "p_y"}) {
  %0 = tg.neg %x : tensor<2xf32>
  return %x, %0 : tensor<2xf32>, tensor<2xf32>
}

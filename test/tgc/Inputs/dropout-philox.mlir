// One dropout of 2^20 f32 elements: a Philox call per element (84 integer
// instructions each), 8 MiB moved.
func.func @dropout(%x: tensor<1024x1024xf32> {tg.role = "input", tg.name = "x"},
    %seed: tensor<i64> {tg.role = "hyper", tg.name = "seed"}) -> tensor<1024x1024xf32> {
  %y = tg.dropout %x, %seed rate = 1.000000e-01 stream = 0 : tensor<1024x1024xf32>, tensor<i64>
  return %y : tensor<1024x1024xf32>
}

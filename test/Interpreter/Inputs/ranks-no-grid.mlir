func.func @main(%x: tensor<2xf32> {tg.name = "x", tg.sharding = #tg.sharding<@mesh, [{"dp"}]>}) -> (tensor<2xf32> {tg.name = "y"}) {
  %y = tg.neg %x : tensor<2xf32>
  return %y : tensor<2xf32>
}

// A declaration without a body keeps its argument and result attributes.
func.func private @sgd_update(tensor<4xf32> {tg.role = "param", tg.name = "w"},
                              tensor<4xf32> {tg.role = "input"},
                              tensor<f32> {tg.role = "hyper"})
    -> (tensor<4xf32> {tg.role = "param", tg.aliases = 0})

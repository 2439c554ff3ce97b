"func.func"() <{function_type = (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>, sym_name = "main", arg_attrs = [{tg.name = "a"}, {tg.name = "b"}, {tg.name = "c"}, {tg.name = "d"}, {tg.name = "e"}, {tg.name = "b"}]}> ({
^bb0(%a: tensor<2xf32>, %b: tensor<2xf32>, %c: tensor<2xf32>):
  "func.return"(%a) : (tensor<2xf32>) -> ()
}) : () -> ()

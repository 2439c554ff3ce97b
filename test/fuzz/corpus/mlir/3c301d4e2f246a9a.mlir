// The attributes are optional: a bf16 loss, and arguments and results without any.
func.func @partial_attrs(%x: tensor<bf16>, %unused: tensor<bf16> {tg.role = "input"}) -> (tensor<bf16> {tg.role = "loss"}, tensor<bf16>) {
  return %x, %x : tensor<bf16>, tensor<bf16>
}

// A discardable attribute of a constant prints before the value.
func.func @constant_attr_dict() {
  %0 = tg.constant {tag = "bias"} dense<0.0> : tensor<768xf32>
  return
}

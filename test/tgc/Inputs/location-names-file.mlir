// An op whose location names FILE, which the hostile-files test replaces
// with a FIFO or a device: the diagnostic on it must not wait on the FIFO
// nor read the device.
func.func @f(%a: tensor<4xf32>) -> tensor<8xf32> {
  %0 = "tg.add"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<8xf32> loc("FILE":1:1)
  return %0 : tensor<8xf32>
}

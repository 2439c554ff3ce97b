// cross_entropy_grad with mean reduction, with and without ignore_index.
func.func @cross_entropy_grad_mean(%dloss: tensor<f32>, %logits: tensor<1024x50257xf32>, %labels: tensor<1024xi64>, %lse: tensor<1024xf32>) -> (tensor<1024x50257xf32>, tensor<1024x50257xf32>) {
  %0 = tg.cross_entropy_grad mean %dloss, %logits, %labels, %lse ignore_index = -100 : (tensor<f32>, tensor<1024x50257xf32>, tensor<1024xi64>, tensor<1024xf32>) -> tensor<1024x50257xf32>
  %1 = tg.cross_entropy_grad mean %dloss, %logits, %labels, %lse : (tensor<f32>, tensor<1024x50257xf32>, tensor<1024xi64>, tensor<1024xf32>) -> tensor<1024x50257xf32>
  return %0, %1 : tensor<1024x50257xf32>, tensor<1024x50257xf32>
}

// cross_entropy with mean reduction, with and without ignore_index.
func.func @cross_entropy_mean(%logits: tensor<1024x50257xf32>, %labels: tensor<1024xi64>) -> (tensor<f32>, tensor<1024xf32>, tensor<f32>, tensor<1024xf32>) {
  %l0, %lse0 = tg.cross_entropy mean %logits, %labels ignore_index = -100 : (tensor<1024x50257xf32>, tensor<1024xi64>) -> (tensor<f32>, tensor<1024xf32>)
  %l1, %lse1 = tg.cross_entropy mean %logits, %labels : (tensor<1024x50257xf32>, tensor<1024xi64>) -> (tensor<f32>, tensor<1024xf32>)
  return %l0, %lse0, %l1, %lse1 : tensor<f32>, tensor<1024xf32>, tensor<f32>, tensor<1024xf32>
}

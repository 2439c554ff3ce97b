// cross_entropy with sum reduction over bf16 logits of rank 3, with and without ignore_index.
func.func @cross_entropy_sum(%logits: tensor<4x32x1000xbf16>, %labels: tensor<4x32xi32>) -> (tensor<f32>, tensor<4x32xf32>, tensor<f32>, tensor<4x32xf32>) {
  %l0, %lse0 = tg.cross_entropy sum %logits, %labels ignore_index = 0 : (tensor<4x32x1000xbf16>, tensor<4x32xi32>) -> (tensor<f32>, tensor<4x32xf32>)
  %l1, %lse1 = tg.cross_entropy sum %logits, %labels : (tensor<4x32x1000xbf16>, tensor<4x32xi32>) -> (tensor<f32>, tensor<4x32xf32>)
  return %l0, %lse0, %l1, %lse1 : tensor<f32>, tensor<4x32xf32>, tensor<f32>, tensor<4x32xf32>
}

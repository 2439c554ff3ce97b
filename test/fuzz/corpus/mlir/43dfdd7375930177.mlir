// cross_entropy_grad with sum reduction over bf16 logits of rank 3, with and without ignore_index.
func.func @cross_entropy_grad_sum(%dloss: tensor<f32>, %logits: tensor<4x32x1000xbf16>, %labels: tensor<4x32xi32>, %lse: tensor<4x32xf32>) -> (tensor<4x32x1000xbf16>, tensor<4x32x1000xbf16>) {
  %0 = tg.cross_entropy_grad sum %dloss, %logits, %labels, %lse ignore_index = 0 : (tensor<f32>, tensor<4x32x1000xbf16>, tensor<4x32xi32>, tensor<4x32xf32>) -> tensor<4x32x1000xbf16>
  %1 = tg.cross_entropy_grad sum %dloss, %logits, %labels, %lse : (tensor<f32>, tensor<4x32x1000xbf16>, tensor<4x32xi32>, tensor<4x32xf32>) -> tensor<4x32x1000xbf16>
  return %0, %1 : tensor<4x32x1000xbf16>, tensor<4x32x1000xbf16>
}

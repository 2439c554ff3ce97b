// A two-layer MLP classifier: forward pass and loss of one training step,
// as a framework would export it (parameters, a batch of 32 inputs, labels).
// Autodiff and the optimizer update are added by later passes.
//
//   tgc report examples/mlp.mlir
//   tgc compile examples/mlp.mlir -o mlp.opt.mlir

func.func @mlp_step(
    %x: tensor<32x784xf32> {tg.role = "input", tg.name = "images"},
    %labels: tensor<32xi64> {tg.role = "label", tg.name = "labels"},
    %seed: tensor<i64> {tg.role = "hyper", tg.name = "dropout_seed"},
    %w1: tensor<784x256xf32> {tg.role = "param", tg.name = "fc1.weight"},
    %b1: tensor<256xf32> {tg.role = "param", tg.name = "fc1.bias"},
    %w2: tensor<256x10xf32> {tg.role = "param", tg.name = "fc2.weight"},
    %b2: tensor<10xf32> {tg.role = "param", tg.name = "fc2.bias"})
    -> (tensor<f32> {tg.role = "loss", tg.name = "loss"}) {
  // fc1 + GELU + dropout
  %h = tg.matmul %x, %w1 : (tensor<32x784xf32>, tensor<784x256xf32>) -> tensor<32x256xf32>
  %bias1 = tg.broadcast_in_dim %b1 dims = [1] : tensor<256xf32> -> tensor<32x256xf32>
  %h1 = tg.add %h, %bias1 : tensor<32x256xf32>
  %a1 = tg.gelu erf %h1 : tensor<32x256xf32>
  %d1 = tg.dropout %a1, %seed rate = 1.000000e-01 stream = 0 : tensor<32x256xf32>, tensor<i64>
  // fc2
  %o = tg.matmul %d1, %w2 : (tensor<32x256xf32>, tensor<256x10xf32>) -> tensor<32x10xf32>
  %bias2 = tg.broadcast_in_dim %b2 dims = [1] : tensor<10xf32> -> tensor<32x10xf32>
  %logits = tg.add %o, %bias2 : tensor<32x10xf32>
  // Mean cross-entropy over the batch.
  %loss, %lse = tg.cross_entropy mean %logits, %labels : (tensor<32x10xf32>, tensor<32xi64>) -> (tensor<f32>, tensor<32xf32>)
  return %loss : tensor<f32>
}

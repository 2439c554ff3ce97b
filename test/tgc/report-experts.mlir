// The cost of the experts' grouped products: 2 x rows x H x O FLOPs for
// the whole stack (16 rows of width 8 times 8x4 matrices: 1024), and for a
// device's block of 2 of 4 experts (expert parallelism, global_experts)
// its share of the rows under balanced routing (16 x 2 / 4 = 8 rows: 512).
// RUN: tgc report --no-fuse %s --entry block | FileCheck %s
// CHECK: function @whole (1 ops)
// CHECK: tg.expert_matmul {{ *}}1 {{.*}} 1024
// CHECK: function @block (1 ops)
// CHECK: tg.expert_matmul {{ *}}1 {{.*}} 512
func.func @whole(%x: tensor<16x8xf32> {tg.role = "input"}, %w: tensor<4x8x4xf32> {tg.role = "param"}, %ids: tensor<16xi64> {tg.role = "input"}) -> tensor<16x4xf32> {
  %y = tg.expert_matmul %x, %w[%ids] : (tensor<16x8xf32>, tensor<4x8x4xf32>, tensor<16xi64>) -> tensor<16x4xf32>
  return %y : tensor<16x4xf32>
}
func.func @block(%x: tensor<16x8xf32> {tg.role = "input"}, %w: tensor<2x8x4xf32> {tg.role = "param"}, %ids: tensor<16xi64> {tg.role = "input"}) -> tensor<16x4xf32> {
  %y = tg.expert_matmul %x, %w[%ids] {global_experts = 4 : i64} : (tensor<16x8xf32>, tensor<2x8x4xf32>, tensor<16xi64>) -> tensor<16x4xf32>
  return %y : tensor<16x4xf32>
}

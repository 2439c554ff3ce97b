// Written by test/tgc/Inputs/pipelined_mlp.py 4 1f1b: a two-stage pipelined MLP,
// 4 micro-batches, 1f1b order (docs/pipeline.md).
module attributes {tg.pipeline = "hand-written (docs/pipeline.md)"} {
  shard.grid @mesh(shape = 2) {tg.mesh_axes = ["pp"]}
  func.func @step(
      %x0: tensor<16x16xf32> {tg.role = "input", tg.name = "x0"},
      %x1: tensor<16x16xf32> {tg.role = "input", tg.name = "x1"},
      %x2: tensor<16x16xf32> {tg.role = "input", tg.name = "x2"},
      %x3: tensor<16x16xf32> {tg.role = "input", tg.name = "x3"},
      %w1: tensor<16x8xf32> {tg.role = "param", tg.name = "w1"},
      %w2: tensor<8x4xf32> {tg.role = "param", tg.name = "w2"})
      -> (tensor<f32> {tg.role = "loss", tg.name = "loss"},
          tensor<16x8xf32> {tg.role = "grad", tg.name = "w1.grad"},
          tensor<8x4xf32> {tg.role = "grad", tg.name = "w2.grad"})
      attributes {tg.pipeline_stages = {axis = "pp", stages = 2 : i64, virtual_stages = 1 : i64, micro_batches = 4 : i64, schedule = "1f1b"}} {
    %h0 = tg.matmul %x0, %w1 {tg.stage = 0 : i64, tg.micro_batch = 0 : i64} : (tensor<16x16xf32>, tensor<16x8xf32>) -> tensor<16x8xf32>
    %a0 = tg.tanh %h0 {tg.stage = 0 : i64, tg.micro_batch = 0 : i64} : tensor<16x8xf32>
    %t0 = shard.send %a0 on @mesh grid_axes = [0] destination = [1] {tg.stage = 0 : i64, tg.micro_batch = 0 : i64} : (tensor<16x8xf32>) -> tensor<16x8xf32>
    %r0 = shard.recv %t0 on @mesh grid_axes = [0] source = [0] {tg.stage = 1 : i64, tg.micro_batch = 0 : i64} : (tensor<16x8xf32>) -> tensor<16x8xf32>
    %o0 = tg.matmul %r0, %w2 {tg.stage = 1 : i64, tg.micro_batch = 0 : i64} : (tensor<16x8xf32>, tensor<8x4xf32>) -> tensor<16x4xf32>
    %l0 = tg.reduce sum %o0 dims = [0, 1] {tg.stage = 1 : i64, tg.micro_batch = 0 : i64} : tensor<16x4xf32> -> tensor<f32>
    %h1 = tg.matmul %x1, %w1 {tg.stage = 0 : i64, tg.micro_batch = 1 : i64} : (tensor<16x16xf32>, tensor<16x8xf32>) -> tensor<16x8xf32>
    %a1 = tg.tanh %h1 {tg.stage = 0 : i64, tg.micro_batch = 1 : i64} : tensor<16x8xf32>
    %t1 = shard.send %a1 on @mesh grid_axes = [0] destination = [1] {tg.stage = 0 : i64, tg.micro_batch = 1 : i64} : (tensor<16x8xf32>) -> tensor<16x8xf32>
    %one0 = tg.constant {tg.stage = 1 : i64, tg.micro_batch = 0 : i64, tg.backward} dense<1.0> : tensor<16x4xf32>
    %da0 = tg.matmul %one0, %w2 transpose_b {tg.stage = 1 : i64, tg.micro_batch = 0 : i64, tg.backward} : (tensor<16x4xf32>, tensor<8x4xf32>) -> tensor<16x8xf32>
    %dw2_0 = tg.matmul %r0, %one0 transpose_a {tg.stage = 1 : i64, tg.micro_batch = 0 : i64, tg.backward} : (tensor<16x8xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
    %u0 = shard.send %da0 on @mesh grid_axes = [0] destination = [0] {tg.stage = 1 : i64, tg.micro_batch = 0 : i64, tg.backward} : (tensor<16x8xf32>) -> tensor<16x8xf32>
    %rd0 = shard.recv %u0 on @mesh grid_axes = [0] source = [1] {tg.stage = 0 : i64, tg.micro_batch = 0 : i64, tg.backward} : (tensor<16x8xf32>) -> tensor<16x8xf32>
    %sq0 = tg.mul %a0, %a0 {tg.stage = 0 : i64, tg.micro_batch = 0 : i64, tg.backward} : tensor<16x8xf32>
    %ones0 = tg.constant {tg.stage = 0 : i64, tg.micro_batch = 0 : i64, tg.backward} dense<1.0> : tensor<16x8xf32>
    %s0 = tg.sub %ones0, %sq0 {tg.stage = 0 : i64, tg.micro_batch = 0 : i64, tg.backward} : tensor<16x8xf32>
    %dh0 = tg.mul %rd0, %s0 {tg.stage = 0 : i64, tg.micro_batch = 0 : i64, tg.backward} : tensor<16x8xf32>
    %dw1_0 = tg.matmul %x0, %dh0 transpose_a {tg.stage = 0 : i64, tg.micro_batch = 0 : i64, tg.backward} : (tensor<16x16xf32>, tensor<16x8xf32>) -> tensor<16x8xf32>
    %r1 = shard.recv %t1 on @mesh grid_axes = [0] source = [0] {tg.stage = 1 : i64, tg.micro_batch = 1 : i64} : (tensor<16x8xf32>) -> tensor<16x8xf32>
    %o1 = tg.matmul %r1, %w2 {tg.stage = 1 : i64, tg.micro_batch = 1 : i64} : (tensor<16x8xf32>, tensor<8x4xf32>) -> tensor<16x4xf32>
    %l1 = tg.reduce sum %o1 dims = [0, 1] {tg.stage = 1 : i64, tg.micro_batch = 1 : i64} : tensor<16x4xf32> -> tensor<f32>
    %h2 = tg.matmul %x2, %w1 {tg.stage = 0 : i64, tg.micro_batch = 2 : i64} : (tensor<16x16xf32>, tensor<16x8xf32>) -> tensor<16x8xf32>
    %a2 = tg.tanh %h2 {tg.stage = 0 : i64, tg.micro_batch = 2 : i64} : tensor<16x8xf32>
    %t2 = shard.send %a2 on @mesh grid_axes = [0] destination = [1] {tg.stage = 0 : i64, tg.micro_batch = 2 : i64} : (tensor<16x8xf32>) -> tensor<16x8xf32>
    %one1 = tg.constant {tg.stage = 1 : i64, tg.micro_batch = 1 : i64, tg.backward} dense<1.0> : tensor<16x4xf32>
    %da1 = tg.matmul %one1, %w2 transpose_b {tg.stage = 1 : i64, tg.micro_batch = 1 : i64, tg.backward} : (tensor<16x4xf32>, tensor<8x4xf32>) -> tensor<16x8xf32>
    %dw2_1 = tg.matmul %r1, %one1 transpose_a {tg.stage = 1 : i64, tg.micro_batch = 1 : i64, tg.backward} : (tensor<16x8xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
    %u1 = shard.send %da1 on @mesh grid_axes = [0] destination = [0] {tg.stage = 1 : i64, tg.micro_batch = 1 : i64, tg.backward} : (tensor<16x8xf32>) -> tensor<16x8xf32>
    %gw2_1 = tg.add %dw2_0, %dw2_1 {tg.stage = 1 : i64, tg.micro_batch = 1 : i64, tg.backward} : tensor<8x4xf32>
    %rd1 = shard.recv %u1 on @mesh grid_axes = [0] source = [1] {tg.stage = 0 : i64, tg.micro_batch = 1 : i64, tg.backward} : (tensor<16x8xf32>) -> tensor<16x8xf32>
    %sq1 = tg.mul %a1, %a1 {tg.stage = 0 : i64, tg.micro_batch = 1 : i64, tg.backward} : tensor<16x8xf32>
    %ones1 = tg.constant {tg.stage = 0 : i64, tg.micro_batch = 1 : i64, tg.backward} dense<1.0> : tensor<16x8xf32>
    %s1 = tg.sub %ones1, %sq1 {tg.stage = 0 : i64, tg.micro_batch = 1 : i64, tg.backward} : tensor<16x8xf32>
    %dh1 = tg.mul %rd1, %s1 {tg.stage = 0 : i64, tg.micro_batch = 1 : i64, tg.backward} : tensor<16x8xf32>
    %dw1_1 = tg.matmul %x1, %dh1 transpose_a {tg.stage = 0 : i64, tg.micro_batch = 1 : i64, tg.backward} : (tensor<16x16xf32>, tensor<16x8xf32>) -> tensor<16x8xf32>
    %gw1_1 = tg.add %dw1_0, %dw1_1 {tg.stage = 0 : i64, tg.micro_batch = 1 : i64, tg.backward} : tensor<16x8xf32>
    %r2 = shard.recv %t2 on @mesh grid_axes = [0] source = [0] {tg.stage = 1 : i64, tg.micro_batch = 2 : i64} : (tensor<16x8xf32>) -> tensor<16x8xf32>
    %o2 = tg.matmul %r2, %w2 {tg.stage = 1 : i64, tg.micro_batch = 2 : i64} : (tensor<16x8xf32>, tensor<8x4xf32>) -> tensor<16x4xf32>
    %l2 = tg.reduce sum %o2 dims = [0, 1] {tg.stage = 1 : i64, tg.micro_batch = 2 : i64} : tensor<16x4xf32> -> tensor<f32>
    %h3 = tg.matmul %x3, %w1 {tg.stage = 0 : i64, tg.micro_batch = 3 : i64} : (tensor<16x16xf32>, tensor<16x8xf32>) -> tensor<16x8xf32>
    %a3 = tg.tanh %h3 {tg.stage = 0 : i64, tg.micro_batch = 3 : i64} : tensor<16x8xf32>
    %t3 = shard.send %a3 on @mesh grid_axes = [0] destination = [1] {tg.stage = 0 : i64, tg.micro_batch = 3 : i64} : (tensor<16x8xf32>) -> tensor<16x8xf32>
    %one2 = tg.constant {tg.stage = 1 : i64, tg.micro_batch = 2 : i64, tg.backward} dense<1.0> : tensor<16x4xf32>
    %da2 = tg.matmul %one2, %w2 transpose_b {tg.stage = 1 : i64, tg.micro_batch = 2 : i64, tg.backward} : (tensor<16x4xf32>, tensor<8x4xf32>) -> tensor<16x8xf32>
    %dw2_2 = tg.matmul %r2, %one2 transpose_a {tg.stage = 1 : i64, tg.micro_batch = 2 : i64, tg.backward} : (tensor<16x8xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
    %u2 = shard.send %da2 on @mesh grid_axes = [0] destination = [0] {tg.stage = 1 : i64, tg.micro_batch = 2 : i64, tg.backward} : (tensor<16x8xf32>) -> tensor<16x8xf32>
    %gw2_2 = tg.add %gw2_1, %dw2_2 {tg.stage = 1 : i64, tg.micro_batch = 2 : i64, tg.backward} : tensor<8x4xf32>
    %rd2 = shard.recv %u2 on @mesh grid_axes = [0] source = [1] {tg.stage = 0 : i64, tg.micro_batch = 2 : i64, tg.backward} : (tensor<16x8xf32>) -> tensor<16x8xf32>
    %sq2 = tg.mul %a2, %a2 {tg.stage = 0 : i64, tg.micro_batch = 2 : i64, tg.backward} : tensor<16x8xf32>
    %ones2 = tg.constant {tg.stage = 0 : i64, tg.micro_batch = 2 : i64, tg.backward} dense<1.0> : tensor<16x8xf32>
    %s2 = tg.sub %ones2, %sq2 {tg.stage = 0 : i64, tg.micro_batch = 2 : i64, tg.backward} : tensor<16x8xf32>
    %dh2 = tg.mul %rd2, %s2 {tg.stage = 0 : i64, tg.micro_batch = 2 : i64, tg.backward} : tensor<16x8xf32>
    %dw1_2 = tg.matmul %x2, %dh2 transpose_a {tg.stage = 0 : i64, tg.micro_batch = 2 : i64, tg.backward} : (tensor<16x16xf32>, tensor<16x8xf32>) -> tensor<16x8xf32>
    %gw1_2 = tg.add %gw1_1, %dw1_2 {tg.stage = 0 : i64, tg.micro_batch = 2 : i64, tg.backward} : tensor<16x8xf32>
    %r3 = shard.recv %t3 on @mesh grid_axes = [0] source = [0] {tg.stage = 1 : i64, tg.micro_batch = 3 : i64} : (tensor<16x8xf32>) -> tensor<16x8xf32>
    %o3 = tg.matmul %r3, %w2 {tg.stage = 1 : i64, tg.micro_batch = 3 : i64} : (tensor<16x8xf32>, tensor<8x4xf32>) -> tensor<16x4xf32>
    %l3 = tg.reduce sum %o3 dims = [0, 1] {tg.stage = 1 : i64, tg.micro_batch = 3 : i64} : tensor<16x4xf32> -> tensor<f32>
    %one3 = tg.constant {tg.stage = 1 : i64, tg.micro_batch = 3 : i64, tg.backward} dense<1.0> : tensor<16x4xf32>
    %da3 = tg.matmul %one3, %w2 transpose_b {tg.stage = 1 : i64, tg.micro_batch = 3 : i64, tg.backward} : (tensor<16x4xf32>, tensor<8x4xf32>) -> tensor<16x8xf32>
    %dw2_3 = tg.matmul %r3, %one3 transpose_a {tg.stage = 1 : i64, tg.micro_batch = 3 : i64, tg.backward} : (tensor<16x8xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
    %u3 = shard.send %da3 on @mesh grid_axes = [0] destination = [0] {tg.stage = 1 : i64, tg.micro_batch = 3 : i64, tg.backward} : (tensor<16x8xf32>) -> tensor<16x8xf32>
    %gw2_3 = tg.add %gw2_2, %dw2_3 {tg.stage = 1 : i64, tg.micro_batch = 3 : i64, tg.backward} : tensor<8x4xf32>
    %rd3 = shard.recv %u3 on @mesh grid_axes = [0] source = [1] {tg.stage = 0 : i64, tg.micro_batch = 3 : i64, tg.backward} : (tensor<16x8xf32>) -> tensor<16x8xf32>
    %sq3 = tg.mul %a3, %a3 {tg.stage = 0 : i64, tg.micro_batch = 3 : i64, tg.backward} : tensor<16x8xf32>
    %ones3 = tg.constant {tg.stage = 0 : i64, tg.micro_batch = 3 : i64, tg.backward} dense<1.0> : tensor<16x8xf32>
    %s3 = tg.sub %ones3, %sq3 {tg.stage = 0 : i64, tg.micro_batch = 3 : i64, tg.backward} : tensor<16x8xf32>
    %dh3 = tg.mul %rd3, %s3 {tg.stage = 0 : i64, tg.micro_batch = 3 : i64, tg.backward} : tensor<16x8xf32>
    %dw1_3 = tg.matmul %x3, %dh3 transpose_a {tg.stage = 0 : i64, tg.micro_batch = 3 : i64, tg.backward} : (tensor<16x16xf32>, tensor<16x8xf32>) -> tensor<16x8xf32>
    %gw1_3 = tg.add %gw1_2, %dw1_3 {tg.stage = 0 : i64, tg.micro_batch = 3 : i64, tg.backward} : tensor<16x8xf32>
    %loss_acc0 = tg.add %l0, %l1 {tg.stage = 1 : i64} : tensor<f32>
    %loss_acc1 = tg.add %loss_acc0, %l2 {tg.stage = 1 : i64} : tensor<f32>
    %loss = tg.add %loss_acc1, %l3 {tg.stage = 1 : i64} : tensor<f32>
    return %loss, %gw1_3, %gw2_3 : tensor<f32>, tensor<16x8xf32>, tensor<8x4xf32>
  }
}

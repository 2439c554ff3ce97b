// Two layers on two stages: the activation moves from stage 0 to stage 1
// through a send/recv pair; the mask, computed from the input alone and
// cheaper than a message, is computed again on stage 1 instead of sent.
module {
  shard.grid @mesh(shape = 2) {tg.mesh_axes = ["pp"]}
  func.func @two(%x: tensor<64x256xf32> {tg.role = "input"},
                 %w0: tensor<256x256xf32> {tg.role = "param", tg.name = "layers.0.w"},
                 %w1: tensor<256x256xf32> {tg.role = "param", tg.name = "layers.1.w"})
      -> (tensor<64x256xf32> {tg.role = "output"}) {
    %m = tg.neg %x : tensor<64x256xf32>
    %h0 = tg.matmul %x, %w0 : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
    %a0 = tg.mul %h0, %m : tensor<64x256xf32>
    %h1 = tg.matmul %a0, %w1 : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
    %a1 = tg.mul %h1, %m : tensor<64x256xf32>
    return %a1 : tensor<64x256xf32>
  }
}

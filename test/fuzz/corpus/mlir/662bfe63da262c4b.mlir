// A scalar crosses as a one-element tensor.
module {
  shard.grid @mesh(shape = 2) {tg.mesh_axes = ["pp"]}
  func.func @scalar(%x: tensor<64x256xf32> {tg.role = "input"},
                    %w0: tensor<256x256xf32> {tg.role = "param", tg.name = "layers.0.w"},
                    %w1: tensor<256x256xf32> {tg.role = "param", tg.name = "layers.1.w"})
      -> (tensor<64x256xf32> {tg.role = "output"}) {
    %h0 = tg.matmul %x, %w0 : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
    %s = tg.reduce sum %h0 dims = [0, 1] : tensor<64x256xf32> -> tensor<f32>
    %h1 = tg.matmul %h0, %w1 : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
    %b = tg.broadcast_in_dim %s dims = [] : tensor<f32> -> tensor<64x256xf32>
    %a1 = tg.mul %h1, %b : tensor<64x256xf32>
    return %a1 : tensor<64x256xf32>
  }
}

// broadcast_in_dim adds dimensions and repeats dimensions of size 1.
func.func @broadcast_in_dim(%bias: tensor<768xf32>, %ones: tensor<1x4xbf16>,
                            %s: tensor<i1>, %i: tensor<3x1xi64>) {
  %0 = tg.broadcast_in_dim %bias dims = [1] : tensor<768xf32> -> tensor<8x768xf32>
  %1 = tg.broadcast_in_dim %ones dims = [0, 2] : tensor<1x4xbf16> -> tensor<5x6x4xbf16>
  %2 = tg.broadcast_in_dim %s dims = [] : tensor<i1> -> tensor<2x2xi1>
  %3 = tg.broadcast_in_dim %i dims = [0, 1] : tensor<3x1xi64> -> tensor<3x7xi64>
  %4 = tg.broadcast_in_dim %bias dims = [0] : tensor<768xf32> -> tensor<768xf32>
  return
}

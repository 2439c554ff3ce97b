// Two ways f32 parts from f64 (test/Interpreter/precision-report.test):
// a cancellation, and a top-k whose two values f32 cannot tell apart.

func.func @cancel(%x: tensor<4xf32>) -> (tensor<4xf32> {tg.name = "small"}) {
  %big = tg.constant dense<1.0e8> : tensor<4xf32>
  %sum = tg.add %x, %big : tensor<4xf32>
  %back = tg.sub %sum, %big : tensor<4xf32>
  return %back : tensor<4xf32>
}

func.func @tie(%x: tensor<2xf32>) -> (tensor<1xi64> {tg.name = "winner"}) {
  %nudge = tg.constant dense<[0.0, 1.0e-8]> : tensor<2xf32>
  %v = tg.add %x, %nudge : tensor<2xf32>
  %best, %index = tg.top_k %v k = 1 : tensor<2xf32> -> tensor<1xf32>, tensor<1xi64>
  return %index : tensor<1xi64>
}

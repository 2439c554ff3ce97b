// Token models with the integer inputs of an exported transformer besides
// its token ids (test/tgc/train-inputs.test). The extra inputs come after
// the parameters, so that @base and @defaults draw the same parameters.

// The reference: logits = embedding(table, ids) + the position rows.
func.func @base(%ids: tensor<2x4xi64> {tg.role = "input", tg.name = "input_ids"},
                %labels: tensor<2x4xi64> {tg.role = "label", tg.name = "labels"},
                %table: tensor<8x8xf32> {tg.role = "param", tg.name = "table"})
    -> (tensor<f32> {tg.role = "loss", tg.name = "loss"}) {
  %e = tg.embedding %table[%ids] : (tensor<8x8xf32>, tensor<2x4xi64>) -> tensor<2x4x8xf32>
  %rows = tg.constant dense<[[0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.5, 0.0, 0.0, 0.0, 0.0]]> : tensor<4x8xf32>
  %pos = tg.broadcast_in_dim %rows dims = [1, 2] : tensor<4x8xf32> -> tensor<2x4x8xf32>
  %logits = tg.add %e, %pos : tensor<2x4x8xf32>
  %loss, %lse = tg.cross_entropy mean %logits, %labels : (tensor<2x4x8xf32>, tensor<2x4xi64>) -> (tensor<f32>, tensor<2x4xf32>)
  return %loss : tensor<f32>
}

// The same with an attention mask (multiplies the logits), token type ids
// (add a row of a table whose row 0 is zeros) and position ids (gather the
// position rows): with tgc train's defaults (ones, zeros, 0..3) the loss
// is @base's; any other value changes it.
func.func @defaults(%ids: tensor<2x4xi64> {tg.role = "input", tg.name = "input_ids"},
                    %labels: tensor<2x4xi64> {tg.role = "label", tg.name = "labels"},
                    %table: tensor<8x8xf32> {tg.role = "param", tg.name = "table"},
                    %mask: tensor<2x4xi64> {tg.role = "input", tg.name = "attention_mask"},
                    %types: tensor<2x4xi64> {tg.role = "input", tg.name = "token_type_ids"},
                    %positions: tensor<2x4xi64> {tg.role = "input", tg.name = "position_ids"})
    -> (tensor<f32> {tg.role = "loss", tg.name = "loss"}) {
  %e = tg.embedding %table[%ids] : (tensor<8x8xf32>, tensor<2x4xi64>) -> tensor<2x4x8xf32>
  %rows = tg.constant dense<[[0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.5, 0.0, 0.0, 0.0, 0.0]]> : tensor<4x8xf32>
  %pos = tg.embedding %rows[%positions] : (tensor<4x8xf32>, tensor<2x4xi64>) -> tensor<2x4x8xf32>
  %typeRows = tg.constant dense<[[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 2.0]]> : tensor<2x8xf32>
  %type = tg.embedding %typeRows[%types] : (tensor<2x8xf32>, tensor<2x4xi64>) -> tensor<2x4x8xf32>
  %maskF = tg.convert %mask : tensor<2x4xi64> -> tensor<2x4xf32>
  %maskB = tg.broadcast_in_dim %maskF dims = [0, 1] : tensor<2x4xf32> -> tensor<2x4x8xf32>
  %masked = tg.mul %e, %maskB : tensor<2x4x8xf32>
  %withPos = tg.add %masked, %pos : tensor<2x4x8xf32>
  %logits = tg.add %withPos, %type : tensor<2x4x8xf32>
  %loss, %lse = tg.cross_entropy mean %logits, %labels : (tensor<2x4x8xf32>, tensor<2x4xi64>) -> (tensor<f32>, tensor<2x4xf32>)
  return %loss : tensor<f32>
}

// An integer input that is none of these: tgc train cannot guess it.
func.func @unknown(%ids: tensor<2x4xi64> {tg.role = "input", tg.name = "input_ids"},
                   %labels: tensor<2x4xi64> {tg.role = "label", tg.name = "labels"},
                   %table: tensor<8x8xf32> {tg.role = "param", tg.name = "table"},
                   %scale: tensor<2x4xi64> {tg.role = "input", tg.name = "scale"})
    -> (tensor<f32> {tg.role = "loss", tg.name = "loss"}) {
  %e = tg.embedding %table[%ids] : (tensor<8x8xf32>, tensor<2x4xi64>) -> tensor<2x4x8xf32>
  %scaleF = tg.convert %scale : tensor<2x4xi64> -> tensor<2x4xf32>
  %scaleB = tg.broadcast_in_dim %scaleF dims = [0, 1] : tensor<2x4xf32> -> tensor<2x4x8xf32>
  %logits = tg.mul %e, %scaleB : tensor<2x4x8xf32>
  %loss, %lse = tg.cross_entropy mean %logits, %labels : (tensor<2x4x8xf32>, tensor<2x4xi64>) -> (tensor<f32>, tensor<2x4xf32>)
  return %loss : tensor<f32>
}

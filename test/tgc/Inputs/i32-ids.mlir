// Token ids given as i32 and widened before the lookup (as an importer
// converts them): random ids are drawn below the table's 10 rows.
func.func @i32_ids(%ids: tensor<2x4xi32> {tg.role = "input", tg.name = "input_ids"},
                   %labels: tensor<2x4xi64> {tg.role = "label", tg.name = "labels"},
                   %table: tensor<10x8xf32> {tg.role = "param", tg.name = "table"})
    -> (tensor<f32> {tg.role = "loss", tg.name = "loss"}) {
  %wide = tg.convert %ids : tensor<2x4xi32> -> tensor<2x4xi64>
  %e = tg.embedding %table[%wide] : (tensor<10x8xf32>, tensor<2x4xi64>) -> tensor<2x4x8xf32>
  %loss, %lse = tg.cross_entropy mean %e, %labels : (tensor<2x4x8xf32>, tensor<2x4xi64>) -> (tensor<f32>, tensor<2x4xf32>)
  return %loss : tensor<f32>
}

// A pipelined function (docs/pipeline.md): its pipeline, and each op's
// stage, micro-batch and direction.
func.func @pipelined(%x: tensor<4xf32>) -> tensor<4xf32> attributes {tg.pipeline_stages = {axis = "pp", stages = 2 : i64, virtual_stages = 1 : i64, micro_batches = 2 : i64, schedule = "1f1b"}} {
  %0 = tg.exp %x {tg.stage = 1 : i64, tg.micro_batch = 1 : i64, tg.backward} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// RUN: tgc-opt %s --split-input-file --tg-pipeline-schedule --verify-diagnostics

// The mesh has no pp axis.
module {
  shard.grid @mesh(shape = 2) {tg.mesh_axes = ["dp"]}
  // expected-error @+1 {{tg-pipeline-schedule: the pipeline of @f has 2 stages, but the mesh dp=2 has no 'pp' axis}}
  func.func @f(%x: tensor<4xf32> {tg.role = "input"}) -> (tensor<4xf32> {tg.role = "output"})
      attributes {tg.pipeline_stages = {axis = "pp", stages = 2 : i64, virtual_stages = 1 : i64, micro_batches = 1 : i64, schedule = "1f1b"}} {
    %y = tg.neg %x {tg.stage = 0 : i64} : tensor<4xf32>
    return %y : tensor<4xf32>
  }
}

// -----

// The pp axis has another size than the pipeline's stages.
module {
  shard.grid @mesh(shape = 4) {tg.mesh_axes = ["pp"]}
  // expected-error @+1 {{tg-pipeline-schedule: the pipeline of @f has 2 stages, but the mesh pp=4 has a 'pp' axis of size 4}}
  func.func @f(%x: tensor<4xf32> {tg.role = "input"}) -> (tensor<4xf32> {tg.role = "output"})
      attributes {tg.pipeline_stages = {axis = "pp", stages = 2 : i64}} {
    %y = tg.neg %x {tg.stage = 0 : i64} : tensor<4xf32>
    return %y : tensor<4xf32>
  }
}

// -----

// No mesh at all.
// expected-error @+1 {{tg-pipeline-schedule: @f is split into pipeline stages but has no mesh (tg-shard-annotate with a 'pp' axis runs first)}}
func.func @f(%x: tensor<4xf32> {tg.role = "input"}) -> (tensor<4xf32> {tg.role = "output"})
    attributes {tg.pipeline_stages = {axis = "pp", stages = 2 : i64}} {
  %y = tg.neg %x {tg.stage = 0 : i64} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// A stage beyond the pipeline's.
module {
  shard.grid @mesh(shape = 2) {tg.mesh_axes = ["pp"]}
  func.func @f(%x: tensor<4xf32> {tg.role = "input"}) -> (tensor<4xf32> {tg.role = "output"})
      attributes {tg.pipeline_stages = {axis = "pp", stages = 2 : i64}} {
    // expected-error @+1 {{tg-pipeline-schedule: stage 5 / micro-batch 0 out of range for the pipeline of @f}}
    %y = tg.neg %x {tg.stage = 5 : i64} : tensor<4xf32>
    return %y : tensor<4xf32>
  }
}

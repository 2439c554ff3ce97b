// RUN: not tgc-opt %s --split-input-file --tg-shard-annotate='mesh=dp=3' 2>&1 | FileCheck %s --check-prefix=BATCH
// RUN: not tgc-opt %s --split-input-file --tg-shard-annotate='mesh=tp=2 zero=1' 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not tgc-opt %s --split-input-file --tg-shard-annotate='mesh=dp=2 sequence-parallel=true' 2>&1 | FileCheck %s --check-prefix=SEQ
// RUN: not tgc-opt %s --split-input-file --tg-shard-annotate='zero=2' 2>&1 | FileCheck %s --check-prefix=NOMESH
// RUN: not tgc-opt %s --split-input-file --tg-shard-annotate='mesh=dp=2,dp=2' 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: not tgc-opt %s --split-input-file --tg-shard-annotate='mesh=dp:2' 2>&1 | FileCheck %s --check-prefix=SYNTAX
// RUN: not tgc-opt %s --split-input-file --tg-shard-annotate='mesh=dp=0' 2>&1 | FileCheck %s --check-prefix=SIZE

// BATCH: error: the batch dimension of input 'x' has size 8, which dp=3 does not divide
// ZERO: error: --zero 1 shards over the dp axis, which the mesh tp=2 does not have
// SEQ: error: --sequence-parallel splits over the tp axis, which the mesh dp=2 does not have
// NOMESH: error: --zero needs a mesh (--mesh dp=N[,tp=M])
// TWICE: error: --mesh: mesh axis 'dp' appears twice
// SYNTAX: error: --mesh: a mesh is NAME=SIZE[,NAME=SIZE...] (e.g. dp=8,tp=4), got 'dp:2'
// SIZE: error: --mesh: mesh axis 'dp' must have a size in [1, 1048576], got 0
func.func @step(%x: tensor<8x16xf32> {tg.role = "input", tg.name = "x"},
                %w: tensor<16x4xf32> {tg.role = "param", tg.name = "w"})
    -> (tensor<f32> {tg.role = "loss"}) {
  %y = tg.matmul %x, %w : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %l = tg.reduce sum %y dims = [0, 1] : tensor<8x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// `tgc run --compare` checks that canonicalization keeps the numbers of a
// real graph, and fails on programs that differ.
// RUN: tgc compile %tgc_src_root/examples/gpt2-tiny.mlir -o %t.canon.mlir
// RUN: tgc run --compare %tgc_src_root/examples/gpt2-tiny.mlir %t.canon.mlir --random-inputs 0 | FileCheck %s --check-prefix=SAME
// SAME: loss: max abs error 0, max rel error 0 ok

// RUN: not tgc run --compare %s %S/Inputs/scaled.mlir --random-inputs 3 > %t.out 2> %t.err
// RUN: FileCheck %s --check-prefix=DIFF < %t.out
// RUN: FileCheck %s --check-prefix=DIFF-ERR < %t.err
// DIFF: out: max abs error {{.*}} FAIL (8 elements beyond tolerance)
// DIFF-ERR: tgc: error: results differ beyond rtol=1e-05 atol=1e-08

// A loose tolerance accepts the difference.
// RUN: tgc run --compare %s %S/Inputs/scaled.mlir --random-inputs 3 --rtol 0.01 | FileCheck %s --check-prefix=LOOSE
// LOOSE: out: {{.*}} ok
func.func @main(%x: tensor<8xf32> {tg.role = "input", tg.name = "x"}) -> (tensor<8xf32> {tg.name = "out"}) {
  %0 = tg.tanh %x : tensor<8xf32>
  return %0 : tensor<8xf32>
}

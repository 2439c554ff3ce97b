// A param's tg.init chooses its initial value in a fresh run (LoRA's B
// matrices start at zero); without one it is normal(0, 0.02).
// RUN: tgc run %s --random-inputs 0 --print-values | FileCheck %s
// CHECK: zeros: tensor<3xf32> mean=0 absmax=0
// CHECK-NEXT: [0, 0, 0]
// CHECK: ones: tensor<3xf32> mean=1 absmax=1
// CHECK-NEXT: [1, 1, 1]
// CHECK: normal: tensor<3xf32>
// CHECK-NOT: [0, 0, 0]
func.func @main(%z: tensor<3xf32> {tg.role = "param", tg.init = "zeros"},
                %o: tensor<3xf32> {tg.role = "param", tg.init = "ones"},
                %n: tensor<3xf32> {tg.role = "param", tg.init = "normal"})
    -> (tensor<3xf32> {tg.name = "zeros"}, tensor<3xf32> {tg.name = "ones"}, tensor<3xf32> {tg.name = "normal"}) {
  return %z, %o, %n : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}

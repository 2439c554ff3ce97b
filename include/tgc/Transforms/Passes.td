//===- Passes.td - the tg passes ---------------------------*- tablegen -*-===//
//
// Every tg pass: one entry here, one .cpp in lib/Transforms, one test file
// named after its flag.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_TRANSFORMS_PASSES_TD
#define TGC_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def TGAutodiff : Pass<"tg-autodiff", "::mlir::ModuleOp"> {
  let summary = "Reverse-mode differentiation: add the gradients of the params";
  let description = [{
    For every function with a `tg.role = "loss"` result, builds the backward
    pass after the forward ops and returns, after the existing results, one
    gradient per `param` argument, with `tg.role = "grad"` and
    `tg.name = "<param name>.grad"` (or `"argN.grad"`).

    The backward of each op comes from its `DifferentiableOpInterface`; the
    pass lists no op names. Only ops that depend on a parameter and reach the
    loss are differentiated. A value used several times accumulates its
    gradients with `tg.add`; integer values (ids, labels, seeds) get none; a
    parameter that does not influence the loss gets a zero gradient and a
    remark. Backward ops whose results are not needed are not kept.

    Before:

    ```mlir
    func.func @f(%x: tensor<4x8xf32> {tg.role = "input"},
                 %w: tensor<8x2xf32> {tg.role = "param", tg.name = "w"},
                 %y: tensor<4xi64> {tg.role = "label"})
        -> (tensor<f32> {tg.role = "loss"}) {
      %l = tg.matmul %x, %w : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
      %loss, %lse = tg.cross_entropy mean %l, %y : (tensor<4x2xf32>, tensor<4xi64>) -> (tensor<f32>, tensor<4xf32>)
      return %loss : tensor<f32>
    }
    ```

    After (the forward is unchanged):

    ```mlir
      %one = tg.constant dense<1.0> : tensor<f32>
      %dl = tg.cross_entropy_grad mean %one, %l, %y, %lse : (...) -> tensor<4x2xf32>
      %dw = tg.matmul %x, %dl transpose_a : (tensor<4x8xf32>, tensor<4x2xf32>) -> tensor<8x2xf32>
      return %loss, %dw : tensor<f32>, tensor<8x2xf32>
    ```
    with the new result marked `{tg.role = "grad", tg.name = "w.grad"}`.
  }];
}

#endif // TGC_TRANSFORMS_PASSES_TD

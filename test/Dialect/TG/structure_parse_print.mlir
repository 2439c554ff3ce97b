// RUN: tgc-opt %s --split-input-file | tgc-opt --split-input-file | FileCheck %s
// RUN: tgc-opt %s --split-input-file --mlir-print-op-generic | tgc-opt --split-input-file | FileCheck %s

// A fusion of two elementwise ops: the inputs become the block arguments.
// CHECK-LABEL: func.func @fusion_single_result
// CHECK-SAME:    (%[[A:[^:]+]]: tensor<4xf32>, %[[B:[^:]+]]: tensor<4xf32>)
// CHECK:         %[[F:.+]] = tg.fusion(%[[A]], %[[B]]) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    ^bb0(%[[X:[^:]+]]: tensor<4xf32>, %[[Y:[^:]+]]: tensor<4xf32>):
// CHECK-NEXT:      %[[S:.+]] = tg.add %[[X]], %[[Y]] : tensor<4xf32>
// CHECK-NEXT:      %[[R:.+]] = tg.relu %[[S]] : tensor<4xf32>
// CHECK-NEXT:      tg.yield %[[R]] : tensor<4xf32>
// CHECK-NEXT:    }
// CHECK:         return %[[F]]
func.func @fusion_single_result(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tg.fusion (%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>, %y: tensor<4xf32>):
    %s = tg.add %x, %y : tensor<4xf32>
    %r = tg.relu %s : tensor<4xf32>
    tg.yield %r : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

// Several inputs of different types and several results.
// CHECK-LABEL: func.func @fusion_multiple_inputs_results
// CHECK-SAME:    (%[[P:[^:]+]]: tensor<8x16xi1>, %[[A:[^:]+]]: tensor<8x16xbf16>, %[[B:[^:]+]]: tensor<8x16xbf16>)
// CHECK:         %[[F:.+]]:2 = tg.fusion(%[[P]], %[[A]], %[[B]]) : (tensor<8x16xi1>, tensor<8x16xbf16>, tensor<8x16xbf16>) -> (tensor<8x16xbf16>, tensor<8x16xf32>) {
// CHECK-NEXT:    ^bb0(%[[XP:[^:]+]]: tensor<8x16xi1>, %[[XA:[^:]+]]: tensor<8x16xbf16>, %[[XB:[^:]+]]: tensor<8x16xbf16>):
// CHECK-NEXT:      %[[SEL:.+]] = tg.select %[[XP]], %[[XA]], %[[XB]] : tensor<8x16xi1>, tensor<8x16xbf16>
// CHECK-NEXT:      %[[WIDE:.+]] = tg.convert %[[SEL]] : tensor<8x16xbf16> -> tensor<8x16xf32>
// CHECK-NEXT:      tg.yield %[[SEL]], %[[WIDE]] : tensor<8x16xbf16>, tensor<8x16xf32>
// CHECK-NEXT:    }
// CHECK:         return %[[F]]#0, %[[F]]#1
func.func @fusion_multiple_inputs_results(%p: tensor<8x16xi1>, %a: tensor<8x16xbf16>, %b: tensor<8x16xbf16>) -> (tensor<8x16xbf16>, tensor<8x16xf32>) {
  %0:2 = tg.fusion (%p, %a, %b) : (tensor<8x16xi1>, tensor<8x16xbf16>, tensor<8x16xbf16>) -> (tensor<8x16xbf16>, tensor<8x16xf32>) {
  ^bb0(%xp: tensor<8x16xi1>, %xa: tensor<8x16xbf16>, %xb: tensor<8x16xbf16>):
    %sel = tg.select %xp, %xa, %xb : tensor<8x16xi1>, tensor<8x16xbf16>
    %wide = tg.convert %sel : tensor<8x16xbf16> -> tensor<8x16xf32>
    tg.yield %sel, %wide : tensor<8x16xbf16>, tensor<8x16xf32>
  }
  return %0#0, %0#1 : tensor<8x16xbf16>, tensor<8x16xf32>
}

// -----

// A library call with an epilogue: matmul, bias and GELU in one region.
// CHECK-LABEL: func.func @fusion_matmul_epilogue
// CHECK-SAME:    (%[[X:[^:]+]]: tensor<64x768xbf16>, %[[W:[^:]+]]: tensor<768x3072xbf16>, %[[BIAS:[^:]+]]: tensor<64x3072xbf16>)
// CHECK:         %[[F:.+]] = tg.fusion(%[[X]], %[[W]], %[[BIAS]]) : (tensor<64x768xbf16>, tensor<768x3072xbf16>, tensor<64x3072xbf16>) -> tensor<64x3072xbf16> {
// CHECK-NEXT:    ^bb0(%[[BX:[^:]+]]: tensor<64x768xbf16>, %[[BW:[^:]+]]: tensor<768x3072xbf16>, %[[BB:[^:]+]]: tensor<64x3072xbf16>):
// CHECK-NEXT:      %[[MM:.+]] = tg.matmul %[[BX]], %[[BW]] : (tensor<64x768xbf16>, tensor<768x3072xbf16>) -> tensor<64x3072xbf16>
// CHECK-NEXT:      %[[ADD:.+]] = tg.add %[[MM]], %[[BB]] : tensor<64x3072xbf16>
// CHECK-NEXT:      %[[G:.+]] = tg.gelu tanh %[[ADD]] : tensor<64x3072xbf16>
// CHECK-NEXT:      tg.yield %[[G]] : tensor<64x3072xbf16>
// CHECK-NEXT:    }
// CHECK:         return %[[F]]
func.func @fusion_matmul_epilogue(%x: tensor<64x768xbf16>, %w: tensor<768x3072xbf16>, %bias: tensor<64x3072xbf16>) -> tensor<64x3072xbf16> {
  %0 = tg.fusion (%x, %w, %bias) : (tensor<64x768xbf16>, tensor<768x3072xbf16>, tensor<64x3072xbf16>) -> tensor<64x3072xbf16> {
  ^bb0(%bx: tensor<64x768xbf16>, %bw: tensor<768x3072xbf16>, %bb: tensor<64x3072xbf16>):
    %mm = tg.matmul %bx, %bw : (tensor<64x768xbf16>, tensor<768x3072xbf16>) -> tensor<64x3072xbf16>
    %add = tg.add %mm, %bb : tensor<64x3072xbf16>
    %g = tg.gelu tanh %add : tensor<64x3072xbf16>
    tg.yield %g : tensor<64x3072xbf16>
  }
  return %0 : tensor<64x3072xbf16>
}

// -----

// A fusion without inputs: its block has no arguments and prints no header.
// CHECK-LABEL: func.func @fusion_no_inputs
// CHECK:         %[[F:.+]] = tg.fusion() : () -> tensor<4xf32> {
// CHECK-NEXT:      %[[C:.+]] = tg.constant dense<1.000000e+00> : tensor<4xf32>
// CHECK-NEXT:      %[[E:.+]] = tg.exp %[[C]] : tensor<4xf32>
// CHECK-NEXT:      tg.yield %[[E]] : tensor<4xf32>
// CHECK-NEXT:    }
// CHECK:         return %[[F]]
func.func @fusion_no_inputs() -> tensor<4xf32> {
  %0 = tg.fusion () : () -> tensor<4xf32> {
    %c = tg.constant dense<1.0> : tensor<4xf32>
    %e = tg.exp %c : tensor<4xf32>
    tg.yield %e : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

// A fusion without results ends with a bare tg.yield.
// CHECK-LABEL: func.func @fusion_no_results
// CHECK-SAME:    (%[[A:[^:]+]]: tensor<4xf32>)
// CHECK:         tg.fusion(%[[A]]) : (tensor<4xf32>) -> () {
// CHECK-NEXT:    ^bb0(%{{[^:]+}}: tensor<4xf32>):
// CHECK-NEXT:      tg.yield{{$}}
// CHECK-NEXT:    }
func.func @fusion_no_results(%a: tensor<4xf32>) {
  tg.fusion (%a) : (tensor<4xf32>) -> () {
  ^bb0(%x: tensor<4xf32>):
    tg.yield
  }
  return
}

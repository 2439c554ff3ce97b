// RUN: tgc-opt %s --split-input-file --canonicalize | FileCheck %s
// RUN: tgc-opt %s --split-input-file --canonicalize --cse | FileCheck %s --check-prefixes=CHECK,CSE

// An input the body never reads is dropped, with its block argument.
// CHECK-LABEL: func.func @drop_unused_input
// CHECK-SAME:    (%[[A:[^:]+]]: tensor<4xf32>, %{{[^:]+}}: tensor<4xf32>, %[[C:[^:]+]]: tensor<4xf32>)
// CHECK:         %[[F:.+]] = tg.fusion(%[[A]], %[[C]]) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    ^bb0(%[[X:[^:]+]]: tensor<4xf32>, %[[Z:[^:]+]]: tensor<4xf32>):
// CHECK-NEXT:      %[[S:.+]] = tg.add %[[X]], %[[Z]] : tensor<4xf32>
// CHECK-NEXT:      tg.yield %[[S]] : tensor<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[F]] : tensor<4xf32>
func.func @drop_unused_input(%a: tensor<4xf32>, %b: tensor<4xf32>, %c: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tg.fusion (%a, %b, %c) : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>, %y: tensor<4xf32>, %z: tensor<4xf32>):
    %s = tg.add %x, %z : tensor<4xf32>
    tg.yield %s : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

// A result nobody uses is dropped, and so is the computation only it needed.
// CHECK-LABEL: func.func @drop_unused_result
// CHECK-SAME:    (%[[A:[^:]+]]: tensor<4xf32>)
// CHECK:         %[[F:.+]] = tg.fusion(%[[A]]) : (tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    ^bb0(%[[X:[^:]+]]: tensor<4xf32>):
// CHECK-NEXT:      %[[E:.+]] = tg.exp %[[X]] : tensor<4xf32>
// CHECK-NEXT:      tg.yield %[[E]] : tensor<4xf32>
// CHECK-NEXT:    }
// CHECK-NOT:     tg.log
// CHECK:         return %[[F]] : tensor<4xf32>
func.func @drop_unused_result(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0:2 = tg.fusion (%a) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%x: tensor<4xf32>):
    %l = tg.log %x : tensor<4xf32>
    %e = tg.exp %x : tensor<4xf32>
    tg.yield %l, %e : tensor<4xf32>, tensor<4xf32>
  }
  return %0#1 : tensor<4xf32>
}

// -----

// Dropping a result can leave an input unused, which is then dropped too.
// CHECK-LABEL: func.func @drop_result_then_input
// CHECK-SAME:    (%[[A:[^:]+]]: tensor<4xf32>, %{{[^:]+}}: tensor<4xf32>)
// CHECK:         %[[F:.+]] = tg.fusion(%[[A]]) : (tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    ^bb0(%[[X:[^:]+]]: tensor<4xf32>):
// CHECK-NEXT:      %[[R:.+]] = tg.relu %[[X]] : tensor<4xf32>
// CHECK-NEXT:      tg.yield %[[R]] : tensor<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[F]] : tensor<4xf32>
func.func @drop_result_then_input(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0:2 = tg.fusion (%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%x: tensor<4xf32>, %y: tensor<4xf32>):
    %r = tg.relu %x : tensor<4xf32>
    %t = tg.tanh %y : tensor<4xf32>
    tg.yield %r, %t : tensor<4xf32>, tensor<4xf32>
  }
  return %0#0 : tensor<4xf32>
}

// -----

// When every input and result is used, the fusion is left as it is.
// CHECK-LABEL: func.func @keep_all_used
// CHECK-SAME:    (%[[A:[^:]+]]: tensor<4xf32>, %[[B:[^:]+]]: tensor<4xbf16>)
// CHECK:         %[[F:.+]]:2 = tg.fusion(%[[A]], %[[B]]) : (tensor<4xf32>, tensor<4xbf16>) -> (tensor<4xf32>, tensor<4xbf16>) {
// CHECK-NEXT:    ^bb0(%[[X:[^:]+]]: tensor<4xf32>, %[[Y:[^:]+]]: tensor<4xbf16>):
// CHECK-NEXT:      %[[E:.+]] = tg.exp %[[X]] : tensor<4xf32>
// CHECK-NEXT:      %[[N:.+]] = tg.neg %[[Y]] : tensor<4xbf16>
// CHECK-NEXT:      tg.yield %[[E]], %[[N]] : tensor<4xf32>, tensor<4xbf16>
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[F]]#0, %[[F]]#1 : tensor<4xf32>, tensor<4xbf16>
func.func @keep_all_used(%a: tensor<4xf32>, %b: tensor<4xbf16>) -> (tensor<4xf32>, tensor<4xbf16>) {
  %0:2 = tg.fusion (%a, %b) : (tensor<4xf32>, tensor<4xbf16>) -> (tensor<4xf32>, tensor<4xbf16>) {
  ^bb0(%x: tensor<4xf32>, %y: tensor<4xbf16>):
    %e = tg.exp %x : tensor<4xf32>
    %n = tg.neg %y : tensor<4xbf16>
    tg.yield %e, %n : tensor<4xf32>, tensor<4xbf16>
  }
  return %0#0, %0#1 : tensor<4xf32>, tensor<4xbf16>
}

// -----

// A fusion none of whose results is used has no effect and is erased.
// CHECK-LABEL: func.func @erase_unused_fusion
// CHECK-NOT:     tg.fusion
// CHECK:         return
func.func @erase_unused_fusion(%a: tensor<4xf32>) {
  %0 = tg.fusion (%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    %e = tg.exp %x : tensor<4xf32>
    tg.yield %e : tensor<4xf32>
  }
  return
}

// -----

// Folders run inside the body: neg(neg(x)) is x, a splat broadcast becomes a constant there.
// CHECK-LABEL: func.func @fold_inside_body
// CHECK-SAME:    (%[[A:[^:]+]]: tensor<4x8xf32>)
// CHECK:         %[[F:.+]]:2 = tg.fusion(%[[A]]) : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
// CHECK-NEXT:    ^bb0(%[[X:[^:]+]]: tensor<4x8xf32>):
// CHECK-NEXT:      %[[C:.+]] = tg.constant dense<2.000000e+00> : tensor<4x8xf32>
// CHECK-NEXT:      %[[M:.+]] = tg.mul %[[X]], %[[C]] : tensor<4x8xf32>
// CHECK-NEXT:      %[[E:.+]] = tg.exp %[[X]] : tensor<4x8xf32>
// CHECK-NEXT:      tg.yield %[[M]], %[[E]] : tensor<4x8xf32>, tensor<4x8xf32>
// CHECK-NEXT:    }
// CHECK-NOT:     tg.broadcast_in_dim
// CHECK-NOT:     tg.neg
func.func @fold_inside_body(%a: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0:2 = tg.fusion (%a) : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  ^bb0(%x: tensor<4x8xf32>):
    %c = tg.constant dense<2.0> : tensor<8xf32>
    %b = tg.broadcast_in_dim %c dims = [1] : tensor<8xf32> -> tensor<4x8xf32>
    %m = tg.mul %x, %b : tensor<4x8xf32>
    %n = tg.neg %x : tensor<4x8xf32>
    %nn = tg.neg %n : tensor<4x8xf32>
    %e = tg.exp %nn : tensor<4x8xf32>
    tg.yield %m, %e : tensor<4x8xf32>, tensor<4x8xf32>
  }
  return %0#0, %0#1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// CSE works inside the body (second RUN line): the repeated add is computed once.
// CHECK-LABEL: func.func @cse_inside_body
// CHECK:         tg.fusion
// CSE-NEXT:      ^bb0(%[[X:[^:]+]]: tensor<4xf32>, %[[Y:[^:]+]]: tensor<4xf32>):
// CSE-NEXT:        %[[S:.+]] = tg.add %[[X]], %[[Y]] : tensor<4xf32>
// CSE-NEXT:        %[[M:.+]] = tg.mul %[[S]], %[[S]] : tensor<4xf32>
// CSE-NEXT:        tg.yield %[[M]] : tensor<4xf32>
// CSE-NEXT:      }
func.func @cse_inside_body(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tg.fusion (%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>, %y: tensor<4xf32>):
    %s = tg.add %x, %y : tensor<4xf32>
    %t = tg.add %x, %y : tensor<4xf32>
    %m = tg.mul %s, %t : tensor<4xf32>
    tg.yield %m : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

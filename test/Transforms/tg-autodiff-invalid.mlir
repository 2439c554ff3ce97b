// RUN: tgc-opt %s --split-input-file --tg-autodiff --verify-diagnostics

// A function that already returns gradients is not differentiated again.
// expected-error @+1 {{is already differentiated: result #1 is a gradient}}
func.func @twice(%p: tensor<4xf32> {tg.role = "param"}) -> (tensor<f32> {tg.role = "loss"}, tensor<4xf32> {tg.role = "grad"}) {
  %loss = tg.reduce sum %p dims = [0] : tensor<4xf32> -> tensor<f32>
  return %loss, %p : tensor<f32>, tensor<4xf32>
}

// -----

// An op between the parameters and the loss must be differentiable.
func.func @fusion(%p: tensor<4xf32> {tg.role = "param"}) -> (tensor<f32> {tg.role = "loss"}) {
  // expected-error @+1 {{'tg.fusion' op is between the parameters and the loss but has no DifferentiableOpInterface}}
  %0 = tg.fusion (%p) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    %e = tg.exp %x : tensor<4xf32>
    tg.yield %e : tensor<4xf32>
  }
  %loss = tg.reduce sum %0 dims = [0] : tensor<4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// The statistics of layer_norm carry no gradient of their own.
func.func @through_mean(%x: tensor<2x4xf32> {tg.role = "param"}, %g: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<f32> {tg.role = "loss"}) {
  // expected-error @+1 {{'tg.layer_norm' op cannot be differentiated through a secondary result alone}}
  %y, %m, %r = tg.layer_norm %x, %g, %b epsilon = 1.000000e-05 : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4xf32>, tensor<2xf32>, tensor<2xf32>)
  %loss = tg.reduce sum %m dims = [0] : tensor<2xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Nor the logsumexp of attention, when the output also has a gradient.
func.func @through_lse(%q: tensor<1x1x2x4xf32> {tg.role = "param"}) -> (tensor<f32> {tg.role = "loss"}) {
  // expected-error @+1 {{'tg.attention' op cannot be differentiated through its 'logsumexp' result (only the main result carries a gradient)}}
  %o, %lse = tg.attention %q, %q, %q : (tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32>) -> (tensor<1x1x2x4xf32>, tensor<1x1x2xf32>)
  %a = tg.reduce sum %o dims = [0, 1, 2, 3] : tensor<1x1x2x4xf32> -> tensor<f32>
  %c = tg.reduce sum %lse dims = [0, 1, 2] : tensor<1x1x2xf32> -> tensor<f32>
  %loss = tg.add %a, %c : tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Differentiation was asked for, but no function of the module returns a
// loss: the step would come out unchanged, with nothing to train.
// expected-error @+1 {{tg-autodiff: no function of the module has a loss result (a scalar result with tg.role = "loss"), so there is nothing to differentiate and no gradient for an optimizer}}
func.func @no_loss(%p: tensor<4xf32> {tg.role = "param"}) -> (tensor<f32> {tg.role = "output"}) {
  %0 = tg.reduce sum %p dims = [0] : tensor<4xf32> -> tensor<f32>
  return %0 : tensor<f32>
}
func.func private @declared(tensor<4xf32>) -> tensor<f32>

// -----

// A float's bits read as another float have no derivative.
func.func @bitcast_float(%p: tensor<4xf16> {tg.role = "param"}) -> (tensor<f32> {tg.role = "loss"}) {
  // expected-error @+1 {{'tg.bitcast' op cannot be differentiated: the bits of a float read as another float are no function of its value with a derivative}}
  %b = tg.bitcast %p : tensor<4xf16> -> tensor<4xbf16>
  %f = tg.convert %b : tensor<4xbf16> -> tensor<4xf32>
  %loss = tg.reduce sum %f dims = [0] : tensor<4xf32> -> tensor<f32>
  return %loss : tensor<f32>
}

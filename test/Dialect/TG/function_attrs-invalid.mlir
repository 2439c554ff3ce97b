// RUN: tgc-opt %s --split-input-file --verify-diagnostics

// An argument role that does not exist; argument errors point at the argument.
func.func @arg_unknown_role(
    // expected-error @+1 {{argument #0 of 'arg_unknown_role': unknown role 'weight'; expected one of 'param', 'state', 'input', 'label', 'hyper'}}
    %w: tensor<4xf32> {tg.role = "weight"}) {
  return
}

// -----

// A result role that exists only for arguments; result errors point at the function.
// expected-error @+1 {{result #0: unknown role 'input'; expected one of 'loss', 'grad', 'param', 'state', 'output'}}
func.func @result_unknown_role(%x: tensor<4xf32>) -> (tensor<4xf32> {tg.role = "input"}) {
  return %x : tensor<4xf32>
}

// -----

// A role that is not a string, on an argument.
func.func @arg_role_not_string(
    // expected-error @+1 {{argument #0 of 'arg_role_not_string': 'tg.role' must be a string, got 1 : i64}}
    %w: tensor<4xf32> {tg.role = 1}) {
  return
}

// -----

// A role that is not a string, on a result.
// expected-error @+1 {{result #0: 'tg.role' must be a string, got ["loss"]}}
func.func @result_role_not_string(%x: tensor<f32>) -> (tensor<f32> {tg.role = ["loss"]}) {
  return %x : tensor<f32>
}

// -----

// An empty argument name.
func.func @arg_empty_name(
    // expected-error @+1 {{argument #0 of 'arg_empty_name': 'tg.name' must be a non-empty string, got ""}}
    %w: tensor<4xf32> {tg.name = ""}) {
  return
}

// -----

// An argument name that is not a string.
func.func @arg_name_not_string(
    // expected-error @+1 {{argument #0 of 'arg_name_not_string': 'tg.name' must be a non-empty string, got 7 : i64}}
    %w: tensor<4xf32> {tg.name = 7}) {
  return
}

// -----

// Two arguments with the same name: the second one is reported.
func.func @arg_duplicate_name(
    %a: tensor<4xf32> {tg.name = "w"},
    %b: tensor<4xf32> {tg.name = "b"},
    // expected-error @+1 {{argument #2 of 'arg_duplicate_name': 'tg.name' "w" is already the name of argument #0}}
    %c: tensor<4xf32> {tg.name = "w"}) {
  return
}

// -----

// An empty result name.
// expected-error @+1 {{result #0: 'tg.name' must be a non-empty string, got ""}}
func.func @result_empty_name(%x: tensor<4xf32>) -> (tensor<4xf32> {tg.name = ""}) {
  return %x : tensor<4xf32>
}

// -----

// A function type with more arguments than its entry block (generic form):
// the argument attributes are verified before the block is checked against
// the type, so an error about argument #5 is reported at the function (it
// crashed looking for block argument #5).
// expected-error @+1 {{argument #5: 'tg.name' "b" is already the name of argument #1}}
"func.func"() <{function_type = (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>, sym_name = "block_fewer_arguments", arg_attrs = [{tg.name = "a"}, {tg.name = "b"}, {tg.name = "c"}, {tg.name = "d"}, {tg.name = "e"}, {tg.name = "b"}]}> ({
^bb0(%a: tensor<2xf32>, %b: tensor<2xf32>, %c: tensor<2xf32>):
  "func.return"(%a) : (tensor<2xf32>) -> ()
}) : () -> ()

// -----

// Two results with the same name.
// expected-error @+1 {{result #1: 'tg.name' "y" is already the name of result #0}}
func.func @result_duplicate_name(%x: tensor<4xf32>) -> (tensor<4xf32> {tg.name = "y"}, tensor<4xf32> {tg.name = "y"}) {
  return %x, %x : tensor<4xf32>, tensor<4xf32>
}

// -----

// tg.aliases belongs on the result that updates an argument, not on the argument.
func.func @aliases_on_argument(
    // expected-error @+1 {{argument #0 of 'aliases_on_argument': 'tg.aliases' belongs on a result, naming the argument it updates}}
    %w: tensor<4xf32> {tg.role = "param", tg.aliases = 0}) {
  return
}

// -----

// An aliases index past the last argument.
// expected-error @+1 {{result #0: 'tg.aliases' = 1 is not an argument index (the function has 1 argument(s))}}
func.func @aliases_out_of_range(%w: tensor<4xf32> {tg.role = "param"}) -> (tensor<4xf32> {tg.aliases = 1}) {
  return %w : tensor<4xf32>
}

// -----

// A negative aliases index.
// expected-error @+1 {{result #0: 'tg.aliases' = -1 is not an argument index (the function has 1 argument(s))}}
func.func @aliases_negative(%w: tensor<4xf32> {tg.role = "param"}) -> (tensor<4xf32> {tg.aliases = -1}) {
  return %w : tensor<4xf32>
}

// -----

// A result that aliases an argument of another type.
// expected-error @+1 {{result #0: aliases argument #0 of type 'tensor<4xf32>', but has type 'tensor<4xbf16>'}}
func.func @aliases_wrong_type(%w: tensor<4xf32> {tg.role = "param"}) -> (tensor<4xbf16> {tg.aliases = 0}) {
  %0 = tg.convert %w : tensor<4xf32> -> tensor<4xbf16>
  return %0 : tensor<4xbf16>
}

// -----

// Only a param or a state may be updated in place, not an input.
// expected-error @+1 {{result #0: aliases argument #0, which is not a 'param' or 'state'}}
func.func @aliases_input(%x: tensor<4xf32> {tg.role = "input"}) -> (tensor<4xf32> {tg.aliases = 0}) {
  return %x : tensor<4xf32>
}

// -----

// An argument without a role cannot be updated in place either.
// expected-error @+1 {{result #0: aliases argument #0, which is not a 'param' or 'state'}}
func.func @aliases_no_role(%x: tensor<4xf32>) -> (tensor<4xf32> {tg.aliases = 0}) {
  return %x : tensor<4xf32>
}

// -----

// Two results that update the same argument.
// expected-error @+1 {{result #2: argument #1 is already aliased by result #0}}
func.func @aliases_twice(%w: tensor<4xf32> {tg.role = "param"}, %m: tensor<4xf32> {tg.role = "state"})
    -> (tensor<4xf32> {tg.aliases = 1}, tensor<4xf32> {tg.aliases = 0}, tensor<4xf32> {tg.aliases = 1}) {
  return %m, %w, %m : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// An aliases value that is a string.
// expected-error @+1 {{result #0: 'tg.aliases' must be an integer argument index, got "0"}}
func.func @aliases_string(%w: tensor<4xf32> {tg.role = "param"}) -> (tensor<4xf32> {tg.aliases = "0"}) {
  return %w : tensor<4xf32>
}

// -----

// An aliases value that is a float.
// expected-error @+1 {{result #0: 'tg.aliases' must be an integer argument index, got 0.000000e+00 : f64}}
func.func @aliases_float(%w: tensor<4xf32> {tg.role = "param"}) -> (tensor<4xf32> {tg.aliases = 0.0}) {
  return %w : tensor<4xf32>
}

// -----

// An aliases value that is an unsigned integer (only signless integers are indices).
// expected-error @+1 {{result #0: 'tg.aliases' must be an integer argument index, got 0 : ui32}}
func.func @aliases_unsigned(%w: tensor<4xf32> {tg.role = "param"}) -> (tensor<4xf32> {tg.aliases = 0 : ui32}) {
  return %w : tensor<4xf32>
}

// -----

// The loss must be a scalar.
// expected-error @+1 {{result #0: the loss must be a floating-point scalar tensor, got 'tensor<4xf32>'}}
func.func @loss_not_scalar(%x: tensor<4xf32>) -> (tensor<4xf32> {tg.role = "loss"}) {
  return %x : tensor<4xf32>
}

// -----

// The loss must be floating-point.
// expected-error @+1 {{result #0: the loss must be a floating-point scalar tensor, got 'tensor<i32>'}}
func.func @loss_not_float(%x: tensor<i32>) -> (tensor<i32> {tg.role = "loss"}) {
  return %x : tensor<i32>
}

// -----

// A step has one loss.
// expected-error @+1 {{result #2: result #0 is already the loss; a step has one loss}}
func.func @two_losses(%x: tensor<f32>) -> (tensor<f32> {tg.role = "loss"}, tensor<f32> {tg.role = "output"}, tensor<f32> {tg.role = "loss"}) {
  return %x, %x, %x : tensor<f32>, tensor<f32>, tensor<f32>
}

// -----

// A misspelled tg attribute on an argument.
func.func @arg_unknown_attr(
    // expected-error @+1 {{argument #0 of 'arg_unknown_attr': unknown argument attribute 'tg.rol'}}
    %w: tensor<4xf32> {tg.rol = "param"}) {
  return
}

// -----

// A misspelled tg attribute on a result.
// expected-error @+1 {{result #0: unknown result attribute 'tg.alias'}}
func.func @result_unknown_attr(%w: tensor<4xf32> {tg.role = "param"}) -> (tensor<4xf32> {tg.alias = 0}) {
  return %w : tensor<4xf32>
}

// -----

// Declaration arguments have no location of their own: the error points at the function.
// expected-error @+1 {{argument #1: unknown role 'grad'; expected one of 'param', 'state', 'input', 'label', 'hyper'}}
func.func private @declaration(tensor<4xf32> {tg.role = "param"}, tensor<4xf32> {tg.role = "grad"})

// -----

// Two results alias argument #0 even when the indices have different types.
// expected-error @+1 {{result #1: argument #0 is already aliased by result #0}}
func.func @aliases_twice_mixed_int_types(%w: tensor<4xf32> {tg.role = "param"})
    -> (tensor<4xf32> {tg.aliases = 0}, tensor<4xf32> {tg.aliases = 0 : i32}) {
  return %w, %w : tensor<4xf32>, tensor<4xf32>
}

// -----

// A boolean is not an argument index.
// expected-error @+1 {{result #0: 'tg.aliases' must be an integer argument index, got false}}
func.func @aliases_false(%w: tensor<4xf32> {tg.role = "param"}) -> (tensor<4xf32> {tg.aliases = false}) {
  return %w : tensor<4xf32>
}

// -----

// Nor is `true` (which an i1 would read as -1).
// expected-error @+1 {{result #0: 'tg.aliases' must be an integer argument index, got true}}
func.func @aliases_true(%w: tensor<4xf32> {tg.role = "param"}, %m: tensor<4xf32> {tg.role = "state"}) -> (tensor<4xf32> {tg.aliases = true}) {
  return %m : tensor<4xf32>
}

// -----

// A tg attribute on the function itself is misplaced, not ignored.
// expected-error @+1 {{unknown attribute 'tg.role' on an operation; it belongs on function arguments and results}}
func.func @role_on_function(%w: tensor<4xf32>) attributes {tg.role = "param"} {
  return
}

// -----

// An unknown tg attribute on an op is an error.
func.func @unknown_attr_on_op(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{unknown attribute 'tg.frobnicate' on an operation}}
  %0 = tg.exp %a {tg.frobnicate = 1} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// tg.default is a scalar value of the argument's element type.
// expected-error @+1 {{argument #0 of 'default_not_scalar': 'tg.default' must be a value of the argument's element type on a scalar argument, got 1.000000e-03 : f32 for 'tensor<4xf32>'}}
func.func @default_not_scalar(%lr: tensor<4xf32> {tg.role = "hyper", tg.default = 1.0e-3 : f32}) {
  return
}

// -----

// An integer default on a float argument is refused.
// expected-error @+1 {{argument #0 of 'default_wrong_kind': 'tg.default' must be a value of the argument's element type on a scalar argument, got 1 : i64 for 'tensor<f32>'}}
func.func @default_wrong_kind(%lr: tensor<f32> {tg.role = "hyper", tg.default = 1 : i64}) {
  return
}

// -----

// tg.init names one of the known initializations.
// expected-error @+1 {{argument #0 of 'init_unknown': 'tg.init' must be "normal", "zeros" or "ones", got "xavier"}}
func.func @init_unknown(%w: tensor<4xf32> {tg.role = "param", tg.init = "xavier"}) {
  return
}

// -----

// tg.init is for float arguments.
// expected-error @+1 {{argument #0 of 'init_int': 'tg.init' is for float arguments}}
func.func @init_int(%w: tensor<4xi64> {tg.role = "param", tg.init = "zeros"}) {
  return
}

// -----

// tg.frozen is a unit attribute.
// expected-error @+1 {{argument #0 of 'frozen_value': 'tg.frozen' is a unit attribute, got true}}
func.func @frozen_value(%w: tensor<4xf32> {tg.role = "param", tg.frozen = true}) {
  return
}

// -----

// tg.frozen is for parameters: nothing else is trained anyway.
// expected-error @+1 {{argument #0 of 'frozen_input': 'tg.frozen' is for 'param' arguments}}
func.func @frozen_input(%x: tensor<4xf32> {tg.role = "input", tg.frozen}) {
  return
}

// -----

// tg.buffer is a unit attribute, on model state (not a parameter: those
// are trained or frozen).
// expected-error @+1 {{argument #0 of 'buffer_value': 'tg.buffer' is a unit attribute, got 1 : i64}}
func.func @buffer_value(%s: tensor<4xf32> {tg.role = "state", tg.buffer = 1}) {
  return
}

// -----

// expected-error @+1 {{argument #0 of 'buffer_param': 'tg.buffer' is for 'state' arguments}}
func.func @buffer_param(%w: tensor<4xf32> {tg.role = "param", tg.buffer}) {
  return
}

// -----

// The memory plan: one non-negative offset per result.
func.func @offsets_count(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'tg.offsets' must be an array<i64> of one non-negative offset per result (1), got array<i64: 0, 256>}}
  %0 = tg.exp %x {tg.offsets = array<i64: 0, 256>} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @offsets_negative(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'tg.offsets' must be an array<i64> of one non-negative offset per result (1), got array<i64: -256>}}
  %0 = tg.exp %x {tg.offsets = array<i64: -256>} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @workspace_offset(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'tg.workspace_offset' must be a non-negative integer, got "0"}}
  %0 = tg.exp %x {tg.workspace_offset = "0"} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// expected-error @+1 {{argument #0 of 'arg_offset': 'tg.offset' must be a non-negative integer, got -1 : i64}}
func.func @arg_offset(%x: tensor<4xf32> {tg.offset = -1 : i64}) {
  return
}

// -----

// expected-error @+1 {{'tg.arena_size' must be a non-negative integer, got 1.000000e+00 : f32}}
func.func @arena_size(%x: tensor<4xf32>) attributes {tg.arena_size = 1.0 : f32} {
  return
}

// -----

func.func @arena_on_op(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'tg.arena_size' belongs on a function}}
  %0 = tg.exp %x {tg.arena_size = 512 : i64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @offset_on_op(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{unknown attribute 'tg.offset' on an operation; it belongs on function arguments and results}}
  %0 = tg.exp %x {tg.offset = 0 : i64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// The device a step is planned for belongs on the module.
func.func @device_on_function(%x: tensor<4xf32>) -> tensor<4xf32> attributes {
  // expected-error @-1 {{'tg.device' belongs on the module}}
  tg.device = {name = "H100-SXM"}} {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{'tg.device' must be a dictionary of device fields, got "H100-SXM"}}
module attributes {tg.device = "H100-SXM"} {
}

// -----

// expected-error @+1 {{'tg.pipeline' must be a string (a pass pipeline), got 3 : i64}}
module attributes {tg.pipeline = 3} {
}

// -----

// A function's pipeline stages (docs/pipeline.md).
// expected-error @+1 {{'tg.pipeline_stages' on a function must be a dictionary (axis, stages, virtual_stages, micro_batches, schedule), got "1f1b"}}
func.func @pipeline_not_dictionary(%x: tensor<4xf32>) -> tensor<4xf32> attributes {tg.pipeline_stages = "1f1b"} {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{'tg.pipeline_stages' stages must be a positive integer, got 0 : i64}}
func.func @pipeline_no_stages(%x: tensor<4xf32>) -> tensor<4xf32> attributes {tg.pipeline_stages = {stages = 0 : i64}} {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{'tg.pipeline_stages' axis must be a mesh axis name, got 1 : i64}}
func.func @pipeline_axis_number(%x: tensor<4xf32>) -> tensor<4xf32> attributes {tg.pipeline_stages = {axis = 1 : i64}} {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{'tg.pipeline_stages' schedule must be "gpipe", "1f1b" or "interleaved", got "zb"}}
func.func @pipeline_unknown_schedule(%x: tensor<4xf32>) -> tensor<4xf32> attributes {tg.pipeline_stages = {schedule = "zb"}} {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{'tg.pipeline_stages' has no field 'chunks' (axis, stages, virtual_stages, micro_batches, schedule)}}
func.func @pipeline_unknown_field(%x: tensor<4xf32>) -> tensor<4xf32> attributes {tg.pipeline_stages = {chunks = 2 : i64}} {
  return %x : tensor<4xf32>
}

// -----

func.func @negative_stage(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'tg.stage' must be a non-negative integer, got -1 : i64}}
  %0 = tg.exp %x {tg.stage = -1 : i64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @micro_batch_string(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'tg.micro_batch' must be a non-negative integer, got "0"}}
  %0 = tg.exp %x {tg.micro_batch = "0"} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @backward_not_unit(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'tg.backward' must be a unit attribute, got true}}
  %0 = tg.exp %x {tg.backward = true} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// tg.unpadded_shape (ZeRO's padding) gives one positive size per dimension.
func.func @unpadded_rank(
    // expected-error @+1 {{argument #0 of 'unpadded_rank': 'tg.unpadded_shape' must be an array<i64> of one positive size per dimension of 'tensor<6x7xf32>', got array<i64: 5>}}
    %w: tensor<6x7xf32> {tg.unpadded_shape = array<i64: 5>}) {
  return
}

// -----

// expected-error @+1 {{result #0: 'tg.unpadded_shape' must be an array<i64> of one positive size per dimension of 'tensor<6xf32>', got array<i64: 0>}}
func.func @unpadded_zero(%w: tensor<6xf32>) -> (tensor<6xf32> {tg.unpadded_shape = array<i64: 0>}) {
  return %w : tensor<6xf32>
}

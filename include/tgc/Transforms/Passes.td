//===- Passes.td - the tg passes ---------------------------*- tablegen -*-===//
//
// Every tg pass: one entry here, one .cpp in lib/Transforms, one test file
// named after its flag.
//
//===----------------------------------------------------------------------===//

#ifndef TGC_TRANSFORMS_PASSES_TD
#define TGC_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def TGLora : Pass<"tg-lora", "::mlir::ModuleOp"> {
  let summary = "Add LoRA adapters to the matmuls of the targeted weights; freeze the base";
  let description = [{
    Low-rank adaptation (Hu et al., 2021) of any forward graph, imported or
    from the zoo. Every `param` argument whose `tg.name` matches one of the
    `targets` globs (every parameter when none is given) and that is only
    used as the weight of matmuls, `y = x @ W` (`W` the right-hand operand,
    with or without `transpose_b` or through a `tg.transpose` of its last two
    dimensions, as ONNX exports of `nn.Linear` read it; shared by a batch or
    batched itself),
    gets two new `param` arguments after the existing ones, in the order of
    the weights:

    * `A`, `[..., in, rank]`, initialized like every parameter (normal, std
      0.02), and
    * `B`, `[..., rank, out]`, with `tg.init = "zeros"`, so that the adapted
      graph starts as the base graph computes,

    where `in` and `out` are the sizes the matmul contracts and produces
    (`[out, in]` is `W` itself under `transpose_b`) and `...` are the batch
    dimensions of a batched `W`. Their names are PEFT's for a
    `P.weight` (`P.lora_A.weight`, `P.lora_B.weight`), else `W.lora_A` and
    `W.lora_B`. Each matmul of `W` (one adapter per weight, shared by all its
    matmuls) then adds `((x @ A) @ B) * (alpha / rank)`, the scaling a splat
    `tg.constant`. Every `param` of the function that is not an adapter (the
    base model) gets `tg.frozen`: `tg-autodiff` builds no gradient for it,
    so the optimizer trains the adapters only and the base weights come out
    of training bit-identical.

    Errors: a `rank` below 1 or above the `in` or `out` of a targeted
    weight, a negative `alpha`, a malformed glob, a glob that adapts no
    parameter of the module (named in the error), a weight used by its
    matmuls both as `x @ W` and as `x @ W^T`, and adapter
    names that the function already has (the pass ran twice). A parameter a
    glob names that is not only a matmul's weight (a norm scale, an
    embedding table, a weight also read by `tg.embedding`, e.g. GPT-2's tied
    `wte`) is left unadapted with a remark.

    Before (`rank=2 alpha=4 targets=w`):

    ```mlir
    func.func @f(%x: tensor<4x8xf32> {tg.role = "input"},
                 %w: tensor<8x16xf32> {tg.role = "param", tg.name = "w"}) -> ... {
      %y = tg.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
    ```

    After:

    ```mlir
    func.func @f(%x: tensor<4x8xf32> {tg.role = "input"},
                 %w: tensor<8x16xf32> {tg.frozen, tg.role = "param", tg.name = "w"},
                 %a: tensor<8x2xf32> {tg.role = "param", tg.name = "w.lora_A"},
                 %b: tensor<2x16xf32> {tg.init = "zeros", tg.role = "param", tg.name = "w.lora_B"}) -> ... {
      %y = tg.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
      %down = tg.matmul %x, %a : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
      %up = tg.matmul %down, %b : (tensor<4x2xf32>, tensor<2x16xf32>) -> tensor<4x16xf32>
      %s = tg.constant dense<2.000000e+00> : tensor<4x16xf32>
      %scaled = tg.mul %up, %s : tensor<4x16xf32>
      %y2 = tg.add %y, %scaled : tensor<4x16xf32>
    ```

    and every use of `%y` reads `%y2`.
  }];
  let options = [
    Option<"rank", "rank", "int64_t", /*default=*/"8",
           "The rank r of the adapters (at least 1, at most the in and out "
           "sizes of every targeted weight)">,
    Option<"alpha", "alpha", "double", /*default=*/"0.0",
           "LoRA alpha: the adapters' output is scaled by alpha / rank (0: "
           "alpha = rank, a scaling of 1)">,
    ListOption<"targets", "targets", "std::string",
               "Globs of the weights' tg.name to adapt (default: every "
               "parameter used only as a matmul weight)">,
  ];
}

def TGEvaluation : Pass<"tg-evaluation", "::mlir::ModuleOp"> {
  let summary = "The forward graph as it is evaluated: its loss alone, without dropout";
  let description = [{
    Turns a forward graph with a loss into the function that measures the
    loss on held-out data (a validation loss), what PyTorch computes under
    `model.eval()` and `torch.no_grad()`:

    * every `tg.dropout` becomes the identity (its operand, unscaled), and
      `tg.attention` drops its dropout of the probabilities;
    * every `tg.mode_select` becomes its `evaluation` operand: a
      BatchNormalization imported in training mode normalizes with its
      running statistics, as under PyTorch's `model.eval()`, instead of
      the batch's;
    * the function returns its `loss` result alone: the other results (the
      new running statistics of a training-mode BatchNormalization, other
      outputs) are dropped, and with them the ops only they read, so an
      evaluation changes no value of the model.

    A `tg.random` an import brings still draws, as the training step's
    forward draws it.

    Runs before `tg-mixed-precision`, on the graph `tg-autodiff` would take:
    a function with gradients or updated parameters is already a training
    step and is refused, as is one without a `loss` result.

    With `keep-outputs` (`tgc run --evaluation`: an inference) the function
    keeps its other outputs (`tg.role = "output"` or none, logits) beside
    its loss, and needs no loss; the new values of state are still dropped.

    ```mlir
    // Before: the loss and a running statistic's new value, with dropout.
    %d = tg.dropout %h, %seed rate = 1.000000e-01 stream = 0 : ...
    return %loss, %mean : tensor<f32>, tensor<8xf32>
    // After: the loss alone, computed from %h.
    return %loss : tensor<f32>
    ```
  }];
  let options = [
    Option<"keepOutputs", "keep-outputs", "bool", /*default=*/"false",
           "Keep the outputs beside the loss (an inference); a loss is then "
           "not required">,
  ];
}

def TGTrainingMode : Pass<"tg-training-mode", "::mlir::ModuleOp"> {
  let summary = "The forward graph as it is trained: every tg.mode_select its training value";
  let description = [{
    Replaces every `tg.mode_select` by its `training` operand and erases
    what only its `evaluation` operand read (a BatchNormalization's running
    statistics broadcast for evaluation), so that the training step holds
    no value of evaluation mode. The training pipeline runs it first on the
    forward graph; `tg-evaluation` resolves the same ops the other way.

    ```mlir
    // Before: the batch's mean in training, the running mean in evaluation.
    %r = tg.reshape %running_mean : tensor<16xf32> -> tensor<1x16x1x1xf32>
    %m = tg.mode_select training %batch_mean evaluation %r
        : tensor<1x16x1x1xf32>
    // After: %batch_mean where %m was read, and no %r.
    ```
  }];
}

def TGMixedPrecision : Pass<"tg-mixed-precision", "::mlir::ModuleOp"> {
  let summary = "Autocast a forward graph: low-precision compute, fp32 master weights";
  let description = [{
    Runs before `tg-autodiff` on an f32 forward graph, so that the backward
    inherits the precision of its forward (each op's vector-Jacobian product
    is built from its already reduced-precision operands). What each op may
    run in comes from its `PrecisionOpInterface`; the pass lists no op
    names:

    * Operands that may be reduced are cast to the policy's type (`bf16`,
      `f16`; `fp8` computes in bf16) and the op's results follow. Shape ops
      run in whatever type they receive; a cast of a broadcast, reshape or
      transpose is moved before it, onto the smaller tensor.
    * Operands that must be f32 (softmax, reductions, the loss, norm scales)
      are cast back to f32.
    * Every value, parameters included, is cast at most once per type: the
      parameters stay f32 (master weights) and one bf16 copy of each feeds
      every low-precision use.
    * Ops listed in `keep-fp32` (by name, `tg.softmax` or `softmax`) and ops
      that read a parameter matching a `keep-fp32-params` glob run in f32.
    * The function's results keep their types.

    `policy=fp16` adds dynamic loss scaling: a `state` argument
    `loss_scale` (f32, `tg.default` = `init-scale`), a `tg.scale_grad` of
    the loss by it (the backward starts from `loss_scale` instead of 1) and
    one of every parameter by `1 / loss_scale` (its gradient arrives
    unscaled, in f32). `tg-scaling-update` adds the overflow check, the
    skipped update and the scale's growth and backoff after `tg-optimizer`.

    `policy=fp8` also quantizes every operand the interface allows
    (matmul inputs) with `tg.fake_quant` to `f8E4M3FN`, and puts a
    `tg.fake_quant_grad` on the result of such an op so that its output
    gradient is quantized to `f8E5M2` in the backward. Each quantized
    tensor gets an amax-history `state` argument (`tensor<Nxf32>`, N =
    `amax-history`) named after the parameter it reads
    (`<param>.fp8_amax_history`), the activation it quantizes
    (`<param>.fp8_input_amax_history`) or the output gradient
    (`<param>.fp8_grad_amax_history`); the scales come from those histories
    (delayed scaling, `margin`), and `tg-scaling-update` rolls them.

    Before:

    ```mlir
    %y = tg.matmul %x, %w : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
    %a = tg.gelu tanh %y : tensor<8x64xf32>
    %s = tg.softmax %a dim = 1 : tensor<8x64xf32>
    ```

    After (`policy=bf16`):

    ```mlir
    %xb = tg.convert %x : tensor<8x64xf32> -> tensor<8x64xbf16>
    %wb = tg.convert %w : tensor<64x64xf32> -> tensor<64x64xbf16>
    %y = tg.matmul %xb, %wb : (tensor<8x64xbf16>, tensor<64x64xbf16>) -> tensor<8x64xbf16>
    %a = tg.gelu tanh %y : tensor<8x64xbf16>
    %af = tg.convert %a : tensor<8x64xbf16> -> tensor<8x64xf32>
    %s = tg.softmax %af dim = 1 : tensor<8x64xf32>
    ```
  }];
  let options = [
    Option<"policy", "policy", "std::string", /*default=*/"\"bf16\"",
           "fp32 (unchanged), bf16, fp16 (with loss scaling) or fp8">,
    ListOption<"keepFp32", "keep-fp32", "std::string",
               "Op names that always run in f32 (e.g. tg.attention)">,
    ListOption<"keepFp32Params", "keep-fp32-params", "std::string",
               "Globs of parameter names whose ops run in f32">,
    Option<"initScale", "init-scale", "double", /*default=*/"65536.0",
           "fp16: the initial loss scale">,
    Option<"amaxHistory", "amax-history", "unsigned", /*default=*/"16",
           "fp8: steps of amax history per quantized tensor">,
    Option<"margin", "margin", "unsigned", /*default=*/"0",
           "fp8: scales leave 2^margin of headroom">,
  ];
}

def TGAutodiff : Pass<"tg-autodiff", "::mlir::ModuleOp"> {
  let summary = "Reverse-mode differentiation: add the gradients of the params";
  let description = [{
    For every function with a `tg.role = "loss"` result, builds the backward
    pass after the forward ops and returns, after the existing results, one
    gradient per `param` argument, with `tg.role = "grad"` and
    `tg.name = "<param name>.grad"` (or `"argN.grad"`). Other functions are
    left alone, but a module where no function has a loss is an error: the
    step would come out unchanged, with nothing for an optimizer to update.

    The backward of each op comes from its `DifferentiableOpInterface`; the
    pass lists no op names. Only ops that depend on a parameter and reach the
    loss are differentiated. A value used several times accumulates its
    gradients with `tg.add`; integer values (ids, labels, seeds) get none; a
    parameter that does not influence the loss gets a zero gradient and a
    remark. Backward ops whose results are not needed are not kept.

    Frozen parameters (parameter-efficient fine-tuning): a parameter whose
    `tg.name` matches a `frozen` glob, or that matches none of the
    `trainable` globs when some are given, or that carries `tg.frozen`
    (`tg-lora`'s base model), gets no gradient, and no backward work is
    built for it alone (no weight-gradient matmul).

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
  let options = [
    ListOption<"frozen", "frozen", "std::string",
               "Globs of parameter names that get no gradient">,
    ListOption<"trainable", "trainable", "std::string",
               "Globs of the only parameter names that get a gradient">,
  ];
}

def TGMicrobatch : Pass<"tg-microbatch", "::mlir::ModuleOp"> {
  let summary = "Gradient accumulation: one step over several micro-batches";
  let description = [{
    Turns a differentiated step (a function returning its loss and `grad`
    results, see `tg-autodiff`) written for a micro-batch of `b` examples into
    a step over `micro-batches` x `b` examples: every `input` and `label`
    argument gets a leading dimension `micro-batches` times larger, and the
    body runs once per micro-batch on its slice of them, one after the other,
    so that only one micro-batch's activations are live at a time. The loss
    and the gradients are the means over the micro-batches: the same as one
    step over the whole batch when the loss is a mean over equally many
    tokens per micro-batch (no ignored labels). A forward output whose first
    dimension is the batch's (logits, a reconstruction) is the
    micro-batches' values concatenated, the whole batch's; other outputs
    (a scalar metric) are refused. State the step updates (a `state`
    result with `tg.aliases`: a training-mode BatchNormalization's running
    statistics) is threaded:
    each micro-batch reads the value the one before it wrote, and the step
    returns the last one's, as PyTorch's running statistics move once per
    forward call under gradient accumulation. A `tg.dropout` whose stream
    first reads values computed from the batch gets the index of its
    micro-batch's first element as its `offset` (the micro-batch times its
    operand's elements), so the micro-batches draw the whole batch's masks;
    a dropout of values that do not depend on the batch keeps one mask for
    all of them, as the whole batch does. A `tg.random` (which reads
    nothing) is offset the same way when its first dimension is the
    batch's (per-sample noise), and otherwise draws the same numbers in
    every micro-batch (noise on a weight).

    In a pipeline (`tg-pipeline-split`), each copy's ops carry their
    `tg.micro_batch`, and a gradient whose terms come from several pipeline
    devices (a tied weight's) is summed per device over the micro-batches
    and added up once; threaded state is refused there.

    The body is repeated, not looped: the IR grows with `micro-batches`.
  }];
  let options = [
    Option<"microBatches", "micro-batches", "unsigned", /*default=*/"1",
           "Micro-batches per step (1: unchanged)">,
  ];
}

def TGOptimizer : Pass<"tg-optimizer", "::mlir::ModuleOp"> {
  let summary = "Apply an optimizer update to every parameter";
  let description = [{
    Turns a differentiated step (a function returning `grad` results, see
    `tg-autodiff`) into a training step that updates its parameters: for
    every parameter with a gradient, one optimizer op (`tg.sgd`, `tg.adamw`,
    `tg.lamb`, `tg.adafactor`) computes the new parameter and optimizer
    state, which are returned with `tg.aliases` naming the argument they
    replace, so their buffers can be updated in place. The gradients are
    consumed, no longer returned.

    New arguments: the optimizer state, one `state` argument per moment and
    parameter (`<param>.exp_avg`, `<param>.exp_avg_sq`, or
    `<param>.momentum_buffer`, as PyTorch names them; for Adafactor, as
    fairseq names them, `<param>.exp_avg_sq_row` and `<param>.exp_avg_sq_col`
    for a parameter of rank >= 2, whose second moment is factored over its
    last two dimensions, else `<param>.exp_avg_sq`), the learning rate `lr`
    (an f32 `hyper` scalar whose `tg.default` is the `lr` option) and, for
    AdamW, LAMB and Adafactor, the step count `step` (an i64 `hyper`, 1 for
    the first step): the host runs any schedule by passing them.

    `clip-norm` > 0 first scales every gradient by
    `min(1, clip-norm / (global norm + 1e-6))`, the global norm taken over all
    gradients together (as `torch.nn.utils.clip_grad_norm_`). Parameters whose
    name matches a `no-decay` glob get no weight decay.

    Before: `(..., %w {tg.role = "param"}) -> (loss, w.grad)`. After (AdamW):
    `(..., %w, %w.exp_avg, %w.exp_avg_sq, %lr, %step) -> (loss, w {tg.aliases
    = i}, w.exp_avg {tg.aliases = j}, w.exp_avg_sq {tg.aliases = k})`. After
    (Adafactor, `%w: tensor<MxNxf32>`): `(..., %w, %w.exp_avg_sq_row:
    tensor<Mxf32>, %w.exp_avg_sq_col: tensor<Nxf32>, %lr, %step)`.
  }];
  let options = [
    Option<"kind", "kind", "std::string", /*default=*/"\"adamw\"",
           "The optimizer: sgd, adamw, lamb or adafactor">,
    Option<"lr", "lr", "double", /*default=*/"1e-3",
           "Default learning rate (the tg.default of the lr argument)">,
    Option<"momentum", "momentum", "double", /*default=*/"0.0",
           "SGD momentum (0: plain SGD, no state)">,
    Option<"nesterov", "nesterov", "bool", /*default=*/"false",
           "Nesterov momentum for SGD">,
    Option<"beta1", "beta1", "double", /*default=*/"0.9",
           "AdamW/LAMB first-moment decay">,
    Option<"beta2", "beta2", "double", /*default=*/"0.999",
           "AdamW/LAMB second-moment decay">,
    Option<"epsilon", "eps", "double", /*default=*/"1e-8",
           "AdamW/LAMB denominator epsilon">,
    Option<"decayRate", "decay-rate", "double", /*default=*/"-0.8",
           "Adafactor second-moment decay: beta2 = 1 - step^decay-rate">,
    Option<"epsilon1", "eps1", "double", /*default=*/"1e-30",
           "Adafactor epsilon added to the squared gradient">,
    Option<"clipThreshold", "clip-threshold", "double", /*default=*/"1.0",
           "Adafactor update clipping: the update's RMS is at most this">,
    Option<"weightDecay", "weight-decay", "double", /*default=*/"0.0",
           "Weight decay (decoupled for AdamW, LAMB and Adafactor)">,
    Option<"clipNorm", "clip-norm", "double", /*default=*/"0.0",
           "Clip the global gradient norm to this value (0: no clipping)">,
    ListOption<"noDecay", "no-decay", "std::string",
               "Globs of parameter names without weight decay (default: "
               "*bias,*norm*,*ln_*)">,
  ];
}

def TGScalingUpdate : Pass<"tg-scaling-update", "::mlir::ModuleOp"> {
  let summary = "End-of-step update of the loss scale and the fp8 amax histories";
  let description = [{
    Runs after `tg-optimizer` on a step built with `tg-mixed-precision`.

    Dynamic loss scaling (a `state` argument named `loss_scale`): every
    gradient the update consumes (the `OptimizerOpInterface` ops' gradients,
    and `grad` results) is checked for inf/NaN. When one is
    found, every parameter and optimizer-state result keeps its old value
    (the step is skipped), and the scale is multiplied by `backoff`; after
    `growth-interval` clean steps in a row it is multiplied by `growth`.
    The count of clean steps is a new `state` argument
    `loss_scale.good_steps` (i64). The new scale and count are returned
    with `tg.aliases`, so the whole policy is in the step (PyTorch's
    `GradScaler`, without host round trips).

    fp8 delayed scaling: for every `state` argument read as the amax history
    of `tg.fake_quant` ops (the forward ones, and the backward ones that
    `tg-autodiff` built from `tg.fake_quant_grad`), the largest magnitude
    their operands reached this step (over every micro-batch) is pushed in
    front of the history and the oldest entry dropped; the new history is
    returned with `tg.aliases`.

    A step without either is left unchanged.
  }];
  let options = [
    Option<"growthInterval", "growth-interval", "unsigned", /*default=*/"2000",
           "Clean steps after which the loss scale grows">,
    Option<"growth", "growth", "double", /*default=*/"2.0",
           "Factor applied to the loss scale after growth-interval clean steps">,
    Option<"backoff", "backoff", "double", /*default=*/"0.5",
           "Factor applied to the loss scale after a non-finite gradient">,
  ];
}

def TGRecompute : Pass<"tg-recompute", "::mlir::func::FuncOp"> {
  let summary = "Keep or recompute each activation to fit a memory budget";
  let description = [{
    Chooses, for every forward value the backward reads (an activation in
    the memory simulator's terms), whether it stays in memory until the
    backward or is computed again there, so that the simulated peak of the
    step, in the order `tg-schedule` will give it, is at most `budget` at
    the least extra time of the cost model (docs/recompute.md). The forward
    is cut into blocks where at most one value crosses (a transformer
    layer's residual stream); each block's keep/recompute options are
    enumerated exactly (identical blocks once) and a dynamic program over
    the block sequence, whose state is the kept memory and the model's peak
    so far, gives the cheapest plan for every capacity. Those plans, the
    baselines and checkpoints at every block's input form a pool that does
    not depend on the budget; every plan tried is rewritten on a copy,
    scheduled as `tg-schedule` would (`computeSchedule`) and simulated, and
    the cheapest plan of the pool that fits is chosen (a budget the step
    already fits recomputes nothing). Steps with at most 12 candidates use
    every subset as the pool.

    A recomputed op, and the forward ops it reads that are not kept, are
    cloned just before the first backward op reading it that is not a view
    (views of recomputed values are cloned next to each of their readers,
    so a reshape that `tg-schedule` ran early does not pull the
    recomputation into the forward):

    ```mlir
    %h = tg.gelu %x approximate = tanh : tensor<8x3072xf32>
    ... (the rest of the forward)
    %dh = tg.gelu_grad %dy, %x ...   // reads %x, not %h
    %dw = tg.matmul %h, %g transpose_a ...
    ```

    becomes

    ```mlir
    %h = tg.gelu %x approximate = tanh : tensor<8x3072xf32>
    ...
    %h2 = tg.gelu %x approximate = tanh : tensor<8x3072xf32>
    %dw = tg.matmul %h2, %g transpose_a ...
    ```

    Only ops without memory effects run again; seeded `tg.dropout` is one
    (its mask is a function of the seed, so the clone draws the same mask).
    Run it after canonicalization and CSE (which would merge the clones
    back) and before `tg-schedule`.

    `strategy` picks the solver: `dp` (the default), or a baseline: `none`,
    `full` (keep only each layer's input, recompute the rest), `sqrt`
    (keep the input of every sqrt(n)-th layer, Chen et al. 2016) and
    `selective` (Megatron's, Korthikanti et al. 2022: recompute the
    attention core, i.e. each fused `tg.attention` (its dropout included),
    or each softmax with the
    scores matmul, scale and mask before it and the dropout after it). With
    a budget, a baseline whose simulated peak exceeds it is an error that
    states both. Without a budget `dp` changes nothing. A budget below the
    smallest peak of any plan of the pool is an error that states that peak
    (a budget equal to it succeeds).
    With `explain`, a remark on each activation says whether it is kept or
    recomputed, its bytes and its recompute time, and one on the function
    summarizes the plan.
  }];
  let dependentDialects = ["::tgc::tg::TGDialect"];
  let options = [
    Option<"budget", "budget", "std::string", /*default=*/"\"\"",
           "Peak memory budget in bytes (suffixes B, KB, MB, GB, KiB, MiB, "
           "GiB, TiB) or `auto` (the device's memory minus 5%); empty: "
           "no budget">,
    Option<"device", "device", "std::string", /*default=*/"\"\"",
           "The built-in device whose cost model prices recomputation "
           "(default: the module's tg.device, else H100-SXM)">,
    Option<"strategy", "strategy", "std::string", /*default=*/"\"dp\"",
           "dp, none, full, sqrt or selective">,
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Emit a remark per activation and a summary">,
  ];
  let statistics = [
    Statistic<"peakBefore", "peak-before", "Simulated peak bytes before">,
    Statistic<"peakAfter", "peak-after", "Simulated peak bytes after">,
    Statistic<"numRecomputed", "recomputed", "Activations recomputed">,
  ];
}

def TGSchedule : Pass<"tg-schedule", "::mlir::func::FuncOp"> {
  let summary = "Reorder the ops of a step to lower its peak memory and "
                "overlap its communication with compute";
  let description = [{
    List scheduling against the memory simulator (docs/memory.md). Among the
    ops whose operands are ready, an op that frees at least as many bytes as
    it allocates runs first (the one freeing most; e.g. an optimizer update
    as soon as its gradient is complete, so the gradient buffer dies at
    once); otherwise the op that comes first in the original order runs.
    Constants, and expansions of a small value into a large one (the
    broadcast of a scalar), are placed just before their first use. Two variants are tried
    (the one above, and the same one that always takes the op with the
    smallest net allocation), and the order with the lowest simulated peak is
    kept, never one with a higher peak than the original; between equal
    peaks, the one that holds fewer bytes for fewer ops (the sum over the
    ops of the live bytes) wins, so e.g. gradients are freed early even when
    the peak is elsewhere. Dependencies are
    respected (ops with memory effects also keep their relative order) and
    the result is deterministic.

    Before (the update of `w` waits until every gradient exists):

    ```mlir
    %gw = tg.matmul %x, %dy transpose_a : ...
    %gb = tg.reduce sum %dy dims = [0] : ...
    %w2 = tg.sgd %w, %gw, %lr ...
    %b2 = tg.sgd %b, %gb, %lr ...
    ```

    After:

    ```mlir
    %gw = tg.matmul %x, %dy transpose_a : ...
    %w2 = tg.sgd %w, %gw, %lr ...
    %gb = tg.reduce sum %dy dims = [0] : ...
    %b2 = tg.sgd %b, %gb, %lr ...
    ```

    Then, in a partitioned step, communication is made to overlap compute
    (docs/sharding.md, "Overlap"): on the cost model's two streams (kernels
    on one, shard collectives on the other, each in schedule order), each
    gradient all-reduce or reduce-scatter is issued right after the op that
    completes its gradient, so the reductions run during the rest of the
    backward in the order gradients become ready (the order of tg-fuse's
    optimizer buckets); what reads a reduced gradient (the ZeRO slice, the
    update or its multi-tensor bucket, the all-gather of the updated
    parameter) runs only where it need not wait for its collective, or
    where a later op needs it, or at the end. ZeRO-3's parameter
    all-gathers are prefetched one layer ahead: the gathers of a layer (the
    parameters whose names share the prefix up to the first number, `h.3`)
    are issued just before the first use of the previous layer's gathers,
    in the forward and again in the backward. Collectives of the step's
    arguments (the micro-batches' gathers of the inputs) are issued first,
    and a scalar's all-reduce (the loss) is treated as a gradient's.
    Tensor-parallel collectives keep their place. The overlapped order is
    kept only if it shortens the modelled step and its simulated peak fits
    the device's memory (or does not exceed the memory order's); its extra
    live ranges (prefetched parameters, gradients held until their update)
    are simulated like any order, so the memory plan that follows accounts
    for them.

    A pipelined function (one with a `tg.pipeline` dictionary,
    docs/pipeline.md) is not reordered: its block order is the pipeline
    schedule (each pp device runs its ops in that order), which
    `tg-pipeline-schedule` chose; the pass leaves it as it is and reports the
    largest device peak before and after.

    Before (dp=2, the update waits for the all-reduce at once):

    ```mlir
    %gw2 = tg.matmul %h, %dy transpose_a : ...
    %r2 = shard.all_reduce %gw2 on @mesh grid_axes = [0] : ...
    %w2n = tg.sgd %w2, %r2, %lr ...
    %dh = tg.matmul %dy, %w2 transpose_b : ...
    %gw1 = tg.matmul %x, %dh transpose_a : ...
    ```

    After (the all-reduce runs during the next matmuls):

    ```mlir
    %gw2 = tg.matmul %h, %dy transpose_a : ...
    %r2 = shard.all_reduce %gw2 on @mesh grid_axes = [0] : ...
    %dh = tg.matmul %dy, %w2 transpose_b : ...
    %gw1 = tg.matmul %x, %dh transpose_a : ...
    %w2n = tg.sgd %w2, %r2, %lr ...
    ```

    With `explain`, a remark on each function states the simulated peak
    before and after, and for a step with collectives the modelled step
    time and exposed communication before and after the overlap.
  }];
  let dependentDialects = ["::tgc::tg::TGDialect"];
  let options = [
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Emit a remark with the peak before and after">,
    Option<"overlap", "overlap", "bool", /*default=*/"true",
           "Order collectives to overlap compute (false: the memory order "
           "only)">,
    Option<"device", "device", "std::string", /*default=*/"\"\"",
           "The built-in device whose cost model times the overlap "
           "(default: the module's tg.device, else H100-SXM)">,
  ];
  let statistics = [
    Statistic<"peakBefore", "peak-before", "Simulated peak bytes before">,
    Statistic<"peakAfter", "peak-after", "Simulated peak bytes after">,
  ];
}

def TGMemoryPlan : Pass<"tg-memory-plan", "::mlir::func::FuncOp"> {
  let summary = "Assign every buffer an offset in one arena per device";
  let description = [{
    Places every buffer of the memory simulator's model (docs/memory.md) in
    one arena, greedy by size with best fit over the buffers' lifetimes, and
    records the plan for the code generator:

    - `tg.offset` on each argument (the buffer the host fills),
    - `tg.offsets` on each op: the offset of each result's buffer (views and
      in-place updates share their operand's or argument's offset),
    - `tg.workspace_offset` on an op that needs a workspace,
    - `tg.arena_size` on the function, and `tg.gemm_workspace_offset` when
      the step uses the GEMM library.

    ```mlir
    func.func @f(%x: tensor<4xf32> {tg.offset = 0 : i64, tg.role = "input"})
        -> tensor<4xf32> attributes {tg.arena_size = 512 : i64} {
      %0 = tg.exp %x {tg.offsets = array<i64: 256>} : tensor<4xf32>
      return %0 : tensor<4xf32>
    }
    ```

    The arena is never smaller than the simulated peak of live bytes (each
    buffer rounded up to `alignment`); with `explain` a remark states both.
    The plan is for the op order the function has: run `tg-schedule` first.
  }];
  let dependentDialects = ["::tgc::tg::TGDialect"];
  let options = [
    Option<"device", "device", "std::string", /*default=*/"\"\"",
           "The built-in device whose GEMM workspace the arena holds "
           "(default: the module's tg.device, else H100-SXM)">,
    Option<"alignment", "alignment", "int64_t", /*default=*/"256",
           "Alignment of every buffer in bytes (a power of two)">,
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Emit a remark with the arena size and its lower bound">,
  ];
  let statistics = [
    Statistic<"arenaBytes", "arena-bytes", "Arena size in bytes">,
    Statistic<"lowerBoundBytes", "lower-bound-bytes",
              "Peak of live aligned bytes">,
  ];
}

def TGRaise : Pass<"tg-raise", "::mlir::ModuleOp"> {
  let summary = "Recognize decomposed high-level ops and raise them to tg ops";
  let description = [{
    Exporters such as `torch.onnx.export` decompose layer normalization, GELU,
    attention and the loss into elementwise ops, reductions and matmuls. This
    pass recognizes those decompositions in any tg function and replaces them
    with the tg op that computes the same thing in one kernel and has a
    dedicated backward:

    | pattern | becomes |
    |---|---|
    | `(x - mean(x)) / sqrt(mean((x - mean(x))^2) + eps) * g + b` | `tg.layer_norm` (`* g` and `+ b` optional) |
    | `x * rsqrt(mean(x^2) + eps) * w`, or `x / sqrt(...)`, `x * (1 / sqrt(...))` | `tg.rms_norm` (`* w` optional) |
    | `0.5 * x * (1 + erf(x / sqrt(2)))` | `tg.gelu erf` |
    | `0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))` | `tg.gelu tanh` |
    | `x * sigmoid(x)` | `tg.silu` |
    | `dropout(softmax(mask(cap(scale * q @ k^T)))) @ v` | `tg.attention` (`causal`, `scale`, `bias`, `softcap`, `dropout`) |
    | `slice(softmax(concat(mask(scale * q @ k^T), sinks)))[..., :Sk] @ v` | `tg.attention` with one more key for the sinks |
    | `-mean(sum(log_softmax(x) * onehot(y)))`, `cross_entropy(log_softmax(x), y)` | `tg.cross_entropy` |
    | `matmul(reshape(embedding(T, ids)), x)`: matrices gathered per token from a table of experts' | `tg.expert_matmul` of the tokens by `T`'s matrices at `ids` (a grouped GEMM) |

    Matching is structural and tolerant of how an importer writes things:
    commutative operands in either order, scalars as `tensor<f32>` constants
    broadcast with `tg.broadcast_in_dim` or as splat constants of the full
    shape, `keepdims` reductions written as a `tg.reshape`, `x^2` as `pow` or
    `mul`, `x^3` as `pow` or two `mul`s, the reciprocal square root as
    `rsqrt` or `1 / sqrt`, divisions by a constant as multiplications by its
    inverse. A constant matches when it equals the expected value rounded to
    its element type (`0.044715` in bf16 is accepted). The epsilon of a
    normalization is taken from the graph's constant, exactly.

    Attention: the scores are `q @ k^T` (the key transposed by `tg.transpose`
    or `transpose_b`), scaled by constants on the scores, on `q` or on `k`
    (the product becomes `scale`; it is left out when it is `1/sqrt(D)`),
    optionally masked by a constant: `tg.select` of a boolean mask with a
    large negative value, or `tg.add` of a matrix of 0 and large negative
    values. A constant mask that is the causal one (key `j` visible from
    query `i` iff `j <= i + Sk - Sq`, the alignment of `tg.attention`), the
    same for every batch and head, is the `causal` flag; "large negative"
    means at most `mask-threshold` (or -inf). Another constant mask (a
    sliding window, ALiBi) is the attention's `bias` as one
    `[1, 1, Sq, Sk]` block when it is the same for every batch and head,
    under the rules of run-time masks below, and unless it hides every key
    of a row with -inf (the decomposition's softmax gives NaN there,
    tg.attention zeros) without PyTorch's NaN guard after it. A mask
    computed at run time (a padding mask, Hugging Face's 4-D causal and
    padding mask, a position bias) becomes the attention's f32 `bias`, read
    through its broadcast (`[B, 1, 1, Sk]` stays that size): added to the
    scores, it is the bias (times the scales applied after it; several
    added, as BLOOM's ALiBi and padding mask, are summed into it); the
    predicate of a `tg.select` that hides keys gives 0 and the hiding value,
    which must be -inf or at most -1e30 (a score plus it is then it, as
    `masked_fill` gives; a smaller fill is left alone). The bias is added as
    the decomposition added it, so a query row every key of which is hidden
    by a finite value keeps its (uniform) softmax. Next to a run-time mask,
    a constant causal mask that hides with -inf is the `causal` flag; one
    added with finite hiding values (T5's decoder adds `finfo.min` after
    its position bias), or selected with a finite value at most -1e30
    (Hugging Face's `finfo.min`) before the run-time mask, joins the bias
    (a hidden score is then the sum of both masks, as the decomposition
    computes it), without the `causal` flag; a select of another finite
    value (-1e4), or a select applied after the run-time mask, leaves the
    pattern alone, since no bias computes what it does on a row that hides
    every key. A constant that hides nothing (zeros added, a select that
    keeps every score) changes no softmax and is passed over. Keys and values repeated per
    query head (grouped-query attention: `reshape`, `broadcast_in_dim`,
    `reshape`, as `repeat_kv` exports) are un-repeated, since `tg.attention`
    takes `K` key/value heads for `H` query heads itself. Products over
    merged batch and heads (BLOOM: `[B * H, S, D]` views of q, k and v,
    the scores viewed as `[B, H, S, S]` for the mask and the softmax and the
    probabilities viewed back) are read in their 4-D form: the views move
    to the operands, the elementwise ops between the product and the view
    (the scale, ALiBi) with them.

    A soft cap between the scaled scores and the masks, `c * tanh(s / c)`
    (Gemma 2's attention logit soft-capping, FlexAttention's `score_mod`;
    `c` and `1 / c` may be written as any constant scales around the
    `tg.tanh`), is the attention's `softcap`: the scales outside the tanh
    make `c`, those inside `1 / c` times the score's scale. A mask applied
    inside the cap is capped with the scores (its -inf becomes `-c`), so it
    leaves the pattern alone, as does a second cap.

    Attention sinks (GPT-OSS): a learned logit per head joins each row of
    the masked scores as one more column (`tg.concat`), the row maximum is
    optionally subtracted, and the sink's probability is sliced off after
    the softmax. The sinks become one more key in front of the others, of
    zero key and value, whose score is the sink through the bias (`q . 0`
    is 0 under any scale or cap): the softmax over the keys and the sink is
    the decomposition's, and the sink adds nothing to the output. In front,
    the causal alignment keeps every real key where it was and shows the
    sink to every query; the bias is the sink column joined to the mask's
    (zeros without one). The sinks' gradient is the bias gradient's first
    column. Not with attention dropout, whose mask would be drawn over one
    more key.

    PyTorch's safe softmax after the scores (`p != p ? 0 : p`, which the
    dynamo exporter writes for a masked SDPA) is part of the pattern: the
    rows it zeroes are those every key of which a mask of -inf hides, which
    tg.attention makes zeros too (a NaN coming from the inputs themselves
    is not zeroed).

    A `tg.dropout` of the probabilities (after the softmax and its NaN
    guard, where PyTorch's SDPA and Hugging Face's eager attention apply
    attention dropout) is the attention's `dropout`: its rate, seed, stream,
    `offset` and `global_shape` carry over, and since the dropout's mask is
    a function of the element's index in the `[B, H, Sq, Sk]` probabilities,
    which are tg.attention's, the raised attention drops exactly the
    probabilities the decomposition dropped; its kernels draw the mask
    again where they use it instead of storing it.

    Cross-entropy: picking the label's log-probability with a one-hot mask
    (`tg.compare eq` of the labels against a constant `0..C-1` along the
    class dimension, then `tg.select` or a multiplication and a `sum` over
    the classes), negated and averaged (or summed) over the tokens, becomes
    `tg.cross_entropy mean` (or `sum`); a `tg.cross_entropy` of a
    `tg.log_softmax` reads the logits directly. The raised op requires the
    labels to be in `[0, C)`, where the one-hot form gave 0 for others.

    Experts (transformers' `batched_mm` mixture of experts: Mixtral,
    Qwen2-MoE): each (token, expert) pair's matrix is gathered from the
    experts' table `T` (`[E, O*H]`) by the router's top-k ids and multiplied
    by the pair's vector (`[S, O, H] x [S, H, 1]`, or `[S, 1, H] x
    [S, H, O]`). That keeps a copy of a matrix per pair (S x O x H values)
    and reads each for one multiply-add. The raise is one
    `tg.expert_matmul` of the vectors (`[S, H]`) by `T` viewed as the
    experts' matrices (`[E, O, H]`, applied transposed, or `[E, H, O]`) at
    the same `ids`: each pair's product with its own expert's matrix, read
    in place (the routed flops only, nothing gathered). Its backward is an
    `expert_matmul` for the vectors and a `tg.expert_matmul_grad` for `T`
    (each expert's gradient summed over its rows). Both forms report an id
    outside `[0, E)`.

    A pattern is raised only when it saves work: every intermediate value
    of the pattern must be used only inside it (a normalized value or an
    attention probability read elsewhere keeps its decomposition), and the
    element types must agree, so the raised op computes what the
    decomposition did.

    Each form is a rewrite pattern (`populateTGRaisePatterns`) applied by the
    greedy driver, consumers before producers; where one op ends several
    forms, the bigger form is tried first (cross-entropy, attention, layer
    norm, RMS norm, GELU, SiLU, experts). The driver erases the ops left dead, and any
    op that was dead on input; it neither folds nor merges constants, so
    nothing else changes.

    Before:

    ```mlir
    %h = tg.constant dense<5.000000e-01> : tensor<4x8xf32>
    %c = tg.constant dense<0.707106769> : tensor<4x8xf32>
    %one = tg.constant dense<1.000000e+00> : tensor<4x8xf32>
    %0 = tg.mul %x, %c : tensor<4x8xf32>
    %1 = tg.erf %0 : tensor<4x8xf32>
    %2 = tg.add %1, %one : tensor<4x8xf32>
    %3 = tg.mul %x, %2 : tensor<4x8xf32>
    %y = tg.mul %3, %h : tensor<4x8xf32>
    ```

    After:

    ```mlir
    %y = tg.gelu erf %x : tensor<4x8xf32>
    ```
  }];
  let options = [
    ListOption<"patterns", "patterns", "std::string",
               "The patterns to raise, among layer_norm, rms_norm, gelu, "
               "silu, attention, cross_entropy and experts (default: all)">,
    Option<"maskThreshold", "mask-threshold", "double", /*default=*/"-1.0e4",
           "Attention mask values at or below this hide a key (at most -1e4, "
           "so that a hidden key's probability underflows to 0)">,
    Option<"explain", "explain", "bool", /*default=*/"false",
           "A remark per reason an attention is left decomposed (at its "
           "first product with the values, with how many share it)">,
  ];
}

def TGPrintShardingRules : Pass<"tg-print-sharding-rules", "::mlir::func::FuncOp"> {
  let summary = "Print each op's sharding rule as a remark, and check it";
  let description = [{
    For every op with a `ShardingRuleOpInterface`, emits a remark with its
    factor-based rule in Shardy's notation, e.g. for a matmul of
    `tensor<8x16xf32>` by `tensor<16x32xf32>`:

    ```
    sharding rule: ([i, k], [k, j])->([i, j]) {i=8, j=32, k=16} reduction={k}
    ```

    Each operand and result is a list of dimensions, each dimension its
    factors (a dimension made of several is a group, major first; a
    dimension of size 1 has none, `[]`). `reduction` factors are in operands
    and in no result: sharding one leaves partial values. `need_replication`
    factors cannot be split without more than a partial reduction (a softmax
    or norm along them, a slice of them). The pass fails if a rule does not
    match the op's shapes, which makes it a check of every rule on a real
    step.
  }];
}

def TGSplitFusedProjections
    : Pass<"tg-split-fused-projections", "::mlir::func::FuncOp"> {
  let summary = "Split a projection read as equal slices of its output (a fused QKV) into one projection per slice";
  let description = [{
    A `tg.matmul` whose right-hand side is a `param` argument (directly or
    through `tg.transpose` and `tg.convert`), optionally followed by the
    addition of a `param` bias broadcast along its last dimension, and
    whose result is only read by k >= 2 `tg.slice`s that cut the last
    dimension into k equal parts (GPT-2's `c_attn`, the fused q, k and v of
    a PyTorch export) becomes k matmuls, one per slice. The same holds for
    a `tg.expert_matmul` of a `param` stack of matrices (a mixture of
    experts' fused gate and up products), whose bias is each row's expert's
    row of a `param` table gathered by the same ids (`tg.embedding`). The
    weight and the bias argument are viewed with their output dimension N
    as `[k, N/k]` when the slices are blocks in order, or as `[N/k, k]`
    when they are interleaved (slice p takes p, p + k, p + 2k...: GPT-OSS's
    gate and up): the argument's type changes, its row-major bytes do not
    (a checkpoint loads as it is), and each projection reads its part as a
    slice of the new dimension. Other readers of the parameter get the old
    shape back through a `tg.reshape`.

    Tensor parallelism needs this: no block of the fused `[h, 3h]` weight
    holds the q, k and v columns of the same heads, while a block of the
    last dimension of `[h, 3, h]` does; no block of an expert's fused
    `[2f, h]` gate and up matrix holds the gate and the up rows of the same
    units, while a block of `[2, f, h]`'s `f` does. The training pipeline
    runs the pass before differentiation when the mesh has a `tp` axis.

    ```mlir
    // Before:
    %y = tg.matmul %x, %w : (tensor<4x64xf32>, tensor<64x192xf32>) -> tensor<4x192xf32>
    %q = tg.slice %y [0:4, 0:64] : tensor<4x192xf32> -> tensor<4x64xf32>
    ...
    // After (%w : tensor<64x3x64xf32>):
    %0 = tg.slice %w [0:64, 0:1, 0:64] : tensor<64x3x64xf32> -> tensor<64x1x64xf32>
    %1 = tg.reshape %0 : tensor<64x1x64xf32> -> tensor<64x64xf32>
    %q = tg.matmul %x, %1 : (tensor<4x64xf32>, tensor<64x64xf32>) -> tensor<4x64xf32>
    ```
  }];
}

def TGShardAnnotate : Pass<"tg-shard-annotate", "::mlir::ModuleOp"> {
  let summary = "The mesh and the sharding presets: data, ZeRO, tensor and sequence parallelism";
  let description = [{
    Adds the mesh as a `shard.grid` named `@mesh` whose `tg.mesh_axes`
    names its axes, and annotates the step's arguments (and a few values)
    with `tg.sharding` for `tg-shard-propagate`. User annotations win
    (priority 0): those of `shard` (`h.*.mlp.c_fc.weight=,tp`), then those
    already on the arguments in the IR. The presets, by axis name:

    * `dp`: every `input` and `label` is split on its first (batch)
      dimension (priority 1); parameters and optimizer state stay whole.
    * `tp`: Megatron's layout, found on the data flow: a matmul reading a
      parameter whose input does not carry `tp` on its contraction splits
      the parameter's output dimension (column-parallel: QKV, MLP up); one
      whose input does, after propagating the decisions so far, splits the
      parameter's input dimension (row-parallel: attention out, MLP down),
      leaving partial sums to all-reduce (priority 2). A mixture of
      experts' `tg.expert_matmul` is split alike (every expert's matrix by
      the same columns or rows; the experts stay whole under tp, and split
      over dp with `expert-parallel`). A bias read by a
      broadcast, a lookup of rows by the experts' ids, or a concatenation
      along another dimension is split as the layer's output it is added
      to. The vocabulary is
      split as Megatron's: the output projection (a matmul feeding the loss)
      on the loss's classes, and every float embedding table with a row per
      class on its rows, its lookups marked `tg.vocab_parallel`. A
      vocabulary tp does not divide is first padded to the next multiple of
      tp (zero rows or columns, the padded classes masked out of the loss,
      `tg.unpadded_shape` on the signature, `tg.id_bound` on the lookups and
      losses), with a remark. Grouped-query attention whose kv heads tp
      does not divide gets its keys and values repeated to one per query
      head (the kv projections whole, the kv gradients summed over each
      group by a product with the heads' 0/1 group matrix: a partial sum),
      with a remark. A multi-head attention's head count tp does not divide
      is padded too (zero columns of the query, key and value projections
      and their biases, zero rows of the output projection: the padded
      heads stay zero; an attention's dropout draws its numbers as blocks
      of the unpadded shape, `tg.unpadded_random_shape`, the unsharded
      step's masks), with a remark per head count, and a column-parallel
      layer's
      width (zero columns in it, its bias and a gate, zero rows in its
      row-parallel partners, through ops that keep zeros zero); a weight tp
      divides no dimension of that it would split and cannot pad stays
      whole, with a remark (an error when no layer is split).
    * `zero=1|2|3` (needs `dp`): each optimizer state is split over `dp` on
      its first dimension that divides (priority 3), with the mixed
      precision master weights (ZeRO-1/2, whose low-precision copies stay
      whole) or every parameter (ZeRO-3). ZeRO-1 keeps each gradient whole
      (an all-reduce; each device updates its slice), ZeRO-2/3 reduce-scatter
      it. When no dimension of a parameter divides, one is padded with
      zeros to the next multiple of dp (the one tp leaves whole that needs
      the fewest), with its gradient, state and update, and the caller's
      shape recorded in `tg.unpadded_shape` (a remark per parameter). An
      update that reads whole-tensor statistics (LAMB, Adafactor) or a
      gradient read by an op that does not keep zeros leaves the parameter
      replicated, with a remark.
    * `sequence-parallel` (needs `tp`): the inputs of the norms (the
      residual stream) are split on their sequence dimension over `tp`.
    * `expert-parallel` (needs `dp`): every mixture-of-experts stack (the
      matrices of `tg.expert_matmul`) is split on its experts over `dp`, at
      the user's priority: each device holds `E / dp` experts, gathers the
      routed rows before the products and gets its rows of their sum back
      by a reduce-scatter (`tg-partition`). A table of a row per expert
      looked up by the routing ids (an expert's bias) is split alike, its
      lookup vocabulary-parallel. A stack whose experts dp does not divide
      stays whole, with a remark. ZeRO leaves the split stacks (and their
      optimizer state) as they are.

    Before the presets, each mean `tg.cross_entropy` with an `ignore_index`
    (and its gradient) becomes the summed loss divided by the count of the
    tokens that are not ignored, one count per labels tensor shared by the
    loss and its gradient: the same numbers, but a count `tg-partition`
    reduces as a partial sum, so split tokens stay split (the mean itself
    needs the whole batch's count, and would gather the logits).

    ```mlir
    // --tg-shard-annotate='mesh=dp=2'
    shard.grid @mesh(shape = 2) {tg.mesh_axes = ["dp"]}
    func.func @step(%ids: tensor<8x16xi64> {tg.role = "input",
        tg.sharding = #tg.sharding<@mesh, [{"dp"}, {} ], priority = 1>}, ...
    ```
  }];
  let options = [
    Option<"meshSpec", "mesh", "std::string", /*default=*/"\"\"",
           "The mesh: axis sizes by name, the last innermost (dp=8,tp=4)">,
    Option<"zero", "zero", "unsigned", /*default=*/"0",
           "ZeRO stage over the dp axis: 1 optimizer state, 2 + gradients, "
           "3 + parameters">,
    Option<"sequenceParallel", "sequence-parallel", "bool",
           /*default=*/"false",
           "Split the residual stream on the sequence dimension over tp">,
    Option<"expertParallel", "expert-parallel", "bool", /*default=*/"false",
           "Split every expert stack on its experts over dp (expert "
           "parallelism)">,
    ListOption<"shardings", "shard", "std::string",
               "User shardings of arguments: NAME_GLOB=AXES,AXES,... (one "
               "entry per dimension, a+b for two axes, empty for whole); "
               "they win over the IR's and the presets">,
  ];
  let dependentDialects = ["::mlir::shard::ShardDialect"];
}

def TGShardPropagate : Pass<"tg-shard-propagate", "::mlir::func::FuncOp"> {
  let summary = "Give every value a sharding from the annotations, through each op's factor rule";
  let description = [{
    A fixed point over `ShardingRuleOpInterface`, as Shardy propagates:
    annotations (`tg.sharding` on arguments and results, `tg.shardings` on
    ops) are taken priority by priority, the strongest first; each op
    resolves every factor of its rule to the strongest proposal among its
    operands and results (ties: the proposal of the larger tensor, so the
    smaller one is resharded), keeps each mesh axis in one factor, never
    splits a need-replication factor, and fills the unsplit, open
    dimensions of its operands and results. Layouts only grow, so the
    result is deterministic and the pass terminates. Results that alias an
    argument are stored as the argument is; other results are replicated.

    Every op result gets its sharding in `tg.shardings`; every argument and
    result in `tg.sharding`. With `explain`, a remark per conflict (which
    proposal won and why) and a table of the arguments' shardings.

    ```mlir
    // Before: %x split over dp.
    %y = tg.matmul %x, %w : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
    // After:
    %y = tg.matmul %x, %w {tg.shardings = [#tg.sharding<@mesh, [{"dp"}, {} ]>]} : ...
    ```
  }];
  let options = [
    Option<"explain", "explain", "bool", /*default=*/"false",
           "A remark per sharding conflict and a table of the arguments' "
           "shardings">,
  ];
}

def TGPartition : Pass<"tg-partition", "::mlir::func::FuncOp"> {
  let summary = "The per-device program: local shapes and shard collectives";
  let description = [{
    Rewrites a propagated step into the program each device runs. Types
    become local (each dimension divided by the sizes of its axes; the
    `tg.sharding` of arguments and results keep describing the global
    layout). Each op runs on the layouts its factor decision needs; where a
    producer's layout differs, a `shard` collective on `@mesh` converts it:

    * partial sums (a reduction factor split: a matmul's contraction, a
      reduce over a split dimension, a loss over split tokens) are reduced
      by `shard.all_reduce` (sum, max, min or average), or by
      `shard.reduce_scatter` when the consumer wants the reduced value
      split over the same axes; sums of partial values stay partial, and
      so do conversions between float types and products by values that
      are not partial (fp16's unscaling) when only such sums read their
      result: micro-batches' bf16 gradients accumulated in f32 are reduced
      once, as the f32 sum, not once per micro-batch, unless the result is
      wanted split over the sum's axes (ZeRO-2 and 3 reduce-scatter each
      micro-batch's gradient, so that each device accumulates its block);
    * `shard.all_to_all` moves axes from one dimension to another: the
      innermost axes of a dimension the consumer does not keep there, when
      it splits another dimension next over exactly those axes (the
      exchange sends 1/n of the block, where a gather and a slice would
      move the whole and hold it);
    * `shard.all_gather` joins blocks, `shard.all_slice` splits further
      (locally, without communication); a splat constant's block is a
      splat of the block's type instead, and a whole splat no device reads
      is dropped (no arena bytes for it).

    Arguments are gathered at each use (ZeRO-3 holds a gathered parameter
    only around its use); other conversions are shared by the ops that need
    the same layout. A split `tg.dropout` or `tg.random` gets the global
    index of its block's first element added to its `offset` (a table of
    the blocks' offsets per split dimension, cut by `shard.all_slice`)
    and, when it is split on another dimension than its first (sequence
    parallelism), the whole tensor's shape as its `global_shape`, so that
    each device draws its part of the whole mask (numbers) without
    gathering. A mean loss gradient over split tokens is scaled by the
    device's share.

    Ops that compare global ids or labels with the rows or classes a device
    holds are rebuilt on the device's block (Megatron's vocabulary-parallel
    ops): a `tg.vocab_parallel` lookup of a table split on its rows (ids
    outside the block give zero rows; the lookups are partial sums), its
    `tg.embedding_grad`, and `tg.cross_entropy` and its gradient over split
    classes (the devices' log-sum-exps combined by an all-reduce max and an
    all-reduce sum, the target logits by one all-reduced scalar). The ids
    are shifted by the block's offset, a table of offsets cut by
    `shard.all_slice`; the `tg.sub` that shifts them keeps the global
    bound in `tg.id_bound`.

    An expert product whose stack is split on its experts (expert
    parallelism) is rebuilt alike: its ids shifted to the device's block and
    `global_experts` set, so it multiplies only its own experts' rows and
    gives zeros for the others'. Its result is an exclusive partial sum
    (each row whole on the device of its expert, zero elsewhere), kept so
    through elementwise ops (masked to the device's rows where zeros would
    not stay zeros) and slices, pads, concatenations and reshapes that keep
    the rows, and read as it is by the next product of the same routing;
    any other reader reduces it as a partial sum. A comparison of it is
    valid on the device's rows only: read as it is by the ops above, and
    recomputed on the value all-reduced for any other reader. With `explain`, a remark per collective: the value,
    the op that needs it, why, the bytes each device sends and the modelled
    time on the link its group spans.

    ```mlir
    // mesh dp=2: the weight gradient of a data-parallel matmul.
    %g = tg.matmul %x, %dy transpose_a : (tensor<4x16xf32>, tensor<4x8xf32>) -> tensor<16x8xf32>
    %r = shard.all_reduce %g on @mesh grid_axes = [0] : tensor<16x8xf32> -> tensor<16x8xf32>
    ```
  }];
  let options = [
    Option<"explain", "explain", "bool", /*default=*/"false",
           "A remark per inserted collective">,
  ];
  let dependentDialects = ["::mlir::shard::ShardDialect"];
}

def TGBucketCollectives : Pass<"tg-bucket-collectives", "::mlir::func::FuncOp"> {
  let summary = "Gradient all-reduces (and ZeRO's collectives) merged into buckets";
  let description = [{
    Merges the gradient all-reduces of a partitioned step into buckets of
    about `bucket-bytes` each, as PyTorch DDP and Megatron do: a bucket is
    one `shard.all_reduce` of its gradients laid one after the other
    (flattened, concatenated), and each gradient is a slice of the result.
    A ring all-reduce costs a latency term per step whatever its size, so
    a transformer's many small gradients (norms, biases) cost mostly
    latency one by one: on GPT-2 124M at dp=8, 149 all-reduces become 14.

    The buckets cost no copy in the compiled step: the memory plan has the
    producer of each gradient write it in place inside its bucket, and
    reads each slice of the reduced bucket where it lies (a contiguous
    slice is a view; docs/memory.md). The interpreter copies.

    Gradients join buckets in the order they are computed (the block order,
    which is the backward's), so each bucket can go as soon as its last
    gradient exists, and tg-schedule issues it then (docs/sharding.md,
    "Overlap"). A bucket holds gradients all-reduced over the same grid
    axes with the same reduction and element type. It closes once it holds
    `bucket-bytes`, before a gradient whose all-reduce is read before the
    bucket's last gradient is computed, and after a gradient whose size is
    not a multiple of 256 bytes (what followed it could not be written in
    place at an aligned offset). A gradient is what an optimizer update
    reads, through the partitioner's collectives and slices and the
    micro-batches' average (a multiply by 1/M); an all-reduce
    of anything else (a loss, a norm, tensor-parallel activations) is left
    alone, and so are steps with pipeline stages. The pass runs after
    tg-fuse, so that no fusion region takes in a bucket's concat or slices.
    `bucket-bytes=0` turns it off.

    ZeRO-2 and 3's gradient reduce-scatters form buckets by the same rules,
    but they cost a copy: a rank's block of every gradient must lie side by
    side in the bucket, so each gradient is viewed as the rows of its
    blocks (`[n, s]`, through a transpose when its blocks are not along its
    first dimension) and the rows are concatenated (`[n, S]`, FSDP's flat
    buffer); one reduce-scatter splits the whole and each block is a slice
    of the result, read where it lies. The copies run on the compute
    stream, so with `scatter=auto` reduce-scatters are bucketed only when
    the step's collectives take longer than its kernels by the cost model
    (the saved latency is then time the step waits for), and only those
    whose copy costs less than the latency terms of their own collective
    (large gradients are bandwidth-bound and stay alone). `always` skips
    the first test, `never` leaves reduce-scatters alone. On GPT-2 124M
    with ZeRO-2 at dp=8 and seq 64, 147 reduce-scatters become 38 and the
    modelled step falls from 6.78 to 5.90 ms; at seq 1024 the step is
    compute-bound and keeps its 148.

    ZeRO's parameter all-gathers (of a value computed from parameters and
    state alone, a bf16 copy or a ZeRO-3 weight, or by the optimizer, an
    updated parameter; never an activation's) form buckets too, as FSDP2's:
    the blocks are flattened and concatenated, one all-gather gives the
    devices' buckets one after the other, and one `multi_tensor` region
    copies each parameter out of the `[n, S]` view (a slice of its columns,
    a transpose first when its blocks interleave). Parameters join in the
    order the step first reads them, and a bucket closes at `bucket-bytes`
    of gathered bytes, before a parameter whose block is computed after the
    bucket's first reader, and before one first read after every member's
    last reader, so that no parameter stays gathered longer (under ZeRO-3
    only a weight and the bias read by the same op share a bucket).
    `gather=auto` buckets them only in a communication-bound step and only
    parameters whose copies cost less than their own all-gather's latency
    terms; on GPT-2 124M, bf16, ZeRO-1 at dp=8 and seq 1024, 148 all-gathers
    become 39 and the modelled step falls from 5.52 to 4.90 ms.

    ```mlir
    // After: two bf16 blocks on dp=2, gathered at once; v's blocks are
    // its columns.
    %fw = tg.reshape %cw : tensor<4x8xbf16> -> tensor<32xbf16>
    %fv = tg.reshape %cv : tensor<8x4xbf16> -> tensor<32xbf16>
    %b = tg.concat %fw, %fv dim = 0 : (tensor<32xbf16>, tensor<32xbf16>) -> tensor<64xbf16>
    %g = shard.all_gather %b on @mesh grid_axes = [0] gather_axis = 0 : tensor<64xbf16> -> tensor<128xbf16>
    %rows = tg.reshape %g : tensor<128xbf16> -> tensor<2x64xbf16>
    %p:2 = tg.fusion(%rows) {kind = "multi_tensor"} : (tensor<2x64xbf16>) -> (tensor<8x8xbf16>, tensor<8x8xbf16>) {
    ^bb0(%a: tensor<2x64xbf16>):
      %sw = tg.slice %a [0:2, 0:32] : tensor<2x64xbf16> -> tensor<2x32xbf16>
      %w = tg.reshape %sw : tensor<2x32xbf16> -> tensor<8x8xbf16>
      %sv = tg.slice %a [0:2, 32:64] : tensor<2x64xbf16> -> tensor<2x32xbf16>
      %rv = tg.reshape %sv : tensor<2x32xbf16> -> tensor<2x8x4xbf16>
      %tv = tg.transpose %rv perm = [1, 0, 2] : tensor<2x8x4xbf16> -> tensor<8x2x4xbf16>
      %v = tg.reshape %tv : tensor<8x2x4xbf16> -> tensor<8x8xbf16>
      tg.yield %w, %v : tensor<8x8xbf16>, tensor<8x8xbf16>
    }
    ```

    ```mlir
    // Before: two all-reduces.
    %a = shard.all_reduce %ga on @mesh grid_axes = [0] : tensor<64x3xf32> -> tensor<64x3xf32>
    %b = shard.all_reduce %gb on @mesh grid_axes = [0] : tensor<64xf32> -> tensor<64xf32>
    // After: one of 256 elements, sliced back.
    %fa = tg.reshape %ga : tensor<64x3xf32> -> tensor<192xf32>
    %c = tg.concat %fa, %gb dim = 0 : (tensor<192xf32>, tensor<64xf32>) -> tensor<256xf32>
    %r = shard.all_reduce %c on @mesh grid_axes = [0] : tensor<256xf32> -> tensor<256xf32>
    %ra = tg.slice %r [0:192] : tensor<256xf32> -> tensor<192xf32>
    %a = tg.reshape %ra : tensor<192xf32> -> tensor<64x3xf32>
    %b = tg.slice %r [192:256] : tensor<256xf32> -> tensor<64xf32>
    ```
  }];
  let options = [
    Option<"bucketBytes", "bucket-bytes", "int64_t", /*default=*/"4194304",
           "The size at which a bucket closes, in bytes (0: no buckets; "
           "default 4 MiB)">,
    Option<"scatter", "scatter", "std::string", /*default=*/"\"auto\"",
           "Reduce-scatter buckets: auto (when the step's communication "
           "outweighs its kernels), always or never">,
    Option<"gather", "gather", "std::string", /*default=*/"\"auto\"",
           "ZeRO's parameter all-gather buckets: auto (when the step's "
           "communication outweighs its kernels), always or never">,
    Option<"device", "device", "std::string", /*default=*/"\"\"",
           "The built-in device whose cost model decides the reduce-scatter "
           "and all-gather buckets (default: the module's tg.device, else "
           "H100-SXM)">,
  ];
  let statistics = [
    Statistic<"bucketsMade", "buckets", "Buckets made">,
    Statistic<"collectivesMerged", "collectives-merged",
              "Gradient all-reduces, reduce-scatters and parameter "
              "all-gathers merged into buckets">,
  ];
  let dependentDialects = ["::mlir::shard::ShardDialect", "::tgc::tg::TGDialect"];
}

def TGPipelineSplit : Pass<"tg-pipeline-split", "::mlir::ModuleOp"> {
  let summary = "Cut a model's forward into pipeline stages";
  let description = [{
    Gives every op of each function's forward a `tg.stage`
    (docs/pipeline.md): the ops on the path of the batch (those that depend
    on an `input` or `label` argument) are cut, in block order, into
    `stages` x `virtual-stages` contiguous stages whose modelled times (the
    cost model on `device`) are as balanced as possible: the slowest stage
    is the fastest it can be. Where the parameter names number layers
    (`h.3.attn...`, `model.layers.3...`), cuts fall only between layers (the
    ops before the first layer, such as the embedding, and after the last,
    such as the head and the loss, count as layers of their own), and more
    stages than layers is an error; otherwise any op boundary is a cut. The
    ops that read only parameters and constants (casts of master weights,
    masks) join the earliest stage that uses them and are copied to every
    other stage that does (a tied embedding's cast is on the first and the
    last stage). The function gets its `tg.pipeline_stages` dictionary.
    With `explain`, a remark per stage gives its device, chunk, ops, layers
    and modelled forward time.

    Runs before `tg-autodiff`, which gives each backward op the stage of the
    op it differentiates, and `tg-microbatch`, which numbers the
    micro-batches; `tg-pipeline-schedule` completes the program.

    ```mlir
    %h = tg.matmul %x, %w0 {tg.stage = 0 : i64} : ...
    %y = tg.matmul %h, %w1 {tg.stage = 1 : i64} : ...
    ```
  }];
  let options = [
    Option<"axis", "axis", "std::string", /*default=*/"\"pp\"",
           "The mesh axis of the pipeline">,
    Option<"stages", "stages", "int64_t", /*default=*/"1",
           "Pipeline devices (the size of the pp axis)">,
    Option<"virtualStages", "virtual-stages", "int64_t", /*default=*/"1",
           "Model chunks per device (the interleaved schedule)">,
    Option<"microBatches", "micro-batches", "int64_t", /*default=*/"1",
           "Micro-batches per step (recorded for tg-pipeline-schedule)">,
    Option<"schedule", "schedule", "std::string", /*default=*/"\"1f1b\"",
           "gpipe, 1f1b or interleaved">,
    Option<"device", "device", "std::string", /*default=*/"\"\"",
           "Built-in device whose cost model balances the stages (default: "
           "the module's tg.device)">,
    Option<"explain", "explain", "bool", /*default=*/"false",
           "A remark per stage: its pipeline device and chunk, its ops, "
           "layers and modelled forward time">,
  ];
}

def TGPipelineSchedule : Pass<"tg-pipeline-schedule", "::mlir::func::FuncOp"> {
  let summary = "Move values between pipeline stages and order the schedule";
  let description = [{
    Completes a function that `tg-pipeline-split` cut into stages
    (docs/pipeline.md), after differentiation, micro-batching, the optimizer
    and partitioning:

    - every op without a `tg.stage` (partitioning's collectives, the
      optimizer update, folded constants) takes the stage, micro-batch and
      direction of its users when they are on one pipeline device, else of
      its first staged operand; an op with neither (a constant used on
      several devices) is copied to each device;
    - every value used on another pipeline device moves through a
      `shard.send` on its stage and a `shard.recv` on the receiving stage
      (over the pipeline axis; once per value and receiving device; a scalar
      travels as a one-element tensor), unless it is computed from the batch
      and hyper-parameter arguments alone (a mask, positions) by at most 16
      pure ops whose modelled time is below the message's: those are
      computed again on the receiving stage;
    - the block is ordered so that each device's ops, in block order, run
      its units (a micro-batch through a model chunk, forward or backward)
      in the order of the `tg.pipeline_stages` schedule: GPipe (every forward,
      then every backward), 1F1B (`P-1-p` warm-up forwards on device `p`,
      then one forward and one backward, then the rest of the backwards) or
      Megatron's interleaved 1F1B. Across devices, units are interleaved by
      their start times in a simulation of the schedule with the cost
      model's op times on `device`.

    ```mlir
    %h = tg.matmul %x, %w0 {tg.stage = 0 : i64, tg.micro_batch = 0 : i64} : ...
    %s = shard.send %h on @mesh grid_axes = [0] destination = [1] {tg.stage = 0 : i64, ...} : ...
    %r = shard.recv %s on @mesh grid_axes = [0] source = [0] {tg.stage = 1 : i64, ...} : ...
    %y = tg.matmul %r, %w1 {tg.stage = 1 : i64, tg.micro_batch = 0 : i64} : ...
    ```
  }];
  let dependentDialects = ["::mlir::shard::ShardDialect", "::tgc::tg::TGDialect"];
  let options = [
    Option<"device", "device", "std::string", /*default=*/"\"\"",
           "Built-in device whose op times order the units (default: the "
           "module's tg.device)">,
  ];
}

def TGFuse : Pass<"tg-fuse", "::mlir::func::FuncOp"> {
  let summary = "Group ops into fusion regions, the kernels tgc emits";
  let description = [{
    Forms `tg.fusion` regions (one kernel each) so that fewer bytes move
    through device memory, from op traits and interfaces only:

    - loop kernels: producer-consumer chains of `Elementwise` and shape ops;
    - row-reduction kernels: ops with the `ReductionOp` trait with their
      elementwise producers and consumers over the same rows (a second
      reduction joins only over the same operand shape);
    - GEMM epilogues: a matmul followed by a bias add (of a broadcast vector),
      a ReLU or tanh GELU (with an aux output when the pre-activation is read
      elsewhere), a residual add and a cast becomes one region whose
      `epilogue` names the cuBLASLt epilogue it maps to (`epilogue_c`
      when the residual is cuBLASLt's C operand). A widening cast that only
      sums read (a micro-batch's bf16 gradient added to its f32
      accumulator) stays with the sum's loop, which then reads the narrow
      D;
    - horizontal fusion: the optimizer updates (`OptimizerOpInterface`) of a
      step, and the elementwise ops left alone that read only arguments (the
      casts of master weights), become multi-tensor regions of one op kind,
      element types and attributes (at most `max-region-ops` ops each):
      buckets of consecutive ops in the order tg-schedule runs them, i.e.
      the order their gradients become ready in the backward. Each bucket
      is placed after its last op; it is kept only if the simulated peak
      of the step as tg-schedule will order it does not rise (by more than
      `peak-rise` percent), else its two halves are tried, largest buckets
      first, at most `max-bucket-tries` in all.

    A producer read by several consumers is duplicated into them only when
    the cost model estimates that recomputing it (its FLOPs and the bytes
    of its own operands) is cheaper than writing and reading its result;
    a matmul or a reduction is never duplicated. Each region is simulated
    (MemorySimulation) and undone when it raises the peak of the step.

    Before:

    ```mlir
    %0 = tg.add %a, %b : tensor<4xf32>
    %1 = tg.relu %0 : tensor<4xf32>
    ```

    After:

    ```mlir
    %1 = tg.fusion (%a, %b) {kind = "loop"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%x: tensor<4xf32>, %y: tensor<4xf32>):
      %0 = tg.add %x, %y : tensor<4xf32>
      %r = tg.relu %0 : tensor<4xf32>
      tg.yield %r : tensor<4xf32>
    }
    ```

    With `explain`, a remark on each region states its kind, op count and
    the bytes of device memory traffic it saves by the cost model.
  }];
  let dependentDialects = ["::tgc::tg::TGDialect"];
  let options = [
    Option<"maxRegionOps", "max-region-ops", "unsigned", /*default=*/"256",
           "The most ops in one region (at least 2)">,
    Option<"noEpilogue", "no-epilogue", "bool", /*default=*/"false",
           "Do not fold epilogues into matmuls">,
    Option<"noFuseOptimizer", "no-fuse-optimizer", "bool", /*default=*/"false",
           "Do not group the optimizer updates (and the casts of master "
           "weights) into multi-tensor regions">,
    Option<"peakRise", "peak-rise", "double", /*default=*/"0.0",
           "How much the multi-tensor regions may raise the simulated peak "
           "of the scheduled step, in percent (0 to 100; default 0: never)">,
    Option<"maxBucketTries", "max-bucket-tries", "unsigned",
           /*default=*/"64",
           "The most multi-tensor buckets tried, each checked on a schedule "
           "of the step (largest first; the ops of untried ones stay "
           "separate kernels)">,
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Emit a remark per region with its estimated bytes saved">,
    Option<"device", "device", "std::string", /*default=*/"\"\"",
           "The built-in device whose cost model decides duplication "
           "(default: the module's tg.device, else H100-SXM)">,
  ];
  let statistics = [
    Statistic<"numRegions", "regions", "Fusion regions formed">,
    Statistic<"numRefused", "refused-peak",
              "Regions undone because they raised the peak">,
  ];
}

#endif // TGC_TRANSFORMS_PASSES_TD

//===- RecurrentConverters.cpp - RNN, GRU and LSTM, unrolled --------------===//
//
// RNN, GRU and LSTM with the semantics of the ONNX specification
// (directions, layouts, initial states, peepholes, input_forget,
// linear_before_reset, clip, every activation the specification lists,
// sequence_lens). The sequence length is static, so the recurrence is
// unrolled: the input projection of every time step is one matmul, then
// each step multiplies the state by R and applies the gates. Everything is
// an existing tg op, so the layer trains (back-propagation through time is
// tg-autodiff's reverse of the unrolled steps), fuses and runs on every
// target; the step count bounds the size of the graph.
//
//===----------------------------------------------------------------------===//

#include "ConverterUtils.h"

#include <cmath>

using namespace mlir;
using namespace tgc;
using namespace tgc::onnx_import;

using Importer = GraphImporter;

/// The most time steps a recurrent op unrolls.
constexpr int64_t kMaxRecurrentSteps = 4096;

namespace {
enum class Cell { RNN, GRU, LSTM };

/// An activation function of the specification, with its alpha and beta.
struct Activation {
  std::string name;
  double alpha = 0, beta = 0;
};

/// One recurrent layer's operands and attributes.
struct Recurrence {
  Cell cell;
  int64_t steps, batch, hidden, gates, directions;
  bool reverse = false, inputForget = false, linearBeforeReset = false;
  double clip = 0;
  SmallVector<Activation> activations; // per direction, f (g, h)
  Value x;                             // [steps, batch, input]
  Value w, r, b, p, h0, c0;            // per the specification
  Value lengths;                       // [batch] i64, or null
};
} // namespace

/// The activation functions of the specification (lower-cased), with the
/// alpha and beta each takes (none: NaN) by default.
static const llvm::StringMap<std::pair<double, double>> &getActivationTable() {
  static const llvm::StringMap<std::pair<double, double>> table = [] {
    double none = std::nan("");
    return llvm::StringMap<std::pair<double, double>>{
        {"relu", {none, none}},      {"tanh", {none, none}},
        {"sigmoid", {none, none}},   {"softsign", {none, none}},
        {"softplus", {none, none}},  {"affine", {1.0, 0.0}},
        {"leakyrelu", {0.01, none}}, {"thresholdedrelu", {1.0, none}},
        {"scaledtanh", {1.0, 1.0}},  {"hardsigmoid", {0.2, 0.5}},
        {"elu", {1.0, none}}};
  }();
  return table;
}

/// The node's activations (with their alphas and betas consumed in order
/// by the functions that take them, ONNX's defaults otherwise), `count` per
/// direction.
static FailureOr<SmallVector<Activation>>
getActivations(Importer &g, ArrayRef<StringRef> defaults, int64_t directions) {
  SmallVector<Activation> activations;
  const onnx::AttributeProto *names =
      g.attribute("activations", onnx::AttributeProto::STRINGS);
  if (names) {
    for (const std::string &name : names->strings())
      activations.push_back({StringRef(name).lower()});
  } else {
    for (int64_t d = 0; d < directions; ++d)
      for (StringRef name : defaults)
        activations.push_back({name.lower()});
  }
  if (int64_t(activations.size()) != int64_t(defaults.size()) * directions)
    return (void)g.fail("'activations' must name " +
                        llvm::Twine(defaults.size() * directions) +
                        " functions (" + llvm::Twine(defaults.size()) +
                        " per direction)"),
           failure();
  SmallVector<float> alphas, betas;
  if (const onnx::AttributeProto *a =
          g.attribute("activation_alpha", onnx::AttributeProto::FLOATS))
    alphas.assign(a->floats().begin(), a->floats().end());
  if (const onnx::AttributeProto *a =
          g.attribute("activation_beta", onnx::AttributeProto::FLOATS))
    betas.assign(a->floats().begin(), a->floats().end());
  size_t alphaIndex = 0, betaIndex = 0;
  for (Activation &a : activations) {
    auto it = getActivationTable().find(a.name);
    if (it == getActivationTable().end())
      return (void)g.fail("unknown activation function '" + a.name + "'"),
             failure();
    auto [alpha, beta] = it->second;
    a.alpha = alpha;
    a.beta = beta;
    if (!std::isnan(alpha) && alphaIndex < alphas.size())
      a.alpha = alphas[alphaIndex++];
    if (!std::isnan(beta) && betaIndex < betas.size())
      a.beta = betas[betaIndex++];
  }
  return activations;
}

/// `f(x)`, x clipped to [-clip, clip] first when clip > 0.
static Value activate(Importer &g, const Activation &f, Value x, double clip) {
  RankedTensorType type = Importer::getType(x);
  Composer e{g, type};
  if (clip > 0)
    x = e.clamp(x, -clip, clip);
  StringRef name = f.name;
  Value zero = e.c(0.0), one = e.c(1.0);
  if (name == "tanh")
    return g.create<tg::TanhOp>(type, x);
  if (name == "sigmoid")
    return g.create<tg::SigmoidOp>(type, x);
  if (name == "relu")
    return g.create<tg::ReluOp>(type, x);
  if (name == "affine")
    return e.add(e.mul(e.c(f.alpha), x), e.c(f.beta));
  if (name == "leakyrelu")
    return e.select(e.less(x, zero), e.mul(e.c(f.alpha), x), x);
  if (name == "thresholdedrelu")
    return e.select(e.less(e.c(f.alpha), x), x, zero);
  if (name == "scaledtanh")
    return e.mul(e.c(f.alpha),
                 g.create<tg::TanhOp>(type, e.mul(e.c(f.beta), x)));
  if (name == "hardsigmoid")
    return e.clamp(e.add(e.mul(e.c(f.alpha), x), e.c(f.beta)), 0.0, 1.0);
  if (name == "elu")
    return e.select(e.less(x, zero), e.expm1Times(x, f.alpha), x);
  if (name == "softsign")
    return e.div(x, e.add(one, e.abs(x)));
  // softplus: max(x, 0) + log(1 + exp(-|x|)), no overflow.
  return e.add(buildBinary<tg::MaxOp>(g, x, zero),
               e.log(e.add(one, e.exp(e.neg(e.abs(x))))));
}

/// Direction `d`'s slice of a [directions, ...] operand, without its first
/// dimension.
static Value takeDirection(Importer &g, Value value, int64_t d) {
  RankedTensorType type = Importer::getType(value);
  SmallVector<int64_t> starts(type.getRank(), 0), limits(type.getShape()),
      strides(type.getRank(), 1);
  starts[0] = d;
  limits[0] = d + 1;
  return g.reshape(g.slice(value, starts, limits, strides),
                   type.getShape().drop_front());
}

/// Columns [begin, end) of a matrix.
static Value columns(Importer &g, Value matrix, int64_t begin, int64_t end) {
  int64_t rows = Importer::getType(matrix).getDimSize(0);
  return g.slice(matrix, {0, begin}, {rows, end}, {1, 1});
}

/// One direction of the recurrence: Y [steps, batch, hidden], and the last
/// hidden (and cell) state.
static std::tuple<Value, Value, Value>
runDirection(Importer &g, const Recurrence &n, int64_t d, bool reverse) {
  int64_t H = n.hidden, B = n.batch, S = n.steps, G = n.gates;
  int64_t input = Importer::getType(n.x).getDimSize(2);
  Type elementType = Importer::getType(n.x).getElementType();
  auto matrix = [&](int64_t rows, int64_t cols) {
    return RankedTensorType::get({rows, cols}, elementType);
  };
  auto add = [&](Value a, Value b) { return buildBinary<tg::AddOp>(g, a, b); };
  auto mul = [&](Value a, Value b) { return buildBinary<tg::MulOp>(g, a, b); };
  auto rowBroadcast = [&](Value vector) {
    return g.broadcastTo(vector, {B, Importer::getType(vector).getDimSize(0)});
  };
  ArrayRef<Activation> acts =
      ArrayRef<Activation>(n.activations)
          .slice(d * (n.activations.size() / n.directions),
                 n.activations.size() / n.directions);
  Value w = takeDirection(g, n.w, d), r = takeDirection(g, n.r, d);
  // The biases: Wb + Rb folded into the input projection, except GRU's
  // hidden gate's Rb, which the reset gate scales (or not).
  Value wb, rb;
  if (n.b) {
    Value b = takeDirection(g, n.b, d);
    wb = g.slice(b, {0}, {G * H}, {1});
    rb = g.slice(b, {G * H}, {2 * G * H}, {1});
  }
  // Every step's input projection at once: [S * B, G * H].
  Value xw =
      g.create<tg::MatmulOp>(g.reshape(n.x, {S * B, input}), w, false, true);
  if (n.b) {
    Value bias = wb;
    if (n.cell == Cell::GRU)
      bias = add(
          bias,
          g.create<tg::ConcatOp>(
              RankedTensorType::get({G * H}, elementType),
              ValueRange{g.slice(rb, {0}, {2 * H}, {1}),
                         g.splat(RankedTensorType::get({H}, elementType), 0.0)},
              0));
    else
      bias = add(bias, rb);
    xw = add(xw, g.broadcastTo(bias, {S * B, G * H}));
  }
  Value h = n.h0 ? takeDirection(g, n.h0, d) : g.splat(matrix(B, H), 0.0);
  Value c;
  if (n.cell == Cell::LSTM)
    c = n.c0 ? takeDirection(g, n.c0, d) : g.splat(matrix(B, H), 0.0);
  Value peepI, peepO, peepF;
  if (n.p) {
    Value p = takeDirection(g, n.p, d);
    peepI = rowBroadcast(g.slice(p, {0}, {H}, {1}));
    peepO = rowBroadcast(g.slice(p, {H}, {2 * H}, {1}));
    peepF = rowBroadcast(g.slice(p, {2 * H}, {3 * H}, {1}));
  }
  Value rzr, rh, rbh;
  if (n.cell == Cell::GRU) {
    // R's rows: z, r, h.
    rzr = g.slice(r, {0, 0}, {2 * H, H}, {1, 1});
    rh = g.slice(r, {2 * H, 0}, {3 * H, H}, {1, 1});
    if (n.b)
      rbh = rowBroadcast(g.slice(rb, {2 * H}, {3 * H}, {1}));
  }
  SmallVector<Value> outputs(S);
  Value one = g.splat(matrix(B, H), 1.0);
  for (int64_t i = 0; i < S; ++i) {
    int64_t t = reverse ? S - 1 - i : i;
    Value xt = g.slice(xw, {t * B, 0}, {(t + 1) * B, G * H}, {1, 1});
    Value next, nextCell;
    if (n.cell == Cell::RNN) {
      next =
          activate(g, acts[0],
                   add(xt, g.create<tg::MatmulOp>(h, r, false, true)), n.clip);
    } else if (n.cell == Cell::LSTM) {
      // Gate columns: i, o, f, c.
      Value gatesT = add(xt, g.create<tg::MatmulOp>(h, r, false, true));
      Value gi = columns(g, gatesT, 0, H), go = columns(g, gatesT, H, 2 * H),
            gf = columns(g, gatesT, 2 * H, 3 * H),
            gc = columns(g, gatesT, 3 * H, 4 * H);
      if (n.p) {
        gi = add(gi, mul(peepI, c));
        gf = add(gf, mul(peepF, c));
      }
      Value in = activate(g, acts[0], gi, n.clip);
      Value forget = n.inputForget ? buildBinary<tg::SubOp>(g, one, in)
                                   : activate(g, acts[0], gf, n.clip);
      nextCell = add(mul(forget, c), mul(in, activate(g, acts[1], gc, n.clip)));
      if (n.p)
        go = add(go, mul(peepO, nextCell));
      next = mul(activate(g, acts[0], go, n.clip),
                 activate(g, acts[2], nextCell, 0.0));
    } else {
      Value hzr = g.create<tg::MatmulOp>(h, rzr, false, true);
      Value z = activate(
          g, acts[0], add(columns(g, xt, 0, H), columns(g, hzr, 0, H)), n.clip);
      Value reset = activate(
          g, acts[0], add(columns(g, xt, H, 2 * H), columns(g, hzr, H, 2 * H)),
          n.clip);
      Value recurrent;
      if (n.linearBeforeReset) {
        recurrent = g.create<tg::MatmulOp>(h, rh, false, true);
        if (rbh)
          recurrent = add(recurrent, rbh);
        recurrent = mul(reset, recurrent);
      } else {
        recurrent = g.create<tg::MatmulOp>(mul(reset, h), rh, false, true);
        if (rbh)
          recurrent = add(recurrent, rbh);
      }
      Value candidate = activate(
          g, acts[1], add(columns(g, xt, 2 * H, 3 * H), recurrent), n.clip);
      next = add(mul(buildBinary<tg::SubOp>(g, one, z), candidate), mul(z, h));
    }
    Value output = next;
    if (n.lengths) {
      // Past a sequence's length its state stays and its output is 0.
      Value position = g.splat(Importer::getType(n.lengths), double(t));
      Value valid = g.broadcastTo(
          g.reshape(compare(g, tg::CompareDirection::LT, position, n.lengths),
                    {B, 1}),
          {B, H});
      next = select(g, valid, next, h);
      if (nextCell)
        nextCell = select(g, valid, nextCell, c);
      output = select(g, valid, output, g.splat(matrix(B, H), 0.0));
    }
    outputs[t] = g.reshape(output, {1, B, H});
    h = next;
    c = nextCell;
  }
  Value y =
      S == 1 ? outputs.front()
             : g.create<tg::ConcatOp>(
                   RankedTensorType::get({S, B, H}, elementType), outputs, 0);
  return {y, h, c};
}

static LogicalResult convertRecurrent(Importer &g, Cell cell) {
  Recurrence n;
  n.cell = cell;
  n.gates = cell == Cell::RNN ? 1 : cell == Cell::GRU ? 3 : 4;
  ASSIGN_OR_FAIL(x, g.requireInput(0));
  ASSIGN_OR_FAIL(w, g.requireInput(1));
  ASSIGN_OR_FAIL(r, g.requireInput(2));
  if (failed(requireFloat(g, x)))
    return failure();
  std::string direction = g.getString("direction", "forward",
                                      {"forward", "reverse", "bidirectional"});
  n.directions = direction == "bidirectional" ? 2 : 1;
  n.reverse = direction == "reverse";
  bool batchFirst = g.opset >= 14 && g.getBool("layout", false);
  n.clip = g.getOptionalFloat("clip").value_or(0.0f);
  if (g.getOptionalFloat("clip") && !(n.clip > 0))
    return g.fail("'clip' must be positive");
  n.inputForget = cell == Cell::LSTM && g.getBool("input_forget", false);
  n.linearBeforeReset =
      cell == Cell::GRU && g.getBool("linear_before_reset", false);
  SmallVector<StringRef> defaults =
      cell == Cell::RNN   ? SmallVector<StringRef>{"Tanh"}
      : cell == Cell::GRU ? SmallVector<StringRef>{"Sigmoid", "Tanh"}
                          : SmallVector<StringRef>{"Sigmoid", "Tanh", "Tanh"};
  ASSIGN_OR_FAIL(activations, getActivations(g, defaults, n.directions));
  n.activations = activations;
  if (g.hadError())
    return failure();

  RankedTensorType xType = Importer::getType(x);
  if (xType.getRank() != 3)
    return g.fail("X must have rank 3");
  if (batchFirst)
    x = g.transpose(x, {1, 0, 2});
  xType = Importer::getType(x);
  n.steps = xType.getDimSize(0);
  n.batch = xType.getDimSize(1);
  int64_t input = xType.getDimSize(2);
  RankedTensorType rType = Importer::getType(r);
  if (rType.getRank() != 3)
    return g.fail("R must have rank 3");
  n.hidden = rType.getDimSize(2);
  if (std::optional<int64_t> size = g.getOptionalInt("hidden_size"))
    if (*size != n.hidden)
      return g.fail("hidden_size " + llvm::Twine(*size) +
                    " differs from R's last dimension " +
                    llvm::Twine(n.hidden));
  if (n.steps > kMaxRecurrentSteps)
    return g.fail("the sequence has " + llvm::Twine(n.steps) +
                  " steps; at most " + llvm::Twine(kMaxRecurrentSteps) +
                  " are unrolled");
  int64_t D = n.directions, GH = n.gates * n.hidden;
  auto expect = [&](Value value, StringRef what,
                    ArrayRef<int64_t> shape) -> LogicalResult {
    RankedTensorType type = Importer::getType(value);
    if (type.getShape() != shape) {
      g.emitNodeError() << what << " has shape " << type
                        << ", the specification's is ["
                        << llvm::make_range(shape.begin(), shape.end()) << "]";
      return failure();
    }
    if (type.getElementType() != xType.getElementType())
      return g.fail(what + " has another element type than X");
    return success();
  };
  if (failed(expect(w, "W", {D, GH, input})) ||
      failed(expect(r, "R", {D, GH, n.hidden})))
    return failure();
  n.x = x;
  n.w = w;
  n.r = r;
  auto optional = [&](unsigned index, StringRef what, ArrayRef<int64_t> shape,
                      Value &into) -> LogicalResult {
    Value value = g.input(index);
    if (!value)
      return success();
    if (batchFirst && shape.size() == 3)
      value = g.transpose(value, {1, 0, 2});
    if (failed(expect(value, what, shape)))
      return failure();
    into = value;
    return success();
  };
  if (failed(optional(3, "B", {D, 2 * GH}, n.b)) ||
      failed(optional(5, "initial_h", {D, n.batch, n.hidden}, n.h0)) ||
      (cell == Cell::LSTM &&
       (failed(optional(6, "initial_c", {D, n.batch, n.hidden}, n.c0)) ||
        failed(optional(7, "P", {D, 3 * n.hidden}, n.p)))))
    return failure();
  if (Value lengths = g.input(4)) {
    RankedTensorType type = Importer::getType(lengths);
    if (type.getShape() != ArrayRef<int64_t>{n.batch} ||
        !type.getElementType().isInteger(32))
      return g.fail("sequence_lens must be an int32 vector of the batch");
    const Tensor *known = g.getConstant(lengths);
    bool whole = known && llvm::all_of(known->ints(), [&](int64_t length) {
                   return length == n.steps;
                 });
    if (!whole) {
      // A reversed direction would start each sequence at its own end.
      if (direction != "forward")
        return g.fail("sequence_lens shorter than the sequence are "
                      "supported in the forward direction only");
      n.lengths = g.convert(lengths, g.builder.getI64Type());
    }
  }

  SmallVector<Value> ys, hs, cs;
  for (int64_t d = 0; d < D; ++d) {
    auto [y, h, c] = runDirection(g, n, d, n.reverse || d == 1);
    ys.push_back(g.reshape(y, {n.steps, 1, n.batch, n.hidden}));
    hs.push_back(g.reshape(h, {1, n.batch, n.hidden}));
    if (c)
      cs.push_back(g.reshape(c, {1, n.batch, n.hidden}));
  }
  Type elementType = xType.getElementType();
  auto join = [&](ArrayRef<Value> parts, int64_t axis) {
    if (parts.size() == 1)
      return parts.front();
    SmallVector<int64_t> shape(Importer::getType(parts.front()).getShape());
    shape[axis] *= parts.size();
    return g.create<tg::ConcatOp>(RankedTensorType::get(shape, elementType),
                                  parts, axis);
  };
  Value y = join(ys, 1), yh = join(hs, 0);
  Value yc = cs.empty() ? Value() : join(cs, 0);
  if (batchFirst) {
    y = g.transpose(y, {2, 0, 1, 3});
    yh = g.transpose(yh, {1, 0, 2});
    if (yc)
      yc = g.transpose(yc, {1, 0, 2});
  }
  if (g.hasOutput(0))
    g.setOutput(0, y);
  if (g.hasOutput(1))
    g.setOutput(1, yh);
  if (g.hasOutput(2) && yc)
    g.setOutput(2, yc);
  return success();
}

LogicalResult onnx_import::convertRNN(Importer &g) {
  return convertRecurrent(g, Cell::RNN);
}

LogicalResult onnx_import::convertGRU(Importer &g) {
  return convertRecurrent(g, Cell::GRU);
}

LogicalResult onnx_import::convertLSTM(Importer &g) {
  return convertRecurrent(g, Cell::LSTM);
}

//===- TrainingConverters.cpp - ai.onnx.preview.training optimizers -------===//
//
// The optimizer updates of ONNX's training domain (Adagrad, Adam,
// Momentum, each over several tensors at once), as the elementwise
// formulas of the specification built from tg ops: a model that applies
// its own update imports and runs like any other graph. (tgc's own
// optimizers, tg.adamw and tg.sgd, are what `tgc compile --optimizer`
// adds to a step; these convert a graph that already holds one.)
//
//===----------------------------------------------------------------------===//

#include "ConverterUtils.h"

using namespace mlir;
using namespace tgc;
using namespace tgc::onnx_import;

using Importer = GraphImporter;

namespace {
/// An update's common operands: the learning rate R and the step count T
/// (scalars), then `groups` lists of n tensors (X, G, and the states).
struct Update {
  Value rate, step;
  int64_t n = 0;
  SmallVector<SmallVector<Value>> groups;
};
} // namespace

static FailureOr<Update> getUpdate(Importer &g, int64_t groups) {
  Update u;
  int64_t inputs = g.getNumInputs();
  if (inputs < 2 + groups || (inputs - 2) % groups != 0)
    return (void)g.fail("expects R, T and " + llvm::Twine(groups) +
                        " lists of the same number of tensors"),
           failure();
  u.n = (inputs - 2) / groups;
  if (g.getNumOutputs() != (groups - 1) * u.n)
    return (void)g.fail("expects " + llvm::Twine((groups - 1) * u.n) +
                        " outputs"),
           failure();
  ASSIGN_OR_FAIL(rate, g.requireInput(0));
  ASSIGN_OR_FAIL(step, g.requireInput(1));
  if (failed(requireFloat(g, rate)) ||
      Importer::getType(rate).getNumElements() != 1 ||
      Importer::getType(step).getNumElements() != 1 ||
      !isa<IntegerType>(Importer::getType(step).getElementType()))
    return (void)g.fail("R must be a float scalar and T an integer scalar"),
           failure();
  u.rate = g.reshape(rate, {});
  u.step = g.reshape(step, {});
  for (int64_t k = 0; k < groups; ++k) {
    u.groups.emplace_back();
    for (int64_t i = 0; i < u.n; ++i) {
      ASSIGN_OR_FAIL(value, g.requireInput(2 + k * u.n + i));
      if (failed(requireFloat(g, value)))
        return failure();
      if (k > 0 && value.getType() != u.groups.front()[i].getType())
        return (void)g.fail("the tensors of one update must have X's type"),
               failure();
      u.groups.back().push_back(value);
    }
  }
  return u;
}

/// A scalar of `x`'s element type broadcast to its shape.
static Value spread(Importer &g, Value scalar, Value x) {
  RankedTensorType type = Importer::getType(x);
  return g.broadcastTo(g.convert(scalar, type.getElementType()),
                       type.getShape());
}

/// `g + norm_coefficient * x`, the gradient of the L2 regularization added.
static Value regularized(Composer &e, Value x, Value grad, double norm) {
  return e.add(e.mul(e.c(norm), x), grad);
}

LogicalResult onnx_import::convertAdagrad(Importer &g) {
  double decay = g.getFloat("decay_factor", 0.0f),
         epsilon = g.getFloat("epsilon", 1e-6f),
         norm = g.getFloat("norm_coefficient", 0.0f);
  ASSIGN_OR_FAIL(u, getUpdate(g, 3));
  for (int64_t i = 0; i < u.n; ++i) {
    Value x = u.groups[0][i], grad = u.groups[1][i], h = u.groups[2][i];
    Composer e{g, Importer::getType(x)};
    // r / (1 + t * decay_factor).
    Value rate =
        e.div(spread(g, u.rate, x),
              e.add(e.c(1.0), e.mul(spread(g, u.step, x), e.c(decay))));
    Value gr = regularized(e, x, grad, norm);
    Value hNew = e.add(h, e.mul(gr, gr));
    g.setOutput(
        i, e.sub(x, e.div(e.mul(rate, gr), e.add(e.sqrt(hNew), e.c(epsilon)))));
    g.setOutput(u.n + i, hNew);
  }
  return success();
}

LogicalResult onnx_import::convertAdam(Importer &g) {
  double alpha = g.getFloat("alpha", 0.9f), beta = g.getFloat("beta", 0.999f),
         epsilon = g.getFloat("epsilon", 1e-6f),
         norm = g.getFloat("norm_coefficient", 0.0f),
         normPost = g.getFloat("norm_coefficient_post", 0.0f);
  ASSIGN_OR_FAIL(u, getUpdate(g, 4));
  for (int64_t i = 0; i < u.n; ++i) {
    Value x = u.groups[0][i], grad = u.groups[1][i], v = u.groups[2][i],
          h = u.groups[3][i];
    Composer e{g, Importer::getType(x)};
    Value gr = regularized(e, x, grad, norm);
    Value vNew = e.add(e.mul(e.c(alpha), v), e.mul(e.c(1 - alpha), gr));
    Value hNew =
        e.add(e.mul(e.c(beta), h), e.mul(e.c(1 - beta), e.mul(gr, gr)));
    // With t > 0 the bias-corrected rate r sqrt(1 - beta^t) / (1 - alpha^t).
    Value t = spread(g, u.step, x), rate = spread(g, u.rate, x);
    auto power = [&](double base) {
      return buildBinary<tg::PowOp>(g, e.c(base), t);
    };
    Value corrected = e.div(e.mul(rate, e.sqrt(e.sub(e.c(1.0), power(beta)))),
                            e.sub(e.c(1.0), power(alpha)));
    rate = e.select(e.less(e.c(0.0), t), corrected, rate);
    Value xNew =
        e.sub(x, e.mul(rate, e.div(vNew, e.add(e.sqrt(hNew), e.c(epsilon)))));
    g.setOutput(i, e.mul(e.c(1 - normPost), xNew));
    g.setOutput(u.n + i, vNew);
    g.setOutput(2 * u.n + i, hNew);
  }
  return success();
}

LogicalResult onnx_import::convertMomentum(Importer &g) {
  std::optional<float> alpha = g.getOptionalFloat("alpha"),
                       beta = g.getOptionalFloat("beta"),
                       norm = g.getOptionalFloat("norm_coefficient");
  std::string mode = g.getString("mode", "", {"standard", "nesterov"});
  if (g.hadError())
    return failure();
  if (!alpha || !beta || !norm || mode.empty())
    return g.fail("attributes 'alpha', 'beta', 'mode' and "
                  "'norm_coefficient' are required");
  ASSIGN_OR_FAIL(u, getUpdate(g, 3));
  for (int64_t i = 0; i < u.n; ++i) {
    Value x = u.groups[0][i], grad = u.groups[1][i], v = u.groups[2][i];
    Composer e{g, Importer::getType(x)};
    Value gr = regularized(e, x, grad, *norm);
    // The gradient's coefficient is 1 at the first step (t = 0).
    Value t = spread(g, u.step, x), rate = spread(g, u.rate, x);
    Value coefficient = e.select(e.less(e.c(0.0), t), e.c(*beta), e.c(1.0));
    Value vNew = e.add(e.mul(e.c(*alpha), v), e.mul(coefficient, gr));
    Value direction =
        mode == "nesterov" ? e.add(gr, e.mul(e.c(*alpha), vNew)) : vNew;
    g.setOutput(i, e.sub(x, e.mul(rate, direction)));
    g.setOutput(u.n + i, vNew);
  }
  return success();
}

// Gradient (ai.onnx.preview.training, version 1): the gradient of y (the
// sum of its elements: the seed is ones) with respect to each tensor of
// `xs`, by the vector-Jacobian products of the ops already imported between
// them (tg-autodiff's rules, DifferentiableOpInterface), fan-out summed;
// `zs` are the other independent inputs and need nothing. A tensor of `xs`
// that y does not depend on gets zeros.
LogicalResult onnx_import::convertGradient(Importer &g) {
  const onnx::AttributeProto *xsAttr =
      g.attribute("xs", onnx::AttributeProto::STRINGS);
  std::string yName = g.getString("y", "");
  if (!xsAttr || xsAttr->strings_size() == 0 || yName.empty())
    return g.fail("expects the attributes xs (the tensors to differentiate "
                  "with respect to) and y");
  Value y = g.lookup(yName);
  if (!y)
    return g.fail("y names '" + yName + "', which is no tensor of the graph");
  if (failed(requireFloat(g, y)))
    return failure();
  SmallVector<Value> xs;
  for (const std::string &name : xsAttr->strings()) {
    Value x = g.lookup(name);
    if (!x || !isFloat(x))
      return g.fail("xs names '" + name +
                    "', which is no float tensor of the graph");
    xs.push_back(x);
  }
  if (g.getNumOutputs() > xs.size())
    return g.fail("expects at most one output per tensor of xs");
  // The ops that depend on xs, in order (all of them precede this node).
  llvm::DenseSet<Value> active(xs.begin(), xs.end());
  SmallVector<Operation *> ops;
  for (Operation &op : *g.builder.getInsertionBlock())
    if (llvm::any_of(op.getOperands(),
                     [&](Value v) { return active.contains(v); })) {
      ops.push_back(&op);
      active.insert(op.result_begin(), op.result_end());
    }
  llvm::DenseMap<Value, Value> grads;
  grads[y] = g.splat(Importer::getType(y), 1.0);
  for (Operation *op : llvm::reverse(ops)) {
    SmallVector<Value> resultGrads;
    for (Value result : op->getResults())
      resultGrads.push_back(grads.lookup(result));
    if (llvm::all_of(resultGrads, [](Value grad) { return !grad; }))
      continue;
    auto differentiable = dyn_cast<tg::DifferentiableOpInterface>(op);
    if (!differentiable || !resultGrads.front())
      return g.fail("y depends on xs through " + op->getName().getStringRef() +
                    ", which has no gradient there");
    FailureOr<SmallVector<Value>> operandGrads =
        differentiable.buildVjp(g.builder, resultGrads);
    if (failed(operandGrads))
      return failure();
    for (auto [index, operand] : llvm::enumerate(op->getOperands())) {
      Value grad = (*operandGrads)[index];
      if (!grad || !active.contains(operand) ||
          !differentiable.isDifferentiableOperand(index))
        continue;
      Value &slot = grads[operand];
      slot = slot ? buildBinary<tg::AddOp>(g, slot, grad) : grad;
    }
  }
  for (unsigned i = 0, e = g.getNumOutputs(); i < e; ++i) {
    Value grad = grads.lookup(xs[i]);
    g.setOutput(i, grad ? grad : g.splat(Importer::getType(xs[i]), 0.0));
  }
  return success();
}

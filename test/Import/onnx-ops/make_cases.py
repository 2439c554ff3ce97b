#!/usr/bin/env python3
"""ONNX backend-style test cases for the ops Hugging Face exports need (Pad,
Slice with negative steps, CumSum, GatherND, GatherElements, Tile, TopK,
IsNaN), written as the PyTorch exporters emit them: shape operands are
constants (initializers or Constant nodes), data comes from graph inputs.
The expected outputs are computed by ONNX's own reference implementation
(onnx.reference, onnx >= 1.13), so the cases check tgc against the ONNX
semantics, not against tgc.

Layout (what tgc-onnx-conformance reads): cases/CASE/model.onnx and
cases/CASE/test_data_set_0/{input,output}_N.pb. grad/*.onnx are models with a
loss for `tgc gradcheck` (parameters through each op).

The outputs are checked in, so the tests need no Python. To regenerate:

    python3 -m venv venv && venv/bin/pip install onnx numpy
    venv/bin/python make_cases.py        # from this directory
"""
import os
import shutil

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

F, I64, I32, B = (TensorProto.FLOAT, TensorProto.INT64, TensorProto.INT32,
                  TensorProto.BOOL)
HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(16)
INT64_MAX = np.iinfo(np.int64).max
INT64_MIN = np.iinfo(np.int64).min


def const(name, array):
    return helper.make_node("Constant", [], [name], name=name + "_const",
                            value=numpy_helper.from_array(np.asarray(array)))


def model(nodes, inputs, outputs, initializers=(), opset=17, check=True):
    graph = helper.make_graph(nodes, "g", inputs, outputs,
                              [numpy_helper.from_array(np.asarray(v), k)
                               for k, v in initializers])
    m = helper.make_model(graph,
                          opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8 if opset < 19 else 9
    if check:
        onnx.checker.check_model(m)
    return m


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def case(name, m, feeds, reference=None, expected=None):
    """Writes a case: the model, its inputs and the reference outputs (of
    `reference`, a (model, feeds) pair, when given; `expected`, outputs
    computed with numpy, where onnx.reference lacks the op's mode)."""
    ref_model, ref_feeds = reference or (m, feeds)
    outputs = expected or ReferenceEvaluator(ref_model).run(None, ref_feeds)
    root = os.path.join(HERE, "cases", name)
    data = os.path.join(root, "test_data_set_0")
    os.makedirs(data)
    onnx.save(m, os.path.join(root, "model.onnx"))
    for i, graph_input in enumerate(m.graph.input):
        onnx.save_tensor(
            numpy_helper.from_array(feeds[graph_input.name], graph_input.name),
            os.path.join(data, f"input_{i}.pb"))
    for i, (graph_output, value) in enumerate(zip(m.graph.output, outputs)):
        onnx.save_tensor(
            numpy_helper.from_array(np.asarray(value), graph_output.name),
            os.path.join(data, f"output_{i}.pb"))


def floats(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def unary_case(name, op_nodes, x, elem=F, opset=17, initializers=(),
               outputs=("y",), reference=None):
    m = model(op_nodes, [vi("x", elem, list(x.shape))],
              [helper.make_empty_tensor_value_info(o) for o in outputs],
              initializers, opset, check=False)
    # Output types are filled in by shape inference.
    inferred = onnx.shape_inference.infer_shapes(m, strict_mode=True)
    types = {v.name: v for v in inferred.graph.value_info}
    for out in m.graph.output:
        out.CopyFrom(types[out.name])
    onnx.checker.check_model(m)
    case(name, m, {"x": x}, reference)


def pad_cases():
    x = floats(3, 4)
    # transformers' causal-LM loss: labels padded with -100 on the right,
    # pads computed by the TorchScript exporter's chain (a Slice with step
    # -1 over a constant), then the shift `[..., 1:]`.
    labels = rng.integers(0, 10, (2, 5)).astype(np.int64)
    for opset in (17, 20):
        nodes = [
            const("torch_pads", np.array([0, 1], np.int64)),
            const("zeros", np.zeros(2, np.int64)),
            helper.make_node("Concat", ["torch_pads", "zeros"], ["flat"],
                             axis=0),
            const("pair_shape", np.array([-1, 2], np.int64)),
            helper.make_node("Reshape", ["flat", "pair_shape"], ["pairs"]),
            const("s_start", np.array([-1], np.int64)),
            const("s_end", np.array([INT64_MIN], np.int64)),
            const("s_axes", np.array([0], np.int64)),
            const("s_step", np.array([-1], np.int64)),
            helper.make_node("Slice", ["pairs", "s_start", "s_end", "s_axes",
                                       "s_step"], ["reversed"]),
            helper.make_node("Transpose", ["reversed"], ["onnx_pads_t"],
                             perm=[1, 0]),
            const("flat_shape", np.array([-1], np.int64)),
            helper.make_node("Reshape", ["onnx_pads_t", "flat_shape"],
                             ["onnx_pads"]),
            const("ignore", np.array(-100, np.int64)),
            helper.make_node("Pad", ["x", "onnx_pads", "ignore"], ["padded"],
                             mode="constant"),
            const("sh_start", np.array([1], np.int64)),
            const("sh_end", np.array([INT64_MAX], np.int64)),
            const("sh_axes", np.array([1], np.int64)),
            helper.make_node("Slice", ["padded", "sh_start", "sh_end",
                                       "sh_axes"], ["y"]),
        ]
        unary_case(f"pad_labels_torchscript_opset{opset}", nodes, labels,
                   I64, opset)
    # Every mode, negative pads (cropping), the axes input of opset 18.
    # Negative pads crop first (onnxruntime's semantics; numpy, which the
    # reference uses, refuses them): the expected output is the reference
    # Pad of the cropped input.
    pads = np.array([1, -1, 2, 2], np.int64)
    for mode in ("constant", "reflect", "edge"):
        def pad_nodes(p):
            return [const("pads", p), const("v", np.float32(1.5)),
                    helper.make_node("Pad", ["x", "pads", "v"], ["y"],
                                     mode=mode)]
        cropped = x[:, 1:]
        reference = model(pad_nodes(np.array([1, 0, 2, 2], np.int64)),
                          [vi("x", F, list(cropped.shape))],
                          [vi("y", F, None)], check=False)
        unary_case(f"pad_{mode}", pad_nodes(pads), x,
                   reference=(reference, {"x": cropped}))
    unary_case("pad_wrap_opset20", [
        const("pads", np.array([2, 1, 1, 3], np.int64)),
        helper.make_node("Pad", ["x", "pads"], ["y"], mode="wrap")], x,
        opset=20)
    unary_case("pad_reflect_long", [
        const("pads", np.array([0, 5, 0, 6], np.int64)),
        helper.make_node("Pad", ["x", "pads"], ["y"], mode="reflect")], x)
    unary_case("pad_axes_opset18", [
        const("pads", np.array([2, 3], np.int64)),
        const("axes", np.array([-1], np.int64)),
        helper.make_node("Pad", ["x", "pads", "", "axes"], ["y"])], x,
        opset=18)
    unary_case("pad_bool", [
        const("pads", np.array([1, 0, 0, 2], np.int64)),
        const("v", np.array(True)),
        helper.make_node("Pad", ["x", "pads", "v"], ["y"])],
        rng.integers(0, 2, (3, 4)).astype(bool), B)


def slice_cases():
    x = floats(5, 6)
    for name, starts, ends, axes, steps in [
            ("slice_reverse", [-1], [INT64_MIN], [1], [-1]),
            ("slice_neg_step2", [4, 5], [0, -7], [0, 1], [-2, -3]),
            ("slice_neg_mixed", [1, 10], [4, 1], [0, 1], [1, -1]),
            ("slice_neg_empty", [0], [3], [0], [-1])]:
        unary_case(name, [
            const("starts", np.array(starts, np.int64)),
            const("ends", np.array(ends, np.int64)),
            const("axes", np.array(axes, np.int64)),
            const("steps", np.array(steps, np.int64)),
            helper.make_node("Slice", ["x", "starts", "ends", "axes", "steps"],
                             ["y"])], x)


def cumsum_cases():
    x = floats(3, 5)
    for exclusive in (0, 1):
        for reverse in (0, 1):
            unary_case(f"cumsum_float_e{exclusive}_r{reverse}", [
                const("axis", np.array(1, np.int64)),
                helper.make_node("CumSum", ["x", "axis"], ["y"],
                                 exclusive=exclusive, reverse=reverse)], x)
    unary_case("cumsum_axis0_i32", [
        const("axis", np.array(-2, np.int32)),
        helper.make_node("CumSum", ["x", "axis"], ["y"])], x)
    # OPT's positions: cumsum(attention_mask, 1) * attention_mask - 1.
    mask = np.array([[0, 0, 1, 1, 1], [1, 1, 1, 1, 1]], np.int64)
    unary_case("cumsum_opt_positions", [
        const("axis", np.array(1, np.int64)),
        helper.make_node("CumSum", ["x", "axis"], ["c"]),
        helper.make_node("Mul", ["c", "x"], ["m"]),
        const("one", np.array(1, np.int64)),
        helper.make_node("Sub", ["m", "one"], ["y"])], mask, I64)


def gather_cases():
    # The dynamo exporter's padding mask: attention_mask[batch_idx, kv_idx]
    # with constant index tuples, a bool mask gathered at run time.
    mask = np.array([[0, 1, 1, 1], [1, 1, 1, 1]]).astype(bool)
    b, s = mask.shape
    tuples = np.stack(np.broadcast_arrays(
        np.arange(b).reshape(b, 1, 1, 1), np.arange(s).reshape(1, 1, 1, s)),
        -1).astype(np.int64)
    for opset in (17, 20):
        unary_case(f"gathernd_padding_mask_opset{opset}", [
            helper.make_node("GatherND", ["x", "idx"], ["y"])], mask, B, opset,
            initializers=[("idx", tuples)])
    x = floats(2, 3, 4)
    unary_case("gathernd_batch_dims1", [
        helper.make_node("GatherND", ["x", "idx"], ["y"], batch_dims=1)], x,
        initializers=[("idx", np.array([[[2], [-1]], [[0], [1]]], np.int64))])
    unary_case("gathernd_full_tuples", [
        helper.make_node("GatherND", ["x", "idx"], ["y"])], x,
        initializers=[("idx", np.array([[1, -2, 3], [0, 0, 0]], np.int64))])
    # Indices computed at run time.
    m = model([helper.make_node("GatherND", ["x", "i"], ["y"])],
              [vi("x", F, [2, 3, 4]), vi("i", I64, [5, 2])],
              [vi("y", F, [5, 4])])
    case("gathernd_runtime_indices", m, {
        "x": x, "i": np.array([[0, 1], [1, -1], [-2, 2], [1, 0], [0, -3]],
                              np.int64)})
    # BERT without token_type_ids: the zeros buffer gathered by positions
    # (all constants: folds).
    unary_case("gather_elements_bert_token_types", [
        helper.make_node("Shape", ["x"], ["shape"]),
        const("s0", np.array([0], np.int64)),
        const("s5", np.array([5], np.int64)),
        const("s1", np.array([1], np.int64)),
        helper.make_node("Slice", ["buffer", "s0", "s5", "s1"], ["window"]),
        helper.make_node("Expand", ["window", "shape"], ["expanded"]),
        helper.make_node("GatherElements", ["expanded", "positions"], ["t"],
                         axis=1),
        helper.make_node("Add", ["x", "t"], ["y"])],
        rng.integers(0, 10, (2, 5)).astype(np.int64), I64,
        initializers=[("buffer", np.zeros((1, 8), np.int64)),
                      ("positions", np.tile(np.arange(5), (2, 1)))])
    m = model([helper.make_node("GatherElements", ["x", "i"], ["y"], axis=0)],
              [vi("x", F, [3, 4]), vi("i", I64, [2, 4])],
              [vi("y", F, [2, 4])])
    case("gather_elements_runtime", m, {
        "x": floats(3, 4),
        "i": np.array([[0, -1, 2, 0], [1, 2, -3, 2]], np.int64)})
    # Gather from an integer tensor with indices computed at run time.
    m = model([helper.make_node("Gather", ["x", "i"], ["y"], axis=1)],
              [vi("x", I64, [2, 5]), vi("i", I64, [3])], [vi("y", I64, [2, 3])])
    case("gather_int_runtime", m, {
        "x": rng.integers(-50, 50, (2, 5)).astype(np.int64),
        "i": np.array([4, -1, 0], np.int64)})


def tile_topk_isnan_cases():
    x = floats(2, 3)
    unary_case("tile_alibi", [
        const("r", np.array([3, 2], np.int64)),
        helper.make_node("Tile", ["x", "r"], ["y"])], x)
    logits = floats(6, 8)
    logits[0, 3] = logits[0, 5] = 9.0  # a tie: the lower index first
    for opset in (17, 20):
        unary_case(f"topk_router_opset{opset}", [
            const("k", np.array([2], np.int64)),
            helper.make_node("TopK", ["x", "k"], ["values", "indices"])],
            logits, opset=opset, outputs=("values", "indices"))
    unary_case("topk_smallest_axis0", [
        const("k", np.array([3], np.int64)),
        helper.make_node("TopK", ["x", "k"], ["values", "indices"], axis=0,
                         largest=0)], logits, outputs=("values", "indices"))
    # sdpa with a mask: rows that are all masked give NaN, replaced by 0.
    y = floats(2, 4)
    y[0, 1] = np.nan
    y[1, :] = np.nan
    unary_case("isnan_sdpa_where", [
        helper.make_node("IsNaN", ["x"], ["nan"]),
        const("zero", np.float32(0)),
        helper.make_node("Where", ["nan", "zero", "x"], ["y"])], y)


def save_grad_models(ops, w, opset=17):
    """grad/NAME.onnx for each op chain of `ops` (from the parameter w to
    h), with the sum of squares of h as its loss."""
    for name, nodes in ops.items():
        nodes = sorted(nodes, key=lambda n: n.op_type != "Constant") + [
            helper.make_node("Mul", ["h", "h"], ["sq"]),
            helper.make_node("ReduceSum", ["sq"], ["loss"], keepdims=0)]
        m = model(nodes, [], [vi("loss", F, [])], [("w", w)], opset)
        onnx.save(m, os.path.join(HERE, "grad", name + ".onnx"))


def grad_models():
    """Parameters through each op, into a scalar loss (sum of squares), for
    `tgc gradcheck`."""
    os.makedirs(os.path.join(HERE, "grad"))
    w = floats(4, 6)
    ops = {
        "pad_reflect": [const("pads", np.array([1, 2, 0, 3], np.int64)),
                        helper.make_node("Pad", ["w", "pads"], ["h"],
                                         mode="reflect")],
        "pad_constant": [const("pads", np.array([-1, 2, 1, 0], np.int64)),
                         const("v", np.float32(0.5)),
                         helper.make_node("Pad", ["w", "pads", "v"], ["h"])],
        "slice_reverse": [
            const("st", np.array([-1, 5], np.int64)),
            const("en", np.array([INT64_MIN, 0], np.int64)),
            const("ax", np.array([0, 1], np.int64)),
            const("sp", np.array([-1, -2], np.int64)),
            helper.make_node("Slice", ["w", "st", "en", "ax", "sp"], ["h"])],
        "cumsum": [const("axis", np.array(1, np.int64)),
                   helper.make_node("CumSum", ["w", "axis"], ["h"],
                                    exclusive=1, reverse=1)],
        "gathernd": [helper.make_node("GatherND", ["w", "idx"], ["h"]),
                     const("idx", np.array([[1, 2], [3, -1], [1, 2]],
                                           np.int64))],
        "gather_elements": [
            const("idx", np.array([[0, 3, 1, 1, 0, 2], [2, 2, -1, 0, 0, 1]],
                                  np.int64)),
            helper.make_node("GatherElements", ["w", "idx"], ["h"], axis=0)],
        "tile": [const("r", np.array([2, 3], np.int64)),
                 helper.make_node("Tile", ["w", "r"], ["h"])],
        "topk": [const("k", np.array([3], np.int64)),
                 helper.make_node("TopK", ["w", "k"], ["h", "i"], axis=1)],
    }
    save_grad_models(ops, w)


def composite_grad_models():
    """The activations and functions tg imports as compositions of its own
    ops (Elu, Selu, Celu, ThresholdedRelu, Softsign, PRelu, Tan, Sinh, Cosh,
    Asinh, Acosh, Atanh, Shrink, InstanceNormalization, DepthToSpace,
    SpaceToDepth, Conv, ConvTranspose, MaxPool, AveragePool,
    BatchNormalization in both
    modes), a parameter through each, for `tgc gradcheck`.
    Acosh and Atanh read a value in their domain (1.5 + |w|, tanh(w) / 2);
    Tan reads tanh(w), away from its poles."""
    local = np.random.default_rng(26)
    w = local.standard_normal((4, 6)).astype(np.float32)
    # Away from the kinks of the piecewise ones (0; ThresholdedRelu's 0.3).
    w[np.abs(w) < 0.05] += 0.1
    w[np.abs(w - 0.3) < 0.05] += 0.1
    w[np.abs(w + 0.3) < 0.05] += 0.1
    ops = {
        "elu": [helper.make_node("Elu", ["w"], ["h"], alpha=0.7)],
        "selu": [helper.make_node("Selu", ["w"], ["h"])],
        "celu": [helper.make_node("Celu", ["w"], ["h"], alpha=1.5)],
        "thresholdedrelu": [helper.make_node("ThresholdedRelu", ["w"], ["h"],
                                             alpha=0.3)],
        "softsign": [helper.make_node("Softsign", ["w"], ["h"])],
        "prelu": [const("slope", np.array([0.1, -0.2, 0.3, 0.5, 2.0, 0.0],
                                          np.float32)),
                  helper.make_node("PRelu", ["w", "slope"], ["h"])],
        "tan": [helper.make_node("Tanh", ["w"], ["t"]),
                helper.make_node("Tan", ["t"], ["h"])],
        "sinh": [helper.make_node("Sinh", ["w"], ["h"])],
        "cosh": [helper.make_node("Cosh", ["w"], ["h"])],
        "asinh": [helper.make_node("Asinh", ["w"], ["h"])],
        "acosh": [helper.make_node("Abs", ["w"], ["a"]),
                  const("c", np.float32(1.5)),
                  helper.make_node("Add", ["a", "c"], ["b"]),
                  helper.make_node("Acosh", ["b"], ["h"])],
        "atanh": [helper.make_node("Tanh", ["w"], ["t"]),
                  const("c", np.float32(0.5)),
                  helper.make_node("Mul", ["t", "c"], ["b"]),
                  helper.make_node("Atanh", ["b"], ["h"])],
        "shrink": [helper.make_node("Shrink", ["w"], ["h"], lambd=0.3,
                                    bias=0.1)],
        "instancenorm": [
            const("s3", np.array([2, 2, 6], np.int64)),
            helper.make_node("Reshape", ["w", "s3"], ["r"]),
            const("scale", np.array([0.5, -2.0], np.float32)),
            const("bias", np.array([0.1, 0.2], np.float32)),
            helper.make_node("InstanceNormalization", ["r", "scale", "bias"],
                             ["n"]),
            # A normalized row's sum and sum of squares are constants: a
            # ramp makes the loss depend on the row.
            const("ramp", np.arange(24, dtype=np.float32).reshape(2, 2, 6)
                  / 10),
            helper.make_node("Mul", ["n", "ramp"], ["h"])],
        "depthtospace": [
            const("s4", np.array([1, 4, 2, 3], np.int64)),
            helper.make_node("Reshape", ["w", "s4"], ["r"]),
            helper.make_node("DepthToSpace", ["r"], ["h"], blocksize=2,
                             mode="CRD")],
        "spacetodepth": [
            const("s4", np.array([1, 1, 4, 6], np.int64)),
            helper.make_node("Reshape", ["w", "s4"], ["r"]),
            helper.make_node("SpaceToDepth", ["r"], ["h"], blocksize=2)],
        # Conv through its input (grouped, dilated, padded, strided) and
        # through its weights; pooling through its input.
        "conv_input": [
            const("s4", np.array([1, 2, 3, 4], np.int64)),
            helper.make_node("Reshape", ["w", "s4"], ["r"]),
            const("k", local.standard_normal((4, 1, 2, 2)).astype(np.float32)),
            const("kb", np.array([0.1, 0.2, 0.3, 0.4], np.float32)),
            helper.make_node("Conv", ["r", "k", "kb"], ["h"], group=2,
                             dilations=[1, 2], pads=[1, 1, 0, 1],
                             strides=[2, 1])],
        "conv_weight": [
            const("s4", np.array([3, 2, 2, 2], np.int64)),
            helper.make_node("Reshape", ["w", "s4"], ["k"]),
            const("img",
                  local.standard_normal((2, 2, 4, 5)).astype(np.float32)),
            helper.make_node("Conv", ["img", "k"], ["h"], auto_pad="SAME_UPPER")],
        "convtranspose": [
            const("s4", np.array([1, 2, 3, 4], np.int64)),
            helper.make_node("Reshape", ["w", "s4"], ["r"]),
            const("k", local.standard_normal((2, 3, 2, 3)).astype(np.float32)),
            helper.make_node("ConvTranspose", ["r", "k"], ["h"],
                             strides=[2, 1], pads=[0, 1, 1, 0],
                             output_padding=[1, 0], dilations=[1, 2])],
        "maxpool": [
            const("s4", np.array([1, 2, 3, 4], np.int64)),
            helper.make_node("Reshape", ["w", "s4"], ["r"]),
            helper.make_node("MaxPool", ["r"], ["h"], kernel_shape=[2, 2],
                             pads=[1, 0, 1, 1], strides=[2, 2], ceil_mode=1)],
        "averagepool": [
            const("s4", np.array([1, 2, 3, 4], np.int64)),
            helper.make_node("Reshape", ["w", "s4"], ["r"]),
            helper.make_node("AveragePool", ["r"], ["h"], kernel_shape=[2, 3],
                             pads=[1, 1, 1, 1])],
    }
    for mode, training in (("train", 1), ("eval", 0)):
        ops["batchnorm_" + mode] = [
            const("s3", np.array([2, 3, 4], np.int64)),
            helper.make_node("Reshape", ["w", "s3"], ["r"]),
            const("scale", np.array([0.5, -2.0, 1.5], np.float32)),
            const("bias", np.array([0.1, 0.2, 0.3], np.float32)),
            const("mean", np.array([0.0, 1.0, -1.0], np.float32)),
            const("var", np.array([1.0, 2.0, 0.5], np.float32)),
            helper.make_node("BatchNormalization",
                             ["r", "scale", "bias", "mean", "var"], ["h"],
                             training_mode=training)]
    save_grad_models(ops, w)


def rounding_grad_models():
    """The inverse trigonometric functions, the roundings, Mod and
    ReduceProd (compositions of tg ops), a parameter through each, for
    `tgc gradcheck`. Asin and Acos read tanh(w) * 0.9, inside their domain;
    the roundings are multiplied by w (their own gradient is 0, so the
    check is of the value they pass on); Mod's divisor is a constant of
    mixed signs."""
    local = np.random.default_rng(27)
    w = local.standard_normal((4, 6)).astype(np.float32) * 2
    # Away from the roundings' steps and Mod's wraps.
    frac = w * 2 - np.floor(w * 2)
    w[np.abs(frac - 0.5) > 0.45] += 0.2
    inside = [helper.make_node("Tanh", ["w"], ["t"]),
              const("c", np.float32(0.9)),
              helper.make_node("Mul", ["t", "c"], ["b"])]
    ops = {
        "atan": [helper.make_node("Atan", ["w"], ["h"])],
        "asin": inside + [helper.make_node("Asin", ["b"], ["h"])],
        "acos": inside + [helper.make_node("Acos", ["b"], ["h"])],
        "mod": [const("d", np.array([0.7, -0.9, 1.3, -0.6, 0.8, 1.1],
                                    np.float32)),
                helper.make_node("Mod", ["w", "d"], ["h"], fmod=1)],
        "reduceprod": [helper.make_node("ReduceProd", ["w"], ["h"],
                                        axes=[1], keepdims=0)],
    }
    for op in ("Floor", "Ceil", "Round"):
        ops[op.lower()] = [helper.make_node(op, ["w"], ["r"]),
                           helper.make_node("Mul", ["r", "w"], ["h"])]
    # All of them in one step, for the generated project on the host
    # target (f64 and i64 conversions inside fused kernels).
    ops["rounding_mix"] = inside + [
        helper.make_node("Atan", ["w"], ["a1"]),
        helper.make_node("Asin", ["b"], ["a2"]),
        helper.make_node("Acos", ["b"], ["a3"]),
        const("d", np.array([0.7, -0.9, 1.3, -0.6, 0.8, 1.1], np.float32)),
        helper.make_node("Mod", ["w", "d"], ["a4"], fmod=1),
        helper.make_node("Round", ["w"], ["r"]),
        helper.make_node("Mul", ["r", "w"], ["a5"]),
        helper.make_node("ReduceProd", ["w"], ["a6"], axes=[1], keepdims=1),
        helper.make_node("Sum", ["a1", "a2", "a3", "a4", "a5", "a6"], ["h"])]
    save_grad_models(ops, w)


def resize_cases():
    """Resize beyond the backend data this repository's suites hold:
    antialias (linear, cubic), axes with keep_aspect_ratio_policy,
    half_pixel_symmetric (opset 19), float16 and int64 data, Resize-10
    and Upsample-9 (whose expected outputs come from the equivalent
    opset-19 Resize: asymmetric coordinates, the left neighbour upsampling
    and the right one downsampling, as onnxruntime)."""
    local = np.random.default_rng(28)
    x = local.standard_normal((1, 2, 6, 8)).astype(np.float32)

    def resize_case(name, x, attrs, scales=None, sizes=None, opset=19,
                    elem=F, reference=None, roi=()):
        inits = [("roi", np.array(roi, np.float32))]
        inputs = ["x", "roi"]
        if scales is not None:
            inits.append(("scales", np.array(scales, np.float32)))
            inputs.append("scales")
        else:
            inits.append(("sizes", np.array(sizes, np.int64)))
            inputs += ["", "sizes"]
        unary_case(name, [helper.make_node("Resize", inputs, ["y"], **attrs)],
                   x, elem=elem, opset=opset, initializers=inits,
                   reference=reference)

    resize_case("resize_linear_antialias", x,
                dict(mode="linear", antialias=1), sizes=[1, 2, 3, 5])
    resize_case("resize_cubic_antialias", x,
                dict(mode="cubic", antialias=1), scales=[1, 1, 0.6, 0.4])
    resize_case("resize_axes_not_larger", x,
                dict(mode="nearest", axes=[3, 2],
                     keep_aspect_ratio_policy="not_larger"), sizes=[5, 7])
    resize_case("resize_axes_not_smaller", x,
                dict(mode="linear", axes=[2, 3],
                     keep_aspect_ratio_policy="not_smaller"), sizes=[7, 5])
    resize_case("resize_half_pixel_symmetric", x,
                dict(mode="linear",
                     coordinate_transformation_mode="half_pixel_symmetric"),
                scales=[1, 1, 1.7, 0.7])
    resize_case("resize_cubic_float16", x.astype(np.float16),
                dict(mode="cubic", exclude_outside=1, cubic_coeff_a=-0.5),
                sizes=[1, 2, 9, 5], elem=TensorProto.FLOAT16)
    resize_case("resize_nearest_int64",
                local.integers(-100, 100, (1, 2, 6, 8)).astype(np.int64),
                dict(mode="nearest", nearest_mode="round_prefer_ceil",
                     coordinate_transformation_mode="asymmetric"),
                scales=[1, 1, 1.5, 0.6], elem=I64)
    resize_case("resize_crop_extrapolate", x,
                dict(mode="linear",
                     coordinate_transformation_mode="tf_crop_and_resize",
                     extrapolation_value=-3.5, axes=[2, 3]),
                sizes=[4, 5], roi=[0.2, -0.1, 0.9, 1.2])

    # Resize-10 and Upsample-9 against the opset-19 Resize they mean.
    for mode, scales in (("nearest", [1, 1, 2, 1.5]),
                         ("nearest", [1, 1, 0.6, 0.5]),
                         ("linear", [1, 1, 1.5, 0.6])):
        name = f"resize10_{mode}_{'up' if scales[2] > 1 else 'down'}"
        up = scales[2] > 1
        attrs = dict(mode=mode, coordinate_transformation_mode="asymmetric")
        if mode == "nearest":
            attrs["nearest_mode"] = "floor" if up else "ceil"
        inits = [("roi", np.array([], np.float32)),
                 ("scales", np.array(scales, np.float32))]
        ref = model([helper.make_node("Resize", ["x", "roi", "scales"], ["y"],
                                      **attrs)],
                    [vi("x", F, list(x.shape))],
                    [helper.make_empty_tensor_value_info("y")], inits, 19,
                    check=False)
        unary_case(name, [helper.make_node("Resize", ["x", "scales"], ["y"],
                                           mode=mode)],
                   x, opset=10, initializers=inits[1:],
                   reference=(ref, {"x": x}))
    inits = [("roi", np.array([], np.float32)),
             ("scales", np.array([1, 1, 2, 3], np.float32))]
    ref = model([helper.make_node("Resize", ["x", "roi", "scales"], ["y"],
                                  mode="linear",
                                  coordinate_transformation_mode="asymmetric")],
                [vi("x", F, list(x.shape))],
                [helper.make_empty_tensor_value_info("y")], inits, 19,
                check=False)
    unary_case("upsample9_linear",
               [helper.make_node("Upsample", ["x", "scales"], ["y"],
                                 mode="linear")],
               x, opset=9, initializers=inits[1:], reference=(ref, {"x": x}))


def resize_grad_models():
    """Resize's linear and cubic interpolation through a parameter, for
    `tgc gradcheck`."""
    w = np.random.default_rng(29).standard_normal((4, 6)).astype(np.float32)
    reshape = [const("s4", np.array([1, 1, 4, 6], np.int64)),
               helper.make_node("Reshape", ["w", "s4"], ["r"]),
               const("roi", np.array([], np.float32))]
    ops = {
        "resize_linear": reshape + [
            const("scales", np.array([1, 1, 1.5, 0.7], np.float32)),
            helper.make_node("Resize", ["r", "roi", "scales"], ["h"],
                             mode="linear")],
        "resize_cubic": reshape + [
            const("sizes", np.array([1, 1, 7, 4], np.int64)),
            helper.make_node("Resize", ["r", "roi", "", "sizes"], ["h"],
                             mode="cubic", exclude_outside=1)],
    }
    save_grad_models(ops, w)


def _np_recurrent(op, X, W, R, B, lens, h0, c0, P, acts, clip, direction,
                  linear_before_reset=0, input_forget=0):
    """A numpy RNN/GRU/LSTM following the ONNX specification, for the
    attributes ONNX's reference implementation ignores (activations, clip,
    input_forget, sequence_lens). Layout 0."""
    def act(name, x):
        if clip:
            x = np.clip(x, -clip, clip)
        return {"Tanh": np.tanh, "Sigmoid": lambda v: 1 / (1 + np.exp(-v)),
                "Relu": lambda v: np.maximum(v, 0),
                "HardSigmoid": lambda v: np.clip(0.2 * v + 0.5, 0, 1),
                "Softsign": lambda v: v / (1 + np.abs(v))}[name](x)
    S, Bn, _ = X.shape
    D, GH, _ = W.shape
    H = R.shape[2]
    per = len(acts) // D
    Y = np.zeros((S, D, Bn, H), np.float64)
    Yh = np.zeros((D, Bn, H)); Yc = np.zeros((D, Bn, H))
    for d in range(D):
        f = acts[d * per:(d + 1) * per]
        wb, rb = B[d][:GH], B[d][GH:]
        h = h0[d].astype(np.float64).copy(); c = c0[d].astype(np.float64).copy()
        steps = range(S - 1, -1, -1) if (direction == "reverse" or d == 1) \
            else range(S)
        for t in steps:
            x = X[t].astype(np.float64)
            valid = (t < lens)[:, None]
            if op == "RNN":
                hn = act(f[0], x @ W[d].T + h @ R[d].T + wb + rb); cn = c
            elif op == "LSTM":
                g = x @ W[d].T + h @ R[d].T + wb + rb
                i, o, fg, cc = np.split(g, 4, -1)
                pi, po, pf = np.split(P[d], 3)
                i = act(f[0], i + pi * c)
                fg = 1 - i if input_forget else act(f[0], fg + pf * c)
                cn = fg * c + i * act(f[1], cc)
                hn = act(f[0], o + po * cn) * np.tanh(cn) if f[2] == "Tanh" \
                    else act(f[0], o + po * cn) * act(f[2], cn)
            else:
                wz, wr, wh = np.split(W[d], 3); rz, rr, rh = np.split(R[d], 3)
                bz, br, bh, rbz, rbr, rbh = np.split(B[d], 6)
                z = act(f[0], x @ wz.T + h @ rz.T + bz + rbz)
                r = act(f[0], x @ wr.T + h @ rr.T + br + rbr)
                if linear_before_reset:
                    hh = act(f[1], x @ wh.T + r * (h @ rh.T + rbh) + bh)
                else:
                    hh = act(f[1], x @ wh.T + (r * h) @ rh.T + rbh + bh)
                hn = (1 - z) * hh + z * h; cn = c
            Y[t, d] = np.where(valid, hn, 0)
            h = np.where(valid, hn, h); c = np.where(valid, cn, c)
        Yh[d] = h; Yc[d] = c
    return Y.astype(np.float32), Yh.astype(np.float32), Yc.astype(np.float32)


def recurrent_cases():
    """RNN, GRU and LSTM in the forms the backend data lacks: both
    directions, batch-first layout, peepholes, input_forget, clip, other
    activations, linear_before_reset, sequence_lens shorter than the
    sequence. Expected outputs from ONNX's reference where it implements
    the attributes, else from _np_recurrent above."""
    local = np.random.default_rng(30)

    def rec_case(name, op, S, Bn, I, H, D, attrs, with_b=True, lens=None,
                 with_h0=True, with_p=False, own=False, layout=0):
        G = {"RNN": 1, "GRU": 3, "LSTM": 4}[op]
        X = local.standard_normal((S, Bn, I)).astype(np.float32)
        W = (local.standard_normal((D, G * H, I)) * 0.5).astype(np.float32)
        R = (local.standard_normal((D, G * H, H)) * 0.5).astype(np.float32)
        B = (local.standard_normal((D, 2 * G * H)) * 0.3).astype(np.float32)
        h0 = local.standard_normal((D, Bn, H)).astype(np.float32)
        c0 = local.standard_normal((D, Bn, H)).astype(np.float32)
        P = (local.standard_normal((D, 3 * H)) * 0.3).astype(np.float32)
        feeds = {"X": X if layout == 0 else X.transpose(1, 0, 2), "W": W,
                 "R": R}
        inputs = ["X", "W", "R"]
        types = [vi("X", F, list(feeds["X"].shape)), vi("W", F, list(W.shape)),
                 vi("R", F, list(R.shape))]

        def opt(n, v, elem=F):
            if v is None:
                inputs.append("")
                return
            inputs.append(n)
            feeds[n] = v
            types.append(vi(n, elem, list(v.shape)))
        opt("B", B if with_b else None)
        opt("sequence_lens", None if lens is None else
            np.array(lens, np.int32), TensorProto.INT32)
        h0f = h0 if layout == 0 else h0.transpose(1, 0, 2)
        opt("initial_h", h0f if with_h0 else None)
        if op == "LSTM":
            opt("initial_c", (c0 if layout == 0 else c0.transpose(1, 0, 2))
                if with_h0 else None)
            opt("P", P if with_p else None)
        while inputs[-1] == "":
            inputs.pop()
        outs = ["Y", "Y_h"] + (["Y_c"] if op == "LSTM" else [])
        node = helper.make_node(op, inputs, outs, hidden_size=H, layout=layout,
                                **attrs)
        m = model([node], types,
                  [helper.make_empty_tensor_value_info(o) for o in outs],
                  opset=14, check=False)
        inferred = onnx.shape_inference.infer_shapes(m, strict_mode=True)
        m.graph.output.clear()
        for o in outs:
            m.graph.output.append(vi(o, F, None))
        root = os.path.join(HERE, "cases", name)
        data = os.path.join(root, "test_data_set_0")
        if not own:
            case(name, m, feeds)
            return
        acts = attrs.get("activations") or {
            "RNN": ["Tanh"], "GRU": ["Sigmoid", "Tanh"],
            "LSTM": ["Sigmoid", "Tanh", "Tanh"]}[op] * D
        expected = _np_recurrent(
            op, X, W, R, B if with_b else np.zeros((D, 2 * G * H), np.float32),
            np.array(lens if lens is not None else [S] * Bn),
            h0 if with_h0 else np.zeros_like(h0),
            c0 if with_h0 else np.zeros_like(c0),
            P if with_p else np.zeros_like(P), acts, attrs.get("clip"),
            attrs.get("direction", "forward"),
            attrs.get("linear_before_reset", 0), attrs.get("input_forget", 0))
        if layout:
            expected = (expected[0].transpose(2, 0, 1, 3),
                        expected[1].transpose(1, 0, 2),
                        expected[2].transpose(1, 0, 2))
        os.makedirs(data)
        onnx.save(m, os.path.join(root, "model.onnx"))
        for i, graph_input in enumerate(m.graph.input):
            onnx.save_tensor(numpy_helper.from_array(feeds[graph_input.name],
                                                     graph_input.name),
                             os.path.join(data, f"input_{i}.pb"))
        for i, o in enumerate(outs):
            onnx.save_tensor(numpy_helper.from_array(expected[i], o),
                             os.path.join(data, f"output_{i}.pb"))

    rec_case("lstm_bidirectional_peepholes", "LSTM", 4, 3, 5, 3, 2,
             dict(direction="bidirectional"), with_p=True)
    rec_case("lstm_batchwise_reverse", "LSTM", 3, 2, 4, 5, 1,
             dict(direction="reverse"), layout=1)
    rec_case("lstm_input_forget_clip", "LSTM", 4, 2, 3, 4, 1,
             dict(input_forget=1, clip=0.8), with_p=True, own=True)
    rec_case("lstm_sequence_lens", "LSTM", 5, 3, 3, 2, 1, {},
             lens=[5, 2, 3], own=True)
    rec_case("gru_bidirectional_linear_before_reset", "GRU", 4, 2, 3, 4, 2,
             dict(direction="bidirectional", linear_before_reset=1))
    rec_case("gru_reverse_no_bias", "GRU", 3, 2, 4, 3, 1,
             dict(direction="reverse"), with_b=False, with_h0=False)
    rec_case("gru_activations_lens", "GRU", 4, 3, 3, 2, 1,
             dict(activations=["HardSigmoid", "Softsign"]), lens=[1, 4, 2],
             own=True)
    rec_case("rnn_bidirectional_relu", "RNN", 3, 2, 4, 3, 2,
             dict(direction="bidirectional", activations=["Relu", "Tanh"],
                  clip=1.5), own=True)
    rec_case("rnn_batchwise", "RNN", 4, 3, 2, 5, 1, {}, layout=1)


def recurrent_grad_models():
    """Gradients through an LSTM's weights (both directions, peepholes),
    a GRU's (linear_before_reset) and an RNN's input, for `tgc gradcheck`."""
    local = np.random.default_rng(31)
    w = (local.standard_normal((4, 6)) * 0.5).astype(np.float32)
    f32 = lambda *shape: (local.standard_normal(shape) * 0.5).astype(
        np.float32)
    ops = {
        "lstm": [const("s", np.array([2, 4, 3], np.int64)),
                 helper.make_node("Reshape", ["w", "s"], ["W"]),
                 const("X", f32(3, 2, 3)), const("R", f32(2, 4, 1)),
                 const("B", f32(2, 8)), const("P", f32(2, 3)),
                 helper.make_node("LSTM", ["X", "W", "R", "B", "", "", "",
                                           "P"], ["h"], hidden_size=1,
                                  direction="bidirectional")],
        "gru": [const("s", np.array([1, 6, 4], np.int64)),
                helper.make_node("Reshape", ["w", "s"], ["W"]),
                const("X", f32(3, 2, 4)), const("R", f32(1, 6, 2)),
                const("B", f32(1, 12)),
                helper.make_node("GRU", ["X", "W", "R", "B"], ["h"],
                                 hidden_size=2, linear_before_reset=1)],
        "rnn": [const("s", np.array([4, 2, 3], np.int64)),
                helper.make_node("Reshape", ["w", "s"], ["X"]),
                const("W", f32(1, 3, 3)), const("R", f32(1, 3, 3)),
                helper.make_node("RNN", ["X", "W", "R"], ["h"],
                                 hidden_size=3, direction="reverse")],
    }
    save_grad_models(ops, w)


def lrn_mvn_grad_models():
    """LRN and MeanVarianceNormalization through a parameter, for
    `tgc gradcheck` (MVN's output times a ramp: a normalized group's sum
    and sum of squares are constants)."""
    w = np.random.default_rng(32).standard_normal((4, 6)).astype(np.float32)
    reshape = [const("s4", np.array([1, 4, 2, 3], np.int64)),
               helper.make_node("Reshape", ["w", "s4"], ["r"])]
    ops = {
        "lrn": reshape + [helper.make_node("LRN", ["r"], ["h"], size=3,
                                           alpha=0.5, beta=0.6, bias=1.5)],
        "mvn": reshape + [
            helper.make_node("MeanVarianceNormalization", ["r"], ["n"]),
            const("ramp", np.arange(24, dtype=np.float32).reshape(1, 4, 2, 3)
                  / 10),
            helper.make_node("Mul", ["n", "ramp"], ["h"])],
    }
    save_grad_models(ops, w)


def dropout_grad_models():
    """A training-mode Dropout (its mask output used too), for
    `tgc gradcheck` and the generated project: the masks come from the
    step's dropout_seed."""
    w = np.random.default_rng(33).standard_normal((4, 6)).astype(np.float32)
    ops = {
        "dropout_train": [
            const("ratio", np.float32(0.25)), const("mode", np.bool_(True)),
            helper.make_node("Dropout", ["w", "ratio", "mode"], ["d", "m"]),
            helper.make_node("Cast", ["m"], ["mf"], to=F),
            helper.make_node("Add", ["d", "mf"], ["h"])],
    }
    save_grad_models(ops, w)


def scatter_grad_models():
    """ScatterND and ScatterElements through their data and updates, at
    indices known at import (gathers) and computed at run time (ArgMax of
    the parameter: a scatter-add whose gradient is a gather), for
    `tgc gradcheck`."""
    w = np.random.default_rng(34).standard_normal((4, 6)).astype(np.float32)
    ops = {
        "scatternd": [
            const("st", np.array([0], np.int64)),
            const("en", np.array([2], np.int64)),
            helper.make_node("Slice", ["w", "st", "en"], ["top"]),
            const("three", np.float32(3.0)),
            helper.make_node("Mul", ["top", "three"], ["upd"]),
            const("idx", np.array([[3], [1]], np.int64)),
            helper.make_node("ScatterND", ["w", "idx", "upd"], ["h"])],
        "scatter_elements_runtime": [
            helper.make_node("ArgMax", ["w"], ["idx"], axis=1, keepdims=1),
            const("ax", np.array([1], np.int64)),
            helper.make_node("ReduceSum", ["w", "ax"], ["upd"], keepdims=1),
            helper.make_node("ScatterElements", ["w", "idx", "upd"], ["h"],
                             axis=1)],
        "scatternd_add_runtime": [
            helper.make_node("ArgMax", ["w"], ["am"], axis=0, keepdims=0),
            const("s2", np.array([6, 1], np.int64)),
            helper.make_node("Reshape", ["am", "s2"], ["idx"]),
            helper.make_node("Transpose", ["w"], ["wt"]),
            helper.make_node("MatMul", ["wt", "w"], ["upd"]),
            helper.make_node("ScatterND", ["w", "idx", "upd"], ["h"],
                             reduction="add")],
    }
    save_grad_models(ops, w)


def gridsample_cases():
    """GridSample beyond the backend data: opset 20's names, a 3-D volume,
    cubic sampling with reflection and border padding, nearest with
    align_corners, coordinates far outside the input."""
    local = np.random.default_rng(35)

    def gs_model(attrs, opset, shapes):
        m = model([helper.make_node("GridSample", ["x", "grid"], ["y"],
                                    **attrs)],
                  [vi("x", F, shapes[0]), vi("grid", F, shapes[1])],
                  [helper.make_empty_tensor_value_info("y")], opset=opset,
                  check=False)
        inferred = onnx.shape_inference.infer_shapes(m, strict_mode=True)
        m.graph.output[0].CopyFrom(inferred.graph.output[0])
        return m

    def gs_case(name, x, grid, attrs, opset=20):
        shapes = [list(x.shape), list(grid.shape)]
        feeds = {"x": x, "grid": grid}
        # The reference knows opset 20's mode names only.
        renamed = dict(attrs, mode={"bilinear": "linear", "bicubic": "cubic"}
                       .get(attrs["mode"], attrs["mode"]))
        case(name, gs_model(attrs, opset, shapes), feeds,
             reference=(gs_model(renamed, 20, shapes), feeds))

    x2 = local.standard_normal((2, 3, 5, 6)).astype(np.float32)
    grid2 = local.uniform(-1.6, 1.6, (2, 4, 7, 2)).astype(np.float32)
    gs_case("gridsample_cubic_reflection", x2, grid2,
            dict(mode="cubic", padding_mode="reflection"))
    gs_case("gridsample_cubic_border_aligned", x2, grid2,
            dict(mode="cubic", padding_mode="border", align_corners=1))
    gs_case("gridsample_nearest_aligned_reflection", x2,
            local.uniform(-3.5, 3.5, (2, 4, 7, 2)).astype(np.float32),
            dict(mode="nearest", padding_mode="reflection", align_corners=1))
    gs_case("gridsample_linear_3d", local.standard_normal(
                (1, 2, 3, 4, 5)).astype(np.float32),
            local.uniform(-1.2, 1.2, (1, 2, 3, 4, 3)).astype(np.float32),
            dict(mode="linear", padding_mode="zeros"))
    gs_case("gridsample_bilinear_opset16", x2, grid2,
            dict(mode="bilinear", padding_mode="border"), opset=16)


def gridsample_grad_models():
    """GridSample through its data (cubic, reflection) and through its
    grid (bilinear, zeros), for `tgc gradcheck`."""
    local = np.random.default_rng(36)
    w = local.standard_normal((4, 6)).astype(np.float32)
    ops = {
        "gridsample_data": [
            const("s4", np.array([1, 1, 4, 6], np.int64)),
            helper.make_node("Reshape", ["w", "s4"], ["r"]),
            const("grid", local.uniform(-1.3, 1.3, (1, 3, 5, 2)).astype(
                np.float32)),
            helper.make_node("GridSample", ["r", "grid"], ["h"],
                             mode="bicubic", padding_mode="reflection")],
        "gridsample_grid": [
            const("s4", np.array([1, 3, 4, 2], np.int64)),
            helper.make_node("Reshape", ["w", "s4"], ["r"]),
            const("c", np.float32(0.4)),
            helper.make_node("Mul", ["r", "c"], ["grid"]),
            const("img", local.standard_normal((1, 2, 5, 6)).astype(
                np.float32)),
            helper.make_node("GridSample", ["img", "grid"], ["h"])],
    }
    save_grad_models(ops, w)


def einsum_diagonal_cases():
    """Einsum with a label repeated within one operand (a diagonal, a
    trace), against ONNX's reference."""
    local = np.random.default_rng(37)
    for name, equation, shapes in (
            ("einsum_trace", "ii->", [(4, 4)]),
            ("einsum_trace_implicit", "ii", [(3, 3)]),
            ("einsum_batch_diagonal_named", "bii->bi", [(2, 3, 3)]),
            ("einsum_diagonal_3", "iji->ij", [(3, 2, 3)]),
            ("einsum_diagonal_product", "ii,ij->j", [(3, 3), (3, 4)]),
            ("einsum_cube_diagonal", "kkk->k", [(2, 2, 2)])):
        inputs = {f"x{i}": local.standard_normal(s).astype(np.float32)
                  for i, s in enumerate(shapes)}
        m = model([helper.make_node("Einsum", list(inputs), ["y"],
                                    equation=equation)],
                  [vi(k, F, list(v.shape)) for k, v in inputs.items()],
                  [helper.make_empty_tensor_value_info("y")], opset=17,
                  check=False)
        inferred = onnx.shape_inference.infer_shapes(m, strict_mode=True)
        m.graph.output[0].CopyFrom(inferred.graph.output[0])
        case(name, m, inputs)
    w = local.standard_normal((4, 6)).astype(np.float32)
    save_grad_models({"einsum_diagonal": [
        const("s3", np.array([2, 2, 6], np.int64)),
        helper.make_node("Reshape", ["w", "s3"], ["r"]),
        helper.make_node("Einsum", ["r"], ["h"], equation="iij->ij")],
        # ReverseSequence (batch first) through its input.
        "reversesequence": [
        const("s3", np.array([2, 3, 4], np.int64)),
        helper.make_node("Reshape", ["w", "s3"], ["r"]),
        const("lens", np.array([3, 1], np.int64)),
        helper.make_node("ReverseSequence", ["r", "lens"], ["h"],
                         batch_axis=0, time_axis=1)],
        # MaxPool's Indices into MaxUnpool (SegNet's unpooling).
        "maxunpool": [
        const("s4", np.array([1, 2, 3, 4], np.int64)),
        helper.make_node("Reshape", ["w", "s4"], ["r"]),
        helper.make_node("MaxPool", ["r"], ["p", "i"], kernel_shape=[2, 2],
                         strides=[1, 2]),
        helper.make_node("MaxUnpool", ["p", "i"], ["h"], kernel_shape=[2, 2],
                         strides=[1, 2])]}, w)


def training_domain_cases():
    """ai.onnx.preview.training's Adam (two tensors, bias correction at
    t > 0, epsilon left at its default), Adagrad and Nesterov Momentum,
    against ONNX's reference."""
    local = np.random.default_rng(38)
    domain = "ai.onnx.preview.training"

    def training_case(name, op, groups, attrs, t):
        shapes = [(3,), (2, 2)]
        feeds = {"R": np.array(0.1, np.float32), "T": np.array(t, np.int64)}
        names = ["R", "T"]
        for group in groups:
            for i, shape in enumerate(shapes):
                value = local.standard_normal(shape).astype(np.float32)
                if group == "H":
                    value = np.abs(value)
                feeds[f"{group}{i}"] = value
                names.append(f"{group}{i}")
        outs = [f"{group}{i}_new" for group in ["X"] + groups[2:]
                for i in range(len(shapes))]
        graph = helper.make_graph(
            [helper.make_node(op, names, outs, domain=domain, **attrs)], "g",
            [vi(k, TensorProto.INT64 if k == "T" else F, list(v.shape))
             for k, v in feeds.items()],
            [helper.make_empty_tensor_value_info(o) for o in outs])
        m = helper.make_model(graph, opset_imports=[
            helper.make_opsetid(domain, 1)])
        m.ir_version = 8
        outputs = ReferenceEvaluator(m).run(None, feeds)
        for o, value in zip(m.graph.output, outputs):
            o.CopyFrom(vi(o.name, F, list(value.shape)))
        case(name, m, feeds)

    training_case("training_adam", "Adam", ["X", "G", "V", "H"],
                  dict(alpha=0.9, beta=0.99, norm_coefficient=0.01,
                       norm_coefficient_post=0.02), 3)
    training_case("training_adagrad", "Adagrad", ["X", "G", "H"],
                  dict(decay_factor=0.1, epsilon=1e-4, norm_coefficient=0.05),
                  2)
    training_case("training_nesterov_first_step", "Momentum", ["X", "G", "V"],
                  dict(alpha=0.9, beta=0.5, mode="nesterov",
                       norm_coefficient=0.01), 0)


def sequence_cases():
    """Sequences edited at import: SequenceConstruct, SequenceInsert (at a
    position and at the end), SequenceErase (at a negative position and
    the last), SequenceLength, ConcatFromSequence (axis, new_axis)."""
    local = np.random.default_rng(39)
    feeds = {n: local.standard_normal((2, 3)).astype(np.float32)
             for n in ("a", "b", "c")}
    nodes = [
        helper.make_node("SequenceConstruct", ["a", "b"], ["s1"]),
        const("p0", np.array(0, np.int64)),
        helper.make_node("SequenceInsert", ["s1", "c", "p0"], ["s2"]),
        helper.make_node("SequenceInsert", ["s2", "a"], ["s3"]),
        const("pm", np.array(-3, np.int64)),
        helper.make_node("SequenceErase", ["s3", "pm"], ["s4"]),
        helper.make_node("SequenceLength", ["s4"], ["n"]),
        helper.make_node("ConcatFromSequence", ["s4"], ["stacked"], axis=-1,
                         new_axis=1),
        helper.make_node("SequenceErase", ["s4"], ["s5"]),
        helper.make_node("ConcatFromSequence", ["s5"], ["joined"], axis=1)]
    m = model(nodes, [vi(k, F, [2, 3]) for k in feeds],
              [vi("n", I64, []), vi("stacked", F, [2, 3, 3]),
               vi("joined", F, [2, 6])], opset=17)
    case("sequence_edit", m, feeds)


def large_constant_cases():
    """A ConstantOfShape past the import's fold limit (2^24 elements), as
    the ONNX model zoo's "light" models hold their weights: it is computed
    at run time, not refused."""
    local = np.random.default_rng(40)
    feeds = {"x": local.standard_normal((2, 4100)).astype(np.float32)}
    nodes = [
        const("shape", np.array([4100, 4097], np.int64)),
        helper.make_node("ConstantOfShape", ["shape"], ["w"],
                         value=numpy_helper.from_array(
                             np.array([0.25], np.float32))),
        helper.make_node("MatMul", ["x", "w"], ["y"])]
    m = model(nodes, [vi("x", F, [2, 4100])], [vi("y", F, [2, 4097])])
    case("constantofshape_past_fold_limit", m, feeds)


def if_cases():
    """If: a condition known only at run time runs both branches and
    selects (nested, with a branch initializer, reading the outer graph's
    parameter), for both values of the condition; a constant condition
    picks its branch, whose shapes the other branch need not share."""
    local = np.random.default_rng(41)
    w = local.standard_normal((3, 4)).astype(np.float32)
    x = local.standard_normal((2, 3)).astype(np.float32)

    def branch(name, nodes, outputs, inits=()):
        return helper.make_graph(
            nodes, name, [], outputs,
            [numpy_helper.from_array(np.asarray(v), k) for k, v in inits])

    inner = helper.make_node(
        "If", ["c"], ["inner"],
        then_branch=branch("inner_then", [
            helper.make_node("Tanh", ["xw"], ["t"])], [vi("t", F, [2, 4])]),
        else_branch=branch("inner_else", [
            helper.make_node("Sigmoid", ["xw"], ["s"])], [vi("s", F, [2, 4])]))
    outer = helper.make_node(
        "If", ["c"], ["y", "z"],
        then_branch=branch("then", [
            helper.make_node("Relu", ["xw"], ["r"]),
            helper.make_node("Add", ["r", "bias"], ["a"]),
            helper.make_node("Neg", ["xw"], ["n"])],
            [vi("a", F, [2, 4]), vi("n", F, [2, 4])],
            [("bias", local.standard_normal(4).astype(np.float32))]),
        else_branch=branch("else", [
            inner,
            helper.make_node("Mul", ["xw", "xw"], ["m"])],
            [vi("inner", F, [2, 4]), vi("m", F, [2, 4])]))
    m = model([helper.make_node("MatMul", ["x", "w"], ["xw"]), outer],
              [vi("c", B, []), vi("x", F, [2, 3])],
              [vi("y", F, [2, 4]), vi("z", F, [2, 4])], [("w", w)])
    for value in (True, False):
        case(f"if_runtime_condition_{str(value).lower()}", m,
             {"c": np.array(value), "x": x})

    # Sequences out of the branches (selected tensor by tensor), read by
    # ConcatFromSequence.
    two = helper.make_node("Constant", [], ["two"],
                           value=numpy_helper.from_array(np.float32(2)))
    m = model([helper.make_node(
        "If", ["c"], ["s"],
        then_branch=branch("then", [
            two, helper.make_node("Mul", ["x", "two"], ["x2"]),
            helper.make_node("SequenceConstruct", ["x", "x2"], ["ts"])],
            [helper.make_tensor_sequence_value_info("ts", F, [2, 3])]),
        else_branch=branch("else", [
            helper.make_node("Neg", ["x"], ["n"]),
            helper.make_node("SequenceConstruct", ["n", "x"], ["es"])],
            [helper.make_tensor_sequence_value_info("es", F, [2, 3])])),
        helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=0)],
        [vi("c", B, []), vi("x", F, [2, 3])], [vi("y", F, [4, 3])])
    for value in (True, False):
        case(f"if_sequence_outputs_{str(value).lower()}", m,
             {"c": np.array(value), "x": x})

    # A constant condition: the branches' shapes differ.
    m = model([const("k", np.array([True])),
               const("shape", np.array([3, 2], np.int64)),
               helper.make_node(
                   "If", ["k"], ["y"],
                   then_branch=branch("then", [
                       helper.make_node("Reshape", ["x", "shape"], ["r"])],
                       [vi("r", F, [3, 2])]),
                   else_branch=branch("else", [
                       helper.make_node("Identity", ["x"], ["i"])],
                       [vi("i", F, [2, 3])]))],
              [vi("x", F, [2, 3])], [vi("y", F, None)], check=False)
    case("if_constant_condition", m, {"x": x})

    # The gradient through both branches of a condition the parameter
    # itself decides.
    w2 = local.standard_normal((4, 6)).astype(np.float32)
    nodes = [helper.make_node("ReduceSum", ["w"], ["total"], keepdims=0),
             const("zero", np.float32(0)),
             helper.make_node("Greater", ["total", "zero"], ["positive"]),
             const("three", np.float32(3)),
             helper.make_node(
                 "If", ["positive"], ["h"],
                 then_branch=branch("then", [
                     helper.make_node("Mul", ["w", "w"], ["sq"])],
                     [vi("sq", F, [4, 6])]),
                 else_branch=branch("else", [
                     helper.make_node("Mul", ["w", "three"], ["t"])],
                     [vi("t", F, [4, 6])]))]
    save_grad_models({"if_select": nodes}, w2)

    # Optimum's merged decoders: a graph input picks the branch, and the
    # branches' shapes differ, so it must be given at import.
    m = model([helper.make_node(
        "If", ["use_cache_branch"], ["y"],
        then_branch=branch("then", [
            helper.make_node("Concat", ["x", "x"], ["cat"], axis=1)],
            [vi("cat", F, [2, 6])]),
        else_branch=branch("else", [
            helper.make_node("Identity", ["x"], ["i"])],
            [vi("i", F, [2, 3])]))],
        [vi("use_cache_branch", B, [1]), vi("x", F, [2, 3])],
        [vi("y", F, None)], check=False)
    onnx.save(m, os.path.join(HERE, "errors", "if-merged-decoder.onnx"))
    onnx.save_tensor(numpy_helper.from_array(np.array([False])),
                     os.path.join(HERE, "errors", "use-cache-false.pb"))

    # Branches nested past the importer's bound (16).
    body = [helper.make_node("Identity", ["x"], ["y0"])]
    for depth in range(1, 18):
        node = helper.make_node(
            "If", ["c"], [f"y{depth}"],
            then_branch=branch(f"t{depth}", body,
                               [vi(f"y{depth - 1}", F, [2, 3])]),
            else_branch=branch(f"e{depth}", [
                helper.make_node("Identity", ["x"], [f"e{depth}"])],
                [vi(f"e{depth}", F, [2, 3])]))
        body = [node]
    m = model(body, [vi("c", B, []), vi("x", F, [2, 3])],
              [vi("y17", F, [2, 3])], check=False)
    onnx.save(m, os.path.join(HERE, "errors", "if-nested-too-deep.onnx"))


def batchnorm_mixed_types_cases():
    """BatchNormalization-15 with a half-precision X and f32 scale, bias,
    mean and variance (its T, T1, T2): computed in f32, Y rounded to f16."""
    local = np.random.default_rng(42)
    feeds = {"x": local.standard_normal((2, 3, 4)).astype(np.float16)}
    m = model([helper.make_node("BatchNormalization",
                                ["x", "s", "b", "m", "v"], ["y"])],
              [vi("x", TensorProto.FLOAT16, [2, 3, 4])],
              [vi("y", TensorProto.FLOAT16, [2, 3, 4])],
              [("s", local.uniform(0.5, 2, 3).astype(np.float32)),
               ("b", local.standard_normal(3).astype(np.float32)),
               ("m", local.standard_normal(3).astype(np.float32)),
               ("v", local.uniform(0.5, 2, 3).astype(np.float32))],
              opset=15)
    case("batchnorm_f16_with_f32_statistics", m, feeds)


def loop_cases():
    """Loop, unrolled at import: loop-carried values and scan outputs
    (stacked on a new first dimension) over a constant trip count; a loop
    whose condition output stops it early (known at import: it depends on
    the iteration number only) with no trip count; a condition computed
    from the data (masked iterations up to the trip count), stopping early,
    late and never; the gradient through an unrolled recurrence; the errors
    of a data-dependent condition without a trip count and of a trip count
    past the unrolling limit."""
    local = np.random.default_rng(43)
    w = local.standard_normal((3, 3)).astype(np.float32)
    x = local.standard_normal((2, 3)).astype(np.float32)

    def body(nodes, inputs, outputs):
        return helper.make_graph(nodes, "body", inputs, outputs)

    I1 = TensorProto.BOOL
    # h <- tanh(h @ w + i), the scan output each h; 4 iterations.
    recurrence = body([
        helper.make_node("Identity", ["cond_in"], ["cond_out"]),
        helper.make_node("MatMul", ["h_in", "w"], ["hw"]),
        helper.make_node("Cast", ["i"], ["fi"], to=F),
        helper.make_node("Add", ["hw", "fi"], ["pre"]),
        helper.make_node("Tanh", ["pre"], ["h_out"]),
        const("axis1", np.array([1], np.int64)),
        helper.make_node("ReduceSum", ["h_out", "axis1"], ["scan"],
                         keepdims=0)],
        [vi("i", I64, []), vi("cond_in", I1, []), vi("h_in", F, [2, 3])],
        [vi("cond_out", I1, []), vi("h_out", F, [2, 3]),
         vi("scan", F, [2])])
    # (onnx.reference runs no iteration without a cond input, and stacks
    # scan outputs with np.vstack: given a cond, and scanned vectors, it
    # agrees with the specification.)
    m = model([const("M", np.array(4, np.int64)),
               const("go", np.array(True)),
               helper.make_node("Loop", ["M", "go", "x"], ["h", "hs"],
                                body=recurrence)],
              [vi("x", F, [2, 3])],
              [vi("h", F, [2, 3]), vi("hs", F, [4, 2])], [("w", w)])
    case("loop_carried_and_scan", m, {"x": x})

    # No trip count: the body's condition (i < 2) stops it after 3.
    counting = body([
        const("two", np.array(2, np.int64)),
        helper.make_node("Less", ["i", "two"], ["cond_out"]),
        helper.make_node("Add", ["s_in", "x"], ["s_out"])],
        [vi("i", I64, []), vi("cond_in", I1, []), vi("s_in", F, [2, 3])],
        [vi("cond_out", I1, []), vi("s_out", F, [2, 3])])
    m = model([const("go", np.array(True)),
               helper.make_node("Loop", ["", "go", "x"], ["s"],
                                body=counting)],
              [vi("x", F, [2, 3])], [vi("s", F, [2, 3])])
    case("loop_condition_stops", m, {"x": x})

    # The gradient through the unrolled recurrence, from the parameter w.
    nodes = [const("M", np.array(3, np.int64)),
             const("h0", np.ones((2, 3), np.float32)),
             helper.make_node("Loop", ["M", "", "h0"], ["hT", "hs"],
                              body=recurrence),
             helper.make_node("ReduceSum", ["hs"], ["total"], keepdims=0),
             helper.make_node("Mul", ["hT", "total"], ["h"])]
    save_grad_models({"loop_recurrence": nodes},
                     local.standard_normal((3, 3)).astype(np.float32))

    # A condition computed from the data (a break): the iterations after
    # the first are masked, each carried value kept where the loop stopped.
    data_cond = body([
        helper.make_node("ReduceSum", ["s_in"], ["t"], keepdims=0),
        const("ten", np.array(10, np.float32)),
        helper.make_node("Less", ["t", "ten"], ["cond_out"]),
        helper.make_node("Add", ["s_in", "x"], ["s_out"])],
        [vi("i", I64, []), vi("cond_in", I1, []), vi("s_in", F, [2, 3])],
        [vi("cond_out", I1, []), vi("s_out", F, [2, 3])])
    m = model([const("M", np.array(6, np.int64)),
               const("go", np.array(True)),
               helper.make_node("Loop", ["M", "go", "x"], ["s"],
                                body=data_cond)],
              [vi("x", F, [2, 3])], [vi("s", F, [2, 3])])
    for name, shift in [("early", 1.0), ("late", 0.2), ("never", -5.0)]:
        case(f"loop_data_condition_{name}", m,
             {"x": np.full((2, 3), shift, np.float32) +
              0.1 * local.standard_normal((2, 3)).astype(np.float32)})

    # The gradient through the masked iterations (w stops the loop after
    # a few; the selects pass the gradient of the iterations that ran).
    save_grad_models({"loop_masked": [
        helper.make_node("Identity", ["w"], ["x"]),
        const("M", np.array(6, np.int64)),
        const("go", np.array(True)),
        helper.make_node("Loop", ["M", "go", "x"], ["h"], body=data_cond)]},
        np.full((2, 3), 0.5, np.float32) +
        0.1 * local.standard_normal((2, 3)).astype(np.float32))

    # Errors: a condition computed from data with no trip count to unroll
    # to, and a trip count too large.
    m = model([const("go", np.array(True)),
               helper.make_node("Loop", ["", "go", "x"], ["s"],
                                body=data_cond)],
              [vi("x", F, [2, 3])], [vi("s", F, [2, 3])])
    onnx.save(m, os.path.join(HERE, "errors", "loop-data-condition.onnx"))
    # Loops of 4096 iterations nested three deep: 2^36 body imports, cut
    # at the import's bound on unrolled nodes.
    inner = counting
    for depth in range(3):
        d = str(depth)
        inner = body([
            const("n" + d, np.array(4096, np.int64)),
            helper.make_node("Loop", ["n" + d, "c" + d, "s" + d], ["t" + d],
                             body=inner),
            helper.make_node("Identity", ["c" + d], ["k" + d])],
            [vi("i" + d, I64, []), vi("c" + d, I1, []),
             vi("s" + d, F, [2, 3])],
            [vi("k" + d, I1, []), vi("t" + d, F, [2, 3])])
    m = model([const("M", np.array(4096, np.int64)),
               const("go", np.array(True)),
               helper.make_node("Loop", ["M", "go", "x"], ["s"], body=inner)],
              [vi("x", F, [2, 3])], [vi("s", F, [2, 3])], check=False)
    onnx.save(m, os.path.join(HERE, "errors", "loop-nested.onnx"))
    m = model([const("M", np.array(1000000, np.int64)),
               helper.make_node("Loop", ["M", "", "x"], ["s"],
                                body=counting)],
              [vi("x", F, [2, 3])], [vi("s", F, [2, 3])])
    onnx.save(m, os.path.join(HERE, "errors", "loop-trip-count.onnx"))


def scan_cases():
    """Scan, unrolled over its scan inputs' length: a running sum (a state)
    over rows, its partial sums as a scan output; the same over columns
    with the input read backwards and the output stacked backwards on
    axis 1; and a recurrence through a parameter for gradcheck."""
    local = np.random.default_rng(44)
    I1 = TensorProto.BOOL
    x = local.standard_normal((4, 3)).astype(np.float32)

    def body(nodes, inputs, outputs):
        return helper.make_graph(nodes, "body", inputs, outputs)

    running = body([
        helper.make_node("Add", ["sum_in", "next"], ["sum_out"]),
        helper.make_node("Identity", ["sum_out"], ["scan_out"])],
        [vi("sum_in", F, [3]), vi("next", F, [3])],
        [vi("sum_out", F, [3]), vi("scan_out", F, [3])])
    m = model([helper.make_node("Scan", ["init", "x"], ["total", "partial"],
                                num_scan_inputs=1, body=running)],
              [vi("init", F, [3]), vi("x", F, [4, 3])],
              [vi("total", F, [3]), vi("partial", F, [4, 3])])
    case("scan_running_sum", m,
         {"init": np.zeros(3, np.float32), "x": x})

    columns = body([
        helper.make_node("Add", ["sum_in", "next"], ["sum_out"]),
        helper.make_node("Mul", ["sum_out", "sum_out"], ["scan_out"])],
        [vi("sum_in", F, [4]), vi("next", F, [4])],
        [vi("sum_out", F, [4]), vi("scan_out", F, [4])])
    m = model([helper.make_node("Scan", ["init", "x"], ["total", "partial"],
                                num_scan_inputs=1, body=columns,
                                scan_input_axes=[1],
                                scan_input_directions=[1],
                                scan_output_axes=[-1],
                                scan_output_directions=[1])],
              [vi("init", F, [4]), vi("x", F, [4, 3])],
              [vi("total", F, [4]), vi("partial", F, [4, 3])])
    init = local.standard_normal(4).astype(np.float32)
    # onnx.reference has no reverse directions: the specification's
    # meaning in numpy (column 2 first; the first iteration's value last).
    total, partial = init.copy(), []
    for column in (2, 1, 0):
        total = total + x[:, column]
        partial.append(total * total)
    case("scan_reverse_axes", m, {"init": init, "x": x},
         expected=[total, np.stack(partial[::-1], axis=1)])

    recurrence = body([
        helper.make_node("MatMul", ["h_in", "w"], ["hw"]),
        helper.make_node("Add", ["hw", "step"], ["pre"]),
        helper.make_node("Tanh", ["pre"], ["h_out"]),
        helper.make_node("Identity", ["h_out"], ["scan_out"])],
        [vi("h_in", F, [2, 3]), vi("step", F, [2, 3])],
        [vi("h_out", F, [2, 3]), vi("scan_out", F, [2, 3])])
    # Two scan inputs of different lengths.
    pair = body([
        helper.make_node("Add", ["a", "b"], ["c"]),
        helper.make_node("Add", ["sum_in", "c"], ["sum_out"])],
        [vi("sum_in", F, [3]), vi("a", F, [3]), vi("b", F, [3])],
        [vi("sum_out", F, [3])])
    m = model([helper.make_node("Scan", ["init", "x", "y"], ["total"],
                                num_scan_inputs=2, body=pair)],
              [vi("init", F, [3]), vi("x", F, [4, 3]), vi("y", F, [3, 3])],
              [vi("total", F, [3])], check=False)
    onnx.save(m, os.path.join(HERE, "errors", "scan-lengths.onnx"))

    save_grad_models({"scan_recurrence": [
        const("h0", np.zeros((2, 3), np.float32)),
        const("xs", local.standard_normal((5, 2, 3)).astype(np.float32)),
        helper.make_node("Scan", ["h0", "xs"], ["hT", "hs"],
                         num_scan_inputs=1, body=recurrence),
        helper.make_node("ReduceSum", ["hs"], ["total"], keepdims=0),
        helper.make_node("Mul", ["hT", "total"], ["h"])]},
        local.standard_normal((3, 3)).astype(np.float32))


def control_flow_error_models():
    """errors/: what If, Loop and Scan refuse beyond the cases above: a
    branch updating running statistics under a run-time condition (both
    updates would happen), scan outputs of a Loop that runs no iteration,
    and a scan direction other than 0 or 1."""
    def save(name, nodes, inputs, outputs):
        m = model(nodes, inputs, outputs, check=False)
        onnx.save(m, os.path.join(HERE, "errors", name + ".onnx"))

    def graph(nodes, inputs, outputs, inits=()):
        return helper.make_graph(
            nodes, "body", inputs, outputs,
            [numpy_helper.from_array(np.asarray(v), k) for k, v in inits])

    I1 = TensorProto.BOOL
    stats = [("s", np.ones(3, np.float32)), ("b", np.zeros(3, np.float32))]
    bn = graph([helper.make_node(
        "BatchNormalization", ["x", "s", "b", "m", "v"], ["y", "m2", "v2"],
        training_mode=1)], [], [vi("y", F, [2, 3, 4])], stats)
    plain = graph([helper.make_node("Identity", ["x"], ["z"])], [],
                  [vi("z", F, [2, 3, 4])])
    m = model([helper.make_node("If", ["c"], ["out"], then_branch=bn,
                                else_branch=plain)],
              [vi("c", B, []), vi("x", F, [2, 3, 4])],
              [vi("out", F, [2, 3, 4])],
              [("m", np.zeros(3, np.float32)), ("v", np.ones(3, np.float32))],
              check=False)
    onnx.save(m, os.path.join(HERE, "errors", "if-runtime-batchnorm.onnx"))
    np.save(os.path.join(HERE, "errors", "condition-true.npy"), np.array(True))

    body = graph([helper.make_node("Identity", ["c_in"], ["c_out"]),
                  helper.make_node("Identity", ["x"], ["scan"])],
                 [vi("i", I64, []), vi("c_in", I1, [])],
                 [vi("c_out", I1, []), vi("scan", F, [2, 3])])
    save("loop-no-iteration-scan",
         [const("M", np.array(0, np.int64)),
          helper.make_node("Loop", ["M", ""], ["scans"], body=body)],
         [vi("x", F, [2, 3])], [vi("scans", F, None)])

    running = graph([helper.make_node("Add", ["s_in", "row"], ["s_out"])],
                    [vi("s_in", F, [3]), vi("row", F, [3])],
                    [vi("s_out", F, [3])])
    save("scan-direction",
         [helper.make_node("Scan", ["init", "x"], ["total"],
                           num_scan_inputs=1, body=running,
                           scan_input_directions=[2])],
         [vi("init", F, [3]), vi("x", F, [4, 3])], [vi("total", F, [3])])


def error_models():
    """errors/NAME.onnx: models each new converter refuses, with the
    message onnx-ops-errors.test checks."""
    os.makedirs(os.path.join(HERE, "errors"), exist_ok=True)
    save = save_error_model

    x4 = [vi("x", F, [1, 2, 3, 4])]
    save("mod-float-no-fmod", [helper.make_node("Mod", ["x", "x"], ["y"])],
         x4, ["y"])
    # Reflect padding lists each padded position's source at import.
    save("pad-long-reflect",
         [helper.make_node("Pad", ["x", "p"], ["y"], mode="reflect")], x4,
         ["y"], [("p", np.array([0, 0, 0, 0, 0, 0, 0, 20000000], np.int64))])
    save("resize-scales-and-sizes",
         [helper.make_node("Resize", ["x", "", "s", "z"], ["y"])], x4, ["y"],
         [("s", np.ones(4, np.float32)), ("z", np.ones(4, np.int64))])
    save("resize-antialias-nearest",
         [helper.make_node("Resize", ["x", "", "s"], ["y"], antialias=1)],
         x4, ["y"], [("s", np.ones(4, np.float32))])
    save("lrn-window-too-wide",
         [helper.make_node("LRN", ["x"], ["y"], size=7)], x4, ["y"])
    save("mvn-default-axes-rank3",
         [helper.make_node("MeanVarianceNormalization", ["x"], ["y"])],
         [vi("x", F, [2, 3, 4])], ["y"])
    save("scatter-mul-many-writes",
         [helper.make_node("ScatterElements", ["x", "i", "u"], ["y"],
                           reduction="mul")],
         [vi("x", F, [4]), vi("u", F, [70])], ["y"],
         [("i", np.zeros(70, np.int64))])
    # Integers at run-time indices compare every update with every row:
    # 4096 x 8192 is above the bound.
    save("scatter-int-runtime",
         [helper.make_node("ScatterElements", ["x", "i", "u"], ["y"])],
         [vi("x", I64, [8192]), vi("i", I64, [4096]), vi("u", I64, [4096])],
         ["y"])
    save("reversesequence-axes",
         [helper.make_node("ReverseSequence", ["x", "l"], ["y"],
                           time_axis=0, batch_axis=2)],
         [vi("x", F, [2, 3, 4])], ["y"], [("l", np.ones(3, np.int64))])
    save("gridsample-too-many-taps",
         [helper.make_node("GridSample", ["x", "g"], ["y"], mode="cubic")],
         [vi("x", F, [1, 1] + [2] * 7), vi("g", F, [1] + [1] * 7 + [7])],
         ["y"], opset=20)
    save("rnn-hidden-size",
         [helper.make_node("RNN", ["x", "w", "r"], ["y"], hidden_size=4)],
         [vi("x", F, [2, 1, 3]), vi("w", F, [1, 5, 3]), vi("r", F, [1, 5, 5])],
         ["y"])
    save("einsum-diagonal-sizes",
         [helper.make_node("Einsum", ["x"], ["y"], equation="ii->i")],
         [vi("x", F, [2, 3])], ["y"])
    save("dropout-ratio",
         [helper.make_node("Dropout", ["x", "r", "t"], ["y"])], x4, ["y"],
         [("r", np.float32(1.5)), ("t", np.bool_(True))])
    save("sequence-position",
         [helper.make_node("SequenceConstruct", ["x"], ["s"]),
          helper.make_node("SequenceAt", ["s", "p"], ["y"])], x4, ["y"],
         [("p", np.int64(3))])
    save("maxunpool-output-shape",
         [helper.make_node("MaxUnpool", ["x", "i", "o"], ["y"],
                           kernel_shape=[2, 2], strides=[2, 2])],
         [vi("x", F, [1, 1, 2, 2]), vi("i", I64, [1, 1, 2, 2])], ["y"],
         [("o", np.array([1, 1, 3, 3], np.int64))])



def random_error_models():
    """errors/: what the random ops refuse: no shape, a negative or too
    large one, integer numbers, a Like of integers without a float dtype,
    a Bernoulli of integer probabilities, an infinite scale."""
    def save(name, node, inputs=()):
        m = model([node], list(inputs), [helper.make_empty_tensor_value_info(
            node.output[0])], check=False)
        onnx.save(m, os.path.join(HERE, "errors", name + ".onnx"))

    save("random-no-shape", helper.make_node("RandomNormal", [], ["y"]))
    save("random-negative-shape",
         helper.make_node("RandomUniform", [], ["y"], shape=[2, -1]))
    save("random-huge", helper.make_node("RandomNormal", [], ["y"],
                                         shape=[65536, 65536]))
    save("random-int-dtype", helper.make_node(
        "RandomUniform", [], ["y"], shape=[2], dtype=TensorProto.INT32))
    save("random-like-int", helper.make_node("RandomNormalLike", ["x"], ["y"]),
         [vi("x", TensorProto.INT64, [2, 3])])
    save("bernoulli-int", helper.make_node("Bernoulli", ["x"], ["y"]),
         [vi("x", TensorProto.INT64, [2, 3])])
    save("random-infinite-scale", helper.make_node(
        "RandomNormal", [], ["y"], shape=[2], scale=float("inf")))


def function_model(nodes, inputs, outputs, functions, inits=(), ir=10):
    """A model with local functions (domain "custom"), ONNX's reference
    checking it; IR 10 for the functions' default attributes."""
    graph = helper.make_graph(nodes, "g", inputs, outputs,
                              [numpy_helper.from_array(np.asarray(v), k)
                               for k, v in inits])
    m = helper.make_model(graph, functions=functions, opset_imports=[
        helper.make_opsetid("", 18), helper.make_opsetid("custom", 1)])
    m.ir_version = ir
    return m


def function_cases():
    """Model-local functions, inlined at import: an attribute a function
    refers to, given by the call or defaulted by the function (IR 10's
    attribute_proto); a function calling another and its overload (IR 10;
    ignoring the overload would define the function twice); an optional
    input the call leaves out; two calls of one function (names renamed
    per call); an If inside a function whose branch reads the function's
    names and attribute; an output that is an input."""
    local = np.random.default_rng(61)
    x = local.standard_normal((2, 3)).astype(np.float32)
    b = local.standard_normal(3).astype(np.float32)

    def ref(name, referred):
        """Attribute `name` taking the function's attribute `referred`."""
        attribute = onnx.AttributeProto(name=name, ref_attr_name=referred,
                                        type=onnx.AttributeProto.FLOAT)
        return attribute

    # y = x * alpha + b, alpha an attribute (default 0.5).
    alpha = ref("value_float", "alpha")
    scaled = helper.make_node("Constant", [], ["a"])
    scaled.attribute.append(alpha)
    scaled_add = helper.make_function(
        "custom", "ScaledAdd", ["x", "b"], ["y"],
        [scaled, helper.make_node("Mul", ["x", "a"], ["xa"]),
         helper.make_node("Add", ["xa", "b"], ["y"])],
        [helper.make_opsetid("", 18)],
        attributes=[], attribute_protos=[
            helper.make_attribute("alpha", 0.5)])
    # Twice(v) = Relu(v) * 6 through another function, called as Double and
    # as its overload "triple"; its second output is its input.
    double = helper.make_function(
        "custom", "Double", ["v"], ["w"],
        [helper.make_node("Add", ["v", "v"], ["w"])],
        [helper.make_opsetid("", 18)])
    triple = helper.make_function(
        "custom", "Double", ["v"], ["w"],
        [helper.make_node("Sum", ["v", "v", "v"], ["w"])],
        [helper.make_opsetid("", 18)], overload="triple")
    twice = helper.make_function(
        "custom", "Twice", ["v", "lo"], ["w", "v"],
        [helper.make_node("Relu", ["v"], ["r"]),
         helper.make_node("Clip", ["r", "lo"], ["c"]),
         helper.make_node("Double", ["c"], ["d1"], domain="custom"),
         helper.make_node("Double", ["d1"], ["w"], domain="custom",
                          overload="triple")],
        [helper.make_opsetid("", 18), helper.make_opsetid("custom", 1)])
    # An If in a function: its branches read the function's input and
    # attribute.
    then = helper.make_graph(
        [helper.make_node("Mul", ["p", "k"], ["t"]),
         helper.make_node("Constant", [], ["k"])], "then", [],
        [vi("t", F, [2, 3])])
    then.node[1].attribute.append(ref("value_float", "gain"))
    then.node.insert(0, then.node.pop())
    other = helper.make_graph([helper.make_node("Neg", ["p"], ["n"])],
                              "else", [], [vi("n", F, [2, 3])])
    choose = helper.make_function(
        "custom", "Choose", ["c", "p"], ["q"],
        [helper.make_node("If", ["c"], ["q"], then_branch=then,
                          else_branch=other)],
        [helper.make_opsetid("", 18)], attributes=["gain"])
    nodes = [
        helper.make_node("ScaledAdd", ["x", "b"], ["y1"], domain="custom",
                         alpha=2.5),
        helper.make_node("ScaledAdd", ["y1", "b"], ["y2"], domain="custom"),
        helper.make_node("Twice", ["y2"], ["y3", "passed"], domain="custom"),
        helper.make_node("Choose", ["cond", "y3"], ["y4"], domain="custom",
                         gain=3.0),
    ]
    m = function_model(nodes, [vi("x", F, [2, 3]), vi("cond", B, [])],
                       [vi("y2", F, [2, 3]), vi("y3", F, [2, 3]),
                        vi("y4", F, [2, 3]), vi("passed", F, [2, 3])],
                       [scaled_add, double, triple, twice, choose],
                       [("b", b)])
    onnx.checker.check_model(m)
    # onnx.reference 1.23 does not run attribute references in functions
    # (its OpFunction rejects them): the expected values in numpy.
    y2 = (x * np.float32(2.5) + b) * np.float32(0.5) + b
    y3 = np.maximum(y2, 0) * np.float32(6)
    for value in (True, False):
        y4 = y3 * np.float32(3) if value else -y3
        case(f"function_calls_{str(value).lower()}", m,
             {"x": x, "cond": np.array(value)}, expected=[y2, y3, y4, y2])


def function_error_models():
    """errors/: what inlining local functions refuses."""
    def save(name, nodes, functions, inputs=(("x", [2]),), outputs=("y",)):
        m = function_model(nodes, [vi(n, F, s) for n, s in inputs],
                           [helper.make_empty_tensor_value_info(o)
                            for o in outputs], functions)
        onnx.save(m, os.path.join(HERE, "errors", name + ".onnx"))

    opsets = [helper.make_opsetid("", 18), helper.make_opsetid("custom", 1)]
    loop = helper.make_function(
        "custom", "Loop", ["v"], ["w"],
        [helper.make_node("Loop", ["v"], ["w"], domain="custom")], opsets)
    save("function-recursive",
         [helper.make_node("Loop", ["x"], ["y"], domain="custom")], [loop])
    free = helper.make_function(
        "custom", "Free", ["v"], ["w"],
        [helper.make_node("Add", ["v", "bias"], ["w"])], opsets)
    save("function-free-name",
         [helper.make_node("Free", ["x"], ["y"], domain="custom")], [free])
    one = helper.make_function(
        "custom", "One", ["v"], ["w"],
        [helper.make_node("Relu", ["v"], ["w"])], opsets)
    save("function-too-many-inputs",
         [helper.make_node("One", ["x", "x"], ["y"], domain="custom")], [one])
    save("function-unknown-attribute",
         [helper.make_node("One", ["x"], ["y"], domain="custom", beta=1.0)],
         [one])
    save("function-defined-twice",
         [helper.make_node("One", ["x"], ["y"], domain="custom")], [one, one])
    old = helper.make_function(
        "custom", "Old", ["v"], ["w"],
        [helper.make_node("Relu", ["v"], ["w"])],
        [helper.make_opsetid("", 13)])
    save("function-other-opset",
         [helper.make_node("Old", ["x"], ["y"], domain="custom")], [old])

def integer_quantize_cases():
    """The narrow integer types (int8, int16, uint8, uint16, uint32: wrapping
    arithmetic, unsigned division and comparison, MaxPool's padding) and the
    quantization ops in forms the backend data lacks: int8 zero points that
    saturate, per-axis scales on a negative axis, QLinearMatMul with int8
    batches and per-column scales, QLinearConv with per-channel scales, bias,
    padding and strides, MatMulInteger with per-column zero points,
    DynamicQuantizeLinear of zeros, BitShift broadcast."""
    U8, I8, U16, I16, U32 = (TensorProto.UINT8, TensorProto.INT8,
                             TensorProto.UINT16, TensorProto.INT16,
                             TensorProto.UINT32)
    a8 = rng.integers(0, 256, (3, 5)).astype(np.uint8)
    b8 = rng.integers(0, 256, (3, 5)).astype(np.uint8)
    case("uint8_sub_wraps", model(
        [helper.make_node("Sub", ["a", "b"], ["y"])],
        [vi("a", U8, [3, 5]), vi("b", U8, [3, 5])], [vi("y", U8, [3, 5])]),
        {"a": a8, "b": b8})
    i16 = rng.integers(-32768, 32768, (4, 3)).astype(np.int16)
    case("int16_mul_wraps", model(
        [helper.make_node("Mul", ["a", "a"], ["y"])],
        [vi("a", I16, [4, 3])], [vi("y", I16, [4, 3])]), {"a": i16})
    u32 = np.array([4000000000, 3000000001, 7, 2147483648], np.uint32)
    d32 = np.array([3, 1000000000, 2, 2147483647], np.uint32)
    case("uint32_div_compare", model(
        [helper.make_node("Div", ["a", "b"], ["q"]),
         helper.make_node("Greater", ["a", "b"], ["g"]),
         helper.make_node("Cast", ["a"], ["f"], to=TensorProto.DOUBLE)],
        [vi("a", U32, [4]), vi("b", U32, [4])],
        [vi("q", U32, [4]), vi("g", B, [4]), vi("f", TensorProto.DOUBLE, [4])]),
        {"a": u32, "b": d32})
    x16 = rng.integers(0, 65536, (2, 6)).astype(np.uint16)
    case("uint16_reduce_gather", model(
        [const("idx", np.array([5, 0, 3], np.int64)),
         helper.make_node("ReduceMax", ["x"], ["m"], axes=[1], keepdims=0),
         helper.make_node("Gather", ["x", "idx"], ["g"], axis=1),
         helper.make_node("Cast", ["x"], ["c"], to=I8)],
        [vi("x", U16, [2, 6])],
        [vi("m", U16, [2]), vi("g", U16, [2, 3]), vi("c", I8, [2, 6])],
        opset=17), {"x": x16})
    for elem, dtype, low in ((U8, np.uint8, 0), (I8, np.int8, -128)):
        img = rng.integers(low, low + 256, (1, 2, 4, 4)).astype(dtype)
        # The padding must never win: channel 1 holds only values near the
        # type's minimum (negative for int8).
        img[0, 1] = rng.integers(low, low + 10, (4, 4))
        case(f"maxpool_pad_{np.dtype(dtype).name}", model(
            [helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3, 3],
                              pads=[1, 1, 1, 1], strides=[2, 2])],
            [vi("x", elem, [1, 2, 4, 4])], [vi("y", elem, [1, 2, 2, 2])],
            opset=12), {"x": img})
    x = (floats(2, 3, 4) * 3).astype(np.float32)
    case("quantize_int8_axis_neg", model(
        [helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["q"], axis=-1),
         helper.make_node("DequantizeLinear", ["q", "s", "zp"], ["y"],
                          axis=-1)],
        [vi("x", F, [2, 3, 4])], [vi("q", I8, [2, 3, 4]), vi("y", F, [2, 3, 4])],
        [("s", np.array([0.01, 0.02, 0.05, 0.1], np.float32)),
         ("zp", np.array([-100, 0, 50, 127], np.int8))], opset=19), {"x": x})
    # Equal scales and zero points under other names (the importer compares
    # values, not names), and an absent zero point against a zero one: each
    # pair is one tg.quantize_dequantize (onnx-ops.test checks the IR).
    case("qdq_equal_constants_renamed", model(
        [helper.make_node("QuantizeLinear", ["x", "s1", "zp1"], ["q"],
                          axis=1),
         helper.make_node("DequantizeLinear", ["q", "s2", "zp2"], ["y"],
                          axis=1)],
        [vi("x", F, [2, 3, 4])], [vi("y", F, [2, 3, 4])],
        [("s1", np.array([0.02, 0.05, 0.1], np.float32)),
         ("zp1", np.array([-3, 0, 20], np.int8)),
         ("s2", np.array([0.02, 0.05, 0.1], np.float32)),
         ("zp2", np.array([-3, 0, 20], np.int8))], opset=19), {"x": x})
    case("qdq_zero_point_absent_and_zero", model(
        [helper.make_node("QuantizeLinear", ["x", "s"], ["q"]),
         helper.make_node("DequantizeLinear", ["q", "s", "zp"], ["y"])],
        [vi("x", F, [2, 3, 4])], [vi("y", F, [2, 3, 4])],
        [("s", np.array(0.03, np.float32)), ("zp", np.array(0, np.uint8))],
        opset=19), {"x": np.abs(x)})
    # Opset 21: output_dtype instead of a zero point.
    case("quantize_output_dtype_int16", model(
        [helper.make_node("QuantizeLinear", ["x", "s"], ["q"],
                          output_dtype=I16),
         helper.make_node("DequantizeLinear", ["q", "s"], ["y"])],
        [vi("x", F, [2, 3, 4])], [vi("q", I16, [2, 3, 4]),
                                   vi("y", F, [2, 3, 4])],
        [("s", np.array(1e-4, np.float32))], opset=21), {"x": x})
    q32 = rng.integers(-2**31, 2**31, (5,)).astype(np.int32)
    case("dequantize_int32", model(
        [helper.make_node("DequantizeLinear", ["q", "s"], ["y"])],
        [vi("q", TensorProto.INT32, [5])], [vi("y", F, [5])],
        [("s", np.array(0.001, np.float32))], opset=19), {"q": q32})
    case("dynamic_quantize_zeros", model(
        [helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "s", "zp"])],
        [vi("x", F, [3])],
        [vi("y", U8, [3]), vi("s", F, []), vi("zp", U8, [])], opset=11),
        {"x": np.zeros(3, np.float32)})
    a = rng.integers(-128, 128, (2, 3, 4)).astype(np.int8)
    b = rng.integers(-128, 128, (2, 4, 5)).astype(np.int8)
    case("qlinearmatmul_int8_per_column", model(
        [helper.make_node("QLinearMatMul",
                          ["a", "as", "azp", "b", "bs", "bzp", "ys", "yzp"],
                          ["y"])],
        [vi("a", I8, [2, 3, 4]), vi("b", I8, [2, 4, 5])],
        [vi("y", I8, [2, 3, 5])],
        [("as", np.array(0.05, np.float32)), ("azp", np.array(3, np.int8)),
         ("bs", np.array([0.01, 0.02, 0.03, 0.04, 0.05], np.float32)),
         ("bzp", np.array([0, -1, 2, -3, 4], np.int8)),
         ("ys", np.array(0.5, np.float32)), ("yzp", np.array(-5, np.int8))],
        opset=10),
        {"a": a, "b": b},
        expected=[np.clip(np.rint(
            np.matmul(a.astype(np.int32) - 3,
                      b.astype(np.int32) - np.array([0, -1, 2, -3, 4]))
            * (np.float32(0.05) * np.array([0.01, 0.02, 0.03, 0.04, 0.05],
                                           np.float32) / np.float32(0.5))
            ) - 5, -128, 127).astype(np.int8)])
    a8 = rng.integers(0, 256, (3, 4)).astype(np.uint8)
    b8 = rng.integers(0, 256, (4, 2)).astype(np.uint8)
    case("matmulinteger_per_column", model(
        [helper.make_node("MatMulInteger", ["a", "b", "azp", "bzp"], ["y"])],
        [vi("a", U8, [3, 4]), vi("b", U8, [4, 2])],
        [vi("y", TensorProto.INT32, [3, 2])],
        [("azp", np.array(12, np.uint8)),
         ("bzp", np.array([200, 7], np.uint8))], opset=10),
        {"a": a8, "b": b8})
    xc = rng.integers(0, 256, (1, 2, 5, 5)).astype(np.uint8)
    wc = rng.integers(-128, 128, (3, 2, 3, 3)).astype(np.int8)
    bias = rng.integers(-1000, 1000, (3,)).astype(np.int32)
    ws = np.array([0.01, 0.02, 0.005], np.float32)
    m = model(
        [helper.make_node("QLinearConv",
                          ["x", "xs", "xzp", "w", "ws", "wzp", "ys", "yzp",
                           "bias"], ["y"], pads=[1, 1, 1, 1], strides=[2, 2])],
        [vi("x", U8, [1, 2, 5, 5])], [vi("y", U8, [1, 3, 3, 3])],
        [("xs", np.array(0.1, np.float32)), ("xzp", np.array(128, np.uint8)),
         ("w", wc), ("ws", ws), ("wzp", np.array([0, 0, 0], np.int8)),
         ("ys", np.array(0.2, np.float32)), ("yzp", np.array(100, np.uint8)),
         ("bias", bias)], opset=10)
    # The integer convolution in numpy, requantized per output channel.
    padded = np.pad(xc.astype(np.int64) - 128, ((0, 0), (0, 0), (1, 1), (1, 1)))
    acc = np.zeros((1, 3, 3, 3), np.int64)
    for o in range(3):
        for i in range(3):
            for j in range(3):
                acc[0, o, i, j] = np.sum(
                    padded[0, :, 2 * i:2 * i + 3, 2 * j:2 * j + 3] *
                    wc[o].astype(np.int64)) + bias[o]
    scale = (np.float32(0.1) * ws / np.float32(0.2)).astype(np.float64)
    expected = np.clip(np.rint(acc * scale[None, :, None, None]) + 100, 0,
                       255).astype(np.uint8)
    case("qlinearconv_per_channel", m, {"x": xc}, expected=[expected])
    case("bitshift_uint16_broadcast", model(
        [helper.make_node("BitShift", ["x", "n"], ["l"], direction="LEFT"),
         helper.make_node("BitShift", ["x", "n"], ["r"], direction="RIGHT")],
        [vi("x", U16, [2, 3]), vi("n", U16, [3])],
        [vi("l", U16, [2, 3]), vi("r", U16, [2, 3])], opset=11),
        {"x": np.array([[1, 40000, 65535], [3, 5, 7]], np.uint16),
         "n": np.array([0, 1, 15], np.uint16)})


def integer_grad_models():
    """grad/integer_mix.onnx: a parameter through narrow integer values (int8
    from a QuantizeLinear dequantized with another zero point, uint8
    differences that
    wrap, an int16 square that wraps, a uint16 BitShift, a uint8 ReduceMax)
    multiplied back into w, for the generated project on the host target
    (the integer types stored and computed in fused kernels)."""
    local = np.random.default_rng(31)
    w = local.standard_normal((4, 6)).astype(np.float32)
    U8, I16, U16 = TensorProto.UINT8, TensorProto.INT16, TensorProto.UINT16
    nodes = [
        const("s", np.float32(0.05)), const("zp", np.int8(3)),
        const("zp2", np.int8(-2)),
        # Another zero point: not one fake quantization, the int8 values
        # stay in the step.
        helper.make_node("QuantizeLinear", ["w", "s", "zp"], ["q"]),
        helper.make_node("DequantizeLinear", ["q", "s", "zp2"], ["dq"]),
        helper.make_node("Mul", ["dq", "w"], ["a1"]),
        const("k", np.float32(40.0)),
        helper.make_node("Mul", ["w", "k"], ["wk"]),
        helper.make_node("Abs", ["wk"], ["wka"]),
        helper.make_node("Cast", ["wka"], ["u"], to=U8),
        const("u7", np.uint8(7)),
        helper.make_node("Sub", ["u7", "u"], ["ud"]),
        helper.make_node("ReduceMax", ["ud"], ["um"], axes=[1], keepdims=1),
        helper.make_node("Cast", ["um"], ["umf"], to=F),
        helper.make_node("Mul", ["umf", "tiny"], ["ums"]),
        helper.make_node("Mul", ["ums", "w"], ["a2"]),
        helper.make_node("Cast", ["wk"], ["i"], to=I16),
        helper.make_node("Mul", ["i", "i"], ["i2"]),
        helper.make_node("Cast", ["i2"], ["i2f"], to=F),
        const("tiny", np.float32(1e-4)),
        helper.make_node("Mul", ["i2f", "tiny"], ["i2s"]),
        helper.make_node("Mul", ["i2s", "w"], ["a3"]),
        helper.make_node("Cast", ["wka"], ["h16"], to=U16),
        const("two", np.uint16(2)),
        helper.make_node("BitShift", ["h16", "two"], ["sh"],
                         direction="LEFT"),
        helper.make_node("Cast", ["sh"], ["shf"], to=F),
        helper.make_node("Mul", ["shf", "tiny"], ["shs"]),
        helper.make_node("Mul", ["shs", "w"], ["a4"]),
        helper.make_node("Sum", ["a1", "a2", "a3", "a4"], ["h"])]
    save_grad_models({"integer_mix": nodes}, w)


def save_error_model(name, nodes, inputs, outputs, inits=(), opset=18):
    """errors/NAME.onnx, its outputs of unknown type and shape."""
    graph = helper.make_graph(
        nodes, "g", inputs,
        [helper.make_empty_tensor_value_info(o) for o in outputs],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in inits])
    m = helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.save(m, os.path.join(HERE, "errors", name + ".onnx"))


def mel_weight_matrix(output, mels, n, rate, low, high):
    """The nodes of a MelWeightMatrix `output` of constant inputs."""
    return [const("mels", np.array(mels, np.int64)),
            const("n", np.array(n, np.int64)),
            const("rate", np.array(rate, np.int64)),
            const("low", np.array(low, np.float32)),
            const("high", np.array(high, np.float32)),
            helper.make_node("MelWeightMatrix",
                             ["mels", "n", "rate", "low", "high"], [output])]

def spectral_cases():
    """DFT and STFT in the forms the backend data lacks: a onesided
    transform, dft_length padding and truncating, a complex forward
    transform on a middle axis, DFT-20's axis input, a complex STFT
    (onesided = 0) with a window and a frame step leaving points over."""
    x = floats(2, 6, 3, 1)
    case("dft_onesided_padded", model(
        [const("n", np.array(8, np.int64)),
         helper.make_node("DFT", ["x", "n"], ["y"], axis=1, onesided=1)],
        [vi("x", F, [2, 6, 3, 1])], [vi("y", F, [2, 5, 3, 2])]), {"x": x})
    case("dft_truncated", model(
        [const("n", np.array(4, np.int64)),
         helper.make_node("DFT", ["x", "n"], ["y"], axis=1)],
        [vi("x", F, [2, 6, 3, 1])], [vi("y", F, [2, 4, 3, 2])]), {"x": x})
    c = floats(2, 3, 5, 2)
    case("dft_complex_axis2", model(
        [helper.make_node("DFT", ["x"], ["y"], axis=2)],
        [vi("x", F, [2, 3, 5, 2])], [vi("y", F, [2, 3, 5, 2])]), {"x": c})
    case("dft_complex_inverse", model(
        [helper.make_node("DFT", ["x"], ["y"], axis=1, inverse=1)],
        [vi("x", F, [2, 3, 5, 2])], [vi("y", F, [2, 3, 5, 2])]), {"x": c})
    case("dft20_axis_input", model(
        [const("a", np.array(-2, np.int64)),
         helper.make_node("DFT", ["x", "", "a"], ["y"])],
        [vi("x", F, [2, 3, 5, 2])], [vi("y", F, [2, 3, 5, 2])], opset=20),
        {"x": c})
    sig = floats(1, 37, 2)
    window = np.hanning(10).astype(np.float32)
    case("melweightmatrix_speech", model(
        mel_weight_matrix("m", 10, 64, 16000, 100, 8000) +
        [helper.make_node("MatMul", ["x", "m"], ["y"])],
        [vi("x", F, [3, 33])], [vi("y", F, [3, 10])]),
        {"x": floats(3, 33)})
    case("stft_complex_window", model(
        [const("step", np.array(4, np.int64)),
         helper.make_node("STFT", ["s", "step", "w"], ["y"], onesided=0)],
        [vi("s", F, [1, 37, 2]), vi("w", F, [10])],
        [vi("y", F, [1, 7, 10, 2])]), {"s": sig, "w": window})


def spectral_grad_models():
    """grad/dft.onnx: a parameter through a onesided DFT and an inverse one,
    for tgc gradcheck (the transforms are matrix products: exact
    gradients)."""
    local = np.random.default_rng(37)
    w = local.standard_normal((2, 8, 1)).astype(np.float32)
    save_grad_models({"dft": [
        helper.make_node("DFT", ["w"], ["f"], axis=1, onesided=1),
        helper.make_node("DFT", ["f"], ["h"], axis=1, inverse=1)]}, w)


def save_loss_model(name, nodes, params, opset):
    """grad/NAME.onnx at `opset`: `nodes` computing h from the parameters
    `params` ((name, value) pairs), with the sum of squares of h as its
    loss, for tgc gradcheck."""
    nodes = sorted(nodes, key=lambda n: n.op_type != "Constant") + [
        helper.make_node("Mul", ["h", "h"], ["sq"]),
        helper.make_node("ReduceSum", ["sq"], ["loss"], keepdims=0)]
    graph = helper.make_graph(
        nodes, "g", [], [vi("loss", F, [])],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in params])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 10 if opset < 23 else 11
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(HERE, "grad", name + ".onnx"))


def transformer_grad_models():
    """grad/NAME.onnx: a parameter through the transformer ops of opset 23
    (RMSNormalization, RotaryEmbedding, Attention on its fused path and on
    its composed one, with a mask that hides every key of a row), for tgc
    gradcheck."""
    local = np.random.default_rng(23)
    w = local.standard_normal((2, 4, 8)).astype(np.float32)
    angles = np.outer(np.arange(6), 1.0 / 100 ** (np.arange(2) / 2))

    def save(name, nodes, inits=()):
        save_loss_model(name, nodes, [("w", w)] + list(inits), 23)

    save("rmsnorm", [helper.make_node("RMSNormalization", ["w", "g"], ["h"],
                                      epsilon=1e-3)],
         [("g", local.uniform(0.5, 1.5, 8).astype(np.float32))])
    save("rotary", [
        const("pos", np.array([[0, 1, 2, 3], [2, 3, 4, 5]], np.int64)),
        helper.make_node("RotaryEmbedding", ["w", "cos", "sin", "pos"], ["h"],
                         num_heads=2)],
         [("cos", np.cos(angles).astype(np.float32)),
          ("sin", np.sin(angles).astype(np.float32))])
    save("attention_causal", [
        helper.make_node("Mul", ["w", "w"], ["k"]),
        helper.make_node("Attention", ["w", "k", "w"], ["h"], is_causal=1,
                         q_num_heads=2, kv_num_heads=2)])
    # Mamba's causal convolution: the parameter as input and past state.
    save_loss_model("causal_conv", [
        helper.make_node("Slice", ["w", "st", "en", "ax"], ["past"]),
        helper.make_node("CausalConvWithState", ["w", "k", "b", "past"],
                         ["h", "state"], activation="silu")],
        [("w", w), ("k", local.standard_normal((4, 1, 3)).astype(np.float32)),
         ("b", local.standard_normal(4).astype(np.float32)),
         ("st", np.array([0], np.int64)), ("en", np.array([2], np.int64)),
         ("ax", np.array([2], np.int64))], 27)
    # Gated DeltaNet's recurrence: the parameter as queries, keys and
    # values (4 heads of 2), with a per-head decay and one update rate.
    save_loss_model("linear_attention", [
        helper.make_node("LinearAttention", ["w", "w", "w", "", "g", "b"],
                         ["h", "state"], q_num_heads=4, kv_num_heads=4,
                         update_rule="gated_delta")],
        [("w", w), ("g", -local.uniform(0.1, 1.0, (2, 4, 4)).astype(np.float32)),
         ("b", local.uniform(0.2, 0.9, (2, 4, 1)).astype(np.float32))], 27)
    # Grouped-query attention with a soft cap and a boolean mask hiding
    # all of query 1's keys: one tg.attention capping its scores before
    # the mask (its bias); the hidden row is zeros.
    mask = np.ones((4, 4), bool)
    mask[1, :] = False
    mask[2, 3] = False
    save("attention_gqa_mask", [
        const("starts", np.array([0], np.int64)),
        const("ends", np.array([4], np.int64)),
        const("axes", np.array([2], np.int64)),
        helper.make_node("Slice", ["w", "starts", "ends", "axes"], ["kv"]),
        helper.make_node("Attention", ["w", "kv", "kv", "mask"], ["h"],
                         q_num_heads=2, kv_num_heads=1, softcap=2.0)],
         [("mask", mask)])


def newer_op_grad_models():
    """grad/NAME.onnx: a parameter through ops of opsets 18 to 28
    (GroupNormalization, LpNormalization with a zero row, Swish, SwiGLU,
    CenterCropPad, LpPool over windows of zeros, CumProd through zeros,
    AffineGrid's theta), for tgc gradcheck."""
    local = np.random.default_rng(18)
    w = local.standard_normal((2, 4, 3, 3)).astype(np.float32)
    w[1, :, 0, :] = 0.0  # LpNormalization's zero norms along axis 1

    def save(name, nodes, inits=(), opset=21, param=w):
        save_loss_model(name, nodes, [("w", param)] + list(inits), opset)

    save("groupnorm", [helper.make_node(
        "GroupNormalization", ["w", "g", "b"], ["h"], num_groups=2)],
        [("g", local.uniform(0.5, 1.5, 4).astype(np.float32)),
         ("b", local.standard_normal(4).astype(np.float32))])
    save("lpnorm", [helper.make_node("LpNormalization", ["w"], ["h"], axis=1,
                                     p=2)])
    save("swish", [helper.make_node("Swish", ["w"], ["h"], alpha=0.7)],
         opset=24)
    save("mish", [helper.make_node("Mish", ["w"], ["h"])], opset=18)
    save("swiglu", [
        helper.make_node("Mul", ["w", "w"], ["b"]),
        helper.make_node("SwiGLU", ["w", "b"], ["h"], alpha=1.5)], opset=28)
    save("centercroppad", [
        const("shape", np.array([2, 5], np.int64)),
        helper.make_node("CenterCropPad", ["w", "shape"], ["h"],
                         axes=[1, 3])], opset=18)
    save("lppool", [helper.make_node("LpPool", ["w"], ["h"], p=3,
                                     kernel_shape=[2, 2], pads=[1, 0, 0, 1],
                                     strides=[1, 2])], opset=18)
    save("cumprod", [
        const("axis", np.array(-1, np.int64)),
        helper.make_node("CumProd", ["w", "axis"], ["h"], exclusive=1,
                         reverse=1)], opset=26)
    theta = local.standard_normal((2, 2, 3)).astype(np.float32)
    save("affinegrid", [
        const("size", np.array([2, 1, 3, 4], np.int64)),
        helper.make_node("AffineGrid", ["w", "size"], ["h"])], opset=20,
         param=theta)


def newer_op_error_models():
    """errors/NAME.onnx: forms of opsets 18 to 28 tgc refuses."""
    save_error_model("groupnorm-groups",
                     [helper.make_node("GroupNormalization", ["x", "s", "s"],
                                       ["y"], num_groups=3)],
                     [vi("x", F, [1, 4, 2]), vi("s", F, [4])], ["y"], opset=21)
    save_error_model("swiglu-shapes",
                     [helper.make_node("SwiGLU", ["a", "b"], ["y"])],
                     [vi("a", F, [2, 4]), vi("b", F, [1, 4])], ["y"], opset=28)
    save_error_model("centercroppad-huge",
                     [const("s", np.array([2**31 - 1] * 3, np.int64)),
                      helper.make_node("CenterCropPad", ["x", "s"], ["y"])],
                     [vi("x", F, [1, 2, 3])], ["y"], opset=18)
    save_error_model("affinegrid-theta",
                     [const("size", np.array([2, 1, 3, 4], np.int64)),
                      helper.make_node("AffineGrid", ["t", "size"], ["y"])],
                     [vi("t", F, [2, 3, 4])], ["y"], opset=20)


def transformer_error_models():
    """errors/NAME.onnx: transformer forms tgc refuses."""
    def save(name, nodes, inputs, outputs, inits=(), opset=23):
        save_error_model(name, nodes, inputs, outputs, inits, opset=opset)

    x3 = [vi("q", F, [2, 4, 8]), vi("k", F, [2, 4, 12])]
    save("attention-3d-no-heads",
         [helper.make_node("Attention", ["q", "q", "q"], ["y"])], x3[:1],
         ["y"])
    save("attention-heads-not-multiple",
         [helper.make_node("Attention", ["q", "k", "k"], ["y"],
                           q_num_heads=2, kv_num_heads=3)], x3, ["y"])
    save("attention-long-mask",
         [helper.make_node("Attention", ["q", "q", "q", "m"], ["y"])],
         [vi("q", F, [1, 2, 4, 8]), vi("m", F, [4, 5])], ["y"])
    save("attention-negative-softcap",
         [helper.make_node("Attention", ["q", "q", "q"], ["y"],
                           softcap=-1.0)],
         [vi("q", F, [1, 2, 4, 8])], ["y"])
    save("rotary-odd-dim",
         [helper.make_node("RotaryEmbedding", ["x", "c", "c"], ["y"],
                           rotary_embedding_dim=3)],
         [vi("x", F, [1, 2, 4, 8]), vi("c", F, [1, 4, 1])], ["y"])
    save("causal-conv-weight",
         [helper.make_node("CausalConvWithState", ["x", "w"], ["y"])],
         [vi("x", F, [1, 4, 6]), vi("w", F, [4, 2, 3])], ["y"], opset=27)
    save("linear-attention-decay",
         [helper.make_node("LinearAttention", ["q", "q", "q"], ["y", "s"],
                           q_num_heads=2, kv_num_heads=2,
                           update_rule="gated")],
         [vi("q", F, [1, 3, 8])], ["y"], opset=27)
    save("rmsnorm-stash-f16",
         [helper.make_node("RMSNormalization", ["x", "g"], ["y"],
                           stash_type=TensorProto.FLOAT16)],
         [vi("x", F, [2, 8]), vi("g", F, [8])], ["y"])


def flex_attention_model(nodes, inputs, outputs, inits=(), preview=1):
    """A model of default opset 26 and ai.onnx.preview (FlexAttention's
    domain, unknown to onnx 1.23's checker: not checked)."""
    graph = helper.make_graph(
        nodes, "g", inputs, outputs,
        [numpy_helper.from_array(np.asarray(v), k) for k, v in inits])
    m = helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 26),
        helper.make_opsetid("ai.onnx.preview", preview)])
    m.ir_version = 11
    return m


def flex_node(inputs, **graphs):
    return helper.make_node("FlexAttention", inputs, ["h"],
                            domain="ai.onnx.preview", **graphs)


def modifier(name, nodes, inits=(), inputs=("s",), output="out"):
    """A FlexAttention modifier subgraph (score_mod, prob_mod) of scores
    `s` [B, H, L, S]."""
    return helper.make_graph(
        nodes, name, [vi(i, F, ["B", "H", "L", "S"]) for i in inputs],
        [vi(output, F, ["B", "H", "L", "S"])],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in inits])


def flex_attention_models():
    """grad/NAME.onnx and errors/NAME.onnx: FlexAttention (ai.onnx.preview)
    with a parameter as Q, K and V, for tgc gradcheck: Gemma 2's soft cap
    then a causal mask in score_mod (raised to one tg.attention), and a
    prob_mod over grouped heads (composed); and the forms tgc refuses."""
    local = np.random.default_rng(26)
    w = local.standard_normal((2, 4, 6, 8)).astype(np.float32)
    cap = np.array(1.5, np.float32)
    causal = modifier("causal_softcap", [
        helper.make_node("Div", ["s", "cap"], ["d"]),
        helper.make_node("Tanh", ["d"], ["t"]),
        helper.make_node("Mul", ["t", "cap"], ["c"]),
        helper.make_node("Where", ["keep", "c", "ninf"], ["out"])],
        [("cap", cap), ("ninf", np.array(-np.inf, np.float32)),
         ("keep", np.tril(np.ones((6, 6), bool)))])

    def save_grad(name, nodes):
        m = flex_attention_model(
            nodes + [helper.make_node("Mul", ["h", "h"], ["sq"]),
                     helper.make_node("ReduceSum", ["sq"], ["loss"],
                                      keepdims=0)],
            [], [vi("loss", F, [])], [("w", w)])
        onnx.save(m, os.path.join(HERE, "grad", name + ".onnx"))

    save_grad("flexattention_softcap_causal",
              [flex_node(["w", "w", "w"], score_mod=causal, scale=2.0)])
    halve = modifier("halve", [helper.make_node("Mul", ["s", "half"],
                                                ["out"])],
                     [("half", np.array(0.5, np.float32))])
    save_grad("flexattention_prob_mod_gqa", [
        const("starts", np.array([0], np.int64)),
        const("ends", np.array([2], np.int64)),
        const("axes", np.array([1], np.int64)),
        helper.make_node("Slice", ["w", "starts", "ends", "axes"], ["kv"]),
        flex_node(["w", "kv", "kv"], prob_mod=halve)])

    def save_error(name, nodes, preview=1):
        m = flex_attention_model(nodes, [vi("q", F, [1, 2, 4, 8])],
                                 [helper.make_empty_tensor_value_info("h")],
                                 preview=preview)
        onnx.save(m, os.path.join(HERE, "errors", name + ".onnx"))

    # score_mod must keep the scores' shape: a row sum does not.
    rows = modifier("rows", [
        const("axes", np.array([3], np.int64)),
        helper.make_node("ReduceSum", ["s", "axes"], ["out"])])
    save_error("flexattention-score-mod-shape",
               [flex_node(["q", "q", "q"], score_mod=rows)])
    # A modifier takes exactly one tensor.
    two = modifier("two", [helper.make_node("Add", ["s", "t"], ["out"])],
                   inputs=("s", "t"))
    save_error("flexattention-two-inputs",
               [flex_node(["q", "q", "q"], prob_mod=two)])
    # Q of rank 3; two outputs.
    save_error("flexattention-rank", [
        const("shape", np.array([2, 4, 8], np.int64)),
        helper.make_node("Reshape", ["q", "shape"], ["q3"]),
        flex_node(["q3", "q3", "q3"])])
    save_error("flexattention-two-outputs", [helper.make_node(
        "FlexAttention", ["q", "q", "q"], ["h", "p"],
        domain="ai.onnx.preview")])
    save_error("preview-other-op", [helper.make_node(
        "Frobnicate", ["q"], ["h"], domain="ai.onnx.preview")])
    save_error("preview-version", [flex_node(["q", "q", "q"])], preview=2)


def integer_quantize_error_models():
    """errors/NAME.onnx: quantization and BitShift forms tgc refuses."""
    def save(name, nodes, inputs, outputs, inits=(), opset=13):
        save_error_model(name, nodes, inputs, outputs, inits, opset)

    save("quantize-scale-length",
         [helper.make_node("QuantizeLinear", ["x", "s"], ["q"], axis=1)],
         [vi("x", F, [2, 3])], ["q"],
         [("s", np.array([0.1, 0.2], np.float32))])
    save("dft-batch-axis",
         [helper.make_node("DFT", ["x"], ["y"], axis=0)],
         [vi("x", F, [2, 3, 1])], ["y"], opset=17)
    save("stft-frame-too-long",
         [const("step", np.array(2, np.int64)),
          const("len", np.array(40, np.int64)),
          helper.make_node("STFT", ["x", "step", "", "len"], ["y"])],
         [vi("x", F, [1, 32, 1])], ["y"], opset=17)
    save("melweightmatrix-beyond-nyquist",
         mel_weight_matrix("y", 4, 16, 1000, 0, 900), [], ["y"], opset=17)
    save("bitshift-signed",
         [helper.make_node("BitShift", ["x", "x"], ["y"], direction="LEFT")],
         [vi("x", TensorProto.INT32, [3])], ["y"], opset=11)
    # Blocks of 2 along axis 1 of [2, 4] need a [2, 2] scale.
    save("quantize-block-size",
         [helper.make_node("QuantizeLinear", ["x", "s"], ["q"], axis=1,
                           block_size=2)],
         [vi("x", F, [2, 4])], ["q"],
         [("s", np.full((2, 3), 0.1, np.float32))], opset=21)
    save("quantize-output-dtype-zero-point",
         [helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["q"],
                           output_dtype=TensorProto.INT8)],
         [vi("x", F, [3])], ["q"],
         [("s", np.array(0.1, np.float32)), ("zp", np.array(1, np.uint8))],
         opset=21)
    save("dft-irfft-real",
         [helper.make_node("DFT", ["x"], ["y"], axis=1, inverse=1,
                           onesided=1)],
         [vi("x", F, [1, 6, 1])], ["y"], opset=17)
    save("dft-too-long",
         [const("n", np.array(16385, np.int64)),
          helper.make_node("DFT", ["x", "n"], ["y"], axis=1)],
         [vi("x", F, [1, 8, 1])], ["y"], opset=17)
    save("dequantize-zero-point-type",
         [helper.make_node("DequantizeLinear", ["x", "s", "zp"], ["y"])],
         [vi("x", TensorProto.UINT8, [3])], ["y"],
         [("s", np.array(0.1, np.float32)), ("zp", np.array(1, np.int8))])


def det_cases():
    """Det: matrices whose first pivot is 0 (the rows must swap), a singular
    one (determinant 0, no NaN), batches of several leading dimensions,
    f64, order 1 and a 12 x 12."""
    pivoting = np.array([[0, 2, 1], [3, 0, 4], [1, 5, 0]], np.float32)
    singular = np.array([[1, 2, 3], [2, 4, 6], [0, 1, 1]], np.float32)
    case("det_pivoting_and_singular", model(
        [helper.make_node("Det", ["x"], ["y"])],
        [vi("x", F, [2, 3, 3])], [vi("y", F, [2])], opset=11),
        {"x": np.stack([pivoting, singular])})
    case("det_batched", model(
        [helper.make_node("Det", ["x"], ["y"])],
        [vi("x", F, [2, 3, 4, 4])], [vi("y", F, [2, 3])], opset=11),
        {"x": floats(2, 3, 4, 4)})
    case("det_f64_order1", model(
        [helper.make_node("Det", ["a"], ["y"]),
         helper.make_node("Det", ["b"], ["z"])],
        [vi("a", TensorProto.DOUBLE, [5, 5]),
         vi("b", TensorProto.DOUBLE, [3, 1, 1])],
        [vi("y", TensorProto.DOUBLE, []), vi("z", TensorProto.DOUBLE, [3])],
        opset=11),
        {"a": rng.standard_normal((5, 5)), "b": rng.standard_normal((3, 1, 1))})
    case("det_order12", model(
        [helper.make_node("Det", ["x"], ["y"])],
        [vi("x", F, [12, 12])], [vi("y", F, [])], opset=11),
        {"x": (floats(12, 12) + 2 * np.eye(12)).astype(np.float32)})


def det_grad_models():
    """grad/det.onnx: a batch of parameter matrices (one needing a row swap
    at every column) through Det: its gradient, det(W) W^-T, against finite
    differences."""
    local = np.random.default_rng(41)
    w = local.standard_normal((2, 4, 4)).astype(np.float32)
    w[1] = w[1][:, ::-1] * np.array([0.1, 1, 3, 10], np.float32)[None, :]
    save_grad_models({"det": [helper.make_node("Det", ["w"], ["h"])]}, w)


def det_error_models():
    """errors/NAME.onnx: what Det refuses."""
    save_error_model("det-not-square",
                     [helper.make_node("Det", ["x"], ["y"])],
                     [vi("x", F, [2, 3])], ["y"], opset=11)
    save_error_model("det-too-large",
                     [helper.make_node("Det", ["x"], ["y"])],
                     [vi("x", F, [65, 65])], ["y"], opset=11)


def index_length_error_models():
    """errors/NAME.onnx: index constants along a dimension (listed at import)
    longer than 2^24 positions, refused before they are allocated: a
    Hardmax over 2^31 - 1 positions, a reversed slice of 2^25, a one-hot of
    depth 2^30."""
    save_error_model("hardmax-huge-axis",
                     [helper.make_node("Hardmax", ["x"], ["y"])],
                     [vi("x", F, [1, 2**31 - 1])], ["y"], opset=13)
    save_error_model("slice-reverse-huge",
                     [const("st", np.array([-1], np.int64)),
                      const("en", np.array([INT64_MIN], np.int64)),
                      const("ax", np.array([0], np.int64)),
                      const("sp", np.array([-1], np.int64)),
                      helper.make_node("Slice", ["x", "st", "en", "ax", "sp"],
                                       ["y"])],
                     [vi("x", F, [2**25])], ["y"], opset=13)
    save_error_model("onehot-huge-depth",
                     [const("depth", np.array(2**30, np.int64)),
                      const("values", np.array([0, 1], np.float32)),
                      helper.make_node("OneHot", ["i", "depth", "values"],
                                       ["y"])],
                     [vi("i", TensorProto.INT64, [1])], ["y"], opset=11)


def extra_output_error_models():
    """errors/eyelike-extra-output.onnx: a node naming an output its op does
    not have."""
    save_error_model("eyelike-extra-output",
                     [helper.make_node("EyeLike", ["x"], ["y", "z"])],
                     [vi("x", F, [2, 3])], ["y"], opset=11)


def sanitizer_error_models():
    """errors/NAME.onnx: what libFuzzer's sanitizers found the importer
    converting out of range (undefined behaviour, no crash in a release
    build), refused now: a Trilu k that is no integer, an infinite
    dft_length, a Resize to more positions than int64 multiplies, an
    antialiased downsampling by 2^-30, ConvTranspose pads and output_shape
    of INT64_MIN."""
    save_error_model("trilu-k-nan",
                     [const("k", np.array(np.nan, np.float32)),
                      helper.make_node("Trilu", ["x", "k"], ["y"])],
                     [vi("x", F, [3, 3])], ["y"], opset=14)
    save_error_model("dft-length-infinite",
                     [const("n", np.array(np.inf, np.float32)),
                      helper.make_node("DFT", ["x", "n"], ["y"], axis=1)],
                     [vi("x", F, [1, 8, 1])], ["y"], opset=17)
    save_error_model("resize-sizes-overflow",
                     [const("sizes", np.array([96, 7454583283205013505],
                                              np.int64)),
                      helper.make_node("Resize", ["x", "", "", "sizes"],
                                       ["y"], mode="nearest")],
                     [vi("x", F, [96, 1])], ["y"], opset=19)
    w = np.ones((3, 3, 3, 3), np.float32)
    save_error_model("convtranspose-pad-int64-min",
                     [helper.make_node("ConvTranspose", ["x", "w"], ["y"],
                                       pads=[1, INT64_MIN, 1, 1])],
                     [vi("x", F, [2, 3, 4, 4])], ["y"], [("w", w)], opset=12)
    save_error_model("convtranspose-output-shape-int64-min",
                     [helper.make_node("ConvTranspose", ["x", "w"], ["y"],
                                       output_shape=[INT64_MIN, 4])],
                     [vi("x", F, [2, 3, 4, 4])], ["y"], [("w", w)], opset=12)
    save_error_model("resize-antialias-too-wide",
                     [const("sizes", np.array([1, 1], np.int64)),
                      helper.make_node("Resize", ["x", "", "", "sizes"],
                                       ["y"], mode="linear", antialias=1)],
                     [vi("x", F, [1, 2**30])], ["y"], opset=18)


def nan_weight_models():
    """errors/nan-weight.onnx: a weight holding a NaN (a corrupt model): a
    parameter still (no mask fills with NaN), which tgc train refuses by
    name rather than training to a NaN loss."""
    w = np.ones((4, 3), np.float32)
    w[1, 2] = np.nan
    save_error_model("nan-weight",
                     [helper.make_node("MatMul", ["x", "w"], ["y"]),
                      helper.make_node("ReduceSum", ["y"], ["loss"],
                                       keepdims=0)],
                     [vi("x", F, [2, 4])], ["loss"], [("w", w)], opset=17)


def random_shape_operand_models():
    """errors/random-shape-operand.onnx: a Reshape's shape drawn at random:
    the error names the step's random seed as what it depends on."""
    save_error_model("random-shape-operand",
                     [helper.make_node("RandomUniform", [], ["r"], shape=[2],
                                       low=3.0, high=3.5),
                      helper.make_node("Cast", ["r"], ["s"],
                                       to=TensorProto.INT64),
                      helper.make_node("Reshape", ["x", "s"], ["y"])],
                     [vi("x", F, [3, 3])], ["y"], opset=17)


def value_shaped_cases():
    """Ops whose output shape depends on values, computable at import: a
    Compress by a constant condition of data known at run time (an axis, a
    short condition, none kept; without an axis, the flattened input), a
    NonZero of a constant mask selecting run-time data (masked_select as
    exporters write it), Unique of constants with all four outputs (sorted
    and by first occurrence, by slices along an axis, floats with NaN)."""
    local = np.random.default_rng(43)
    x = local.standard_normal((3, 5)).astype(np.float32)
    keep = np.array([True, False, True, True], bool)
    case("compress_constant_condition", model(
        [helper.make_node("Compress", ["x", "c"], ["y"], axis=1),
         helper.make_node("Compress", ["x", "none"], ["z"], axis=0),
         helper.make_node("Compress", ["x", "flat"], ["f"])],
        [vi("x", F, [3, 5])],
        [vi("y", F, [3, 3]), vi("z", F, [0, 5]), vi("f", F, [4])],
        [("c", keep), ("none", np.zeros(3, bool)),
         ("flat", np.arange(15) % 4 == 1)], opset=11), {"x": x})
    mask = np.array([[1, 0, 0, 1, 1], [0, 0, 1, 0, 0], [0, 0, 0, 0, 0]],
                    np.float32)
    case("nonzero_constant_mask", model(
        [helper.make_node("NonZero", ["mask"], ["where"]),
         helper.make_node("Transpose", ["where"], ["points"], perm=[1, 0]),
         helper.make_node("GatherND", ["x", "points"], ["y"])],
        [vi("x", F, [3, 5])], [vi("where", TensorProto.INT64, [2, 4]),
                               vi("y", F, [4])], [("mask", mask)], opset=13),
        {"x": x})
    ints = np.array([[2, 1, 2], [0, 5, 0], [2, 1, 2], [7, 7, 7]], np.int64)
    values = np.array([2.5, np.nan, -1.0, 2.5, np.nan, 0.0], np.float32)
    outputs = ["y", "indices", "inverse", "counts"]
    i64 = TensorProto.INT64

    def unique(name, data, **attrs):
        return helper.make_node("Unique", [data], [name + o for o in outputs],
                                **attrs)
    case("unique_constants", model(
        [unique("rows_", "ints", axis=0),
         unique("first_", "ints", axis=0, sorted=0),
         unique("flat_", "ints"),
         unique("nan_", "values"),
         helper.make_node("Gather", ["x", "rows_inverse"], ["picked"])],
        [vi("x", F, [4, 2])],
        [vi("rows_" + o, i64, shape) for o, shape in
         zip(outputs, ([3, 3], [3], [4], [3]))] +
        [vi("first_" + o, i64, shape) for o, shape in
         zip(outputs, ([3, 3], [3], [4], [3]))] +
        [vi("flat_" + o, i64, shape) for o, shape in
         zip(outputs, ([5], [5], [12], [5]))] +
        [vi("nan_y", F, [4]), vi("nan_counts", i64, [4]),
         vi("picked", F, [4, 2])],
        [("ints", ints), ("values", values)], opset=11),
        {"x": local.standard_normal((4, 2)).astype(np.float32)})


def value_shaped_grad_models():
    """grad/compress.onnx: a parameter through a Compress along an axis
    (the gradient scatters back to the kept columns, zero elsewhere)."""
    w = floats(4, 6)
    save_grad_models({"compress": [
        const("c", np.array([True, False, False, True, True], bool)),
        helper.make_node("Compress", ["w", "c"], ["h"], axis=1)]}, w)


def value_shaped_error_models():
    """errors/NAME.onnx: what Compress, NonZero and Unique refuse."""
    x = vi("x", F, [3, 5])
    save_error_model("compress-runtime-condition",
                     [helper.make_node("Greater", ["x", "zero"], ["positive"]),
                      helper.make_node("Cast", ["positive"], ["positive_f"],
                                       to=F),
                      helper.make_node("ReduceMax", ["positive_f"], ["any"],
                                       axes=[0], keepdims=0),
                      helper.make_node("Cast", ["any"], ["c"],
                                       to=TensorProto.BOOL),
                      helper.make_node("Compress", ["x", "c"], ["y"], axis=1)],
                     [x], ["y"], [("zero", np.float32(0))], opset=11)
    save_error_model("compress-long-condition",
                     [helper.make_node("Compress", ["x", "c"], ["y"], axis=0)],
                     [x], ["y"], [("c", np.ones(4, bool))], opset=11)
    save_error_model("compress-float-condition",
                     [helper.make_node("Compress", ["x", "c"], ["y"], axis=0)],
                     [x], ["y"], [("c", np.ones(3, np.float32))], opset=11)
    save_error_model("nonzero-runtime",
                     [helper.make_node("NonZero", ["x"], ["y"])],
                     [x], ["y"], opset=13)
    save_error_model("unique-scalar-axis",
                     [helper.make_node("Unique", ["s"], ["y"], axis=0),
                      helper.make_node("Add", ["x", "y"], ["z"])],
                     [x], ["z"], [("s", np.float32(1))], opset=11)


def dense_nonzero_nodes(x, s, rows_of):
    """The nodes of an eager experts loop in miniature: the rows of `x`
    where `s` > 0 (a NonZero of a value computed at run time), run through
    a sigmoid, weighted by their score and a matrix product, and scattered
    back (ScatterElements) into zeros, into x, and added to x."""
    return [const("zero", np.float32(0)), const("one_axis", np.array([1])),
            const("wm", floats(4, 4)),
            const("zeros", np.zeros(rows_of, np.float32)),
            helper.make_node("Greater", [s, "zero"], ["pos"]),
            helper.make_node("NonZero", ["pos"], ["nz"]),
            helper.make_node("Transpose", ["nz"], ["nzt"], perm=[1, 0]),
            helper.make_node("Squeeze", ["nzt", "one_axis"], ["idx"]),
            helper.make_node("Gather", [x, "idx"], ["rows"], axis=0),
            helper.make_node("Gather", [s, "idx"], ["sw"], axis=0),
            helper.make_node("Unsqueeze", ["sw", "one_axis"], ["sw2"]),
            helper.make_node("Sigmoid", ["rows"], ["act"]),
            helper.make_node("Mul", ["act", "sw2"], ["upd"]),
            helper.make_node("MatMul", ["upd", "wm"], ["upd2"]),
            helper.make_node("Unsqueeze", ["idx", "one_axis"], ["idx2"]),
            helper.make_node("Shape", ["upd2"], ["sh"]),
            helper.make_node("Expand", ["idx2", "sh"], ["ix"])]


def dense_nonzero_cases():
    """A NonZero of a graph input whose positions only gather rows and
    scatter results back: imported densely (every position, with a mask of
    the hits). Some rows hit, and none."""
    x, s = vi("x", F, [6, 4]), vi("s", F, [6])
    nodes = dense_nonzero_nodes("x", "s", (6, 4)) + [
        helper.make_node("ScatterElements", ["zeros", "ix", "upd2"], ["y"],
                         axis=0),
        helper.make_node("ScatterElements", ["x", "ix", "upd2"], ["y2"],
                         axis=0),
        helper.make_node("ScatterElements", ["x", "ix", "upd2"], ["y3"],
                         axis=0, reduction="add")]
    outputs = [vi(n, F, [6, 4]) for n in ("y", "y2", "y3")]
    m = model(nodes, [x, s], outputs)
    case("nonzero_dense_rows", m,
         {"x": floats(6, 4),
          "s": np.array([0.5, -1, 2, -0.25, 1.5, -3], np.float32)})
    case("nonzero_dense_rows_none_hit", m,
         {"x": floats(6, 4), "s": -np.abs(floats(6)) - 0.1})


def dense_nonzero_reduction_cases():
    """x[mask] of a boolean mask computed at run time (a NonZero's points
    read by GatherND), reduced over the selected rows: a mean of all, a
    sum, a maximum, a mean of squares; some rows selected, and none (NaN
    means, -inf maxima)."""
    logits, m = vi("logits", F, [2, 4, 3]), vi("m", F, [2, 4])
    nodes = [const("half", np.float32(0.5)), const("axis0", np.array([0])),
             helper.make_node("Greater", ["m", "half"], ["mask"]),
             helper.make_node("NonZero", ["mask"], ["nz"]),
             helper.make_node("Transpose", ["nz"], ["points"], perm=[1, 0]),
             helper.make_node("GatherND", ["logits", "points"], ["rows"]),
             helper.make_node("ReduceMean", ["rows"], ["mean"], keepdims=0),
             helper.make_node("ReduceSum", ["rows", "axis0"], ["sum"],
                              keepdims=0),
             helper.make_node("ReduceMax", ["rows", "axis0"], ["max"]),
             helper.make_node("Mul", ["rows", "rows"], ["square"]),
             helper.make_node("ReduceMean", ["square", "axis0"],
                              ["mean_square"], keepdims=0)]
    outputs = [vi("mean", F, []), vi("sum", F, [3]), vi("max", F, [1, 3]),
               vi("mean_square", F, [3])]
    m18 = model(nodes, [logits, m], outputs, opset=18)
    values = floats(2, 4, 3)
    case("nonzero_dense_masked_reductions", m18,
         {"logits": values,
          "m": np.array([[0.9, 0.1, 0.7, 0.2], [0.3, 0.6, 0.0, 0.8]],
                        np.float32)})
    case("nonzero_dense_masked_reductions_none", m18,
         {"logits": values, "m": np.zeros((2, 4), np.float32)})


def dense_nonzero_scatternd_cases():
    """x[mask] = f(y[mask]) of a boolean mask computed at run time: the
    NonZero's points read by GatherND and written by ScatterND (replaced,
    and added), some points selected and none."""
    x, y, m = vi("x", F, [2, 4, 3]), vi("y", F, [2, 4, 3]), vi("m", F, [2, 4])
    nodes = [const("half", np.float32(0.5)), const("two", np.float32(2)),
             helper.make_node("Greater", ["m", "half"], ["mask"]),
             helper.make_node("NonZero", ["mask"], ["nz"]),
             helper.make_node("Transpose", ["nz"], ["points"], perm=[1, 0]),
             helper.make_node("GatherND", ["y", "points"], ["rows"]),
             helper.make_node("Mul", ["rows", "two"], ["doubled"]),
             helper.make_node("ScatterND", ["x", "points", "doubled"],
                              ["replaced"]),
             helper.make_node("ScatterND", ["x", "points", "doubled"],
                              ["added"], reduction="add")]
    outputs = [vi("replaced", F, [2, 4, 3]), vi("added", F, [2, 4, 3])]
    m18 = model(nodes, [x, y, m], outputs, opset=18)
    xs, ys = floats(2, 4, 3), floats(2, 4, 3)
    case("nonzero_dense_scatternd", m18,
         {"x": xs, "y": ys,
          "m": np.array([[0.9, 0.1, 0.7, 0.2], [0.3, 0.6, 0.0, 0.8]],
                        np.float32)})
    case("nonzero_dense_scatternd_none", m18,
         {"x": xs, "y": ys, "m": np.zeros((2, 4), np.float32)})


def dense_nonzero_grad_models():
    """grad/nonzero_dense*.onnx: the rows of a parameter whose sums are
    positive (a NonZero of the parameter; `points`, its transposed output),
    through a tanh: scattered back into zeros (the gradient reaches only
    the hit rows), averaged (x[mask].mean()), and written back in place
    (x[mask] = tanh(x[mask]): the written rows' gradient through the
    update, the others' through the data)."""
    w = floats(6, 4) + np.array([[1], [-1], [1], [1], [-1], [1]],
                                np.float32) * 2
    points = [
        const("axis1", np.array([1])), const("zero", np.float32(0)),
        helper.make_node("ReduceSum", ["w", "axis1"], ["sums"], keepdims=0),
        helper.make_node("Greater", ["sums", "zero"], ["pos"]),
        helper.make_node("NonZero", ["pos"], ["nz"]),
        helper.make_node("Transpose", ["nz"], ["points"], perm=[1, 0])]
    save_grad_models({
        "nonzero_dense": points + [
            const("zeros", np.zeros((6, 4), np.float32)),
            helper.make_node("Squeeze", ["points", "axis1"], ["idx"]),
            helper.make_node("Gather", ["w", "idx"], ["rows"], axis=0),
            helper.make_node("Tanh", ["rows"], ["upd"]),
            helper.make_node("Unsqueeze", ["idx", "axis1"], ["idx2"]),
            helper.make_node("Shape", ["upd"], ["sh"]),
            helper.make_node("Expand", ["idx2", "sh"], ["ix"]),
            helper.make_node("ScatterElements", ["zeros", "ix", "upd"], ["h"],
                             axis=0)],
        "nonzero_dense_mean": points + [
            helper.make_node("GatherND", ["w", "points"], ["rows"]),
            helper.make_node("Tanh", ["rows"], ["t"]),
            helper.make_node("ReduceMean", ["t"], ["h"], keepdims=0)],
        "nonzero_dense_scatternd": points + [
            helper.make_node("GatherND", ["w", "points"], ["rows"]),
            helper.make_node("Tanh", ["rows"], ["t"]),
            helper.make_node("ScatterND", ["w", "points", "t"], ["h"])]}, w)


def dense_nonzero_error_models():
    """errors/nonzero-hits-*.onnx: what mixes a dense NonZero's positions
    (an index among them, their number used as a value, a split into fewer
    pieces than positions)."""
    x, s = vi("x", F, [6, 4]), vi("s", F, [6])
    base = dense_nonzero_nodes("x", "s", (6, 4))
    save_error_model("nonzero-hits-argmax", base + [
        helper.make_node("ArgMax", ["upd2"], ["y"], axis=0)],
        [x, s], ["y"], opset=17)
    save_error_model("nonzero-hits-count", base + [
        helper.make_node("Cast", ["sh"], ["shf"], to=F),
        helper.make_node("Mul", ["shf", "zero"], ["y"])],
        [x, s], ["y"], opset=17)
    save_error_model("nonzero-hits-split", base + [
        const("sizes", np.array([1, 1], np.int64)),
        helper.make_node("Split", ["idx", "sizes"], ["a", "b"], axis=0),
        helper.make_node("Gather", ["x", "a"], ["y"], axis=0)],
        [x, s], ["y"], opset=17)


def roialign_cases():
    """RoiAlign: regions at run time (sampling_ratio 2, max mode, RoiAlign-10
    whose coordinates are output_half_pixel, a spatial_scale, two images);
    adaptive grids of constant regions (sampling_ratio 0: a large region,
    one smaller than a bin, one partly outside the map, one of no extent),
    avg and max, half_pixel."""
    local = np.random.default_rng(47)
    x = local.standard_normal((2, 3, 12, 10)).astype(np.float32)
    rois = np.array([[0.0, 0.0, 18.0, 22.0], [3.0, 5.0, 9.0, 7.0],
                     [12.5, 1.0, 30.0, 30.0], [4.0, 4.0, 4.0, 4.0]],
                    np.float32)
    batch = np.array([1, 0, 0, 1], np.int64)
    feeds = {"x": x, "rois": rois, "batch": batch}

    def runtime_rois(opset, **attrs):
        return model(
            [helper.make_node("RoiAlign", ["x", "rois", "batch"], ["y"],
                              mode="max", output_height=3, output_width=2,
                              sampling_ratio=2, spatial_scale=0.5, **attrs)],
            [vi("x", F, [2, 3, 12, 10]), vi("rois", F, [4, 4]),
             vi("batch", TensorProto.INT64, [4])], [vi("y", F, [4, 3, 3, 2])],
            opset=opset)
    # RoiAlign-10's coordinates are RoiAlign-16's output_half_pixel (the
    # reference applies opset 16's default, half_pixel, to both).
    case("roialign_runtime_rois_max", runtime_rois(10), feeds,
         reference=(runtime_rois(
             16, coordinate_transformation_mode="output_half_pixel"), feeds))
    nodes = [helper.make_node("RoiAlign", ["x", "rois", "batch"], ["avg"],
                              output_height=2, output_width=3,
                              spatial_scale=0.5),
             helper.make_node("RoiAlign", ["x", "rois", "batch"], ["max"],
                              mode="max", output_height=2, output_width=3,
                              spatial_scale=0.5)]
    case("roialign_adaptive_constant_rois", model(
        nodes, [vi("x", F, [2, 3, 12, 10])],
        [vi("avg", F, [4, 3, 2, 3]), vi("max", F, [4, 3, 2, 3])],
        [("rois", rois), ("batch", batch)], opset=16), {"x": x})


def roialign_grad_models():
    """grad/roialign.onnx: a parameter feature map through RoiAlign (the
    gradient scatters each sample's bilinear weights back to its four
    corners)."""
    w = floats(1, 2, 6, 5)
    save_grad_models({"roialign": [
        const("rois", np.array([[0.5, 1.0, 4.0, 5.5], [2.0, 0.0, 3.0, 2.0]],
                               np.float32)),
        const("batch", np.array([0, 0], np.int64)),
        helper.make_node("RoiAlign", ["w", "rois", "batch"], ["h"],
                         output_height=2, output_width=2, sampling_ratio=2)]},
        w)


def roialign_region_grad_models():
    """grad/roialign_regions.onnx: the regions themselves as the parameter w
    (a box regression feeding RoiAlign): the gradient reaches them through
    the bilinear weights. An initializer read only as regions is a constant,
    so the test names it with --parameter."""
    x = np.random.default_rng(53).standard_normal((1, 2, 6, 5)).astype(
        np.float32)
    save_grad_models({"roialign_regions": [
        const("x", x),
        const("batch", np.array([0, 0], np.int64)),
        helper.make_node("RoiAlign", ["x", "w", "batch"], ["h"],
                         output_height=2, output_width=2, sampling_ratio=2)]},
        np.array([[0.7, 1.3, 4.1, 5.2], [2.2, 0.4, 3.1, 2.6]], np.float32))


def roialign_error_models():
    """errors/NAME.onnx: what RoiAlign refuses."""
    save_error_model("roialign-adaptive-runtime-rois",
                     [helper.make_node("RoiAlign", ["x", "rois", "batch"],
                                       ["y"])],
                     [vi("x", F, [1, 2, 6, 6]), vi("rois", F, [3, 4]),
                      vi("batch", TensorProto.INT64, [3])], ["y"], opset=16)
    save_error_model("roialign-bad-rois",
                     [helper.make_node("RoiAlign", ["x", "rois", "batch"],
                                       ["y"], sampling_ratio=1)],
                     [vi("x", F, [1, 2, 6, 6]), vi("rois", F, [3, 5]),
                      vi("batch", TensorProto.INT64, [3])], ["y"], opset=16)


def gridsample_large_batch_cases():
    """GridSample of a batch of 18M pixels whose values are their flat index
    mod 1000 (a row of 3000 such values expanded), read at the last image's
    far corner (flat index 17,999,997): a row counted in f32 reads a
    neighbour past 2^24."""
    n, h, w = 3, 2000, 3000
    g = np.zeros((n, 1, 2, 2), np.float32)
    g[2, 0, 0] = [2 * 2997 / (w - 1) - 1, 1.0]
    g[2, 0, 1] = [2 * 1234 / (w - 1) - 1, 2 * 1001 / (h - 1) - 1]
    case("gridsample_past_f32_rows", model(
        [const("row", (np.arange(w) % 1000).astype(np.float32)
               .reshape(1, 1, 1, w)),
         const("shape", np.array([n, 1, h, w], np.int64)),
         helper.make_node("Expand", ["row", "shape"], ["x"]),
         helper.make_node("GridSample", ["x", "grid"], ["y"], mode="nearest",
                          align_corners=1)],
        [vi("grid", F, [n, 1, 2, 2])], [vi("y", F, [n, 1, 1, 2])], opset=16),
        {"grid": g})

def pool_of_pool_grad_models():
    """grad/maxpool_of_maxpool.onnx: a max pool over a max pool's output
    (GoogLeNet's stride-2 then stride-1 pools, ceil_mode), where one maximum
    repeats in overlapping windows: the repeats are ties of the second pool,
    whose gradient must reach the maximum once (it reached it once per
    repeat)."""
    w = floats(1, 2, 9, 9)
    save_grad_models({"maxpool_of_maxpool": [
        helper.make_node("MaxPool", ["w"], ["p"], kernel_shape=[3, 3],
                         strides=[2, 2], ceil_mode=1),
        helper.make_node("MaxPool", ["p"], ["h"], kernel_shape=[3, 3],
                         pads=[1, 1, 1, 1], ceil_mode=1)]}, w)


def low_precision_cases():
    """The 4- and 2-bit types and the float8 FNUZ and float4 formats in forms
    the backend data lacks: an int4 weight of odd size (its last byte half
    used) dequantized in blocks along axis 0 whose last block is short,
    feeding a MatMul; uint2 values in int32_data (packed bytes, not raw
    data); float4 quantization of ties, overflow and tiny values and its
    dequantization; Cast of out-of-range floats to int8 and uint8 (numpy's
    wrap, which tgc follows) and to int4 outputs; Cast to the FNUZ formats
    with and without saturation, -0 and tiny negative values included. Its
    own generator, so that these cases do not move the others' numbers."""
    r = np.random.default_rng(28)
    I4, U2, F4 = TensorProto.INT4, TensorProto.UINT2, TensorProto.FLOAT4E2M1
    w = r.integers(-8, 8, (5, 3)).astype(np.int8)
    zp = r.integers(-2, 3, (3, 3)).astype(np.int8)
    wt = helper.make_tensor("w", I4, [5, 3], w.ravel().tolist())
    zpt = helper.make_tensor("zp", I4, [3, 3], zp.ravel().tolist())
    s = (r.random((3, 3)) * 0.1 + 0.01).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("DequantizeLinear", ["w", "s", "zp"], ["wd"],
                          axis=0, block_size=2),
         helper.make_node("MatMul", ["x", "wd"], ["y"])],
        "g", [vi("x", F, [2, 5])], [vi("y", F, [2, 3]), vi("wd", F, [5, 3])],
        [wt, numpy_helper.from_array(s, "s"), zpt])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    m.ir_version = 10
    onnx.checker.check_model(m)
    case("int4_weight_blocked_dequantize", m,
         {"x": r.standard_normal((2, 5)).astype(np.float32)})

    u2 = [0, 1, 2, 3, 3, 2, 1]
    graph = helper.make_graph(
        [helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"])],
        "g", [], [vi("y", F, [7])],
        [helper.make_tensor("q", U2, [7], u2),
         numpy_helper.from_array(np.array(0.5, np.float32), "s"),
         helper.make_tensor("z", U2, [], [1])])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)])
    m.ir_version = 11
    onnx.checker.check_model(m)
    assert len(m.graph.initializer[0].int32_data) == 2
    case("uint2_int32_data_dequantize", m, {})

    x = np.array([0.0, 0.25, 0.75, 1.25, 2.5, 3.5, 5.0, 7.0, -13.0, -0.2,
                  1e-9, -6.0, 1e30], np.float32)
    case("float4_quantize_dequantize", model(
        [helper.make_node("QuantizeLinear", ["x", "s"], ["q"],
                          output_dtype=F4),
         helper.make_node("DequantizeLinear", ["q", "s"], ["y"])],
        [vi("x", F, [13])], [vi("q", F4, [13]), vi("y", F, [13])],
        [("s", np.array(0.5, np.float32))], opset=23, check=False),
        {"x": x})

    x = np.array([-200.7, 300.2, 127.9, -128.5, 1e10, -3.5, 7.9, -9.2, 0.4],
                 np.float32)
    case("cast_float_to_narrow_ints_wraps", model(
        [helper.make_node("Cast", ["x"], ["i8"], to=TensorProto.INT8),
         helper.make_node("Cast", ["x"], ["u8"], to=TensorProto.UINT8),
         helper.make_node("Cast", ["x"], ["i4"], to=I4)],
        [vi("x", F, [9])],
        [vi("i8", TensorProto.INT8, [9]), vi("u8", TensorProto.UINT8, [9]),
         vi("i4", I4, [9])], opset=21),
        {"x": x})

    x = np.array([-0.0, -1e-9, 1e-9, 0.3, 241.0, 250.0, -1e9, np.inf,
                  -np.inf, 60000.0], np.float32)
    nodes, outputs = [], []
    for name, to in (("e4", TensorProto.FLOAT8E4M3FNUZ),
                     ("e5", TensorProto.FLOAT8E5M2FNUZ)):
        for sat in (0, 1):
            out = f"{name}_sat{sat}"
            nodes += [helper.make_node("Cast", ["x"], [out + "_q"], to=to,
                                       saturate=sat),
                      helper.make_node("Cast", [out + "_q"], [out], to=F)]
            outputs.append(vi(out, F, [10]))
    case("cast_fnuz_saturate_and_zero", model(
        nodes, [vi("x", F, [10])], outputs, opset=21), {"x": x})


def e8m0_cases():
    """float8e8m0 (opset 24): Cast in each round_mode with and without
    saturation (zero, f32 subnormals, ties of the mantissa, values near
    2^127, infinity, NaN); an MXFP4 weight (float4 elements, e8m0 scales in
    blocks of 32) dequantized into a MatMul."""
    r = np.random.default_rng(37)
    E8, F4 = TensorProto.FLOAT8E8M0, TensorProto.FLOAT4E2M1
    x = np.array([0.0, 1e-40, 6e-39, 1.0, 1.5, 1.25, 3.0, 0.3, 1.7e38,
                  3e38, np.inf, np.nan, 100.0, -3.0], np.float32)
    nodes, outputs = [], []
    for mode in ("up", "down", "nearest"):
        for sat in (0, 1):
            out = f"{mode}_sat{sat}"
            nodes += [helper.make_node("Cast", ["x"], [out + "_q"], to=E8,
                                       round_mode=mode, saturate=sat),
                      helper.make_node("Cast", [out + "_q"], [out], to=F)]
            outputs.append(vi(out, F, [14]))
    case("cast_e8m0_round_modes", model(nodes, [vi("x", F, [14])], outputs,
                                        opset=24), {"x": x})
    values = r.choice([-6, -4, -3, -2, -1.5, -1, -0.5, 0, 0.5, 1, 1.5, 2, 3,
                       4, 6], (4, 64)).astype(np.float32)
    wt = helper.make_tensor("w", F4, [4, 64], values.ravel().tolist())
    scales = helper.make_tensor("s", E8, [4, 2],
                                r.integers(120, 132, 8).tolist(), raw=False)
    graph = helper.make_graph(
        [helper.make_node("DequantizeLinear", ["w", "s"], ["wd"], axis=1,
                          block_size=32, output_dtype=F),
         helper.make_node("MatMul", ["x", "wd"], ["y"], )],
        "g", [vi("x", F, [3, 4])], [vi("y", F, [3, 64])],
        [wt, scales])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 24)])
    m.ir_version = 11
    onnx.checker.check_model(m)
    case("mxfp4_dequantize_matmul", m,
         {"x": r.standard_normal((3, 4)).astype(np.float32)})


def low_precision_grad_models():
    """grad/low_precision_mix.onnx: a parameter through ONNX's low-precision
    types at run time (a float4 quantization with a float4 zero point, casts
    to both FNUZ float8 formats with and without saturation, to float8e8m0
    rounding up, to int4 and uint2), each multiplied back into w, for the
    generated project on the host target (their storage in fused kernels);
    grad/half_weights.onnx: float16 and bfloat16 parameters."""
    local = np.random.default_rng(43)
    w = local.standard_normal((4, 6)).astype(np.float32)
    F4 = TensorProto.FLOAT4E2M1
    nodes = [
        helper.make_node("QuantizeLinear", ["w", "s", "z4"], ["q4"]),
        helper.make_node("DequantizeLinear", ["q4", "s", "z4"], ["d4"]),
        helper.make_node("Mul", ["d4", "w"], ["a1"]),
        helper.make_node("Mul", ["w", "k"], ["wk"]),
        helper.make_node("Cast", ["wk"], ["e4"],
                         to=TensorProto.FLOAT8E4M3FNUZ, saturate=0),
        helper.make_node("Cast", ["e4"], ["e4f"], to=F),
        helper.make_node("Mul", ["e4f", "w"], ["a2"]),
        helper.make_node("Cast", ["wk"], ["e5"],
                         to=TensorProto.FLOAT8E5M2FNUZ),
        helper.make_node("Cast", ["e5"], ["e5f"], to=F),
        helper.make_node("Mul", ["e5f", "w"], ["a3"]),
        helper.make_node("Abs", ["w"], ["wa"]),
        helper.make_node("Cast", ["wa"], ["m"], to=TensorProto.FLOAT8E8M0,
                         round_mode="up"),
        helper.make_node("Cast", ["m"], ["mf"], to=F),
        helper.make_node("Mul", ["mf", "w"], ["a4"]),
        helper.make_node("Cast", ["wk"], ["i4"], to=TensorProto.INT4),
        helper.make_node("Cast", ["i4"], ["i4f"], to=F),
        helper.make_node("Mul", ["i4f", "w"], ["a5"]),
        helper.make_node("Cast", ["wk"], ["u2"], to=TensorProto.UINT2),
        helper.make_node("Cast", ["u2"], ["u2f"], to=F),
        helper.make_node("Mul", ["u2f", "w"], ["a6"]),
        helper.make_node("Sum", ["a1", "a2", "a3", "a4", "a5", "a6"], ["h"]),
        helper.make_node("Mul", ["h", "h"], ["sq"]),
        helper.make_node("ReduceSum", ["sq"], ["loss"], keepdims=0)]
    graph = helper.make_graph(
        nodes, "g", [], [vi("loss", F, [])],
        [numpy_helper.from_array(w, "w"),
         numpy_helper.from_array(np.array(0.25, np.float32), "s"),
         helper.make_tensor("z4", F4, [], [0.0]),
         numpy_helper.from_array(np.array(4.0, np.float32), "k")])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)])
    m.ir_version = 11
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(HERE, "grad", "low_precision_mix.onnx"))

    # Half-precision weights (an export in float16 or bfloat16): the
    # generated trainer starts from their imported values.
    w16 = (local.standard_normal((4, 6)) * 0.5).astype(np.float16)
    wb = helper.make_tensor(
        "wb", TensorProto.BFLOAT16, [6, 3],
        (local.standard_normal(18) * 0.5).astype(np.float32).tolist())
    nodes = [helper.make_node("Cast", ["w16"], ["a"], to=F),
             helper.make_node("Cast", ["wb"], ["b"], to=F),
             helper.make_node("MatMul", ["a", "b"], ["h"]),
             helper.make_node("Mul", ["h", "h"], ["sq"]),
             helper.make_node("ReduceSum", ["sq"], ["loss"], keepdims=0)]
    graph = helper.make_graph(nodes, "g", [], [vi("loss", F, [])],
                              [numpy_helper.from_array(w16, "w16"), wb])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(HERE, "grad", "half_weights.onnx"))


def uint64_cases():
    """uint64 values from 2^63 up, which tgc holds as their bits in int64:
    comparisons, division, remainder, max and min, Abs, reductions, TopK,
    shifts, and casts to and from float (numpy's uint64 semantics, ONNX's
    reference)."""
    U64 = TensorProto.UINT64
    x = np.array([2**63 + 5, 3, 2**64 - 1, 2**63, 7, 2**62], np.uint64)
    y = np.array([2, 2**63 + 1, 1, 2**63, 2**64 - 2, 3], np.uint64)
    names = [("Greater", "gt"), ("Less", "lt"), ("GreaterOrEqual", "ge"),
             ("LessOrEqual", "le"), ("Div", "div"), ("Mod", "mod"),
             ("Max", "max"), ("Min", "min"), ("Sub", "sub"), ("Add", "add")]
    nodes = [helper.make_node(op, ["x", "y"], [out]) for op, out in names]
    outputs = [vi(out, TensorProto.BOOL if out in ("gt", "lt", "ge", "le")
                  else U64, [6]) for _, out in names]
    nodes += [
        helper.make_node("Abs", ["x"], ["abs"]),
        helper.make_node("ReduceMax", ["x"], ["rmax"], keepdims=0),
        helper.make_node("ReduceMin", ["x"], ["rmin"], keepdims=0),
        helper.make_node("Cast", ["x"], ["xf"], to=TensorProto.DOUBLE),
        helper.make_node("Cast", ["big"], ["back"], to=U64),
        helper.make_node("BitShift", ["x", "one"], ["shr"], direction="RIGHT"),
        helper.make_node("TopK", ["x", "k"], ["top", "topi"], axis=0),
        helper.make_node("TopK", ["x", "k"], ["low", "lowi"], axis=0,
                         largest=0)]
    outputs += [vi("abs", U64, [6]), vi("rmax", U64, []), vi("rmin", U64, []),
                vi("xf", TensorProto.DOUBLE, [6]), vi("back", U64, [3]),
                vi("shr", U64, [6]), vi("top", U64, [3]),
                vi("topi", TensorProto.INT64, [3]), vi("low", U64, [3]),
                vi("lowi", TensorProto.INT64, [3])]
    graph = helper.make_graph(
        nodes, "g", [vi("x", U64, [6]), vi("y", U64, [6])], outputs,
        [numpy_helper.from_array(np.array([1] * 6, np.uint64), "one"),
         numpy_helper.from_array(np.array([3], np.int64), "k"),
         # Doubles from 2^63 up within uint64's range (beyond it ONNX
         # leaves the cast undefined).
         numpy_helper.from_array(np.array([1.5e19, 2.0**63, 3.7]), "big")])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    case("uint64_beyond_int64", m, {"x": x, "y": y})


def low_precision_error_models():
    """errors/: packed data of the wrong length, an unknown E8M0 round_mode,
    a BitCast that changes the size, a bitwise op of floats."""
    def save(name, nodes, inputs, outputs, inits=(), opset=21):
        save_error_model(name, nodes, inputs, outputs, inits, opset)

    bad = helper.make_tensor("w", TensorProto.INT4, [5], [1, 2, 3, 4, 5])
    del bad.int32_data[:]
    bad.int32_data.extend([0x21, 0x43])  # 5 nibbles need 3 bytes
    graph = helper.make_graph(
        [helper.make_node("Cast", ["w"], ["y"], to=F)], "g", [],
        [helper.make_empty_tensor_value_info("y")], [bad])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    m.ir_version = 10
    onnx.save(m, os.path.join(HERE, "errors", "int4-packed-length.onnx"))
    save("cast-e8m0-round-mode",
         [helper.make_node("Cast", ["x"], ["y"],
                           to=TensorProto.FLOAT8E8M0, round_mode="sideways")],
         [vi("x", F, [3])], ["y"], opset=24)
    save("bitcast-size",
         [helper.make_node("BitCast", ["x"], ["y"], to=TensorProto.INT64)],
         [vi("x", F, [3])], ["y"], opset=26)
    save("bitwise-float",
         [helper.make_node("BitwiseAnd", ["x", "x"], ["y"])],
         [vi("x", F, [3])], ["y"], opset=18)


def scatter_runtime_cases():
    """Scatters at indices computed at run time (graph inputs) that the
    scatter-add cannot take: int64 data replaced and added, int32 data by
    max, f64 data by min and mul, with repeated indices; and Col2Im in 1-D
    with padding, stride and dilation."""
    r = np.random.default_rng(36)
    I32, D = TensorProto.INT32, TensorProto.DOUBLE
    data = r.integers(-50, 50, (5, 3)).astype(np.int64)
    idx = np.array([[4, 0, 2], [1, 3, 0]], np.int64)
    upd = r.integers(-50, 50, (2, 3)).astype(np.int64)
    for red in ("none", "add"):
        case(f"scatter_elements_int64_runtime_{red}", model(
            [helper.make_node("ScatterElements", ["x", "i", "u"], ["y"],
                              axis=0, reduction=red)],
            [vi("x", I64, [5, 3]), vi("i", I64, [2, 3]), vi("u", I64, [2, 3])],
            [vi("y", I64, [5, 3])], opset=18),
            {"x": data, "i": idx, "u": upd})
    rows = np.array([[2], [0], [2]], np.int64)
    case("scatternd_int32_runtime_max", model(
        [helper.make_node("ScatterND", ["x", "i", "u"], ["y"],
                          reduction="max")],
        [vi("x", I32, [4, 3]), vi("i", I64, [3, 1]), vi("u", I32, [3, 3])],
        [vi("y", I32, [4, 3])], opset=18),
        {"x": r.integers(-9, 9, (4, 3)).astype(np.int32), "i": rows,
         "u": r.integers(-9, 9, (3, 3)).astype(np.int32)})
    for red in ("min", "mul"):
        case(f"scatternd_f64_runtime_{red}", model(
            [helper.make_node("ScatterND", ["x", "i", "u"], ["y"],
                              reduction=red)],
            [vi("x", D, [4, 3]), vi("i", I64, [3, 1]), vi("u", D, [3, 3])],
            [vi("y", D, [4, 3])], opset=18),
            {"x": r.standard_normal((4, 3)), "i": rows,
             "u": r.standard_normal((3, 3))})
    # 1-D: an image of 9 with pads 2 and 1, blocks of 3 dilated by 2,
    # stride 2: (12 - 5) // 2 + 1 = 4 columns.
    case("col2im_1d_pads_strides_dilations", model(
        [const("image", np.array([9], np.int64)),
         const("block", np.array([3], np.int64)),
         helper.make_node("Col2Im", ["x", "image", "block"], ["y"],
                          pads=[2, 1], strides=[2], dilations=[2])],
        [vi("x", F, [2, 6, 4])], [vi("y", F, [2, 2, 9])], opset=18),
        {"x": r.standard_normal((2, 6, 4)).astype(np.float32)})


def deform_conv_models():
    """DeformConv (opset 19) beyond the backend data: two groups and two
    offset groups, a stride, a dilation and asymmetric pads, a mask and a
    bias (a case); a 1-D one; and every input a parameter of a loss, for
    `tgc gradcheck` (the offsets' gradient through the bilinear weights)."""
    r = np.random.default_rng(38)
    x = r.standard_normal((2, 4, 6, 5)).astype(np.float32)
    w = r.standard_normal((6, 2, 2, 3)).astype(np.float32)
    # Output 3 x 2: (6 + 1 + 0 - 3) // 2 + 1 and (5 + 1 + 2 - 5) // 2 + 1.
    offset = (r.standard_normal((2, 2 * 6 * 2, 3, 2)) * 1.5).astype(np.float32)
    mask = r.random((2, 2 * 6, 3, 2)).astype(np.float32)
    b = r.standard_normal(6).astype(np.float32)
    case("deform_conv_groups_offset_groups", model(
        [helper.make_node("DeformConv", ["x", "w", "off", "b", "mask"], ["y"],
                          group=2, offset_group=2, strides=[2, 2],
                          dilations=[2, 2], pads=[1, 1, 0, 2])],
        [vi("x", F, [2, 4, 6, 5]), vi("w", F, [6, 2, 2, 3]),
         vi("off", F, [2, 24, 3, 2]), vi("b", F, [6]),
         vi("mask", F, [2, 12, 3, 2])],
        [vi("y", F, [2, 6, 3, 2])], opset=19),
        {"x": x, "w": w, "off": offset, "b": b, "mask": mask})
    nodes = [helper.make_node("DeformConv", ["x", "w", "off", "b", "mask"],
                              ["h"], offset_group=2, pads=[1, 1, 1, 1]),
             helper.make_node("Mul", ["h", "h"], ["sq"]),
             helper.make_node("ReduceSum", ["sq"], ["loss"], keepdims=0)]
    inits = [("x", r.standard_normal((1, 2, 4, 4)).astype(np.float32)),
             ("w", r.standard_normal((3, 2, 2, 2)).astype(np.float32)),
             ("off", (r.random((1, 16, 5, 5)) * 1.4 - 0.7).astype(np.float32)),
             ("b", r.standard_normal(3).astype(np.float32)),
             ("mask", r.random((1, 8, 5, 5)).astype(np.float32))]
    m = model(nodes, [], [vi("loss", F, [])], inits, opset=19)
    onnx.save(m, os.path.join(HERE, "grad", "deform_conv.onnx"))
    # 1-D (ONNX's reference does 2-D only): expected from numpy, each tap
    # linearly interpolated with zeros outside; (7 + 2 - 5) // 2 + 1 = 3
    # outputs.
    x1 = r.standard_normal((2, 4, 7)).astype(np.float32)
    w1 = r.standard_normal((3, 4, 3)).astype(np.float32)
    off1 = (r.standard_normal((2, 2 * 3, 3)) * 1.5).astype(np.float32)
    mask1 = r.random((2, 2 * 3, 3)).astype(np.float32)
    expected = np.zeros((2, 3, 3), np.float64)
    for n in range(2):
        for m in range(3):
            for c in range(4):
                og = c // 2
                for t in range(3):
                    for o in range(3):
                        pos = -1 + 2 * o + 2 * t + off1[n, og * 3 + t, o]
                        f = int(np.floor(pos))
                        value = 0.0
                        for i, weight in ((f, 1 - (pos - f)), (f + 1, pos - f)):
                            if 0 <= i < 7:
                                value += weight * x1[n, c, i]
                        expected[n, m, o] += (w1[m, c, t] * value *
                                              mask1[n, og * 3 + t, o])
    case("deform_conv_1d", model(
        [helper.make_node("DeformConv", ["x", "w", "off", "", "mask"], ["y"],
                          offset_group=2, strides=[2], dilations=[2],
                          pads=[1, 1])],
        [vi("x", F, [2, 4, 7]), vi("w", F, [3, 4, 3]),
         vi("off", F, [2, 6, 3]), vi("mask", F, [2, 6, 3])],
        [vi("y", F, [2, 3, 3])], opset=19, check=False),
        {"x": x1, "w": w1, "off": off1, "mask": mask1},
        expected=[expected.astype(np.float32)])


def tensor_scatter_models():
    """TensorScatter (opset 24) beyond the backend data: a [B, S, D] cache
    along axis 1 written at per-entry indices (linear), a circular write
    past the end with indices beyond the length; and the cache and the
    update as parameters of a loss, for `tgc gradcheck`."""
    r = np.random.default_rng(39)
    past = r.standard_normal((3, 7, 2)).astype(np.float32)
    upd = r.standard_normal((3, 2, 2)).astype(np.float32)
    for mode, idx in (("linear", [0, 5, 2]), ("circular", [6, 13, 3])):
        case(f"tensorscatter_axis1_{mode}", model(
            [helper.make_node("TensorScatter", ["past", "upd", "w"], ["y"],
                              axis=1, mode=mode)],
            [vi("past", F, [3, 7, 2]), vi("upd", F, [3, 2, 2]),
             vi("w", I64, [3])], [vi("y", F, [3, 7, 2])], opset=24),
            {"past": past, "upd": upd, "w": np.array(idx, np.int64)})
    nodes = [const("w", np.array([1, 4], np.int64)),
             helper.make_node("TensorScatter", ["past", "upd", "w"], ["h"],
                              mode="circular"),
             helper.make_node("Mul", ["h", "h"], ["sq"]),
             helper.make_node("ReduceSum", ["sq"], ["loss"], keepdims=0)]
    inits = [("past", r.standard_normal((2, 2, 5, 3)).astype(np.float32)),
             ("upd", r.standard_normal((2, 2, 3, 3)).astype(np.float32))]
    m = model(nodes, [], [vi("loss", F, [])], inits, opset=24)
    onnx.save(m, os.path.join(HERE, "grad", "tensor_scatter.onnx"))


def gradient_op_models():
    """ai.onnx.preview.training's Gradient beyond the backend data: of a
    non-scalar y (the seed is ones) through MatMul and Tanh, with respect
    to an initializer, an intermediate tensor and an input y does not read
    (zeros), X given as zs; the expected values from numpy. And an error
    model: xs naming no tensor."""
    r = np.random.default_rng(40)
    x = r.standard_normal((2, 3)).astype(np.float32)
    w = r.standard_normal((3, 4)).astype(np.float32)
    z = r.standard_normal((5,)).astype(np.float32)
    h = x @ w
    dh = (1 - np.tanh(h) ** 2).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["h"]),
         helper.make_node("Tanh", ["h"], ["y"]),
         helper.make_node("Gradient", ["w", "h", "z", "x"],
                          ["dw", "dh", "dz"], domain="ai.onnx.preview.training",
                          xs=["w", "h", "z"], zs=["x"], y="y")],
        "g", [vi("x", F, [2, 3]), vi("z", F, [5])],
        [vi("dw", F, [3, 4]), vi("dh", F, [2, 4]), vi("dz", F, [5])],
        [numpy_helper.from_array(w, "w")])
    m = helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17),
        helper.make_opsetid("ai.onnx.preview.training", 1)])
    m.ir_version = 8
    case("gradient_matmul_tanh", m, {"x": x, "z": z},
         expected=[(x.T @ dh).astype(np.float32), dh,
                   np.zeros(5, np.float32)])
    graph = helper.make_graph(
        [helper.make_node("Tanh", ["x"], ["y"]),
         helper.make_node("Gradient", ["x"], ["dx"],
                          domain="ai.onnx.preview.training", xs=["q"],
                          y="y")],
        "g", [vi("x", F, [3])], [helper.make_empty_tensor_value_info("dx")])
    m = helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17),
        helper.make_opsetid("ai.onnx.preview.training", 1)])
    m.ir_version = 8
    onnx.save(m, os.path.join(HERE, "errors", "gradient-unknown-xs.onnx"))


def scatter_reduce_col2im_grad_models():
    """A max and a mul reduction of scatters at indices computed at run time
    (each update compared with every row), and Col2Im (block placements
    added), through the parameter, for `tgc gradcheck`."""
    w = np.random.default_rng(35).standard_normal((4, 6)).astype(np.float32)
    ops = {
        "scatter_elements_max_runtime": [
            helper.make_node("ArgMin", ["w"], ["idx"], axis=1, keepdims=1),
            const("ax", np.array([1], np.int64)),
            helper.make_node("ReduceSum", ["w", "ax"], ["upd"], keepdims=1),
            helper.make_node("ScatterElements", ["w", "idx", "upd"], ["h"],
                             axis=1, reduction="max")],
        "scatternd_mul_runtime": [
            helper.make_node("ArgMax", ["w"], ["am"], axis=0, keepdims=0),
            const("s2", np.array([6, 1], np.int64)),
            helper.make_node("Reshape", ["am", "s2"], ["idx"]),
            helper.make_node("Transpose", ["w"], ["wt"]),
            helper.make_node("MatMul", ["wt", "w"], ["prod"]),
            helper.make_node("Tanh", ["prod"], ["upd"]),
            helper.make_node("ScatterND", ["w", "idx", "upd"], ["h"],
                             reduction="mul")],
        "col2im": [
            const("s3", np.array([1, 4, 6], np.int64)),
            helper.make_node("Reshape", ["w", "s3"], ["cols"]),
            const("image", np.array([3, 4], np.int64)),
            const("block", np.array([2, 2], np.int64)),
            helper.make_node("Col2Im", ["cols", "image", "block"], ["h"])],
    }
    save_grad_models(ops, w, opset=18)


def zero_norm_grad_models():
    """grad/reduce_l2_zero_row.onnx and grad/normalize_zero_row.onnx: a
    parameter with a row of zeros through ReduceL2 (plus one) and through
    F.normalize as the TorchScript exporter writes it (ReduceL2, Clip at
    1e-12, Expand, Div, times a ramp). The norm of zeros has PyTorch's
    gradient 0 (central differences agree: the loss is even in the row),
    not 0 times the square root's infinite slope (NaN)."""
    w = np.random.default_rng(71).standard_normal((4, 6)).astype(np.float32)
    w[1] = 0
    norm = [const("axes", np.array([1], np.int64)),
            helper.make_node("ReduceL2", ["w", "axes"], ["n"], keepdims=1)]
    ops = {
        "reduce_l2_zero_row": norm + [
            const("one", np.float32(1)),
            helper.make_node("Add", ["n", "one"], ["h"])],
        "normalize_zero_row": norm + [
            const("eps", np.float32(1e-12)),
            helper.make_node("Clip", ["n", "eps"], ["c"]),
            helper.make_node("Shape", ["w"], ["shape"]),
            helper.make_node("Expand", ["c", "shape"], ["e"]),
            helper.make_node("Div", ["w", "e"], ["q"]),
            const("ramp", np.arange(24, dtype=np.float32).reshape(4, 6) / 10),
            helper.make_node("Mul", ["q", "ramp"], ["h"])],
    }
    save_grad_models(ops, w, opset=18)


if __name__ == "__main__":
    for d in ("cases", "grad", "errors"):
        shutil.rmtree(os.path.join(HERE, d), ignore_errors=True)
    pad_cases()
    slice_cases()
    cumsum_cases()
    gather_cases()
    tile_topk_isnan_cases()
    grad_models()
    composite_grad_models()
    rounding_grad_models()
    resize_cases()
    resize_grad_models()
    recurrent_cases()
    recurrent_grad_models()
    lrn_mvn_grad_models()
    dropout_grad_models()
    scatter_grad_models()
    gridsample_cases()
    gridsample_grad_models()
    einsum_diagonal_cases()
    training_domain_cases()
    sequence_cases()
    large_constant_cases()
    error_models()
    if_cases()
    batchnorm_mixed_types_cases()
    loop_cases()
    scan_cases()
    control_flow_error_models()
    random_error_models()
    function_cases()
    function_error_models()
    integer_quantize_cases()
    integer_quantize_error_models()
    integer_grad_models()
    spectral_cases()
    spectral_grad_models()
    transformer_grad_models()
    transformer_error_models()
    flex_attention_models()
    newer_op_grad_models()
    newer_op_error_models()
    det_cases()
    det_grad_models()
    det_error_models()
    index_length_error_models()
    extra_output_error_models()
    sanitizer_error_models()
    nan_weight_models()
    random_shape_operand_models()
    value_shaped_cases()
    value_shaped_grad_models()
    value_shaped_error_models()
    roialign_cases()
    roialign_grad_models()
    roialign_error_models()
    gridsample_large_batch_cases()
    pool_of_pool_grad_models()
    roialign_region_grad_models()
    low_precision_cases()
    e8m0_cases()
    low_precision_grad_models()
    uint64_cases()
    low_precision_error_models()
    scatter_reduce_col2im_grad_models()
    scatter_runtime_cases()
    deform_conv_models()
    tensor_scatter_models()
    gradient_op_models()
    dense_nonzero_cases()
    dense_nonzero_reduction_cases()
    dense_nonzero_scatternd_cases()
    dense_nonzero_grad_models()
    dense_nonzero_error_models()
    zero_norm_grad_models()

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


def case(name, m, feeds, reference=None):
    """Writes a case: the model, its inputs and the reference outputs (of
    `reference`, a (model, feeds) pair, when given)."""
    ref_model, ref_feeds = reference or (m, feeds)
    outputs = ReferenceEvaluator(ref_model).run(None, ref_feeds)
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


def save_grad_models(ops, w):
    """grad/NAME.onnx for each op chain of `ops` (from the parameter w to
    h), with the sum of squares of h as its loss."""
    for name, nodes in ops.items():
        nodes = sorted(nodes, key=lambda n: n.op_type != "Constant") + [
            helper.make_node("Mul", ["h", "h"], ["sq"]),
            helper.make_node("ReduceSum", ["sq"], ["loss"], keepdims=0)]
        m = model(nodes, [], [vi("loss", F, [])], [("w", w)])
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


if __name__ == "__main__":
    for d in ("cases", "grad"):
        shutil.rmtree(os.path.join(HERE, d), ignore_errors=True)
    pad_cases()
    slice_cases()
    cumsum_cases()
    gather_cases()
    tile_topk_isnan_cases()
    grad_models()
    composite_grad_models()

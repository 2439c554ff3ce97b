#!/usr/bin/python3
"""Writes the small hand-made ONNX models of test/Import (checked in, so the
tests need no Python). Run with Debian's python3-onnx: /usr/bin/python3
make_models.py, from this directory."""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model(nodes, inputs, outputs, initializers=(), opset=17, name="g"):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(initializers))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def tensor(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


F = TensorProto.FLOAT
rng = np.random.default_rng(0)

# A linear layer with a symbolic batch and a shape sub-graph to fold.
w = (np.arange(12, dtype=np.float32).reshape(4, 3) / 10)
mlp = model(
    [helper.make_node("MatMul", ["x", "fc.weight"], ["h"], name="mm"),
     helper.make_node("Add", ["h", "fc.bias"], ["h2"], name="add"),
     helper.make_node("Shape", ["h2"], ["s"], name="shape"),
     helper.make_node("Reshape", ["h2", "s"], ["h3"], name="reshape"),
     helper.make_node("Relu", ["h3"], ["y"], name="relu")],
    [vi("x", F, ["batch", 4])], [vi("y", F, None)],
    [tensor("fc.weight", w), tensor("fc.bias", np.ones(3, np.float32))])
onnx.save(mlp, "mlp.onnx")
onnx.save_tensor(tensor("x", np.ones((2, 4), np.float32)), "x.pb")

# A classifier with a loss output, a scalar initializer (a constant) and
# two initializers merged by value behind an Identity.
loss = model(
    [helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], name="fc1",
                      transB=1, alpha=0.5, beta=2.0),
     helper.make_node("Identity", ["w1"], ["w2"], name="merged"),
     helper.make_node("Gemm", ["h", "w2"], ["logits"], name="fc2", transB=1),
     helper.make_node("Mul", ["logits", "scale"], ["scaled"], name="scale"),
     helper.make_node("SoftmaxCrossEntropyLoss", ["scaled", "labels"],
                      ["loss"], name="ce")],
    [vi("x", F, [3, 4]), vi("labels", TensorProto.INT64, [3])],
    [vi("loss", F, []), vi("logits", F, [3, 4])],
    [tensor("w1", rng.standard_normal((4, 4)).astype(np.float32)),
     tensor("b1", rng.standard_normal(4).astype(np.float32)),
     tensor("scale", np.float32(1.5))])
onnx.save(loss, "loss.onnx")

# The same linear layer with its weight in an external data file.
ext = model(
    [helper.make_node("MatMul", ["x", "fc.weight"], ["y"], name="mm")],
    [vi("x", F, [2, 4])], [vi("y", F, [2, 3])], [tensor("fc.weight", w)])
onnx.save(ext, "external.onnx", save_as_external_data=True,
          all_tensors_to_one_file=True, location="external.bin",
          size_threshold=0)
missing = onnx.load("external.onnx", load_external_data=False)
for entry in missing.graph.initializer[0].external_data:
    if entry.key == "location":
        entry.value = "no-such-file.bin"
onnx.save(missing, "missing-external.onnx")
escaping = onnx.load("external.onnx", load_external_data=False)
for entry in escaping.graph.initializer[0].external_data:
    if entry.key == "location":
        entry.value = "../external.bin"
onnx.save(escaping, "escaping-external.onnx")

# Bad input.
with open("mlp.onnx", "rb") as f:
    data = f.read()
with open("truncated.onnx", "wb") as f:
    f.write(data[: len(data) // 2])
onnx.save(model([helper.make_node("MyOp", ["x"], ["y"], name="custom",
                                  domain="com.example")],
                [vi("x", F, [2])], [vi("y", F, [2])]), "unknown-domain.onnx")
onnx.save(model([helper.make_node("TfIdfVectorizer", ["x"], ["y"],
                                  name="tfidf")],
                [vi("x", F, [2])], [vi("y", F, [2])]), "unsupported-op.onnx")
onnx.save(model([helper.make_node("Identity", ["x"], ["y"], name="id")],
                [vi("x", TensorProto.STRING, [2])],
                [vi("y", TensorProto.STRING, [2])]), "string-input.onnx")
onnx.save(model([helper.make_node("Reshape", ["x", "x"], ["y"],
                                  name="dynamic_reshape")],
                [vi("x", TensorProto.INT64, [2])],
                [vi("y", TensorProto.INT64, None)]), "dynamic-shape.onnx")

# A mask buffer (an initializer that only feeds a comparison, through a
# Reshape) beside a weight that feeds a comparison and a Mul.
I64 = TensorProto.INT64
mask = model(
    [helper.make_node("Reshape", ["mask", "shape"], ["mask2"], name="view"),
     helper.make_node("Equal", ["mask2", "zero"], ["masked"], name="eq"),
     helper.make_node("Where", ["masked", "ninf", "x"], ["h"], name="fill"),
     helper.make_node("Mul", ["h", "gate"], ["h2"], name="scale"),
     helper.make_node("Less", ["gate", "zero"], ["negative"], name="lt"),
     helper.make_node("Where", ["negative", "x", "h2"], ["y"], name="pick")],
    [vi("x", F, [2, 2])], [vi("y", F, [2, 2])],
    [tensor("mask", np.tril(np.ones((2, 2), np.float32)).reshape(4)),
     tensor("shape", np.array([2, 2], np.int64)),
     tensor("zero", np.float32(0)), tensor("ninf", np.float32(-np.inf)),
     tensor("gate", np.array([0.5, -2.0], np.float32))])
onnx.save(mask, "mask-buffer.onnx")

# What the dynamo exporter (opset 20) leaves of a Llama: parameters under
# their state-dict names, buffers as initializers too (the causal-mask table
# `where` holding -3.4e38, the rotary tables `unsqueeze_14/15`, inv_freq),
# equal norm weights merged into one tensor read by two nodes, and a weight
# transpose folded into `val_3`.
S, D, V = 4, 8, 10
lowest = np.finfo(np.float32).min
dynamo = model(
    [helper.make_node("Gather", ["model.embed_tokens.weight", "ids"], ["h"],
                      name="node_embedding"),
     helper.make_node("Mul", ["h", "model.layers.0.input_layernorm.weight"],
                      ["n"], name="node_mul_1"),
     helper.make_node("Mul", ["n", "unsqueeze_14"], ["rc"], name="node_mul_2"),
     helper.make_node("Mul", ["n", "unsqueeze_15"], ["rs"], name="node_mul_3"),
     helper.make_node("Add", ["rc", "rs"], ["r"], name="node_add_4"),
     helper.make_node("MatMul", ["r", "val_3"], ["q"], name="node_linear_5"),
     helper.make_node("Transpose", ["q"], ["qt"], perm=[0, 2, 1],
                      name="node_transpose_6"),
     helper.make_node("MatMul", ["q", "qt"], ["scores"], name="node_matmul_7"),
     helper.make_node("Add", ["scores", "where"], ["masked"],
                      name="node_add_8"),
     helper.make_node("Softmax", ["masked"], ["p"], axis=-1,
                      name="node_softmax_9"),
     helper.make_node("MatMul", ["p", "q"], ["a"], name="node_matmul_10"),
     helper.make_node("Constant", [], ["pos"], name="node_arange",
                      value=tensor("p", np.arange(S, dtype=np.float32)
                                   .reshape(S, 1))),
     helper.make_node("MatMul", ["pos", "model.rotary_emb.inv_freq"], ["f"],
                      name="node_matmul_11"),
     helper.make_node("Add", ["a", "f"], ["a2"], name="node_add_12"),
     helper.make_node("Mul", ["a2", "model.layers.0.input_layernorm.weight"],
                      ["o"], name="node_mul_13"),
     helper.make_node("Transpose", ["lm_head.weight"], ["head"], perm=[1, 0],
                      name="node_t_14"),
     helper.make_node("MatMul", ["o", "head"], ["logits"],
                      name="node_linear_15")],
    [vi("ids", I64, [2, S])], [vi("logits", F, [2, S, V])],
    [tensor("model.embed_tokens.weight",
            rng.standard_normal((V, D)).astype(np.float32)),
     tensor("model.layers.0.input_layernorm.weight", np.ones(D, np.float32)),
     tensor("unsqueeze_14", np.cos(np.arange(S * D).reshape(1, S, D) / 7)
            .astype(np.float32)),
     tensor("unsqueeze_15", np.sin(np.arange(S * D).reshape(1, S, D) / 7)
            .astype(np.float32)),
     tensor("val_3", rng.standard_normal((D, D)).astype(np.float32) / 3),
     tensor("where", np.triu(np.full((S, S), lowest, np.float32), 1)
            .reshape(1, S, S)),
     tensor("model.rotary_emb.inv_freq",
            (1.0 / 10000 ** (np.arange(0, D, 1) / D)).astype(np.float32)
            .reshape(1, D)),
     tensor("lm_head.weight", rng.standard_normal((V, D)).astype(np.float32))],
    opset=20)
onnx.save(dynamo, "dynamo-buffers.onnx")
with open("dynamo-buffers.parameters.txt", "w") as f:
    f.write("# model.named_parameters() of the PyTorch model\n"
            "model.embed_tokens.weight\n"
            "model.layers.0.input_layernorm.weight\n"
            "model.layers.0.self_attn.q_proj.weight\n"
            "model.norm.weight\n"
            "lm_head.weight\n")
# External data in a sub-folder, in a Constant node's value and in a .pb
# tensor (the hostile-files tests link these to places outside the model).
sub = onnx.load("external.onnx", load_external_data=False)
for entry in sub.graph.initializer[0].external_data:
    if entry.key == "location":
        entry.value = "data/external.bin"
onnx.save(sub, "subdir-external.onnx")
const_value = tensor("c", w)
const = model(
    [helper.make_node("Constant", [], ["c"], name="const", value=const_value),
     helper.make_node("MatMul", ["x", "c"], ["y"], name="mm")],
    [vi("x", F, [2, 4])], [vi("y", F, [2, 3])])
# onnx.save externalizes initializers only: point the Constant's value at
# external.bin (which holds the same weight) by hand.
value = const.graph.node[0].attribute[0].t
onnx.external_data_helper.set_external_data(value, "external.bin", 0, w.nbytes)
value.ClearField("raw_data")
onnx.save(const, "constant-external.onnx")
xt = tensor("x", np.ones((2, 4), np.float32))
onnx.external_data_helper.set_external_data(xt, "x.bin")
xt.ClearField("raw_data")
onnx.save_tensor(xt, "x-external.pb")

# An Expand to 2^32 x 2^32: the element count wraps to 0 in int64.
onnx.save(model([helper.make_node("Expand", ["x", "shape"], ["y"],
                                  name="expand")],
                [vi("x", F, [1])], [vi("y", F, None)],
                [tensor("shape", np.array([2**32, 2**32], np.int64))]),
          "expand-huge.onnx")

# Found by tgc-fuzz-onnx (docs/fuzzing.md). A Reshape whose shape's product
# overflows int64; a ConstantOfShape of an int64 that a double does not hold
# (2^53 + 1); an int64 Range past 2^53.
I64 = TensorProto.INT64
onnx.save(model([helper.make_node("Reshape", ["x", "shape"], ["y"],
                                  name="reshape")],
                [vi("x", F, [4])], [vi("y", F, None)],
                [tensor("shape", np.array([2**40, 2**40, -1], np.int64))]),
          "reshape-overflow.onnx")
onnx.save(model([helper.make_node("ConstantOfShape", ["shape"], ["y"],
                                  name="fill",
                                  value=numpy_helper.from_array(
                                      np.array([2**53 + 1], np.int64)))],
                [], [vi("y", I64, None)],
                [tensor("shape", np.array([2], np.int64))]),
          "constant-of-shape-int64.onnx")
onnx.save(model([helper.make_node("Range", ["start", "limit", "delta"], ["y"],
                                  name="range")],
                [], [vi("y", I64, None)],
                [tensor("start", np.int64(2**62)),
                 tensor("limit", np.int64(2**62 + 3)),
                 tensor("delta", np.int64(1))]),
          "range-int64-huge.onnx")
# NLLLoss over 2^24 + 1 classes: more class ids than the importer builds.
onnx.save(model([helper.make_node("NegativeLogLikelihoodLoss", ["x", "t"], ["y"],
                                  name="nll")],
                [vi("x", F, [1, 2**24 + 1]), vi("t", I64, [1])],
                [vi("y", F, [])]),
          "nllloss-many-classes.onnx")

# A shape operand passed as data, as the ONNX backend tests pass them: tg
# needs it at import, so `--input-value` fixes it (input-value.test).
onnx.save(model([helper.make_node("Reshape", ["x", "shape"], ["y"],
                                  name="reshape")],
                [vi("x", F, [2, 6]), vi("shape", TensorProto.INT64, [2])],
                [vi("y", F, None)]), "reshape-shape-input.onnx")
onnx.save_tensor(tensor("shape", np.array([3, 4], np.int64)), "shape-3x4.pb")
np.save("shape-4x3.npy", np.array([4, 3], np.int64))
np.save("shape-3.npy", np.array([3], np.int64))
np.save("shape-float.npy", np.array([3, 4], np.float32))

# BatchNormalization's statistics are buffers: by their PyTorch names, and
# by their use when the exporter named them otherwise (parameters-buffers.test).
bn = model([helper.make_node("BatchNormalization",
                             ["x", "bn.weight", "bn.bias", "bn.running_mean",
                              "bn.running_var"], ["h"], name="bn"),
            helper.make_node("BatchNormalization",
                             ["h", "bn2.weight", "bn2.bias", "mu", "sigma2"],
                             ["y"], name="bn2")],
           [vi("x", F, [2, 3, 4])], [vi("y", F, None)],
           [tensor("bn.weight", np.ones(3, np.float32)),
            tensor("bn.bias", np.zeros(3, np.float32)),
            tensor("bn.running_mean", np.array([0.1, 0.2, 0.3], np.float32)),
            tensor("bn.running_var", np.array([1.0, 2.0, 3.0], np.float32)),
            tensor("bn2.weight", np.full(3, 2.0, np.float32)),
            tensor("bn2.bias", np.full(3, 0.5, np.float32)),
            tensor("mu", np.array([0.0, 0.5, 1.0], np.float32)),
            tensor("sigma2", np.array([1.0, 1.5, 2.0], np.float32))])
onnx.save(bn, "batchnorm-buffers.onnx")

# Two training-mode BatchNormalizations updating the same running statistics
# (batchnorm-running-stats.test): the step keeps the first's update.
shared = model([helper.make_node("BatchNormalization",
                                 ["x", "bn.weight", "bn.bias", "bn.running_mean",
                                  "bn.running_var"], ["h", "m1", "v1"],
                                 name="bn_a", training_mode=1),
                helper.make_node("BatchNormalization",
                                 ["h", "bn.weight", "bn.bias", "bn.running_mean",
                                  "bn.running_var"], ["y", "m2", "v2"],
                                 name="bn_b", training_mode=1)],
               [vi("x", F, [2, 3, 4])], [vi("y", F, None)],
               [tensor("bn.weight", np.ones(3, np.float32)),
                tensor("bn.bias", np.zeros(3, np.float32)),
                tensor("bn.running_mean", np.zeros(3, np.float32)),
                tensor("bn.running_var", np.ones(3, np.float32))])
onnx.save(shared, "batchnorm-shared-stats.onnx")

# A half-precision activation normalized with f32 parameters and running
# statistics (BatchNormalization-15's T, T1 and T2; batchnorm-running-stats.test):
# computed in f32, Y in f16, the running statistics f32 state.
mixed = model([helper.make_node("BatchNormalization",
                                ["x", "bn.weight", "bn.bias", "bn.running_mean",
                                 "bn.running_var"], ["y", "m", "v"],
                                name="bn", training_mode=1)],
              [vi("x", TensorProto.FLOAT16, [2, 3, 4])],
              [vi("y", TensorProto.FLOAT16, None)],
              [tensor("bn.weight", np.ones(3, np.float32)),
               tensor("bn.bias", np.zeros(3, np.float32)),
               tensor("bn.running_mean", np.zeros(3, np.float32)),
               tensor("bn.running_var", np.ones(3, np.float32))], opset=15)
onnx.save(mixed, "batchnorm-mixed-types.onnx")

# Running statistics read through Identity nodes (exporters put them in
# front of shared initializers; batchnorm-running-stats.test): still state
# the step updates.
through = model([helper.make_node("Identity", ["bn.running_mean"], ["m0"]),
                 helper.make_node("Identity", ["m0"], ["m1"]),
                 helper.make_node("Identity", ["bn.running_var"], ["v0"]),
                 helper.make_node("BatchNormalization",
                                  ["x", "bn.weight", "bn.bias", "m1", "v0"],
                                  ["y", "m", "v"], name="bn", training_mode=1)],
                [vi("x", F, [2, 3, 4])], [vi("y", F, None)],
                [tensor("bn.weight", np.ones(3, np.float32)),
                 tensor("bn.bias", np.zeros(3, np.float32)),
                 tensor("bn.running_mean", np.zeros(3, np.float32)),
                 tensor("bn.running_var", np.ones(3, np.float32))], opset=15)
onnx.save(through, "batchnorm-identity-stats.onnx")

# A Reshape's shape computed from a graph input and a parameter
# (input-value.test): the error names both, and fixing the input leaves
# the parameter named.
derived = model([helper.make_node("Add", ["n", "one"], ["n1"]),
                 helper.make_node("Cast", ["w"], ["wi"], to=TensorProto.INT64),
                 helper.make_node("Concat", ["n1", "wi"], ["shape"], axis=0),
                 helper.make_node("Reshape", ["x", "shape"], ["h"],
                                  name="reshape"),
                 helper.make_node("Mul", ["h", "w"], ["y"])],
                [vi("x", F, [2, 6]), vi("n", TensorProto.INT64, [1])],
                [vi("y", F, None)],
                [tensor("one", np.array([1], np.int64)),
                 tensor("w", np.array([4.0], np.float32))])
onnx.save(derived, "reshape-derived-shape.onnx")
np.save("n-2.npy", np.array([2], np.int64))

# Inputs sharing symbolic dimensions, as exports with dynamic axes write
# them (input_ids, attention_mask, labels): binding one input's shape
# binds the others' (import.test, import-errors.test).
shared = model([helper.make_node("Mul", ["x", "mask"], ["h"], name="mask"),
                helper.make_node("MatMul", ["h", "w"], ["logits"], name="mm"),
                helper.make_node("Transpose", ["logits"], ["t"],
                                 perm=[0, 2, 1], name="classes"),
                helper.make_node("SoftmaxCrossEntropyLoss", ["t", "labels"],
                                 ["loss"], name="ce")],
               [vi("x", F, ["batch", "seq", 4]), vi("mask", F, ["batch", "seq", 1]),
                vi("labels", TensorProto.INT64, ["batch", "seq"])],
               [vi("loss", F, [])],
               [tensor("w", rng.standard_normal((4, 5)).astype(np.float32))])
onnx.save(shared, "shared-symbols.onnx")

# Biases of rank 4: ConvNeXt V2's GRN bias [1, 1, 1, C] (zeros, as
# initialized) is a layer's and trains; GPT-2's attn.bias, a [1, 1, n, n]
# table of ones and zeros, is a mask (parameters-buffers.test).
biases = model([helper.make_node("Mul", ["x", "grn.weight"], ["h"]),
                helper.make_node("Add", ["h", "grn.bias"], ["g"]),
                helper.make_node("Mul", ["z", "attn.bias"], ["m"]),
                helper.make_node("ReduceSum", ["g"], ["s1"], keepdims=0),
                helper.make_node("ReduceSum", ["m"], ["s2"], keepdims=0),
                helper.make_node("Add", ["s1", "s2"], ["loss"])],
               [vi("x", F, [2, 3, 3, 4]), vi("z", F, [2, 1, 3, 3])],
               [vi("loss", F, [])],
               [tensor("grn.weight", np.ones((1, 1, 1, 4), np.float32)),
                tensor("grn.bias", np.zeros((1, 1, 1, 4), np.float32)),
                tensor("attn.bias",
                       np.tril(np.ones((3, 3), np.float32))[None, None])])
onnx.save(biases, "rank4-biases.onnx")

#!/usr/bin/env python3
"""The ONNX random ops PyTorch 1.13's exporter does not write (it writes
torch.bernoulli as RandomUniformLike, Less and Cast; see
gen_random_models.py), for test/Import/pytorch-random.test: RandomNormal
and RandomUniform with a `shape` attribute, shifted and scaled, one of them
f16; Bernoulli to int64 and to bool; RandomNormalLike of an f64 tensor
(drawn in f64) and RandomUniformLike with a `dtype`. The references are
tgc's numbers (tgc_philox.py) for the seed in seed.npy and the streams the
importer gives the nodes in graph order. Run with the onnx package from
this directory:

    python3 gen_random_ops.py

Writes random-ops.onnx, p.npy, d.npy and random-ops.<output>.npy.
"""
import numpy as np
import onnx
from onnx import TensorProto, helper

from tgc_philox import tgc_random

SEED = int(np.load("seed.npy"))
p = np.array([[0.0, 1.0, 0.5, 0.25, 0.9]] * 3, dtype=np.float32)
p[1] = np.linspace(0.05, 0.95, 5)
d = np.zeros((2, 3), dtype=np.float64)

nodes = [
    helper.make_node("RandomNormal", [], ["normal"], shape=[4, 6], mean=2.0,
                     scale=0.5, seed=7.0),
    helper.make_node("RandomUniform", [], ["uniform16"], shape=[3, 4],
                     low=-1.0, high=3.0, dtype=TensorProto.FLOAT16),
    helper.make_node("Bernoulli", ["p"], ["bern64"], dtype=TensorProto.INT64),
    helper.make_node("Bernoulli", ["p"], ["bernbool"], dtype=TensorProto.BOOL),
    helper.make_node("RandomNormalLike", ["d"], ["normal64"]),
    helper.make_node("RandomUniformLike", ["d"], ["uniform32"],
                     dtype=TensorProto.FLOAT),
]
outputs = {
    "normal": (TensorProto.FLOAT, [4, 6]),
    "uniform16": (TensorProto.FLOAT16, [3, 4]),
    "bern64": (TensorProto.INT64, [3, 5]),
    "bernbool": (TensorProto.BOOL, [3, 5]),
    "normal64": (TensorProto.DOUBLE, [2, 3]),
    "uniform32": (TensorProto.FLOAT, [2, 3]),
}
graph = helper.make_graph(
    nodes, "random_ops",
    [helper.make_tensor_value_info("p", TensorProto.FLOAT, [3, 5]),
     helper.make_tensor_value_info("d", TensorProto.DOUBLE, [2, 3])],
    [helper.make_tensor_value_info(n, t, s) for n, (t, s) in outputs.items()])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 15)])
onnx.checker.check_model(model)
onnx.save(model, "random-ops.onnx")
np.save("p.npy", p)
np.save("d.npy", d)

expected = {
    "normal": tgc_random((4, 6), SEED, 0, True) * np.float32(0.5)
              + np.float32(2.0),
    "uniform16": (tgc_random((3, 4), SEED, 1, False) * np.float32(4.0)
                  + np.float32(-1.0)).astype(np.float16),
    "bern64": (tgc_random((3, 5), SEED, 2, False) < p).astype(np.int64),
    "bernbool": tgc_random((3, 5), SEED, 3, False) < p,
    "normal64": tgc_random((2, 3), SEED, 4, True, f32=False),
    "uniform32": tgc_random((2, 3), SEED, 5, False),
}
for name, value in expected.items():
    np.save(f"random-ops.{name}.npy", value)

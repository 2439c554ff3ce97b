#!/usr/bin/env python3
"""Writes onnx-1.23-node/: the node test cases of ONNX 1.23's backend test
suite that Debian's libonnx-testdata (ONNX 1.12, opsets up to 17) does not
have, or has at an older opset: each case whose model imports the default
domain at an opset after 21 (the ops' versions of opsets 22 to 28), or
whose name the 1.12 suite lacks (ops and forms added since), up to 100 kB.

The cases are ONNX's own (onnx/backend/test/case/node, Apache-2.0): their
models, inputs and expected outputs are written as ONNX's
`backend-test-tools generate-data` writes them, in the layout
tgc-onnx-conformance reads (CASE/model.onnx,
CASE/test_data_set_N/{input,output}_M.pb). The outputs are checked in, so
the tests need no Python. To regenerate:

    python3 -m venv venv && venv/bin/pip install onnx==1.23.2
    venv/bin/python make_onnx_node_cases.py      # from this directory
    tgc-onnx-conformance --write-passing /tmp/p onnx-1.23-node   # then
    # replace the onnx-1.23-node/ lines of onnx-conformance-passing.txt
"""
import os
import shutil
import sys

import onnx
import onnx.backend.test.case.node as node_test
from onnx import TensorProto, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "onnx-1.23-node")
OLD_SUITE = "/usr/share/libonnx-testdata/data/node"
MAX_BYTES = 100_000


def serialize(value, info):
    kind = info.type
    if kind.HasField("sequence_type"):
        return numpy_helper.from_list(value, info.name)
    if kind.HasField("optional_type"):
        return numpy_helper.from_optional(value, info.name)
    if kind.HasField("map_type"):
        return numpy_helper.from_dict(value, info.name)
    if isinstance(value, TensorProto):
        return value
    return numpy_helper.from_array(value, info.name)


def default_opset(model):
    for opset in model.opset_import:
        if opset.domain in ("", "ai.onnx"):
            return opset.version
    return 0


def main():
    if onnx.__version__ != "1.23.2":
        sys.exit(f"make_onnx_node_cases.py: needs onnx 1.23.2, not "
                 f"{onnx.__version__}")
    old = set(os.listdir(OLD_SUITE))
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    written = 0
    for case in node_test.collect_testcases(None):
        if default_opset(case.model) <= 21 and case.name in old:
            continue
        files = {"model.onnx": case.model.SerializeToString()}
        for i, (inputs, outputs) in enumerate(case.data_sets):
            for kind, values, infos in (("input", inputs, case.model.graph.input),
                                        ("output", outputs,
                                         case.model.graph.output)):
                for j, value in enumerate(values):
                    files[f"test_data_set_{i}/{kind}_{j}.pb"] = serialize(
                        value, infos[j]).SerializeToString()
        if sum(len(data) for data in files.values()) > MAX_BYTES:
            continue
        for path, data in files.items():
            full = os.path.join(OUT, case.name, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "wb") as f:
                f.write(data)
        written += 1
    print(f"make_onnx_node_cases.py: {written} cases in {OUT}")


if __name__ == "__main__":
    main()

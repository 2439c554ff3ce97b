"""Writes an example file for `--data FILE.safetensors` from .npy files:
make_examples.py OUT NAME=FILE.npy[:DTYPE]... Each tensor NAME holds the
array of FILE.npy, converted to the safetensors DTYPE (F32, F64, F16, BF16,
I64, I32, I16, I8, U8, BOOL; default: the array's own). Also
make_examples.py --classify OUT N FEATURES CLASSES SEED: N examples of
FEATURES normal features in 'inputs' and in 'labels' the class (below
CLASSES) of the largest of the first CLASSES features, a task an MLP
learns."""
import json
import struct
import sys

import numpy as np

TYPES = {"F32": np.float32, "F64": np.float64, "F16": np.float16,
         "I64": np.int64, "I32": np.int32, "I16": np.int16, "I8": np.int8,
         "U8": np.uint8, "BOOL": np.bool_}
NAMES = {np.dtype(t): name for name, t in TYPES.items()}


def save(path, tensors):
    """Writes the (name, array, dtype) triples to `path`."""
    header, blobs, offset = {}, [], 0
    for name, array, dtype in tensors:
        if dtype == "BF16":
            bits = np.ascontiguousarray(array, np.float32).view(np.uint32)
            # Round to nearest even, as every bf16 conversion does.
            bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
            blob = bits.astype("<u2").tobytes()
        else:
            blob = np.ascontiguousarray(array, TYPES[dtype]).tobytes()
        header[name] = {"dtype": dtype, "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def main():
    if sys.argv[1] == "--classify":
        out, n, features, classes, seed = sys.argv[2:7]
        n, features, classes = int(n), int(features), int(classes)
        rng = np.random.default_rng(int(seed))
        inputs = rng.standard_normal((n, features)).astype(np.float32)
        labels = inputs[:, :classes].argmax(axis=1).astype(np.int64)
        save(out, [("inputs", inputs, "F32"), ("labels", labels, "I64")])
        return
    tensors = []
    for spec in sys.argv[2:]:
        name, _, rest = spec.partition("=")
        path, _, dtype = rest.partition(":")
        array = np.load(path)
        tensors.append((name, array, dtype or NAMES[array.dtype]))
    save(sys.argv[1], tensors)


if __name__ == "__main__":
    main()

"""Writes a .safetensors file of F32 tensors for lit tests, without numpy:
make_safetensors.py OUT NAME=SIZE[@BEGIN]... Each tensor is a vector of SIZE
values (its index + 1); @BEGIN places its data at byte BEGIN (by default
after the previous one), so that tests can make offsets overlap."""
import json
import struct
import sys

out, specs = sys.argv[1], sys.argv[2:]
header, end = {}, 0
for spec in specs:
    name, rest = spec.split("=")
    size, _, begin = rest.partition("@")
    size = int(size)
    begin = int(begin) if begin else end
    header[name] = {"dtype": "F32", "shape": [size],
                    "data_offsets": [begin, begin + 4 * size]}
    end = max(end, begin + 4 * size)
data = bytearray(end)
for name, info in header.items():
    begin = info["data_offsets"][0]
    for i in range(info["shape"][0]):
        struct.pack_into("<f", data, begin + 4 * i, float(i + 1))
text = json.dumps(header).encode()
with open(out, "wb") as f:
    f.write(struct.pack("<Q", len(text)) + text + bytes(data))

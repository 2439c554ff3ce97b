"""Copies a .safetensors file with the first element of one F32 tensor set
to NaN, for lit tests: poison_safetensors.py IN NAME OUT."""
import json
import struct
import sys

source, name, out = sys.argv[1:4]
data = bytearray(open(source, "rb").read())
length = struct.unpack("<Q", data[:8])[0]
entry = json.loads(data[8:8 + length])[name]
assert entry["dtype"] == "F32", entry
at = 8 + length + entry["data_offsets"][0]
data[at:at + 4] = struct.pack("<f", float("nan"))
open(out, "wb").write(data)

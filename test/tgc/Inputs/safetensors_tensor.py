"""Prints the bytes of one tensor of a .safetensors file as hex: lit tests
compare tensors between files without numpy."""
import json
import struct
import sys

path, name = sys.argv[1], sys.argv[2]
data = open(path, "rb").read()
(length,) = struct.unpack("<Q", data[:8])
header = json.loads(data[8:8 + length])
begin, end = header[name]["data_offsets"]
print(data[8 + length + begin:8 + length + end].hex())

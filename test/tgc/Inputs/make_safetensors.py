"""Writes a .safetensors file of tensors for lit tests, without numpy:
make_safetensors.py OUT NAME=SIZE[@BEGIN][:DTYPE]... Each tensor is a vector
of SIZE values (its index + 1, at most 16); @BEGIN places its data at byte
BEGIN (by default after the previous one), so that tests can make offsets
overlap; DTYPE is F32 (the default), BF16 or F8_E4M3."""
import json
import struct
import sys

out, specs = sys.argv[1], sys.argv[2:]
header, end = {}, 0
for spec in specs:
    name, rest = spec.split("=")
    rest, _, dtype = rest.partition(":")
    dtype = dtype or "F32"
    size, _, begin = rest.partition("@")
    size = int(size)
    width = {"F32": 4, "BF16": 2, "F8_E4M3": 1}[dtype]
    begin = int(begin) if begin else end
    header[name] = {"dtype": dtype, "shape": [size],
                    "data_offsets": [begin, begin + width * size]}
    end = max(end, begin + width * size)


def e4m3(value):
    """The f8E4M3FN bits of a small positive integer (exact up to 16)."""
    exponent = value.bit_length() - 1
    mantissa = (value - (1 << exponent)) * 8 >> exponent
    return (exponent + 7) << 3 | mantissa


data = bytearray(end)
for name, info in header.items():
    begin = info["data_offsets"][0]
    for i in range(info["shape"][0]):
        if info["dtype"] == "F32":
            struct.pack_into("<f", data, begin + 4 * i, float(i + 1))
        elif info["dtype"] == "BF16":
            bits = struct.unpack("<I", struct.pack("<f", float(i + 1)))[0]
            struct.pack_into("<H", data, begin + 2 * i, bits >> 16)
        else:
            data[begin + i] = e4m3(i + 1)
text = json.dumps(header).encode()
with open(out, "wb") as f:
    f.write(struct.pack("<Q", len(text)) + text + bytes(data))

"""Checks that two `tgc report --json` outputs and a compiled step agree.

usage: same-figures.py MODEL_REPORT.json STEP_REPORT.json STEP.mlir

Prints "same: peak P arena A" when the report of the model, the report of
the step `tgc compile` wrote and the step's own tg.arena_size agree; else
names what differs and exits 1.
"""
import json
import re
import sys

model, step, mlir = sys.argv[1:4]
a = json.load(open(model))
b = json.load(open(step))
match = re.search(r"tg\.arena_size = (\d+)", open(mlir).read())
arena = int(match.group(1)) if match else None
keys = ["peak_bytes", "arena_bytes", "bytes_per_param", "kernels", "flops"]
differ = [k for k in keys if a[k] != b[k]]
if arena != a["arena_bytes"]:
    differ.append("tg.arena_size %s" % arena)
if differ:
    print("differ:", ", ".join(differ), a, b)
    sys.exit(1)
print("same: peak %d arena %d" % (a["peak_bytes"], arena))

"""Checks the per-device peaks of compiled pipelines (pipeline-memory.test).

Arguments: NAME=REPORT.json ... for 1f1b-M and gpipe-M reports of the same
model on pp=2. Under 1F1B the first device keeps at most P micro-batches of
activations: from M=4 on, its peak grows only by the batch arguments it
holds (BATCH bytes per micro-batch). Under GPipe it keeps all M: each
micro-batch adds at least ACTIVATION bytes.
"""
import json
import sys

BATCH = 256  # input_ids (device 0 reads no labels), 2 x 16 int64.
ACTIVATION = 100_000

peaks = {}
for arg in sys.argv[1:]:
    name, path = arg.split("=", 1)
    with open(path) as f:
        pipeline = json.load(f)["pipeline"]
    peaks[name] = pipeline["peak_bytes_per_device"][0]

for m, n in [(4, 6), (6, 8)]:
    grow = peaks[f"1f1b-{n}"] - peaks[f"1f1b-{m}"]
    if grow != BATCH * (n - m):
        sys.exit(f"1f1b: device 0 grew by {grow} bytes from M={m} to M={n}, "
                 f"expected only the batch's {BATCH * (n - m)}")
    grow = peaks[f"gpipe-{n}"] - peaks[f"gpipe-{m}"]
    if grow < ACTIVATION * (n - m):
        sys.exit(f"gpipe: device 0 grew by only {grow} bytes from M={m} to "
                 f"M={n}")
    if peaks[f"gpipe-{n}"] <= peaks[f"1f1b-{n}"]:
        sys.exit(f"gpipe at M={n} does not peak above 1f1b")
print("pipeline memory ok:", peaks)

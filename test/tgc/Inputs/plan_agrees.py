"""Checks that `tgc plan --json`'s chosen plan has the figures `tgc report`
gives for it: writes the chosen model with tgc-zoo, reports it with the
plan's compile flags, and compares the peak and the step time."""
import json
import shlex
import subprocess
import sys

tgc, zoo, plan_file, model_file = sys.argv[1:5]
plan = json.load(open(plan_file))
chosen = plan["chosen"]
write = shlex.split(chosen["command"].split(" && ")[0])
assert write[0] == "tgc-zoo", write
write = [zoo] + [model_file if a == "plan-model.mlir" else a for a in write[1:]]
subprocess.run(write, check=True)
report = json.loads(subprocess.run(
    [tgc, "report", model_file, "--json", "--device=" + plan["device"]] +
    chosen["compile_flags"], check=True, capture_output=True, text=True).stdout)
print("plan:   peak", chosen["peak_bytes"], "step", chosen["step_time_s"],
      "exact" if chosen["exact"] else "extrapolated")
print("report: peak", report["peak_bytes"], "step", report["step_time_s"])
same = (chosen["peak_bytes"] == report["peak_bytes"] and
        abs(chosen["step_time_s"] - report["step_time_s"]) <=
        1e-12 * report["step_time_s"])
print("AGREE" if same else "DIFFER")

#!/usr/bin/env python3
# Writes the pipelined test steps of test/tgc/pipeline-report.test:
#   pipelined_mlp.py M SCHEDULE > pipelined-mlp-M-SCHEDULE.mlir
import sys
# Two-stage pipelined 2-layer MLP (docs/pipeline.md), M micro-batches.
M = int(sys.argv[1]); sched = sys.argv[2]
P = 2
def f(k): return [
 (0, k, False, f"%h{k} = tg.matmul %x{k}, %w1 : (tensor<16x16xf32>, tensor<16x8xf32>) -> tensor<16x8xf32>"),
 (0, k, False, f"%a{k} = tg.tanh %h{k} : tensor<16x8xf32>"),
 (0, k, False, f"%t{k} = shard.send %a{k} on @mesh grid_axes = [0] destination = [1]", "tensor<16x8xf32>"),
 (1, k, False, f"%r{k} = shard.recv %t{k} on @mesh grid_axes = [0] source = [0]", "tensor<16x8xf32>"),
 (1, k, False, f"%o{k} = tg.matmul %r{k}, %w2 : (tensor<16x8xf32>, tensor<8x4xf32>) -> tensor<16x4xf32>"),
 (1, k, False, f"%l{k} = tg.reduce sum %o{k} dims = [0, 1] : tensor<16x4xf32> -> tensor<f32>"),
]
def b(k): return [
 (1, k, True, f"%one{k} = tg.constant dense<1.0> : tensor<16x4xf32>"),
 (1, k, True, f"%da{k} = tg.matmul %one{k}, %w2 transpose_b : (tensor<16x4xf32>, tensor<8x4xf32>) -> tensor<16x8xf32>"),
 (1, k, True, f"%dw2_{k} = tg.matmul %r{k}, %one{k} transpose_a : (tensor<16x8xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>"),
 (1, k, True, f"%u{k} = shard.send %da{k} on @mesh grid_axes = [0] destination = [0]", "tensor<16x8xf32>"),
 (0, k, True, f"%rd{k} = shard.recv %u{k} on @mesh grid_axes = [0] source = [1]", "tensor<16x8xf32>"),
 (0, k, True, f"%sq{k} = tg.mul %a{k}, %a{k} : tensor<16x8xf32>"),
 (0, k, True, f"%ones{k} = tg.constant dense<1.0> : tensor<16x8xf32>"),
 (0, k, True, f"%s{k} = tg.sub %ones{k}, %sq{k} : tensor<16x8xf32>"),
 (0, k, True, f"%dh{k} = tg.mul %rd{k}, %s{k} : tensor<16x8xf32>"),
 (0, k, True, f"%dw1_{k} = tg.matmul %x{k}, %dh{k} transpose_a : (tensor<16x16xf32>, tensor<16x8xf32>) -> tensor<16x8xf32>"),
] + ([] if k == 0 else [
 (0, k, True, f"%gw1_{k} = tg.add %{'dw1_0' if k == 1 else f'gw1_{k-1}'}, %dw1_{k} : tensor<16x8xf32>"),
 (1, k, True, f"%gw2_{k} = tg.add %{'dw2_0' if k == 1 else f'gw2_{k-1}'}, %dw2_{k} : tensor<8x4xf32>")])
# Per-device schedules, merged into one block order that keeps each
# device's order and puts every recv after its send.
def dev_order(p):
    if sched == "gpipe":
        return [("F", k) for k in range(M)] + [("B", k) for k in range(M)]
    warm = min(P - 1 - p, M)
    o = [("F", k) for k in range(warm)]
    fi, bi = warm, 0
    while fi < M:
        o.append(("F", fi)); fi += 1
        o.append(("B", bi)); bi += 1
    while bi < M:
        o.append(("B", bi)); bi += 1
    return o
ops = {}
for k in range(M):
    for op in f(k): ops.setdefault(("F", k, op[0]), []).append(op)
    for op in b(k): ops.setdefault(("B", k, op[0]), []).append(op)
queues = [dev_order(p) for p in range(P)]
block = []
emitted = set()
def deps_ok(item, p):
    kind, k = item
    # a recv needs its send emitted
    if kind == "F" and p == 1: return ("F", k, 0) in emitted
    if kind == "B" and p == 0: return ("B", k, 1) in emitted
    return True
while any(queues):
    progressed = False
    for p in range(P):
        while queues[p] and deps_ok(queues[p][0], p):
            kind, k = queues[p].pop(0)
            block += ops[(kind, k, p)]; emitted.add((kind, k, p)); progressed = True
            break
    assert progressed
def acc(name, vals, ty, stage):
    out = []; cur = vals[0]
    for i, v in enumerate(vals[1:]):
        nm = f"%{name}" if i == len(vals) - 2 else f"%{name}_acc{i}"
        out.append((stage, None, True, f"{nm} = tg.add {cur}, {v} : {ty}")); cur = nm
    return out
loss_ops = acc("loss", [f"%l{k}" for k in range(M)], "tensor<f32>", 1)
for i,o in enumerate(loss_ops):
    loss_ops[i] = (o[0], o[1], False, o[3])
block += loss_ops
print(f"// Written by test/tgc/Inputs/pipelined_mlp.py {M} {sched}: a two-stage pipelined MLP,")
print(f"// {M} micro-batches, {sched} order (docs/pipeline.md).")
print('module attributes {tg.pipeline = "hand-written (docs/pipeline.md)"} {')
print('  shard.grid @mesh(shape = 2) {tg.mesh_axes = ["pp"]}')
args = ",\n".join([f'      %x{k}: tensor<16x16xf32> {{tg.role = "input", tg.name = "x{k}"}}' for k in range(M)] +
 ['      %w1: tensor<16x8xf32> {tg.role = "param", tg.name = "w1"}',
  '      %w2: tensor<8x4xf32> {tg.role = "param", tg.name = "w2"}'])
print(f"  func.func @step(\n{args})")
print('      -> (tensor<f32> {tg.role = "loss", tg.name = "loss"},')
print('          tensor<16x8xf32> {tg.role = "grad", tg.name = "w1.grad"},')
print('          tensor<8x4xf32> {tg.role = "grad", tg.name = "w2.grad"})')
print(f'      attributes {{tg.pipeline_stages = {{axis = "pp", stages = 2 : i64, virtual_stages = 1 : i64, micro_batches = {M} : i64, schedule = "{sched}"}}}} {{')
for op in block:
    stage, k, bw, text = op[0], op[1], op[2], op[3]
    attrs = [f"tg.stage = {stage} : i64"]
    if k is not None: attrs.append(f"tg.micro_batch = {k} : i64")
    if bw: attrs.append("tg.backward")
    a = "{" + ", ".join(attrs) + "}"
    if len(op) > 4:
        print(f"    {text} {a} : ({op[4]}) -> {op[4]}")
    elif "tg.constant" in text:
        i = text.index("tg.constant") + len("tg.constant")
        print(f"    {text[:i]} {a}{text[i:]}")
    elif " : " in text:
        i = text.index(" : ")
        print(f"    {text[:i]} {a}{text[i:]}")
print(f"    return %loss, %gw1_{M-1}, %gw2_{M-1} : tensor<f32>, tensor<16x8xf32>, tensor<8x4xf32>")
print("  }")
print("}")

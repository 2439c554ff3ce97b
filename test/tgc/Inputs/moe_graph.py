"""A mixture-of-experts training graph as transformers' batched_mm experts
write it (Mixtral, Qwen2-MoE exported to ONNX): LAYERS MoE feed-forward
layers (router softmax, top-k 2, weights renormalized, SiLU-gated experts
gathered by the routing ids and multiplied per (token, expert) pair, the k
outputs weighted and summed, a residual) over TOKENS tokens of width
HIDDEN, EXPERTS experts of intermediate size INTER, and a mean-square loss.
`tgc-opt --tg-raise` turns the gathered products into tg.expert_matmul.

  moe_graph.py OUT.mlir LAYERS HIDDEN INTER EXPERTS TOKENS
"""
import sys
path, layers, h, i, e, t = sys.argv[1], *map(int, sys.argv[2:])
k, s = 2, 2 * int(sys.argv[6])
f = "xf32>"
def ty(*dims):
    return "tensor<" + "x".join(map(str, dims)) + f
args = [f'%x: {ty(t, h)} {{tg.role = "input", tg.name = "x"}}']
for l in range(layers):
    args += [f'%router{l}: {ty(e, h)} {{tg.role = "param", tg.name = "l{l}.router"}}',
             f'%gate_up{l}: {ty(e, 2 * i, h)} {{tg.role = "param", tg.name = "l{l}.gate_up"}}',
             f'%down{l}: {ty(e, h, i)} {{tg.role = "param", tg.name = "l{l}.down"}}']
out = [f"func.func @moe({', '.join(args)}) -> (tensor<f32> {{tg.role = \"loss\"}}) {{"]
cur = "%x"
for l in range(layers):
    def op(text):
        out.append(f"  {text}")
    op(f"%logits{l} = tg.matmul {cur}, %router{l} transpose_b : ({ty(t, h)}, {ty(e, h)}) -> {ty(t, e)}")
    op(f"%probs{l} = tg.softmax %logits{l} dim = 1 : {ty(t, e)}")
    op(f"%top{l}, %ids{l} = tg.top_k %probs{l} k = {k} : {ty(t, e)} -> {ty(t, k)}, tensor<{t}x{k}xi64>")
    op(f"%norm{l} = tg.reduce sum %top{l} dims = [1] : {ty(t, k)} -> tensor<{t}xf32>")
    op(f"%normb{l} = tg.broadcast_in_dim %norm{l} dims = [0] : tensor<{t}xf32> -> {ty(t, k)}")
    op(f"%w{l} = tg.div %top{l}, %normb{l} : {ty(t, k)}")
    op(f"%flat{l} = tg.reshape %ids{l} : tensor<{t}x{k}xi64> -> tensor<{s}xi64>")
    op(f"%rep{l} = tg.broadcast_in_dim {cur} dims = [0, 2] : {ty(t, h)} -> {ty(t, k, h)}")
    op(f"%vec{l} = tg.reshape %rep{l} : {ty(t, k, h)} -> {ty(s, h, 1)}")
    op(f"%gtab{l} = tg.reshape %gate_up{l} : {ty(e, 2 * i, h)} -> {ty(e, 2 * i * h)}")
    op(f"%gsel{l} = tg.embedding %gtab{l}[%flat{l}] : ({ty(e, 2 * i * h)}, tensor<{s}xi64>) -> {ty(s, 2 * i * h)}")
    op(f"%gmat{l} = tg.reshape %gsel{l} : {ty(s, 2 * i * h)} -> {ty(s, 2 * i, h)}")
    op(f"%gu{l} = tg.matmul %gmat{l}, %vec{l} : ({ty(s, 2 * i, h)}, {ty(s, h, 1)}) -> {ty(s, 2 * i, 1)}")
    op(f"%gu2{l} = tg.reshape %gu{l} : {ty(s, 2 * i, 1)} -> {ty(s, 2 * i)}")
    op(f"%gate{l} = tg.slice %gu2{l} [0:{s}, 0:{i}] : {ty(s, 2 * i)} -> {ty(s, i)}")
    op(f"%up{l} = tg.slice %gu2{l} [0:{s}, {i}:{2 * i}] : {ty(s, 2 * i)} -> {ty(s, i)}")
    op(f"%act{l} = tg.silu %gate{l} : {ty(s, i)}")
    op(f"%hid{l} = tg.mul %act{l}, %up{l} : {ty(s, i)}")
    op(f"%hvec{l} = tg.reshape %hid{l} : {ty(s, i)} -> {ty(s, i, 1)}")
    op(f"%dtab{l} = tg.reshape %down{l} : {ty(e, h, i)} -> {ty(e, h * i)}")
    op(f"%dsel{l} = tg.embedding %dtab{l}[%flat{l}] : ({ty(e, h * i)}, tensor<{s}xi64>) -> {ty(s, h * i)}")
    op(f"%dmat{l} = tg.reshape %dsel{l} : {ty(s, h * i)} -> {ty(s, h, i)}")
    op(f"%y{l} = tg.matmul %dmat{l}, %hvec{l} : ({ty(s, h, i)}, {ty(s, i, 1)}) -> {ty(s, h, 1)}")
    op(f"%y2{l} = tg.reshape %y{l} : {ty(s, h, 1)} -> {ty(s, h)}")
    op(f"%wf{l} = tg.reshape %w{l} : {ty(t, k)} -> tensor<{s}xf32>")
    op(f"%wb{l} = tg.broadcast_in_dim %wf{l} dims = [0] : tensor<{s}xf32> -> {ty(s, h)}")
    op(f"%yw{l} = tg.mul %y2{l}, %wb{l} : {ty(s, h)}")
    op(f"%y3{l} = tg.reshape %yw{l} : {ty(s, h)} -> {ty(t, k, h)}")
    op(f"%moe{l} = tg.reduce sum %y3{l} dims = [1] : {ty(t, k, h)} -> {ty(t, h)}")
    op(f"%res{l} = tg.add {cur}, %moe{l} : {ty(t, h)}")
    cur = f"%res{l}"
out.append(f"  %sq = tg.mul {cur}, {cur} : {ty(t, h)}")
out.append(f"  %loss = tg.reduce mean %sq dims = [0, 1] : {ty(t, h)} -> tensor<f32>")
out.append("  return %loss : tensor<f32>")
out.append("}")
open(path, "w").write("\n".join(out) + "\n")

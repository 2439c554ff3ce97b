#!/usr/bin/env python3
"""GPT-2 training steps in PyTorch, the peer of a tgc-generated trainer.

    torch_gpt2.py [--preset 124m] [--batch 8] [--seq 1024] [--steps 20]
                  [--compile] [--precision bf16|f32] [--device cuda|cpu]
                  [--layers L --hidden H --heads N --vocab V]

The same model as `tgc-zoo gpt2 --preset P --seq S --batch B` (learned
positions, pre-LayerNorm blocks with biases, GELU (tanh), causal attention,
no dropout, LM head tied to wte, vocabulary 50257) and the same step as
`tgc compile --train --optimizer adamw --precision bf16`: f32 parameters and
optimizer state, bf16 compute (autocast), AdamW (lr 1e-3, no weight decay).
Attention is F.scaled_dot_product_attention (flash attention on the GPU).
Fresh random tokens each step (labels = ids, as train's synthetic-copy data).
Prints ms/step, tokens/s and the peak of memory PyTorch allocated. Runs on
the GPU machine's own PyTorch; nothing of it is part of tgc.

`--device cpu` (f32 only; the peer of the host target's `train`,
benchmarks/host-step.sh) runs on the CPU with PyTorch's threads, timed by
the wall clock; --layers, --hidden, --heads and --vocab replace the
preset's.
"""

import argparse
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

PRESETS = {"tiny": (2, 64, 4, 128), "124m": (12, 768, 12, 50257),
           "355m": (24, 1024, 16, 50257)}


class Block(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.heads = heads
        self.ln_1 = nn.LayerNorm(hidden, eps=1e-5)
        self.c_attn = nn.Linear(hidden, 3 * hidden)
        self.c_proj = nn.Linear(hidden, hidden)
        self.ln_2 = nn.LayerNorm(hidden, eps=1e-5)
        self.c_fc = nn.Linear(hidden, 4 * hidden)
        self.mlp_proj = nn.Linear(4 * hidden, hidden)

    def forward(self, x):
        b, s, h = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(h, dim=2)
        q, k, v = (t.view(b, s, self.heads, h // self.heads).transpose(1, 2)
                   for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.c_proj(y.transpose(1, 2).reshape(b, s, h))
        return x + self.mlp_proj(
            F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


class GPT2(nn.Module):
    def __init__(self, layers, hidden, heads, vocab, positions=1024):
        super().__init__()
        self.wte = nn.Embedding(vocab, hidden)
        self.wpe = nn.Embedding(positions, hidden)
        self.h = nn.ModuleList(Block(hidden, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(hidden, eps=1e-5)
        for p in self.parameters():
            if p.dim() > 1:
                nn.init.normal_(p, std=0.02)

    def forward(self, ids, labels):
        x = self.wte(ids) + self.wpe(torch.arange(ids.shape[1],
                                                  device=ids.device))
        for block in self.h:
            x = block(x)
        logits = self.ln_f(x) @ self.wte.weight.t()
        return F.cross_entropy(logits.float().view(-1, logits.shape[-1]),
                               labels.view(-1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="124m", choices=PRESETS)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--seq", type=int, default=1024)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--compile", action="store_true")
    parser.add_argument("--precision", default="bf16", choices=["bf16", "f32"])
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    for name in ("layers", "hidden", "heads", "vocab"):
        parser.add_argument("--" + name, type=int)
    args = parser.parse_args()
    cuda = args.device == "cuda"
    if not cuda and args.precision != "f32":
        parser.error("--device cpu takes --precision f32")
    torch.manual_seed(0)
    layers, hidden, heads, vocab = (
        getattr(args, name) or value for name, value in zip(
            ("layers", "hidden", "heads", "vocab"), PRESETS[args.preset]))
    model = GPT2(layers, hidden, heads, vocab,
                 positions=max(1024, args.seq)).to(args.device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3,
                                  weight_decay=0.0, fused=cuda)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False

    def step(ids):
        with torch.autocast(args.device, dtype=torch.bfloat16,
                            enabled=args.precision == "bf16"):
            loss = model(ids, ids)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return loss

    run = torch.compile(step) if args.compile else step
    batches = [torch.randint(0, vocab, (args.batch, args.seq),
                             device=args.device) for _ in range(4)]
    begin = time.time()
    for i in range(args.warmup):
        run(batches[i % 4])
    if cuda:
        torch.cuda.synchronize()
    warm = time.time() - begin
    if cuda:
        torch.cuda.reset_peak_memory_stats()
        start, end = torch.cuda.Event(True), torch.cuda.Event(True)
        start.record()
    else:
        start = time.perf_counter()
    for i in range(args.steps):
        loss = run(batches[i % 4])
    if cuda:
        end.record()
        torch.cuda.synchronize()
        ms = start.elapsed_time(end) / args.steps
        peak = (f", peak allocated "
                f"{torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")
    else:
        ms = (time.perf_counter() - start) * 1e3 / args.steps
        peak = f", {torch.get_num_threads()} threads"
    tokens = args.batch * args.seq / (ms * 1e-3)
    name = args.preset if not any(
        getattr(args, n) for n in ("layers", "hidden", "heads", "vocab")) \
        else f"{layers}x{hidden}x{heads}:{vocab}"
    print(f"torch {'compile' if args.compile else 'eager'} gpt2-{name} "
          f"{args.precision} batch {args.batch} seq {args.seq}: "
          f"{ms:.3f} ms/step, {tokens:.0f} tokens/s{peak} "
          f"(warm-up {warm:.1f} s, loss {loss.item():.4f}, "
          f"{sum(p.numel() for p in model.parameters())} parameters)")


if __name__ == "__main__":
    main()

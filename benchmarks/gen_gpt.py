#!/usr/bin/env python3
"""Writes a GPT-2-style forward pass and loss as tg MLIR.

The graph is GPT-2 as Hugging Face's GPT2LMHeadModel computes it, with the
same parameter names (wte.weight, h.0.attn.c_attn.weight, ...):

  token embedding (wte) + learned position embedding (wpe) [+ dropout]
  per layer:  x = x + [dropout] c_proj(attention(c_attn(ln_1(x))))
              x = x + [dropout] mlp.c_proj(gelu_tanh(mlp.c_fc(ln_2(x))))
  ln_f, tied LM head (logits = x @ wte^T), mean cross-entropy.

Conventions:
  * `labels[b, t]` is the token that follows `input_ids[b, t]`: the data
    pipeline shifts the labels (as nanoGPT does), so the graph does not.
  * The position table has `--seq` rows (HF's n_positions = n_ctx).
  * Dropout (`--dropout RATE` > 0) is applied after the embeddings, after the
    attention's c_proj and after the MLP (GPT-2's embd/resid dropout), and
    on the attention probabilities inside tg.attention (attn_pdrop), each
    with its own `stream`, seeded by a `dropout_seed` argument (role "hyper").
  * `--precision bf16`: parameters and activations stay f32; the operands of
    every matmul and of the attention are converted to bf16 with tg.convert,
    and their bf16 results converted back to f32, so layer norms, GELU,
    residuals, softmax statistics and the loss are f32.

Only the Python 3 standard library is used.

  gen_gpt.py --layers 2 --hidden 64 --heads 4 --seq 16 --batch 2 --vocab 128
  gen_gpt.py --layers 12 --hidden 768 --heads 12 --seq 1024 --summary
"""

import argparse
import math
import re
import sys

LAYER_NORM_EPSILON = 1e-5
DEFAULTS = {
    "layers": 12,
    "hidden": 768,
    "heads": 12,
    "seq": 1024,
    "batch": 1,
    "vocab": 50257,
    "dropout": 0.0,
    "precision": "f32",
    "name": "gpt2",
}


def format_float(value):
    """Formats a float attribute the way MLIR prints an f64: `%.6e` when that
    round-trips, else the shortest exact decimal form."""
    text = "%.6e" % value
    if float(text) == value:
        return text
    return repr(float(value))


def tensor_type(shape, element_type):
    if not shape:
        return "tensor<%s>" % element_type
    return "tensor<%sx%s>" % ("x".join(str(d) for d in shape), element_type)


class Param:
    def __init__(self, ssa, name, shape):
        self.ssa = ssa
        self.name = name
        self.shape = shape

    @property
    def count(self):
        return math.prod(self.shape)


def gpt2_params(cfg):
    """The parameters in Hugging Face's order: (SSA name, HF name, shape)."""
    h = cfg.hidden
    params = [
        Param("wte", "wte.weight", [cfg.vocab, h]),
        Param("wpe", "wpe.weight", [cfg.seq, h]),
    ]
    for n in range(cfg.layers):
        layer = [
            ("ln_1_w", "ln_1.weight", [h]),
            ("ln_1_b", "ln_1.bias", [h]),
            ("c_attn_w", "attn.c_attn.weight", [h, 3 * h]),
            ("c_attn_b", "attn.c_attn.bias", [3 * h]),
            ("attn_c_proj_w", "attn.c_proj.weight", [h, h]),
            ("attn_c_proj_b", "attn.c_proj.bias", [h]),
            ("ln_2_w", "ln_2.weight", [h]),
            ("ln_2_b", "ln_2.bias", [h]),
            ("c_fc_w", "mlp.c_fc.weight", [h, 4 * h]),
            ("c_fc_b", "mlp.c_fc.bias", [4 * h]),
            ("mlp_c_proj_w", "mlp.c_proj.weight", [4 * h, h]),
            ("mlp_c_proj_b", "mlp.c_proj.bias", [h]),
        ]
        for ssa, name, shape in layer:
            params.append(Param("h%d_%s" % (n, ssa), "h.%d.%s" % (n, name), shape))
    params.append(Param("ln_f_w", "ln_f.weight", [h]))
    params.append(Param("ln_f_b", "ln_f.bias", [h]))
    return params


class Emitter:
    """Accumulates the body of the function, one op per line."""

    def __init__(self, cfg):
        self.cfg = cfg
        self.lines = []
        self.types = {}  # SSA name -> (shape, element type)
        self.next_stream = 0

    def declare(self, ssa, shape, element_type):
        self.types[ssa] = (list(shape), element_type)

    def type_of(self, ssa):
        return tensor_type(*self.types[ssa])

    def comment(self, text):
        self.lines.append("  // " + text)

    def op(self, results, text, shapes):
        """Emits `results = text`; `shapes` gives each result's (shape, type)."""
        for ssa, (shape, element_type) in zip(results, shapes):
            self.declare(ssa, shape, element_type)
        lhs = ", ".join("%" + r for r in results)
        self.lines.append("  %s = %s" % (lhs, text))
        return results[0]

    # Elementwise and shape ops ------------------------------------------

    def add(self, result, lhs, rhs):
        shape, et = self.types[lhs]
        return self.op([result], "tg.add %%%s, %%%s : %s" % (lhs, rhs, self.type_of(lhs)),
                       [(shape, et)])

    def convert(self, result, operand, element_type):
        shape, _ = self.types[operand]
        return self.op([result], "tg.convert %%%s : %s -> %s" % (
            operand, self.type_of(operand), tensor_type(shape, element_type)),
            [(shape, element_type)])

    def broadcast(self, result, operand, dims, shape):
        _, et = self.types[operand]
        return self.op([result], "tg.broadcast_in_dim %%%s dims = [%s] : %s -> %s" % (
            operand, ", ".join(str(d) for d in dims), self.type_of(operand),
            tensor_type(shape, et)), [(shape, et)])

    def reshape(self, result, operand, shape):
        _, et = self.types[operand]
        return self.op([result], "tg.reshape %%%s : %s -> %s" % (
            operand, self.type_of(operand), tensor_type(shape, et)), [(shape, et)])

    def transpose(self, result, operand, perm):
        shape, et = self.types[operand]
        out = [shape[p] for p in perm]
        return self.op([result], "tg.transpose %%%s perm = [%s] : %s -> %s" % (
            operand, ", ".join(str(p) for p in perm), self.type_of(operand),
            tensor_type(out, et)), [(out, et)])

    def slice_last(self, result, operand, start, limit):
        shape, et = self.types[operand]
        ranges = ["0:%d" % d for d in shape[:-1]] + ["%d:%d" % (start, limit)]
        out = shape[:-1] + [limit - start]
        return self.op([result], "tg.slice %%%s [%s] : %s -> %s" % (
            operand, ", ".join(ranges), self.type_of(operand), tensor_type(out, et)),
            [(out, et)])

    def gelu_tanh(self, result, operand):
        shape, et = self.types[operand]
        return self.op([result], "tg.gelu tanh %%%s : %s" % (operand, self.type_of(operand)),
                       [(shape, et)])

    def dropout(self, result, operand):
        shape, et = self.types[operand]
        stream = self.next_stream
        self.next_stream += 1
        return self.op([result], "tg.dropout %%%s, %%dropout_seed rate = %s stream = %d : %s, %s" % (
            operand, format_float(self.cfg.dropout), stream, self.type_of(operand),
            self.type_of("dropout_seed")), [(shape, et)])

    # Compute ops ---------------------------------------------------------

    def matmul(self, result, lhs, rhs, transpose_b=False):
        """`lhs` [..., M, K] times the matrix `rhs` [K, N] (or [N, K] with
        `transpose_b`); in bf16 precision, through bf16 copies of both."""
        lhs_shape, et = self.types[lhs]
        rhs_shape, _ = self.types[rhs]
        n = rhs_shape[0] if transpose_b else rhs_shape[1]
        out = lhs_shape[:-1] + [n]
        compute_type = self.cfg.precision
        if compute_type != "f32":
            lhs = self.convert(lhs + "_" + compute_type, lhs, compute_type)
            rhs = self.convert(rhs + "_" + compute_type, rhs, compute_type)
        mm = result if compute_type == "f32" else result + "_" + compute_type
        self.op([mm], "tg.matmul %%%s, %%%s%s : (%s, %s) -> %s" % (
            lhs, rhs, " transpose_b" if transpose_b else "", self.type_of(lhs),
            self.type_of(rhs), tensor_type(out, compute_type)), [(out, compute_type)])
        if compute_type != "f32":
            self.convert(result, mm, et)
        return result

    def linear(self, prefix, x, weight, bias):
        """`x @ weight + bias`, with the bias broadcast over batch and seq."""
        mm = self.matmul(prefix + "_mm", x, weight)
        shape, _ = self.types[mm]
        b = self.broadcast(prefix + "_bias", bias, [len(shape) - 1], shape)
        return self.add(prefix, mm, b)

    def layer_norm(self, result, x, scale, bias):
        shape, et = self.types[x]
        stats = (shape[:-1], "f32")
        return self.op(
            [result, result + "_mean", result + "_rstd"],
            "tg.layer_norm %%%s, %%%s, %%%s epsilon = %s : (%s, %s, %s) -> (%s, %s, %s)" % (
                x, scale, bias, format_float(LAYER_NORM_EPSILON), self.type_of(x),
                self.type_of(scale), self.type_of(bias), tensor_type(shape, et),
                tensor_type(*stats), tensor_type(*stats)),
            [(shape, et), stats, stats])

    def attention(self, result, q, k, v, scale):
        """Causal attention; in bf16 precision, on bf16 copies of q, k, v."""
        shape, et = self.types[q]
        compute_type = self.cfg.precision
        if compute_type != "f32":
            q, k, v = (self.convert(t + "_" + compute_type, t, compute_type) for t in (q, k, v))
        out = result if compute_type == "f32" else result + "_" + compute_type
        lse = (shape[:-1], "f32")
        dropout, seed_type = "", ""
        if self.cfg.dropout > 0:
            dropout = " dropout = %s seed %%dropout_seed stream = %d" % (
                format_float(self.cfg.dropout), self.next_stream)
            seed_type = ", " + self.type_of("dropout_seed")
            self.next_stream += 1
        self.op([out, result + "_lse"],
                "tg.attention %%%s, %%%s, %%%s causal scale = %s%s : (%s, %s, %s%s) -> (%s, %s)" % (
                    q, k, v, format_float(scale), dropout, self.type_of(q), self.type_of(k),
                    self.type_of(v), seed_type, tensor_type(shape, compute_type),
                    tensor_type(*lse)),
                [(shape, compute_type), lse])
        if compute_type != "f32":
            self.convert(result, out, et)
        return result


def emit_gpt2(cfg, params, command):
    b, s, h, nh, v = cfg.batch, cfg.seq, cfg.hidden, cfg.heads, cfg.vocab
    d = h // nh
    e = Emitter(cfg)
    p = {param.name: param.ssa for param in params}

    arguments = [("input_ids", [b, s], "i64", "input", "input_ids"),
                 ("labels", [b, s], "i64", "label", "labels")]
    if cfg.dropout > 0:
        arguments.append(("dropout_seed", [], "i64", "hyper", "dropout_seed"))
    arguments += [(param.ssa, param.shape, "f32", "param", param.name) for param in params]
    for ssa, shape, et, _, _ in arguments:
        e.declare(ssa, shape, et)

    e.comment("Token and position embeddings.")
    tok = e.op(["tok_emb"], "tg.embedding %%wte[%%input_ids] : (%s, %s) -> %s" % (
        e.type_of("wte"), e.type_of("input_ids"), tensor_type([b, s, h], "f32")),
        [([b, s, h], "f32")])
    pos = e.broadcast("pos_emb", "wpe", [1, 2], [b, s, h])
    x = e.add("emb", tok, pos)
    if cfg.dropout > 0:
        x = e.dropout("emb_drop", x)

    for n in range(cfg.layers):
        pre = "h%d" % n
        w = lambda suffix: p["h.%d.%s" % (n, suffix)]
        e.lines.append("")
        e.comment("Layer %d: attention." % n)
        ln1 = e.layer_norm(pre + "_ln1", x, w("ln_1.weight"), w("ln_1.bias"))
        qkv = e.linear(pre + "_qkv", ln1, w("attn.c_attn.weight"), w("attn.c_attn.bias"))
        heads = []
        for i, part in enumerate("qkv"):
            flat = e.slice_last("%s_%s_flat" % (pre, part), qkv, i * h, (i + 1) * h)
            split = e.reshape("%s_%s_split" % (pre, part), flat, [b, s, nh, d])
            heads.append(e.transpose("%s_%s" % (pre, part), split, [0, 2, 1, 3]))
        attn = e.attention(pre + "_attn", *heads, scale=1.0 / math.sqrt(d))
        merged = e.transpose(pre + "_attn_merge", attn, [0, 2, 1, 3])
        merged = e.reshape(pre + "_attn_merged", merged, [b, s, h])
        proj = e.linear(pre + "_attn_proj", merged, w("attn.c_proj.weight"),
                        w("attn.c_proj.bias"))
        if cfg.dropout > 0:
            proj = e.dropout(pre + "_attn_drop", proj)
        x = e.add(pre + "_res1", x, proj)

        e.comment("Layer %d: MLP." % n)
        ln2 = e.layer_norm(pre + "_ln2", x, w("ln_2.weight"), w("ln_2.bias"))
        fc = e.linear(pre + "_fc", ln2, w("mlp.c_fc.weight"), w("mlp.c_fc.bias"))
        act = e.gelu_tanh(pre + "_gelu", fc)
        out = e.linear(pre + "_mlp_proj", act, w("mlp.c_proj.weight"), w("mlp.c_proj.bias"))
        if cfg.dropout > 0:
            out = e.dropout(pre + "_mlp_drop", out)
        x = e.add(pre + "_res2", x, out)

    e.lines.append("")
    e.comment("Final layer norm, LM head tied to wte, mean cross-entropy.")
    x = e.layer_norm("ln_f", x, p["ln_f.weight"], p["ln_f.bias"])
    logits = e.matmul("logits", x, "wte", transpose_b=True)
    e.op(["loss", "logsumexp"],
         "tg.cross_entropy mean %%%s, %%labels : (%s, %s) -> (tensor<f32>, %s)" % (
             logits, e.type_of(logits), e.type_of("labels"), tensor_type([b, s], "f32")),
         [([], "f32"), ([b, s], "f32")])
    e.lines.append("  return %loss : tensor<f32>")

    out = []
    out.append("// GPT-2 forward pass and mean cross-entropy loss, written by benchmarks/gen_gpt.py.")
    out.append("// Regenerate (from the repository root): %s" % command)
    out.append("// %d layers, hidden %d, %d heads of %d, seq %d, batch %d, vocab %d, "
               "dropout %s, %s: %d parameters." % (
                   cfg.layers, h, nh, d, s, b, v, repr(cfg.dropout),
                   cfg.precision, sum(param.count for param in params)))
    out.append("// labels[b, t] is the token after input_ids[b, t] (shifted by the data pipeline).")
    out.append("")
    out.append("func.func @%s(" % cfg.name)
    for i, (ssa, shape, et, role, name) in enumerate(arguments):
        sep = "," if i + 1 < len(arguments) else ")"
        out.append('    %%%s: %s {tg.role = "%s", tg.name = "%s"}%s' % (
            ssa, tensor_type(shape, et), role, name, sep))
    out.append('    -> (tensor<f32> {tg.role = "loss", tg.name = "loss"}) {')
    out.extend(line.rstrip() for line in e.lines)
    out.append("}")
    return "\n".join(out) + "\n"


def canonical_command(cfg):
    """The command line that regenerates this graph, independent of how the
    script was invoked (so that the output is reproducible)."""
    words = ["python3", "benchmarks/gen_gpt.py"]
    for key in ("layers", "hidden", "heads", "seq", "batch", "vocab"):
        words += ["--" + key, str(getattr(cfg, key))]
    if cfg.dropout != DEFAULTS["dropout"]:
        words += ["--dropout", repr(cfg.dropout)]
    if cfg.precision != DEFAULTS["precision"]:
        words += ["--precision", cfg.precision]
    if cfg.name != DEFAULTS["name"]:
        words += ["--name", cfg.name]
    return " ".join(words)


def parse_args(argv):
    parser = argparse.ArgumentParser(
        description="Write a GPT-2-style forward pass + loss as tg MLIR.",
        epilog="GPT-2 small: --layers 12 --hidden 768 --heads 12 --seq 1024 "
               "--vocab 50257 (124439808 parameters).")
    parser.add_argument("--layers", type=int, default=DEFAULTS["layers"],
                        help="transformer blocks (default %(default)s)")
    parser.add_argument("--hidden", type=int, default=DEFAULTS["hidden"],
                        help="model width n_embd (default %(default)s)")
    parser.add_argument("--heads", type=int, default=DEFAULTS["heads"],
                        help="attention heads; must divide --hidden (default %(default)s)")
    parser.add_argument("--seq", type=int, default=DEFAULTS["seq"],
                        help="sequence length, also the rows of wpe (default %(default)s)")
    parser.add_argument("--batch", type=int, default=DEFAULTS["batch"],
                        help="batch size (default %(default)s)")
    parser.add_argument("--vocab", type=int, default=DEFAULTS["vocab"],
                        help="vocabulary size (default %(default)s)")
    parser.add_argument("--dropout", type=float, default=DEFAULTS["dropout"],
                        metavar="RATE",
                        help="dropout rate in [0, 1); 0 emits no dropout ops "
                             "(default %(default)s)")
    parser.add_argument("--precision", choices=["f32", "bf16"],
                        default=DEFAULTS["precision"],
                        help="element type of matmul and attention operands "
                             "(default %(default)s)")
    parser.add_argument("--name", default=DEFAULTS["name"],
                        help="function name (default %(default)s)")
    parser.add_argument("--summary", action="store_true",
                        help="print the configuration and parameter count "
                             "instead of the graph")
    parser.add_argument("-o", "--output", metavar="FILE",
                        help="write the graph to FILE instead of stdout")
    cfg = parser.parse_args(argv)

    for key in ("layers", "hidden", "heads", "seq", "batch", "vocab"):
        if getattr(cfg, key) < 1:
            parser.error("--%s must be at least 1" % key)
    if cfg.hidden % cfg.heads != 0:
        parser.error("--heads (%d) must divide --hidden (%d)" % (cfg.heads, cfg.hidden))
    if not (0.0 <= cfg.dropout < 1.0):
        parser.error("--dropout must be in [0, 1)")
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_$.]*", cfg.name):
        parser.error("--name must be an MLIR symbol name ([A-Za-z_][A-Za-z0-9_$.]*)")
    return cfg


def main(argv):
    cfg = parse_args(argv)
    params = gpt2_params(cfg)
    if cfg.summary:
        text = ("config: layers=%d hidden=%d heads=%d head_dim=%d seq=%d batch=%d "
                "vocab=%d dropout=%s precision=%s\nparameters: %d\n" % (
                    cfg.layers, cfg.hidden, cfg.heads, cfg.hidden // cfg.heads, cfg.seq,
                    cfg.batch, cfg.vocab, repr(cfg.dropout), cfg.precision,
                    sum(param.count for param in params)))
    else:
        text = emit_gpt2(cfg, params, canonical_command(cfg))
    if cfg.output and not cfg.summary:
        with open(cfg.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Writes a token file whose every window is the same, and that window as a
batch, so that `tgc train --data FILE.bin`'s first loss can be checked
against `tgc run` on the batch.

Usage: token_window.py OUT_DIR VOCAB SEQ ROWS

OUT_DIR/tokens.bin holds SEQ + 1 random ids below VOCAB (nanoGPT's format:
little-endian uint16), so the only window of SEQ tokens with a next token
starts at 0; OUT_DIR/window.npy is that window as ROWS equal rows of SEQ
int64 ids, OUT_DIR/next.npy the window one token on (the labels of a model
given its next tokens).
"""
import os
import sys

import numpy as np

out, vocab, seq, rows = sys.argv[1], *map(int, sys.argv[2:5])
tokens = np.random.default_rng(7).integers(0, vocab, seq + 1)
tokens.astype("<u2").tofile(os.path.join(out, "tokens.bin"))
np.save(os.path.join(out, "window.npy"), np.tile(tokens[:seq], (rows, 1)).astype(np.int64))
np.save(os.path.join(out, "next.npy"), np.tile(tokens[1:], (rows, 1)).astype(np.int64))

"""tg.random's numbers (TGOps.td), computed in numpy for the references of
the random-op tests: Philox4x32-10 with key (lo32(seed), hi32(seed)) and
counter (lo32(i), hi32(i), stream, 0) for element i; uniform: the top 24
bits of the first word over 2^24; normal: Box-Muller of the first two
words, in f64."""
import numpy as np

MASK = 0xFFFFFFFF


def philox(seed, index, stream):
    """The four Philox4x32-10 words of each element `index` (uint64 array)."""
    c = [index & MASK, index >> 32, np.full_like(index, stream),
         np.zeros_like(index)]
    k0, k1 = seed & MASK, seed >> 32
    for r in range(10):
        if r:
            k0, k1 = (k0 + 0x9E3779B9) & MASK, (k1 + 0xBB67AE85) & MASK
        p0 = np.uint64(0xD2511F53) * c[0]
        p1 = np.uint64(0xCD9E8D57) * c[2]
        c = [(p1 >> np.uint64(32)) ^ c[1] ^ np.uint64(k0), p1 & np.uint64(MASK),
             (p0 >> np.uint64(32)) ^ c[3] ^ np.uint64(k1), p0 & np.uint64(MASK)]
    return c


def tgc_random(shape, seed, stream, normal, f32=True):
    """tg.random's numbers of `shape`, rounded to f32 (or kept f64)."""
    index = np.arange(int(np.prod(shape)), dtype=np.uint64)
    w = philox(seed, index, stream)
    if normal:
        u1 = (w[0].astype(np.float64) + 1.0) * 2.0**-32
        u2 = w[1].astype(np.float64) * 2.0**-32
        values = np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)
    else:
        values = (w[0] >> np.uint64(8)).astype(np.float64) * 2.0**-24
    return values.reshape(shape).astype(np.float32 if f32 else np.float64)

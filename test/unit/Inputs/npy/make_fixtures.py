#!/usr/bin/python3
"""Writes the .npy fixtures of NpyTest.cpp with NumPy's own writer.

Run from anywhere with a Python that has NumPy (Debian's /usr/bin/python3):
    /usr/bin/python3 test/unit/Inputs/npy/make_fixtures.py
The output is deterministic, so rerunning it leaves the checked-in files
unchanged. NpyTest.cpp both reads these files and compares the bytes that
tgc::npy::writeNpy produces for the same arrays with the v1.0 ones here.
"""

import os

import numpy as np
from numpy.lib import format as npy_format

HERE = os.path.dirname(os.path.abspath(__file__))


def save(name, array, version=None):
    path = os.path.join(HERE, name)
    with open(path, "wb") as f:
        npy_format.write_array(f, array, version=version,
                               allow_pickle=False)


def main():
    # One file per supported dtype, each a small 2-d array with values the
    # test can write down: v * 0.5 - 1 for floats, v - 3 for ints.
    values = np.arange(6).reshape(2, 3)
    save("f16.npy", (values * 0.5 - 1).astype("<f2"))
    save("f32.npy", (values * 0.5 - 1).astype("<f4"))
    save("f64.npy", (values * 0.5 - 1).astype("<f8"))
    save("i32.npy", (values - 3).astype("<i4"))
    save("i64.npy", (values - 3).astype("<i8"))
    save("bool.npy", np.array([True, False, False, True, True]))

    # Shapes: a scalar (shape ()), an empty array, a 1-element 1-d array,
    # and a 3-d array holding 0..23.
    save("scalar_f32.npy", np.array(3.5, dtype="<f4"))
    save("empty_f32.npy", np.zeros((0,), dtype="<f4"))
    save("one_i64.npy", np.array([-7], dtype="<i8"))
    save("arange_3d_i32.npy", np.arange(24, dtype="<i4").reshape(2, 3, 4))
    # A first dimension with many digits changes NumPy's header padding.
    save("long_f64.npy", np.full((1000,), 0.25, dtype="<f8"))

    # Versions 2.0 and 3.0 (NumPy only picks them for huge headers, so ask).
    save("v2_f32.npy", (values * 0.5 - 1).astype("<f4"), version=(2, 0))
    save("v3_i32.npy", (values - 3).astype("<i4"), version=(3, 0))

    # Files tgc must reject.
    save("fortran_f32.npy",
         np.asfortranarray((values * 0.5 - 1).astype("<f4")))
    save("bigendian_f32.npy", (values * 0.5 - 1).astype(">f4"))
    save("complex64.npy", np.array([1 + 2j], dtype="<c8"))
    save("structured.npy", np.zeros((2,), dtype=[("a", "<f4"), ("b", "<i4")]))


if __name__ == "__main__":
    main()

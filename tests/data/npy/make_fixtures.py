#!/usr/bin/env python3
"""Writes the small .npy fixtures that tests/test_npy.c reads (run from this folder).

Each file is made with NumPy itself so the reader is checked against the reference writer.
"""
import numpy as np
from numpy.lib import format as npf

np.save("f4_2x3.npy", np.arange(6, dtype="<f4").reshape(2, 3))
np.save("i8_5.npy", np.array([-2, -1, 0, 1, 2], dtype="<i8"))
np.save("b1_4.npy", np.array([True, False, False, True]))
np.save("f2_3.npy", np.array([1.0, -2.0, 0.5], dtype="<f2"))
np.save("c8_2.npy", np.array([1 + 2j, -3.5 + 0j], dtype="<c8"))
np.save("c16_1.npy", np.array([0.5 - 1j], dtype="<c16"))
np.save("f8_scalar.npy", np.array(3.25, dtype="<f8"))
np.save("u2_0x3.npy", np.zeros((0, 3), dtype="<u2"))
with open("u1_v2.npy", "wb") as f:
    npf.write_array(f, np.array([1, 2, 3], dtype="|u1"), version=(2, 0))
with open("i4_v3.npy", "wb") as f:
    npf.write_array(f, np.array([[7], [8]], dtype="<i4"), version=(3, 0))
np.save("f4_fortran.npy", np.asfortranarray(np.arange(6, dtype="<f4").reshape(2, 3)))
np.save("f4_big.npy", np.arange(3, dtype=">f4"))
np.save("object.npy", np.array([1, "a"], dtype=object), allow_pickle=True)
np.save("unicode.npy", np.array(["ab", "c"]))
np.save("structured.npy", np.zeros(2, dtype=[("x", "<f4"), ("y", "<i4")]))

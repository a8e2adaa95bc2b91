# Regenerates the NumPy fixtures used by npy_test.go (run: python3 gen_npy.py).
# They are written by NumPy itself so the tests check compatibility with the
# real format, not with our own writer.
import numpy as np

np.save("f4_2x3.npy", np.arange(6, dtype="<f4").reshape(2, 3))
np.save("f8.npy", np.array([1.5, -2.25, np.nan], dtype="<f8"))
np.save("i4.npy", np.array([-1, 0, 7], dtype="<i4"))
np.save("i8.npy", np.array([0, 1, 2, 1], dtype="<i8"))
np.save("u1.npy", np.arange(32, dtype="u1").reshape(2, 4, 4))
np.save("b1.npy", np.array([True, False, True]))
np.save("scalar.npy", np.float32(3.5))
for v in (2, 3):
    with open(f"v{v}.npy", "wb") as f:
        np.lib.format.write_array(f, np.arange(4, dtype="<f4"), version=(v, 0))
np.save("fortran.npy", np.asfortranarray(np.arange(6, dtype="<f4").reshape(2, 3)))
np.save("bigendian.npy", np.arange(3, dtype=">f4"))
np.save("f2.npy", np.arange(3, dtype="<f2"))

# [N=3, T=4, C=2] series; sample 1 misses channel 0 at step 2.
x = np.arange(24, dtype="<f4").reshape(3, 4, 2)
x[1, 2, 0] = np.nan
y = np.array([0, 2, 1], dtype="<i8")
np.savez("series.npz", x=x, y=y)
np.savez_compressed("series_compressed.npz", x=x, y=y)

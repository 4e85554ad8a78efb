#!/usr/bin/env python3
"""SciPy's eigsh (ARPACK, shift-invert) on the matrices of tests/modes_scipy.rs.

Regenerates tests/reference/modes/NAME.csv (mode, omega_squared) for every case:

    python3 tests/reference/modes/eigsh_reference.py

It runs `cargo test --test modes_scipy -- --ignored write_matrix_market` to write K and M (the
free dofs of each case's model, Matrix Market) into a temporary folder, then, for each case,
eigsh(K, k, M, sigma, which='LM') with sigma = -1e-9 max_i K_ii/M_ii (the shift fem's
eigen-solver takes by default) and tol = 0 (machine precision).
"""
import os
import pathlib
import subprocess
import sys
import tempfile

import numpy as np
import scipy.io
import scipy.sparse.linalg

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[2]


def main():
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, FEM_MODES_MTX=tmp, CARGO_INCREMENTAL="0")
        subprocess.run(
            ["cargo", "test", "--test", "modes_scipy", "--", "--ignored", "write_matrix_market"],
            cwd=ROOT, env=env, check=True)
        for kfile in sorted(pathlib.Path(tmp).glob("*.k")):
            name = kfile.stem
            k = int(kfile.read_text())
            K = scipy.io.mmread(f"{tmp}/{name}_K.mtx").tocsc()
            M = scipy.io.mmread(f"{tmp}/{name}_M.mtx").tocsc()
            sigma = -1e-9 * np.max(np.abs(K.diagonal()) / np.abs(M.diagonal()))
            vals = scipy.sparse.linalg.eigsh(K, k=k, M=M, sigma=sigma, which="LM",
                                             tol=0, return_eigenvectors=False)
            vals = np.sort(vals)
            out = HERE / f"{name}.csv"
            with open(out, "w") as f:
                f.write("mode,omega_squared\n")
                for j, v in enumerate(vals):
                    f.write(f"{j + 1},{float(v)!r}\n")
            print(f"{out.relative_to(ROOT)}: {k} modes, n = {K.shape[0]}, "
                  f"omega^2 from {vals[0]:.6e} to {vals[-1]:.6e}")


if __name__ == "__main__":
    sys.exit(main())

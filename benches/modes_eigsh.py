#!/usr/bin/env python3
"""The bench of `fem modes` against SciPy's eigsh (ARPACK, shift-invert) on the same matrices.

    python3 benches/modes_eigsh.py [--input benches/modes/bar_hex8_1e5.yaml] [-k 20] [--threads 1]

1. builds `fem` (release) and writes the input's free-dof K and M as Matrix Market files (the
   ignored test `write_matrix_market` of tests/modes_scipy.rs, FEM_MODES_CASE);
2. runs, one after the other in separate processes: `fem modes INPUT -k K` (its eigen-solver's
   own time, as it prints, and the process's peak resident memory), and eigsh(K, k, M, sigma,
   which='LM') on the same matrices (`--ordering`: eigsh's own SuperLU, COLAMD, or SuperLU with
   MMD_AT_PLUS_A through OPinv; the time of the eigsh call, SuperLU's factorization of
   K - sigma M included, and the process's peak resident memory, the matrices read from the
   files included), sigma fem's default shift;
3. prints both, their ratio, the largest relative difference of omega^2, and `uptime`.

Threads: RAYON_NUM_THREADS for fem, OMP/OPENBLAS_NUM_THREADS for SciPy (its SuperLU and ARPACK
are serial).
"""
import argparse
import os
import pathlib
import re
import resource
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]


def peak_of(cmd, env):
    """Runs cmd; returns (stdout, peak RSS of the child in MiB)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True, cwd=ROOT)
    after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return out.stdout, max(after, before) / 1024.0


SCIPY = r'''
import sys, time, resource
import numpy as np, scipy.io, scipy.sparse.linalg
d, name, k = sys.argv[1], sys.argv[2], int(sys.argv[3])
K = scipy.io.mmread(f"{d}/{name}_K.mtx").tocsc()
M = scipy.io.mmread(f"{d}/{name}_M.mtx").tocsc()
sigma = -1e-9 * np.max(np.abs(K.diagonal()) / np.abs(M.diagonal()))
ordering = sys.argv[4]
t = time.perf_counter()
if ordering == "default":
    vals = scipy.sparse.linalg.eigsh(K, k=k, M=M, sigma=sigma, which="LM")[0]
else:
    # SuperLU with a symmetric ordering of K - sigma M (minimum degree on A^T + A).
    lu = scipy.sparse.linalg.splu((K - sigma * M).tocsc(), permc_spec=ordering)
    op = scipy.sparse.linalg.LinearOperator(K.shape, matvec=lu.solve, dtype=float)
    vals = scipy.sparse.linalg.eigsh(K, k=k, M=M, sigma=sigma, which="LM", OPinv=op)[0]
t = time.perf_counter() - t
print("seconds", t)
print("values", " ".join(repr(float(v)) for v in np.sort(vals)))
'''


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--input", default="benches/modes/bar_hex8_1e5.yaml")
    ap.add_argument("-k", type=int, default=20)
    ap.add_argument("--threads", default="1")
    ap.add_argument("--ordering", default="default",
                    help="SuperLU's column ordering: 'default' (eigsh's own splu, COLAMD) or "
                         "MMD_AT_PLUS_A (through OPinv)")
    a = ap.parse_args()
    env = dict(os.environ, CARGO_INCREMENTAL="0", RAYON_NUM_THREADS=a.threads,
               OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    subprocess.run(["cargo", "build", "--release", "--bin", "fem"], cwd=ROOT, env=env, check=True)
    with tempfile.TemporaryDirectory() as tmp:
        name = "bench"
        env_w = dict(env, FEM_MODES_MTX=tmp, FEM_MODES_CASE=f"{name}:{a.input}:{a.k}")
        subprocess.run(["cargo", "test", "--test", "modes_scipy", "--", "--ignored",
                        "write_matrix_market"], cwd=ROOT, env=env_w, check=True,
                       capture_output=True)
        out, fem_peak = peak_of([str(ROOT / "target/release/fem"), "modes", a.input, "-k",
                                 str(a.k), "-o", f"{tmp}/out"], env)
        m = re.search(r"(\d+) modes of (\d+) free dofs in ([0-9.]+) s .*?(\d+) solves", out)
        fem_seconds, n, solves = float(m.group(3)), int(m.group(2)), int(m.group(4))
        ours = [float(l.split(",")[3]) for l in open(f"{tmp}/out/modes.csv").read().split("\n")[1:] if l]
        out, scipy_peak = peak_of([sys.executable, "-c", SCIPY, tmp, name, str(a.k), a.ordering],
                                  env)
        scipy_seconds = float(re.search(r"seconds (\S+)", out).group(1))
        theirs = [float(v) for v in re.search(r"values (.*)", out).group(1).split()]
    diff = max(abs(x - y) / abs(y) for x, y in zip(ours, theirs))
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(f"{a.input}: {a.k} modes of {n} free dofs, fem threads {a.threads}")
    print(f"  fem modes: eigen-solver {fem_seconds:.2f} s ({solves} solves), process peak {fem_peak:.0f} MiB")
    print(f"  SciPy eigsh (SuperLU shift-invert, ordering {a.ordering}): {scipy_seconds:.2f} s, "
          f"process peak {scipy_peak:.0f} MiB")
    print(f"  time ratio fem/SciPy {fem_seconds / scipy_seconds:.2f}, memory ratio {fem_peak / scipy_peak:.2f}; "
          f"largest relative difference of omega^2 {diff:.1e}")
    print(f"  load: {load}")


if __name__ == "__main__":
    sys.exit(main())

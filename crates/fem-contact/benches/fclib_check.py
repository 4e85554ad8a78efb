#!/usr/bin/env python3
"""Cross-check for benches/fclib.rs: Siconos' own error measure on fem's impulses, and the
distance between fem's solution and Siconos' NSGS solution of the same problem.

Usage: /usr/bin/python3 fclib_check.py FILE.hdf5 OURS.txt [--tol 1e-8] [--max-iter N]
OURS.txt holds fem's impulses, one value a line (3 per contact). Prints one line:
  siconos_error_of_ours E  siconos_info I  siconos_sweeps S  siconos_error E2
  rel_diff_r D  rel_diff_u V
(rel_diff_* are relative Euclidean distances; they are only meaningful when both solved.)
The problem is formed as in ../../../shared/peers/siconos_fclib.py (same reduction).
"""
import argparse
import sys

import numpy as np
import siconos.numerics as sn

sys.path.insert(0, __file__.rsplit("/", 1)[0] + "/../../../../shared/peers")
try:
    from siconos_fclib import local_problem  # the peer's own reader and reduction
except ImportError:  # the peers folder elsewhere: FEM_PEERS
    import os
    sys.path.insert(0, os.environ.get("FEM_PEERS", "."))
    from siconos_fclib import local_problem


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("ours")
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--max-iter", type=int, default=100000)
    a = ap.parse_args()
    W, q, mu = local_problem(a.file)
    nc = len(mu)
    problem = sn.FrictionContactProblem(3, nc, W, q, mu)
    ours = np.loadtxt(a.ours)
    so = sn.SolverOptions(sn.SICONOS_FRICTION_3D_NSGS)
    u = W @ ours + q
    _, err_ours = sn.fc3d_compute_error(problem, ours.copy(), u.copy(), a.tol, so, np.linalg.norm(q))
    so.dparam[sn.SICONOS_DPARAM_TOL] = a.tol
    so.iparam[sn.SICONOS_IPARAM_MAX_ITER] = a.max_iter
    r, v = np.zeros(3 * nc), np.zeros(3 * nc)
    info = sn.fc3d_nsgs(problem, r, v, so)
    du = np.linalg.norm((W @ r + q) - u) / max(np.linalg.norm(u), 1e-300)
    dr = np.linalg.norm(r - ours) / max(np.linalg.norm(r), 1e-300)
    print(f"siconos_error_of_ours {err_ours:.6e} siconos_info {info} siconos_sweeps "
          f"{so.iparam[sn.SICONOS_IPARAM_ITER_DONE]} siconos_error "
          f"{so.dparam[sn.SICONOS_DPARAM_RESIDU]:.6e} rel_diff_r {dr:.3e} rel_diff_u {du:.3e}")


if __name__ == "__main__":
    main()

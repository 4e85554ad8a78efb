#!/usr/bin/env python3
"""MoorDyn on the paper's falling cable (95), for the accuracy half of the fem-vs-MoorDyn
comparison (crates/fem-beam/benches/cable_vs_moordyn.rs runs it).

Line: L = 32.6 m, 7.67 kg/m, EI = 700 N m^2, EA = 1e8 N (nearly inextensible) with critically damped axial segment modes (BA = -1, as the peer script), no
hydrodynamics (Cd = Ca = CdAx = CaAx = 0, water density 1e-6 kg/m^3), gravity 9.81 along -z.
End A fixed at (0, 0, 0); end B a free point of zero mass starting at (20, 0, 0); initial shape
MoorDyn's own catenary (Init_NoIC), at rest. RK2 (MoorDyn's default) with dtM = CFL x the
segment period (CFL 0.1, as the peer script). Prints, per N, the free end's position at the
requested times, MoorDyn's step and the wall time per simulated second.

Usage: python moordyn_falling.py --ns 20 100 --times 1 2 [--json out.json]
"""
import os
for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_v, "1")
import argparse, json, sys, tempfile, time
import moordyn

INPUT = """--------------------- MoorDyn Input File ------------------------------------
falling cable (Glowinski-Holmstrom (95)) in vacuum
---------------------- LINE TYPES ----------------------------------------------
TypeName   Diam    Mass/m     EA     BA/-zeta    EI     Cd     Ca     CdAx    CaAx
(name)     (m)     (kg/m)     (N)    (N-s/-)     (N-m^2) (-)   (-)    (-)     (-)
cable      0.01    7.67       1e8    -1          700    0      0      0       0
---------------------- POINTS ---------------------------------------------------
ID   Attachment  X       Y     Z      Mass   Volume  CdA    Ca
(#)   (word)     (m)     (m)   (m)    (kg)   (m^3)   (m^2)  (-)
1     Fixed      0       0     0      0      0       0      0
2     Free       20      0     0      0      0       0      0
---------------------- LINES -----------------------------------------------------
ID   LineType   AttachA  AttachB  UnstrLen  NumSegs  LineOutputs
(#)   (name)     (ID)     (ID)      (m)       (-)      (-)
1     cable      1        2        32.6      {nseg}      -
---------------------- OPTIONS ---------------------------------------------------
0             writeLog
1000          WtrDpth
9.81          g
1e-6          rho
{cfl}         CFL
1             disableOutput
1             disableOutTime
------------------------- need this line ----------------------------------------
"""


class Quiet:
    def __enter__(self):
        sys.stdout.flush()
        self.saved = os.dup(1)
        self.null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(self.null, 1)

    def __exit__(self, *exc):
        sys.stdout.flush()
        os.dup2(self.saved, 1)
        os.close(self.saved)
        os.close(self.null)


def run(nseg, times, cfl, dtc):
    d = tempfile.mkdtemp(prefix="moordyn_fall_")
    path = os.path.join(d, "line.txt")
    with open(path, "w") as fh:
        fh.write(INPUT.format(nseg=nseg, cfl=cfl))
    cwd = os.getcwd()
    os.chdir(d)
    try:
        with Quiet():
            system = moordyn.Create(path)
            moordyn.SetVerbosity(system, moordyn.LEVEL_ERR)
            err = moordyn.Init_NoIC(system, [], [])
        if err:
            raise RuntimeError(f"Init_NoIC error {err}")
        import cmoordyn
        dtm = cmoordyn.get_dt(system)
        point = moordyn.GetPoint(system, 2)
        out, t, wall = [], 0.0, 0.0
        for target in times:
            n = int(round((target - t) / dtc))
            t0 = time.perf_counter()
            for _ in range(n):
                moordyn.Step(system, [], [], t, dtc)
                t += dtc
            wall += time.perf_counter() - t0
            out.append(list(moordyn.GetPointPos(point)))
        with Quiet():
            moordyn.Close(system)
    finally:
        os.chdir(cwd)
    return dict(N=nseg, dtM=dtm, tips=out, times=times, wall=wall, s_per_sim_s=wall / times[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ns", type=int, nargs="+", default=[20, 100])
    ap.add_argument("--times", type=float, nargs="+", default=[1.0, 2.0])
    ap.add_argument("--cfl", type=float, default=0.1)
    ap.add_argument("--dtc", type=float, default=0.01)
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    rows = [run(n, a.times, a.cfl, a.dtc) for n in a.ns]
    for r in rows:
        print(f"N {r['N']}: dtM {r['dtM']:.3e}, wall per simulated s {r['s_per_sim_s']:.3e}, tips {r['tips']}")
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(rows, fh, indent=1)


if __name__ == "__main__":
    main()

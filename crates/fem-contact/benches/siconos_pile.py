#!/usr/bin/env python3
"""Peer for `cargo bench -p fem-scene --bench pile`: the same pile run by Siconos 4.4's
mechanics module (Debian python3-siconos: siconos.io.mechanics_run with the Bullet collision
backend, Moreau-Jean, its fc3d NSGS), interleaved with fem's bench in one run.

The pile: NX x NY columns of NZ bodies, spheres (r = a/2) and cubes (side a) alternating,
a = 0.1 m, density 1000, each resting on the one below with a gap of 1e-4 a, 1.5 a apart, on a
plane; friction 0.5, no restitution, h = 1e-3, the contact solver to 1e-8. Reported per side:
CPU seconds per step (process time, one thread) and contact updates per core-second
(contacts x steps / CPU s), and their ratio.

Usage: /usr/bin/python3 siconos_pile.py [--nx 20 --ny 20 --nz 25] [--steps 20] [--rounds 2]
       [--no-fem]   (OMP_NUM_THREADS=1; Debian's Python, where python3-siconos installs)
"""
import argparse, os, subprocess, sys, tempfile, time

A = 0.1


def build(path, nx, ny, nz):
    from siconos.io.mechanics_run import MechanicsHdf5Runner
    from siconos.mechanics.collision.tools import Contactor
    gap = 1e-4 * A
    with MechanicsHdf5Runner(mode='w', io_filename=path) as io:
        io.add_primitive_shape('Sphere', 'Sphere', (A / 2,))
        io.add_primitive_shape('Cube', 'Box', (A, A, A))
        side = 1.5 * A * max(nx, ny) + 2 * A
        io.add_primitive_shape('Ground', 'Box', (side, side, A))
        io.add_Newton_impact_friction_nsl('contact', mu=0.5, e=0.0)
        io.add_object('ground', [Contactor('Ground')],
                      translation=[0.75 * A * (nx - 1), 0.75 * A * (ny - 1), -A / 2])
        rho = 1000.0
        m_sphere = rho * 4.0 / 3.0 * 3.141592653589793 * (A / 2) ** 3
        m_cube = rho * A ** 3
        for i in range(nx):
            for j in range(ny):
                for k in range(nz):
                    sphere = (i + j + k) % 2 == 0
                    io.add_object(f'b{i}_{j}_{k}',
                                  [Contactor('Sphere' if sphere else 'Cube')],
                                  translation=[i * 1.5 * A, j * 1.5 * A,
                                               A / 2 + gap + k * (A + gap)],
                                  velocity=[0, 0, 0, 0, 0, 0],
                                  mass=m_sphere if sphere else m_cube)


def run_siconos(nx, ny, nz, steps):
    import siconos.numerics as sn
    from siconos.io.mechanics_run import MechanicsHdf5Runner
    path = os.path.join(tempfile.mkdtemp(), 'pile.hdf5')
    build(path, nx, ny, nz)
    rec = {'t': [], 'c': [], 'start': 0.0, 'err': []}

    def start(io):
        # The kernel's default one-step problem solver (fc3d NSGS), to 1e-8, 10^4 sweeps at
        # most (the Python binding does not take a SolverOptions at construction).
        so = io._simulation.oneStepNSProblem(0).numericsSolverOptions()
        so.iparam[sn.SICONOS_IPARAM_MAX_ITER] = 10000
        so.dparam[sn.SICONOS_DPARAM_TOL] = 1e-8
        rec['solver'] = so.solverId
        rec['start'] = time.process_time()

    def end(io):
        rec['t'].append(time.process_time() - rec['start'])
        osnspb = io._simulation.oneStepNSProblem(0)
        rec['c'].append(osnspb.getSizeOutput() // 3)
        rec['err'].append(osnspb.numericsSolverOptions().dparam[sn.SICONOS_DPARAM_RESIDU])

    with MechanicsHdf5Runner(mode='r+', io_filename=path) as io:
        io.run(h=1e-3, T=steps * 1e-3, verbose=False,
               verbose_progress=False, output_frequency=10 ** 9,
               start_run_iteration_hook=start, end_run_iteration_hook=end)
    os.remove(path)
    cpu = sum(rec['t'])
    contacts = sum(rec['c'])
    print('# Siconos solver id', rec['solver'], sn.solver_options_id_to_name(rec['solver']) if hasattr(sn, 'solver_options_id_to_name') else '', flush=True)
    finite = [e for e in rec['err'] if e == e and e != float('inf')]
    return cpu / len(rec['t']), contacts / len(rec['c']), contacts / cpu, max(finite, default=float('nan'))


def run_fem(steps, size, root):
    out = subprocess.run(['cargo', 'bench', '-p', 'fem-scene', '--bench', 'pile', '--',
                          str(steps)] + [str(n) for n in size], cwd=root, capture_output=True,
                         text=True,
                         env=dict(os.environ, OMP_NUM_THREADS='1', RAYON_NUM_THREADS='1'))
    return out.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--nx', type=int, default=20)
    ap.add_argument('--ny', type=int, default=20)
    ap.add_argument('--nz', type=int, default=25)
    ap.add_argument('--steps', type=int, default=20)
    ap.add_argument('--rounds', type=int, default=2)
    ap.add_argument('--no-fem', action='store_true')
    a = ap.parse_args()
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..')
    print('# load average at start:', open('/proc/loadavg').read().strip(), flush=True)
    for k in range(a.rounds):
        if not a.no_fem:
            print(f'## round {k}: fem', flush=True)
            print(run_fem(a.steps, (a.nx, a.ny, a.nz), root), flush=True)
        s, c, rate, err = run_siconos(a.nx, a.ny, a.nz, a.steps)
        print(f'## round {k}: Siconos {a.nx}x{a.ny}x{a.nz} bodies, {a.steps} steps: '
              f'{s * 1e3:.1f} ms CPU per step, {c:.0f} contacts per step, '
              f'{rate:.3g} contact updates per core-second, largest finite solver error {err:.1e}',
              flush=True)
    print('# load average at end:', open('/proc/loadavg').read().strip(), flush=True)


if __name__ == '__main__':
    main()

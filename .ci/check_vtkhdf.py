#!/usr/bin/env python3
"""Read VTKHDF files with VTK's own vtkHDFReader and compare every step with the .vtu frames of
the same run written as a .pvd collection.

Usage: check_vtkhdf.py RUN.vtkhdf RUN.pvd [RUN.vtkhdf RUN.pvd ...]
       check_vtkhdf.py --min-steps N RUN.vtkhdf    (read alone: at least N steps, all finite;
                                                    a file of fem-io's example vtkhdf_sample is
                                                    also checked against the formula it writes)

For each pair: the file must read without any VTK error or warning; its number of steps and
their times must be the collection's; at every step its points, cells (types and connectivity)
and every point and cell array must equal the .vtu's, bit for bit for a double-precision file
and to single-precision rounding (relative 6e-8 of the array's largest magnitude) for a
single-precision one; nothing may be NaN or infinite. A file written in several parts (a
partitioned data set) is compared part by part with the pieces of the .pvtu frames.

Prints one line per file and a final "checked N files"; exits 1 on any failure (each printed,
naming the file and step), 2 on usage errors. Needs the `vtk` package (pip install vtk).
"""

import math
import os
import sys
import xml.etree.ElementTree as ET

try:
    from vtkmodules.vtkCommonCore import vtkLogger, vtkOutputWindow, vtkStringOutputWindow
    from vtkmodules.vtkIOHDF import vtkHDFReader
    from vtkmodules.vtkIOXML import vtkXMLUnstructuredGridReader
    from vtkmodules.util.numpy_support import vtk_to_numpy
    import numpy as np
except ImportError as e:  # pragma: no cover
    print(f"check_vtkhdf: cannot import vtk ({e}); pip install vtk", file=sys.stderr)
    sys.exit(2)

vtkLogger.SetStderrVerbosity(vtkLogger.VERBOSITY_OFF)


class CheckError(Exception):
    """A problem with one file; the message names it."""


def capture():
    window = vtkStringOutputWindow()
    vtkOutputWindow.SetInstance(window)
    return window


def vtk_said(window):
    text = window.GetOutput() or ""
    bad = [ln for ln in text.splitlines() if ("ERR" in ln or "Warn" in ln or "rror" in ln)]
    return bad[:6]


def read_hdf(path):
    """Yields (time, [grid per part]) for every step of a VTKHDF file."""
    window = capture()
    reader = vtkHDFReader()
    if not reader.CanReadFile(path):
        raise CheckError(f"{path}: vtkHDFReader cannot read it")
    reader.SetFileName(path)
    reader.UpdateInformation()
    said = vtk_said(window)
    if said:
        raise CheckError(f"{path}: VTK reported: " + " | ".join(said))
    n = reader.GetNumberOfSteps()
    from vtkmodules.vtkCommonExecutionModel import vtkStreamingDemandDrivenPipeline as sddp
    info = reader.GetOutputInformation(0)
    times = list(info.Get(sddp.TIME_STEPS()) or [])
    if len(times) != n:
        # A file with one step may report no time values.
        times = [None] * n
    for k in range(n):
        reader.SetStep(k)
        reader.Update()
        said = vtk_said(window)
        if said:
            raise CheckError(f"{path}: step {k}: VTK reported: " + " | ".join(said))
        out = reader.GetOutputDataObject(0)
        if out.IsA("vtkPartitionedDataSet"):
            grids = [out.GetPartition(i) for i in range(out.GetNumberOfPartitions())]
        else:
            grids = [out]
        yield times[k], [copy_grid(g) for g in grids]


def copy_grid(g):
    """The arrays of a grid as numpy arrays (VTK reuses its output between steps)."""
    def arrays(data):
        return {data.GetArrayName(i): vtk_to_numpy(data.GetArray(i)).copy()
                for i in range(data.GetNumberOfArrays())}
    cells = g.GetCells()
    types = getattr(g, "GetCellTypes", None) or g.GetCellTypesArray
    return {
        "points": vtk_to_numpy(g.GetPoints().GetData()).copy(),
        "types": vtk_to_numpy(types()).copy() if g.GetNumberOfCells() else np.zeros(0),
        "connectivity": vtk_to_numpy(cells.GetConnectivityArray()).copy(),
        "offsets": vtk_to_numpy(cells.GetOffsetsArray()).copy(),
        "point": arrays(g.GetPointData()),
        "cell": arrays(g.GetCellData()),
    }


def read_vtu(path):
    window = capture()
    reader = vtkXMLUnstructuredGridReader()
    reader.SetFileName(path)
    reader.Update()
    said = vtk_said(window)
    if said:
        raise CheckError(f"{path}: VTK reported: " + " | ".join(said))
    return copy_grid(reader.GetOutput())


def pvd_frames(pvd):
    root = ET.parse(pvd).getroot()
    base = os.path.dirname(os.path.abspath(pvd))
    frames = []
    for ds in root.find("Collection").findall("DataSet"):
        path = os.path.join(base, ds.get("file"))
        if path.endswith(".pvtu"):
            pieces = [os.path.join(base, p.get("Source"))
                      for p in ET.parse(path).getroot().iter("Piece")]
        else:
            pieces = [path]
        frames.append((float(ds.get("timestep")), pieces))
    return frames


def finite(name, a, where):
    if a.dtype.kind == "f" and not np.all(np.isfinite(a)):
        raise CheckError(f"{where}: {name} holds a value that is not finite")


def same(name, a, b, where, single):
    a = np.asarray(a)
    b = np.asarray(b)
    if a.shape != b.shape:
        raise CheckError(f"{where}: {name} has shape {a.shape}, the .vtu's {b.shape}")
    finite(name, a, where)
    if a.size == 0:
        return
    if single and a.dtype == np.float32:
        scale = float(np.max(np.abs(b))) or 1.0
        err = float(np.max(np.abs(a.astype(np.float64) - b)))
        if err > 6e-8 * scale:
            raise CheckError(f"{where}: {name} differs by {err:.3e} (scale {scale:.3e}), "
                             "more than single-precision rounding")
    elif not np.array_equal(a, b):
        i = int(np.argmax(np.asarray(a != b).reshape(-1)))
        raise CheckError(f"{where}: {name} differs from the .vtu's (first at flat index {i}: "
                         f"{a.reshape(-1)[i]} against {b.reshape(-1)[i]})")


def compare(hdf, pvd):
    frames = pvd_frames(pvd)
    steps = list(read_hdf(hdf))
    if len(steps) != len(frames):
        raise CheckError(f"{hdf}: {len(steps)} steps, the .pvd lists {len(frames)} frames")
    single = False
    for k, ((t, parts), (t_vtu, pieces)) in enumerate(zip(steps, frames)):
        where = f"{hdf}: step {k}"
        if t is not None and t != t_vtu:
            raise CheckError(f"{where}: time {t!r}, the .pvd's {t_vtu!r}")
        if len(parts) != len(pieces):
            raise CheckError(f"{where}: {len(parts)} parts, the frame {len(pieces)} pieces")
        for part, piece in zip(parts, pieces):
            ref = read_vtu(piece)
            for key in ("points", "types", "connectivity", "offsets"):
                same(key, part[key], ref[key], where, False)
            for kind in ("point", "cell"):
                if set(part[kind]) != set(ref[kind]):
                    raise CheckError(f"{where}: {kind} arrays {sorted(part[kind])}, "
                                     f"the .vtu's {sorted(ref[kind])}")
                for name, a in part[kind].items():
                    single |= a.dtype == np.float32
                    same(f"{kind} array {name!r}", a, ref[kind][name], where, True)
    return f"{hdf}: {len(steps)} steps equal to {pvd}" + (" (single precision)" if single else "")


def sample_formula(hdf, k, t, part):
    """fem-io's example vtkhdf_sample writes u = (0.01 t z, 0, -0.02 t x^2) at the reference
    point (x, y, z) and, on cell c, (c + 1)(1 + t)/3."""
    where = f"{hdf}: step {k}"
    p = part["points"]
    if "moving" in os.path.basename(hdf):
        x = p[:, 0] - t
        z = p[:, 2] - 0.1 * t * x
    else:
        x, z = p[:, 0], p[:, 2]
    u = np.stack([0.01 * t * z, 0 * x, -0.02 * t * x * x], axis=1)
    single = part["point"]["displacement"].dtype == np.float32
    tol = 1e-6 if single else 1e-12
    err = float(np.max(np.abs(part["point"]["displacement"] - u), initial=0.0))
    if err > tol * (1 + float(np.max(np.abs(u), initial=0.0))):
        raise CheckError(f"{where}: displacement is off the written formula by {err:.3e}")
    s = part["cell"]["von_mises"]
    expect = (np.arange(len(s)) + 1.0) * (1.0 + t) / 3.0
    if float(np.max(np.abs(s - expect), initial=0.0)) > tol * float(np.max(expect, initial=1.0)):
        raise CheckError(f"{where}: von_mises is off the written formula")


def alone(hdf, min_steps):
    n = 0
    for k, (t, parts) in enumerate(read_hdf(hdf)):
        if "vtkhdf_sample" in hdf and t is not None:
            for part in parts:
                sample_formula(hdf, k, t, part)
        for part in parts:
            finite("points", part["points"], f"{hdf}: step {k}")
            for kind in ("point", "cell"):
                for name, a in part[kind].items():
                    finite(f"{kind} array {name!r}", a, f"{hdf}: step {k}")
        n += 1
    if n < min_steps:
        raise CheckError(f"{hdf}: {n} steps, expected at least {min_steps}")
    return f"{hdf}: {n} steps read"


def main(argv):
    failures = 0
    checked = 0
    if argv[:1] == ["--min-steps"]:
        if len(argv) < 3:
            print(__doc__, file=sys.stderr)
            return 2
        jobs = [(alone, (p, int(argv[1]))) for p in argv[2:]]
    else:
        if not argv or len(argv) % 2:
            print(__doc__, file=sys.stderr)
            return 2
        jobs = [(compare, (argv[i], argv[i + 1])) for i in range(0, len(argv), 2)]
    for fn, args in jobs:
        try:
            print(fn(*args))
            checked += 1
        except (CheckError, OSError, ET.ParseError) as e:
            print(f"FAIL {e}")
            failures += 1
    print(f"checked {checked} files, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/env python3
"""Check a distributed run's frames against the serial run's, with VTK's own readers.

Usage: check_mpi.py SERIAL.pvd PARALLEL.pvd [PARALLEL.pvd ...]

For every parallel collection: its .pvd lists one .pvtu per frame; each .pvtu is read with
vtkXMLPUnstructuredGridReader (the reader of the parallel format: it reads every rank's .vtu
piece and appends them into one dataset) and fails on any reader error. Its frames' times are
the serial run's. Every point and cell array of the serial frame (read with
vtkXMLUnstructuredGridReader) is found in the parallel frame, and every value is bitwise equal
at the same global node (point array `global_node`; a node shared by several pieces appears
in each, all copies equal) and global cell (cell array `global_cell`; each cell in exactly one
piece); the points too. The copies of a shared node are marked: the reader's point data has
VTK's ghost array (`vtkGhostType`, found by the reader as the point ghost array), and the
points it does not mark are the serial run's nodes, each once (what ParaView keeps when it
drops the ghosts: no seam). Prints one line per collection; exits 1 on any difference.
Needs the `vtk` and `numpy` packages.
"""

import os
import sys
import xml.etree.ElementTree as ET

import numpy as np
from vtkmodules.vtkCommonCore import vtkOutputWindow, vtkStringOutputWindow
from vtkmodules.vtkIOXML import vtkXMLPUnstructuredGridReader, vtkXMLUnstructuredGridReader
from vtkmodules.util.numpy_support import vtk_to_numpy

messages = vtkStringOutputWindow()
vtkOutputWindow.SetInstance(messages)


def frames(pvd):
    root = ET.parse(pvd).getroot()
    d = os.path.dirname(pvd)
    return [(float(e.get("timestep")), os.path.join(d, e.get("file"))) for e in root.iter("DataSet")]


def read(path, reader):
    reader.SetFileName(path)
    reader.Update()
    text = messages.GetOutput()
    if reader.GetErrorCode() != 0 or "ERROR" in text:
        raise SystemExit(f"{path}: VTK could not read it: {text.strip()}")
    grid = reader.GetOutput()
    if grid.GetNumberOfCells() == 0:
        raise SystemExit(f"{path}: no cells")
    return grid


def arrays(data):
    return {data.GetArrayName(i): vtk_to_numpy(data.GetArray(i)) for i in range(data.GetNumberOfArrays())}


def bits(a):
    return np.ascontiguousarray(a, dtype=np.float64).view(np.uint64)


def compare(serial_pvd, parallel_pvd):
    s_frames, p_frames = frames(serial_pvd), frames(parallel_pvd)
    if [t for t, _ in s_frames] != [t for t, _ in p_frames]:
        raise SystemExit(f"{parallel_pvd}: frame times differ from {serial_pvd}")
    n_values = 0
    n_ghosts = 0
    for (t, s_path), (_, p_path) in zip(s_frames, p_frames):
        if not p_path.endswith(".pvtu"):
            raise SystemExit(f"{p_path}: expected a .pvtu")
        s = read(s_path, vtkXMLUnstructuredGridReader())
        p = read(p_path, vtkXMLPUnstructuredGridReader())
        sp, pp = arrays(s.GetPointData()), arrays(p.GetPointData())
        sc, pc = arrays(s.GetCellData()), arrays(p.GetCellData())
        node = pp["global_node"].astype(np.int64)
        cell = pc["global_cell"].astype(np.int64)
        if sorted(cell.tolist()) != list(range(s.GetNumberOfCells())):
            raise SystemExit(f"{p_path}: the pieces' cells are not the serial cells, each once")
        if sorted(set(node.tolist())) != list(range(s.GetNumberOfPoints())):
            raise SystemExit(f"{p_path}: the pieces' nodes are not the serial nodes")
        ghost_array = p.GetPointData().GetGhostArray()
        if ghost_array is None or ghost_array.GetName() != "vtkGhostType":
            raise SystemExit(f"{p_path}: VTK's reader finds no point ghost array vtkGhostType")
        ghost = vtk_to_numpy(ghost_array)
        kept = node[ghost == 0]
        if sorted(kept.tolist()) != list(range(s.GetNumberOfPoints())):
            raise SystemExit(
                f"{p_path}: without the ghosts the pieces hold {kept.size} points, "
                f"not the serial {s.GetNumberOfPoints()} nodes each once")
        n_ghosts += int((ghost != 0).sum())
        s_points = vtk_to_numpy(s.GetPoints().GetData())
        p_points = vtk_to_numpy(p.GetPoints().GetData())
        checks = [("points", s_points[node], p_points)]
        checks += [(f"point array {k}", v[node], pp.get(k)) for k, v in sp.items()]
        checks += [(f"cell array {k}", v[cell], pc.get(k)) for k, v in sc.items()]
        for what, want, got in checks:
            if got is None:
                raise SystemExit(f"{p_path}: no {what}")
            if want.shape != got.shape or not np.array_equal(bits(want), bits(got)):
                diff = np.abs(np.asarray(want, float) - np.asarray(got, float)).max()
                raise SystemExit(f"{p_path}: {what} differs from {s_path} (max |difference| {diff:e})")
            n_values += want.size
    print(f"{parallel_pvd}: {len(p_frames)} frames, {n_values} values bitwise equal to {serial_pvd}; "
          f"{n_ghosts // max(len(p_frames), 1)} ghost points a frame, the others the serial nodes each once")


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    for parallel in sys.argv[2:]:
        compare(sys.argv[1], parallel)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Check ParaView collections (.pvd) and the .vtu files they list with VTK itself.

Usage: check_vtk.py [--require-point-array NAME ...] COLLECTION.pvd [COLLECTION.pvd ...]

For every .pvd: parse it (xml.etree), require a <VTKFile type="Collection"> with at least one
<DataSet timestep=... file=...>, every timestep a finite number and every listed file present.
For every listed .vtu: read it with vtkXMLUnstructuredGridReader and fail on any reader error
(error code, ErrorEvent on the reader, or ERROR/Warning text VTK sends to its output window,
which is where errors of the reader's internal parser and decompressors go). Then require
points > 0, cells > 0, at least one point-data array, every point/cell array declared in the
file loaded with one tuple per point/cell, and the arrays named by --require-point-array. A
series of contact points (a collection named *_contacts.pvd: a scene's contacts) may have
frames with no point (no contact at that step): the arrays are still checked.

Prints one line per file and a final "checked N files from M collections"; exits 1 if any
file or collection failed (a NaN or infinite value in any array or coordinate fails it) (each failure is printed, naming the file), 2 on usage errors.
Needs the `vtk` package (pip install vtk).
"""

import argparse
import math
import os
import sys
import xml.etree.ElementTree as ET

try:
    from vtkmodules.vtkCommonCore import (
        vtkCommand,
        vtkLogger,
        vtkOutputWindow,
        vtkStringOutputWindow,
    )
    from vtkmodules.vtkIOXML import vtkXMLUnstructuredGridReader
except ImportError as e:  # pragma: no cover
    print(f"check_vtk: cannot import vtk ({e}); pip install vtk", file=sys.stderr)
    sys.exit(2)


class CheckError(Exception):
    """A problem with one file; the message names the file."""


# VTK's logger would print every error a second time, colored, on stderr; the captured text
# is reported with the file name instead.
vtkLogger.SetStderrVerbosity(vtkLogger.VERBOSITY_OFF)


def _capture_vtk_output():
    """Routes everything VTK would print to a fresh string buffer and returns the buffer."""
    window = vtkStringOutputWindow()
    vtkOutputWindow.SetInstance(window)
    return window


def parse_pvd(pvd):
    """Returns [(timestep, absolute .vtu path)] of a collection; raises CheckError."""
    try:
        root = ET.parse(pvd).getroot()
    except (ET.ParseError, OSError) as e:
        raise CheckError(f"{pvd}: cannot parse collection: {e}") from e
    if root.tag != "VTKFile" or root.get("type") != "Collection":
        raise CheckError(f"{pvd}: root is <{root.tag} type={root.get('type')!r}>, "
                         "not <VTKFile type=\"Collection\">")
    coll = root.find("Collection")
    if coll is None:
        raise CheckError(f"{pvd}: no <Collection> element")
    entries = []
    base = os.path.dirname(os.path.abspath(pvd))
    for ds in coll.findall("DataSet"):
        f, t = ds.get("file"), ds.get("timestep")
        if not f:
            raise CheckError(f"{pvd}: a <DataSet> has no file attribute")
        try:
            time = float(t)
        except (TypeError, ValueError):
            raise CheckError(f"{pvd}: timestep {t!r} of {f} is not a number") from None
        if not math.isfinite(time):
            raise CheckError(f"{pvd}: timestep {t!r} of {f} is not finite")
        path = f if os.path.isabs(f) else os.path.join(base, f)
        if not os.path.isfile(path):
            raise CheckError(f"{pvd}: listed file {path} does not exist")
        entries.append((time, path))
    if not entries:
        raise CheckError(f"{pvd}: the collection lists no data sets")
    return entries


def first_non_finite(arr):
    """The first value of a VTK data array that is NaN or infinite, or None."""
    n = arr.GetNumberOfTuples() * arr.GetNumberOfComponents()
    for i in range(n):
        v = arr.GetValue(i)
        if not math.isfinite(v):
            return v
    return None


def check_vtu(path, required_point_arrays, may_be_empty=False):
    """Reads one .vtu with VTK; returns a summary line or raises CheckError."""
    output = _capture_vtk_output()
    reader = vtkXMLUnstructuredGridReader()
    events = []
    reader.AddObserver(vtkCommand.ErrorEvent, lambda obj, ev: events.append("ErrorEvent"))
    reader.AddObserver(vtkCommand.WarningEvent, lambda obj, ev: events.append("WarningEvent"))
    reader.SetFileName(path)
    if not reader.CanReadFile(path):
        raise CheckError(f"{path}: VTK cannot read this file as an UnstructuredGrid")
    reader.Update()
    problems = []
    code = reader.GetErrorCode()
    if code != 0:
        problems.append(f"reader error code {code}")
    if events:
        problems.append("reader raised " + ", ".join(sorted(set(events))))
    text = output.GetOutput() or ""
    if "ERROR" in text or "Warning" in text or "error" in text.lower():
        lines = [ln for ln in text.strip().splitlines() if ln.strip()][:8]
        problems.append("VTK reported:\n    " + "\n    ".join(lines))
    if problems:
        raise CheckError(f"{path}: " + "; ".join(problems))

    grid = reader.GetOutput()
    n_points, n_cells = grid.GetNumberOfPoints(), grid.GetNumberOfCells()
    if n_points <= 0 and not may_be_empty:
        raise CheckError(f"{path}: no points")
    if n_points > 0:
        bad = first_non_finite(grid.GetPoints().GetData())
        if bad is not None:
            raise CheckError(f"{path}: a point coordinate is not finite ({bad})")
    if n_cells <= 0 and not (may_be_empty and n_points == 0):
        raise CheckError(f"{path}: no cells")

    def arrays(kind, declared, data, n):
        names = [declared(i) for i in range(len_of[kind])]
        for name in names:
            arr = data.GetArray(name)
            if arr is None:
                raise CheckError(f"{path}: {kind} array {name!r} declared but not loaded")
            if arr.GetNumberOfTuples() != n:
                raise CheckError(f"{path}: {kind} array {name!r} has "
                                 f"{arr.GetNumberOfTuples()} tuples, expected {n}")
            bad = first_non_finite(arr)
            if bad is not None:
                raise CheckError(f"{path}: {kind} array {name!r} holds a non-finite value "
                                 f"({bad})")
        return names

    len_of = {"point": reader.GetNumberOfPointArrays(), "cell": reader.GetNumberOfCellArrays()}
    point_names = arrays("point", reader.GetPointArrayName, grid.GetPointData(), n_points)
    cell_names = arrays("cell", reader.GetCellArrayName, grid.GetCellData(), n_cells)
    if not point_names:
        raise CheckError(f"{path}: no point-data arrays")
    for name in required_point_arrays:
        if name not in point_names:
            raise CheckError(f"{path}: required point array {name!r} missing "
                             f"(has {point_names})")
    comps = {n: grid.GetPointData().GetArray(n).GetNumberOfComponents() for n in point_names}
    point_desc = ", ".join(f"{n}[{c}]" for n, c in comps.items())
    return (f"OK {path}: {n_points} points, {n_cells} cells, point data {point_desc}; "
            f"cell data {', '.join(cell_names) or '-'}")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pvd", nargs="+", help="ParaView collection files")
    ap.add_argument("--require-point-array", action="append", default=[], metavar="NAME",
                    help="point-data array every .vtu must have (repeatable)")
    args = ap.parse_args(argv)

    n_files, failures = 0, []
    for pvd in args.pvd:
        try:
            entries = parse_pvd(pvd)
        except CheckError as e:
            failures.append(str(e))
            print(f"FAIL {e}")
            continue
        for time, path in entries:
            try:
                may_be_empty = os.path.basename(pvd).endswith("_contacts.pvd")
                print(check_vtu(path, args.require_point_array, may_be_empty)
                      + f" (t={time!r})")
            except CheckError as e:
                failures.append(str(e))
                print(f"FAIL {e}")
            n_files += 1
    print(f"checked {n_files} files from {len(args.pvd)} collections"
          + (f", {len(failures)} failed" if failures else ""))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

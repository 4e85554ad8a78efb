#!/usr/bin/env python3
"""Check the pictures a run's ParaView view renders (pvpython NAME_view.py --png A --body-png B).

Usage: check_views.py VIEW.png BODY.png [VIEW.png BODY.png ...]

The view must not be blank (at least 0.2 % of its pixels differ from the white background) and
the body alone must show (at least 0.05 % of the pixels coloured, spread over at least 5 % of
the picture's width or height). Prints one line per pair and "checked N views, F failed"; exits 1
on a failure. Needs the `vtk` and `numpy` packages.
"""

import sys

import numpy as np
from vtkmodules.vtkIOImage import vtkPNGReader
from vtkmodules.util.numpy_support import vtk_to_numpy


def pixels(path):
    reader = vtkPNGReader()
    if not reader.CanReadFile(path):
        raise ValueError(f"{path}: not a PNG file")
    reader.SetFileName(path)
    reader.Update()
    image = reader.GetOutput()
    w, h, _ = image.GetDimensions()
    data = vtk_to_numpy(image.GetPointData().GetScalars()).reshape(h, w, -1)[:, :, :3]
    return data


def coloured(data):
    return np.any(data < 235, axis=2)


def main(argv):
    if not argv or len(argv) % 2:
        print(__doc__, file=sys.stderr)
        return 2
    failed = 0
    for view, body in zip(argv[::2], argv[1::2]):
        try:
            v = coloured(pixels(view))
            b = coloured(pixels(body))
            problems = []
            if v.mean() < 0.002:
                problems.append(f"the view is blank ({100 * v.mean():.3f} % of pixels drawn)")
            if b.mean() < 0.0005:
                problems.append(f"the body does not show ({100 * b.mean():.4f} % of pixels)")
            else:
                rows, cols = np.nonzero(b)
                extent = max((cols.max() - cols.min()) / b.shape[1], (rows.max() - rows.min()) / b.shape[0])
                if extent < 0.05:
                    problems.append(f"the body is a speck ({100 * extent:.1f} % of the picture)")
            if problems:
                failed += 1
                print(f"FAIL {view}: " + "; ".join(problems))
            else:
                print(f"{view}: {100 * v.mean():.1f} % drawn, the body {100 * b.mean():.1f} %")
        except (OSError, ValueError) as e:
            failed += 1
            print(f"FAIL {e}")
    print(f"checked {len(argv) // 2} views, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

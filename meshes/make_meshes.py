#!/usr/bin/env python3
"""Regenerate the test meshes in this folder with the Gmsh Python API.

Usage (from anywhere):  pip install gmsh && python3 meshes/make_meshes.py [--parts] [OUT_DIR]
(`--parts`: only the solid parts column_*.msh and bracket_*.msh; `--hemispheres`: only
Hertz's hemisphere_tet10_*.msh and hertz_quarter_*_k4.msh; `--hertz DIR`: every level of
Hertz's convergence study hertz_quarter_*_k{4,8,16}.msh into DIR, not committed: the
ignored tests of crates/fem-scene/tests/hertz_refined.rs read them from FEM_HERTZ_MESHES,
default target/hertz)

Every good mesh is written in MSH 4.1 (what `fem` reads); the files in bad/
exercise the reader's error paths. The script is deterministic for a given
Gmsh version (files were generated with the version printed at the end).
"""

import math
import os
import random
import sys

import gmsh

HERE = os.path.dirname(os.path.abspath(__file__))
BAD = os.path.join(HERE, "bad")


def start(name):
    gmsh.clear()
    gmsh.model.add(name)
    gmsh.option.setNumber("General.Terminal", 0)
    gmsh.option.setNumber("Mesh.MshFileVersion", 4.1)
    gmsh.option.setNumber("Mesh.Binary", 0)
    gmsh.option.setNumber("Mesh.SaveAll", 0)
    gmsh.option.setNumber("Mesh.SaveParametric", 0)
    gmsh.option.setNumber("Mesh.ElementOrder", 1)
    gmsh.option.setNumber("Mesh.RecombineAll", 0)
    gmsh.option.setNumber("Mesh.SecondOrderLinear", 0)
    gmsh.option.setNumber("Mesh.MeshSizeMin", 0)
    gmsh.option.setNumber("Mesh.MeshSizeMax", 1e22)
    gmsh.option.setNumber("Mesh.Renumber", 1)


def mesh_size(h):
    """Uniform target element size h (MeshSizeMax alone does not coarsen:
    the default point sizes are already smaller)."""
    gmsh.option.setNumber("Mesh.MeshSizeMin", h)
    gmsh.option.setNumber("Mesh.MeshSizeMax", h)


def save(path, limit=100_000):
    gmsh.write(path)
    size = os.path.getsize(path)
    assert size < limit, f"{path} is {size} bytes; keep test meshes small"
    print(f"  wrote {os.path.relpath(path, HERE)} ({size} bytes)")


def string(order, path):
    """Line of length 1 along x with 20 elements; groups left/right/string."""
    start("string")
    p0 = gmsh.model.geo.addPoint(0, 0, 0)
    p1 = gmsh.model.geo.addPoint(1, 0, 0)
    line = gmsh.model.geo.addLine(p0, p1)
    gmsh.model.geo.mesh.setTransfiniteCurve(line, 21)
    gmsh.model.geo.synchronize()
    gmsh.model.addPhysicalGroup(0, [p0], name="left")
    gmsh.model.addPhysicalGroup(0, [p1], name="right")
    gmsh.model.addPhysicalGroup(1, [line], name="string")
    gmsh.model.mesh.generate(1)
    gmsh.model.mesh.setOrder(order)
    save(path)


def plate(quads, path):
    """Rectangle 1 x 0.5 in the xy-plane; groups left/right/bottom/top/plate."""
    start("plate")
    rect = gmsh.model.occ.addRectangle(0, 0, 0, 1, 0.5)
    gmsh.model.occ.synchronize()
    curves = [c for (_, c) in gmsh.model.getBoundary([(2, rect)], oriented=False)]
    named = {}
    for c in curves:
        x, y, _ = gmsh.model.occ.getCenterOfMass(1, c)
        if abs(x) < 1e-9:
            named["left"] = c
        elif abs(x - 1) < 1e-9:
            named["right"] = c
        elif abs(y) < 1e-9:
            named["bottom"] = c
        else:
            named["top"] = c
    for name in ["left", "right", "bottom", "top"]:
        gmsh.model.addPhysicalGroup(1, [named[name]], name=name)
    gmsh.model.addPhysicalGroup(2, [rect], name="plate")
    if quads:
        for name, c in named.items():
            gmsh.model.mesh.setTransfiniteCurve(c, 9 if name in ("bottom", "top") else 5)
        gmsh.model.mesh.setTransfiniteSurface(rect)
        gmsh.model.mesh.setRecombine(2, rect)
    else:
        mesh_size(0.15)
    gmsh.model.mesh.generate(2)
    save(path)


def cube(kind, path, binary=False, size=0.25, faces=True):
    """Unit cube; groups xmin..zmax (faces, if `faces`), solid (volume) and
    origin (the corner point (0, 0, 0))."""
    start("cube")
    vol = gmsh.model.occ.addBox(0, 0, 0, 1, 1, 1)
    gmsh.model.occ.synchronize()
    for (_, p) in gmsh.model.getEntities(0):
        if max(abs(c) for c in gmsh.model.getValue(0, p, [])) < 1e-9:
            gmsh.model.addPhysicalGroup(0, [p], name="origin")
    if faces:
        faces = [s for (_, s) in gmsh.model.getBoundary([(3, vol)], oriented=False)]
        for s in faces:
            c = gmsh.model.occ.getCenterOfMass(2, s)
            for axis, label in enumerate("xyz"):
                if abs(c[axis]) < 1e-9:
                    gmsh.model.addPhysicalGroup(2, [s], name=label + "min")
                elif abs(c[axis] - 1) < 1e-9:
                    gmsh.model.addPhysicalGroup(2, [s], name=label + "max")
    gmsh.model.addPhysicalGroup(3, [vol], name="solid")
    if kind == "hex8":
        for (_, c) in gmsh.model.getEntities(1):
            gmsh.model.mesh.setTransfiniteCurve(c, 4)
        for (_, s) in gmsh.model.getEntities(2):
            gmsh.model.mesh.setTransfiniteSurface(s)
            gmsh.model.mesh.setRecombine(2, s)
        gmsh.model.mesh.setTransfiniteVolume(vol)
    else:
        mesh_size(size)
    gmsh.model.mesh.generate(3)
    if kind == "tet10":
        gmsh.model.mesh.setOrder(2)
    gmsh.option.setNumber("Mesh.Binary", 1 if binary else 0)
    save(path)


def cone(path, height=4.0 / 3.0, radius=0.5, size=0.2):
    """Solid cone standing on its tip at the origin, axis +z, tet4: the drawing
    of the heavy top in inputs/rigid_top.yaml (a uniform cone of this height has
    its centre of mass at z = 3h/4 = 1). Group: solid."""
    start("cone")
    # A right triangle in the xz-plane revolved about z (an OCC cone with a
    # zero top radius gives Gmsh a degenerate lateral surface).
    occ = gmsh.model.occ
    tip = occ.addPoint(0, 0, 0)
    rim = occ.addPoint(radius, 0, height)
    top = occ.addPoint(0, 0, height)
    loop = occ.addCurveLoop([occ.addLine(tip, rim), occ.addLine(rim, top), occ.addLine(top, tip)])
    tri = occ.addPlaneSurface([loop])
    out = occ.revolve([(2, tri)], 0, 0, 0, 0, 0, 1, 2 * math.pi)
    occ.synchronize()
    vol = [t for (d, t) in out if d == 3]
    gmsh.model.addPhysicalGroup(3, vol, name="solid")
    mesh_size(size)
    gmsh.model.mesh.generate(3)
    save(path)


def cylinder(kind, path, radius=0.1, height=0.3):
    """Solid circular cylinder of radius 0.1 and height 0.3 on the z axis (z in [0, 0.3]),
    tet4 (size 0.04) or tet10 (size 0.06, mid-edge nodes on the curved surface): a body of
    model.rigid_bodies massed from its mesh, against the closed form m = rho pi r^2 h,
    J_zz = m r^2/2, J_xx = J_yy = m (3 r^2 + h^2)/12. Group: solid."""
    start("cylinder_" + kind)
    vol = gmsh.model.occ.addCylinder(0, 0, 0, 0, 0, height, radius)
    gmsh.model.occ.synchronize()
    gmsh.model.addPhysicalGroup(3, [vol], name="solid")
    mesh_size(0.04 if kind == "tet4" else 0.06)
    gmsh.model.mesh.generate(3)
    if kind == "tet10":
        gmsh.model.mesh.setOrder(2)
    save(path)


def column(kind, path):
    """Square column 0.2 x 0.2 x 1 (x, y in [-0.1, 0.1], z in [0, 1]) of the solid inputs:
    tet4 (size 0.07), hex8 (4 x 4 x 20, transfinite, recombined) or tet10 (size 0.1, curved
    faces not needed: the column is straight-sided). Groups: bottom (z = 0), top (z = 1),
    sides (the four lateral faces, one group), column (the volume)."""
    start("column_" + kind)
    vol = gmsh.model.occ.addBox(-0.1, -0.1, 0, 0.2, 0.2, 1)
    gmsh.model.occ.synchronize()
    named = {"bottom": [], "top": [], "sides": []}
    for (_, s) in gmsh.model.getBoundary([(3, vol)], oriented=False):
        z = gmsh.model.occ.getCenterOfMass(2, s)[2]
        named["bottom" if abs(z) < 1e-9 else "top" if abs(z - 1) < 1e-9 else "sides"].append(s)
    for name, faces in named.items():
        gmsh.model.addPhysicalGroup(2, faces, name=name)
    gmsh.model.addPhysicalGroup(3, [vol], name="column")
    if kind == "hex8":
        for (_, c) in gmsh.model.getEntities(1):
            a, b = gmsh.model.getAdjacencies(1, c)[1]
            za = gmsh.model.getValue(0, a, [])[2]
            zb = gmsh.model.getValue(0, b, [])[2]
            gmsh.model.mesh.setTransfiniteCurve(c, 21 if abs(za - zb) > 0.5 else 5)
        for (_, s) in gmsh.model.getEntities(2):
            gmsh.model.mesh.setTransfiniteSurface(s)
            gmsh.model.mesh.setRecombine(2, s)
        gmsh.model.mesh.setTransfiniteVolume(vol)
    else:
        mesh_size(0.07 if kind == "tet4" else 0.1)
    gmsh.model.mesh.generate(3)
    if kind == "tet10":
        gmsh.model.mesh.setOrder(2)
    save(path)


def bracket(kind, path):
    """An L-shaped bracket with two bolt holes, tet4 (size 0.028) or tet10 (size 0.07, mid-edge
    nodes on the curved hole surfaces): a base plate 0.4 x 0.2 x 0.05 (x, y, z) with a vertical
    hole of radius 0.04 at (0.25, 0.1), and an upright 0.05 x 0.2 x 0.3 at x in [0, 0.05] with
    a horizontal hole (axis x) of radius 0.04 at (y, z) = (0.1, 0.2). Volume
    0.4*0.2*0.05 + 0.05*0.2*0.25 - 2 pi 0.04^2 0.05 = 0.0065 - 1.6e-4 pi.
    Groups: base_hole, upright_hole (the hole surfaces), bottom (z = 0), bracket (volume)."""
    start("bracket_" + kind)
    occ = gmsh.model.occ
    base = occ.addBox(0, 0, 0, 0.4, 0.2, 0.05)
    upright = occ.addBox(0, 0, 0, 0.05, 0.2, 0.3)
    body, _ = occ.fuse([(3, base)], [(3, upright)])
    hole_base = occ.addCylinder(0.25, 0.1, -0.01, 0, 0, 0.07, 0.04)
    hole_upright = occ.addCylinder(-0.01, 0.1, 0.2, 0.07, 0, 0, 0.04)
    out, _ = occ.cut(body, [(3, hole_base), (3, hole_upright)])
    occ.synchronize()
    vol = [t for (d, t) in out if d == 3]
    groups = {"base_hole": [], "upright_hole": [], "bottom": []}
    for (_, s) in gmsh.model.getBoundary([(3, v) for v in vol], oriented=False):
        kind_s = gmsh.model.getType(2, s)
        c = occ.getCenterOfMass(2, s)
        if kind_s == "Cylinder":
            groups["base_hole" if c[2] < 0.1 else "upright_hole"].append(s)
        elif kind_s == "Plane" and abs(c[2]) < 1e-9:
            groups["bottom"].append(s)
    for name, faces in groups.items():
        assert faces, name
        gmsh.model.addPhysicalGroup(2, faces, name=name)
    gmsh.model.addPhysicalGroup(3, vol, name="bracket")
    mesh_size(0.028 if kind == "tet4" else 0.07)
    gmsh.model.mesh.generate(3)
    if kind == "tet10":
        gmsh.model.mesh.setOrder(2)
    save(path)


def hemisphere(path, near, far=0.5, radius=1.0):
    """Hertz's body (issue 24): a solid hemisphere of radius 1, tet10, its pole on the plane
    z = 0 at the origin and its flat face up at z = 1 (centre (0, 0, 1)): a hemisphere rather
    than a sphere because it is stable on a frictionless plane (its centre of mass below the
    centre of curvature) and half the size. Element size `near` within 0.25 of the pole (the
    contact radius of the test is 0.15), growing to `far` at 0.75 from it (a Threshold field
    on the distance to the pole). Groups: sphere (the curved face), top (the flat face), pole
    (the point), hemisphere (the volume)."""
    start("hemisphere")
    occ = gmsh.model.occ
    vol = occ.addSphere(0, 0, radius, radius, -1, -math.pi / 2, 0, 2 * math.pi)
    occ.synchronize()
    pole = [p for (_, p) in gmsh.model.getEntities(0)
            if abs(gmsh.model.getValue(0, p, [])[2]) < 1e-9]
    assert len(pole) == 1, pole
    faces = [s for (_, s) in gmsh.model.getBoundary([(3, vol)], oriented=False)]
    flat = [s for s in faces if gmsh.model.getType(2, s) == "Plane"]
    curved = [s for s in faces if s not in flat]
    gmsh.model.addPhysicalGroup(2, curved, name="sphere")
    gmsh.model.addPhysicalGroup(2, flat, name="top")
    gmsh.model.addPhysicalGroup(0, pole, name="pole")
    gmsh.model.addPhysicalGroup(3, [vol], name="hemisphere")
    field = gmsh.model.mesh.field
    distance = field.add("Distance")
    field.setNumbers(distance, "PointsList", pole)
    threshold = field.add("Threshold")
    field.setNumber(threshold, "InField", distance)
    field.setNumber(threshold, "SizeMin", near)
    field.setNumber(threshold, "SizeMax", far)
    field.setNumber(threshold, "DistMin", 0.25 * radius)
    field.setNumber(threshold, "DistMax", 0.75 * radius)
    field.setAsBackgroundMesh(threshold)
    gmsh.option.setNumber("Mesh.MeshSizeExtendFromBoundary", 0)
    gmsh.option.setNumber("Mesh.MeshSizeFromPoints", 0)
    gmsh.option.setNumber("Mesh.MeshSizeFromCurvature", 0)
    gmsh.model.mesh.generate(3)
    gmsh.model.mesh.setOrder(2)
    gmsh.option.setNumber("Mesh.MeshSizeExtendFromBoundary", 1)
    gmsh.option.setNumber("Mesh.MeshSizeFromPoints", 1)
    # The finer two are larger than the other test meshes (up to 250 KB).
    save(path, limit=250_000)


# Hertz's hemisphere at three refinements near the pole: (file suffix, element size there).
HEMISPHERES = [("coarse", 0.15), ("medium", 0.08), ("fine", 0.06)]


def hemispheres():
    for name, near in HEMISPHERES:
        hemisphere(os.path.join(HERE, f"hemisphere_tet10_{name}.msh"), near)


def quarter_hemisphere(path, near, core, far=0.25, grow=0.5, radius=1.0, limit=250_000):
    """Hertz's convergence study (issue 24, docs/validation.md "Hertz under refinement"): a
    quarter of the hemisphere of `hemisphere` (x >= 0, y >= 0; symmetry planes x = 0 and
    y = 0), tet10, its pole on z = 0 and its flat face up at z = 1. Element size `near` within
    `core` of the pole (a few contact radii), growing by `grow` per unit distance to `far`.
    Groups: sphere (the curved face), top (the flat face), xsym (x = 0), ysym (y = 0), pole
    (the point), hemisphere (the volume)."""
    start("quarter_hemisphere")
    occ = gmsh.model.occ
    vol = occ.addSphere(0, 0, radius, radius, -1, -math.pi / 2, 0, math.pi / 2)
    occ.synchronize()
    pole = [p for (_, p) in gmsh.model.getEntities(0)
            if abs(gmsh.model.getValue(0, p, [])[2]) < 1e-9]
    assert len(pole) == 1, pole
    faces = [s for (_, s) in gmsh.model.getBoundary([(3, vol)], oriented=False)]
    curved = [s for s in faces if gmsh.model.getType(2, s) != "Plane"]

    def plane(axis, value):
        found = []
        for s in faces:
            if s in curved:
                continue
            if abs(occ.getCenterOfMass(2, s)[axis] - value) < 1e-9:
                found.append(s)
        assert len(found) == 1, (axis, found)
        return found

    gmsh.model.addPhysicalGroup(2, curved, name="sphere")
    gmsh.model.addPhysicalGroup(2, plane(2, radius), name="top")
    gmsh.model.addPhysicalGroup(2, plane(0, 0.0), name="xsym")
    gmsh.model.addPhysicalGroup(2, plane(1, 0.0), name="ysym")
    gmsh.model.addPhysicalGroup(0, pole, name="pole")
    gmsh.model.addPhysicalGroup(3, [vol], name="hemisphere")
    field = gmsh.model.mesh.field
    distance = field.add("Distance")
    field.setNumbers(distance, "PointsList", pole)
    threshold = field.add("Threshold")
    field.setNumber(threshold, "InField", distance)
    field.setNumber(threshold, "SizeMin", near)
    field.setNumber(threshold, "SizeMax", far)
    field.setNumber(threshold, "DistMin", core)
    field.setNumber(threshold, "DistMax", core + (far - near) / grow)
    field.setAsBackgroundMesh(threshold)
    gmsh.option.setNumber("Mesh.MeshSizeExtendFromBoundary", 0)
    gmsh.option.setNumber("Mesh.MeshSizeFromPoints", 0)
    gmsh.option.setNumber("Mesh.MeshSizeFromCurvature", 0)
    gmsh.model.mesh.generate(3)
    gmsh.model.mesh.setOrder(2)
    gmsh.option.setNumber("Mesh.MeshSizeExtendFromBoundary", 1)
    gmsh.option.setNumber("Mesh.MeshSizeFromPoints", 1)
    save(path, limit=limit)


# Hertz's convergence study: contact radii a/R = 0.1 and 0.05 (file tags a10, a05), each at
# the pole sizes a/4, a/8, a/16 (k4, k8, k16) within 1.2 a of the pole. The k4 meshes are
# committed (and regenerated by CI); the finer ones are written only by `--hertz DIR`.
HERTZ_RADII = [("a10", 0.1), ("a05", 0.05)]
HERTZ_LEVELS = [4, 8, 16]


def hertz_quarters(folder, levels):
    for tag, a in HERTZ_RADII:
        for k in levels:
            quarter_hemisphere(os.path.join(folder, f"hertz_quarter_{tag}_k{k}.msh"),
                               a / k, 1.2 * a, limit=100_000_000 if k > 4 else 250_000)


def parts():
    """The solid parts of issue 10 (column and bracket)."""
    for kind in ("tet4", "hex8", "tet10"):
        column(kind, os.path.join(HERE, f"column_{kind}.msh"))
    for kind in ("tet4", "tet10"):
        bracket(kind, os.path.join(HERE, f"bracket_{kind}.msh"))


def sparse_tags(path):
    """Coarse tet cube whose node tags are renumbered to 3*t+7 (gaps between
    tags), so that mshio keeps an explicit tag map. Groups: top, solid."""
    start("sparse")
    vol = gmsh.model.occ.addBox(0, 0, 0, 1, 1, 1)
    gmsh.model.occ.synchronize()
    faces = [s for (_, s) in gmsh.model.getBoundary([(3, vol)], oriented=False)]
    top = [s for s in faces if abs(gmsh.model.occ.getCenterOfMass(2, s)[2] - 1) < 1e-9]
    gmsh.model.addPhysicalGroup(2, top, name="top")
    gmsh.model.addPhysicalGroup(3, [vol], name="solid")
    mesh_size(0.5)
    gmsh.model.mesh.generate(3)
    tags, _, _ = gmsh.model.mesh.getNodes()
    gmsh.model.mesh.renumberNodes(list(tags), [3 * int(t) + 7 for t in tags])
    gmsh.option.setNumber("Mesh.Renumber", 0)
    save(path)


# Hand-written MSH 4.1 file: dense node tags 1..5, but NOT in file order
# (block of curve 1 holds tags 4 5 3), which mshio drops when tags are dense.
PERMUTED = """$MeshFormat
4.1 0 8
$EndMeshFormat
$PhysicalNames
2
0 1 "tip"
1 2 "bar"
$EndPhysicalNames
$Entities
2 1 0 0
1 0 0 0 1 1
2 2 0 0 0
1 0 0 0 2 0 0 1 2 2 1 -2
$EndEntities
$Nodes
3 5 1 5
0 1 0 1
1
0 0 0
0 2 0 1
2
2 0 0
1 1 0 3
4
5
3
0.5 0 0
1.5 0 0
1 0 0
$EndNodes
$Elements
2 5 1 5
0 1 15 1
1 1
1 1 1 4
2 1 4
3 4 3
4 3 5
5 5 2
$EndElements
"""


def write_text(path, text):
    with open(path, "w", newline="\n") as f:
        f.write(text)
    print(f"  wrote {os.path.relpath(path, HERE)} ({len(text)} bytes)")


# A single tet whose first two nodes are swapped: negative volume.
INVERTED_TET = """$MeshFormat
4.1 0 8
$EndMeshFormat
$Nodes
1 4 1 4
3 1 0 4
1
2
3
4
0 0 0
1 0 0
0 1 0
0 0 1
$EndNodes
$Elements
1 1 1 1
3 1 4 1
1 2 1 3 4
$EndElements
"""

# An element refers to node tag 9, which does not exist.
MISSING_NODE = INVERTED_TET.replace("1 2 1 3 4", "1 1 2 3 9")

# Corrupt bytes where a node block's parametric flag belongs (7): not a parametric mesh.
CORRUPT_PARAMETRIC_FLAG = INVERTED_TET.replace("3 1 0 4", "3 1 7 4")


def bad_files():
    os.makedirs(BAD, exist_ok=True)

    # MSH 2.2 (legacy format)
    start("msh22")
    gmsh.model.occ.addBox(0, 0, 0, 1, 1, 1)
    gmsh.model.occ.synchronize()
    mesh_size(0.5)
    gmsh.model.mesh.generate(3)
    gmsh.option.setNumber("Mesh.MshFileVersion", 2.2)
    save(os.path.join(BAD, "cube_msh22.msh"))

    # partitioned mesh
    start("partitioned")
    gmsh.model.occ.addBox(0, 0, 0, 1, 1, 1)
    gmsh.model.occ.synchronize()
    mesh_size(0.5)
    gmsh.model.mesh.generate(3)
    gmsh.model.mesh.partition(2)
    save(os.path.join(BAD, "cube_partitioned.msh"))

    # parametric node coordinates
    start("parametric")
    gmsh.model.occ.addBox(0, 0, 0, 1, 1, 1)
    gmsh.model.occ.synchronize()
    mesh_size(0.5)
    gmsh.model.mesh.generate(3)
    gmsh.option.setNumber("Mesh.SaveParametric", 1)
    save(os.path.join(BAD, "cube_parametric.msh"))

    # prisms (unsupported element type 6), extruded from a triangulated square
    start("prism")
    sq = gmsh.model.occ.addRectangle(0, 0, 0, 1, 1)
    gmsh.model.occ.extrude([(2, sq)], 0, 0, 1, numElements=[2], recombine=True)
    gmsh.model.occ.synchronize()
    mesh_size(0.5)
    gmsh.model.mesh.generate(3)
    save(os.path.join(BAD, "prism6.msh"))

    # truncated: first 60 % of a valid ASCII file, and of a binary file
    for src, dst in [("cube_tet4.msh", "truncated.msh"),
                     ("cube_tet4_binary.msh", "truncated_binary.msh")]:
        with open(os.path.join(HERE, src), "rb") as f:
            data = f.read()
        with open(os.path.join(BAD, dst), "wb") as f:
            f.write(data[: len(data) * 6 // 10])
        print(f"  wrote bad/{dst}")

    # garbage: random bytes, and a header followed by nonsense
    rng = random.Random(42)
    with open(os.path.join(BAD, "garbage.msh"), "wb") as f:
        f.write(bytes(rng.randrange(256) for _ in range(2000)))
    print("  wrote bad/garbage.msh")
    write_text(os.path.join(BAD, "garbage_after_header.msh"),
               "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n1 2 x y\n$EndNodes\n")
    write_text(os.path.join(BAD, "empty.msh"), "")
    write_text(os.path.join(BAD, "inverted_tet.msh"), INVERTED_TET)
    write_text(os.path.join(BAD, "missing_node.msh"), MISSING_NODE)
    write_text(os.path.join(BAD, "corrupt_parametric_flag.msh"), CORRUPT_PARAMETRIC_FLAG)


def main():
    # An optional argument writes everything into another folder (CI regenerates the meshes
    # there with the real Gmsh and checks that fem reads them).
    # `--parts` writes only the solid parts (column, bracket).
    global HERE, BAD
    only_parts = "--parts" in sys.argv[1:]
    only_hemispheres = "--hemispheres" in sys.argv[1:]
    if "--hertz" in sys.argv[1:]:
        # `--hertz DIR`: every level of Hertz's convergence study into DIR (the finer ones
        # are tens of MB: not committed).
        folder = os.path.abspath(sys.argv[sys.argv.index("--hertz") + 1])
        os.makedirs(folder, exist_ok=True)
        gmsh.initialize()
        hertz_quarters(folder, HERTZ_LEVELS)
        gmsh.finalize()
        return
    args = [a for a in sys.argv[1:] if a not in ("--parts", "--hemispheres")]
    if args:
        HERE = os.path.abspath(args[0])
        BAD = os.path.join(HERE, "bad")
        os.makedirs(HERE, exist_ok=True)
    gmsh.initialize()
    print(f"Gmsh {gmsh.__version__}")
    if only_parts or only_hemispheres:
        if only_parts:
            parts()
        if only_hemispheres:
            hemispheres()
            hertz_quarters(HERE, [4])
        gmsh.finalize()
        return
    string(1, os.path.join(HERE, "string_line2.msh"))
    string(2, os.path.join(HERE, "string_line3.msh"))
    plate(False, os.path.join(HERE, "plate_tri3.msh"))
    plate(True, os.path.join(HERE, "plate_quad4.msh"))
    cube("tet4", os.path.join(HERE, "cube_tet4.msh"))
    cube("tet4", os.path.join(HERE, "cube_tet4_binary.msh"), binary=True)
    # Second-order faces are tri6 (Gmsh type 9).
    cube("tet10", os.path.join(HERE, "cube_tet10.msh"), size=0.4)
    cube("hex8", os.path.join(HERE, "cube_hex8.msh"))
    cone(os.path.join(HERE, "top_cone.msh"))
    for kind in ("tet4", "tet10"):
        cylinder(kind, os.path.join(HERE, f"cylinder_{kind}.msh"))
    sparse_tags(os.path.join(HERE, "cube_top_sparse_tags.msh"))
    write_text(os.path.join(HERE, "permuted_tags.msh"), PERMUTED)
    parts()
    hemispheres()
    hertz_quarters(HERE, [4])
    bad_files()
    gmsh.finalize()


if __name__ == "__main__":
    main()

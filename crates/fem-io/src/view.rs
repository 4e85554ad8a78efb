//! The ParaView view of a run: `DIR/X_view.py`, a ParaView Python script beside the series
//! that opens it the way its model is best looked at, and the scene: what the physics
//! has besides the body (planes such as a seabed or a wall, fixed points and pivots), as
//! `DIR/X_scene.vtp` (VTK XML PolyData).
//!
//! ```sh
//! paraview --script=out/rigid_top/rigid_top_view.py          # the view, in the ParaView window
//! pvpython out/rigid_top/rigid_top_view.py --png top.png     # the view, to a picture
//! ```
//!
//! A model describes its view with a [`View`] (`fem_model::Model::view`): the direction the
//! camera looks along (the normal of the plane of motion, or an oblique view of a 3D body),
//! the point field that moves the geometry (`displacement`, where the frame's points are the
//! reference ones; none where they already are the body's current position), the field to
//! colour by, and the [`Scene`]. The script warps by the field only where the series has it,
//! at true scale unless the motion is too small to see (below 5 % of the body's size over ten
//! sampled steps: then it scales it so that the largest displacement is a tenth of the body's
//! size, and says so on screen).

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::OutputError;
use crate::atomic::write_atomically;

/// How a model's frames are best looked at.
#[derive(Clone, Debug, PartialEq)]
pub struct View {
    /// The direction the camera looks along, from the camera to the body (the normal of the
    /// plane of motion); `None` for an oblique view of a body that moves in 3D.
    pub look_along: Option<[f64; 3]>,
    /// The direction that is up on the screen.
    pub up: [f64; 3],
    /// The point field that moves the geometry (`displacement`) when the frame's points are
    /// the reference configuration; `None` when they are already the current one.
    pub warp_by: Option<String>,
    /// The warp's scale; `None`: true scale unless the motion is too small to see.
    pub warp_scale: Option<f64>,
    /// The point or cell field to colour by (its magnitude for a vector); `None`: one colour.
    pub color_by: Option<String>,
    /// A direction along which the picture is stretched when the body's extent along it stays
    /// below 5 % of its size (a string's transverse motion with its obstacles at their true
    /// heights): the whole picture, scene included, so that what touches still touches.
    pub exaggerate: Option<[f64; 3]>,
    /// Obstacles and supports.
    pub scene: Scene,
}

impl Default for View {
    /// An oblique view, z up, no warp, one colour, nothing else drawn.
    fn default() -> Self {
        Self {
            look_along: None,
            up: [0.0, 0.0, 1.0],
            warp_by: None,
            warp_scale: None,
            color_by: None,
            exaggerate: None,
            scene: Scene::default(),
        }
    }
}

/// What the physics has besides the body, drawn as a dataset of its own.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Scene {
    /// Planes (a seabed, a wall): drawn as squares.
    pub planes: Vec<Plane>,
    /// Points (fixed points, pivots, supports): drawn as spheres.
    pub points: Vec<[f64; 3]>,
    /// Segments (rods, a line a point is held on): drawn as lines.
    pub segments: Vec<[[f64; 3]; 2]>,
}

impl Scene {
    /// Whether there is nothing to draw.
    pub fn is_empty(&self) -> bool {
        self.planes.is_empty() && self.points.is_empty() && self.segments.is_empty()
    }
}

/// The direction to look along to see `points` flat on the screen: minus the axis along which
/// they do not extend (a body moving in a coordinate plane), if there is one.
pub fn look_across(points: &[[f64; 3]]) -> Option<[f64; 3]> {
    let extent = |i: usize| {
        let (lo, hi) = points
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
                (a.min(p[i]), b.max(p[i]))
            });
        hi - lo
    };
    let e = [extent(0), extent(1), extent(2)];
    let largest = e.iter().copied().fold(0.0, f64::max);
    let (axis, &least) = e.iter().enumerate().min_by(|a, b| a.1.total_cmp(b.1))?;
    (largest > 0.0 && least <= 1e-9 * largest).then(|| {
        let mut d = [0.0; 3];
        d[axis] = -1.0;
        d
    })
}

/// The direction opposite to `gravity` (z when there is none): up on the screen.
pub fn up_against(gravity: [f64; 3]) -> [f64; 3] {
    let n = gravity.iter().map(|g| g * g).sum::<f64>().sqrt();
    if n > 0.0 && n.is_finite() {
        gravity.map(|g| -g / n)
    } else {
        [0.0, 0.0, 1.0]
    }
}

/// A plane drawn as a square of side `2 half_size` about `point`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Plane {
    /// A point of the plane (the square's centre).
    pub point: [f64; 3],
    /// Its normal (any length).
    pub normal: [f64; 3],
    /// Half the side of the square drawn.
    pub half_size: f64,
}

/// Writes `dir/base_view.py` for the series file `series` (a `.pvd` or `.vtkhdf` in `dir`)
/// and, when the scene has something, `dir/base_scene.vtp`. Returns the script's path.
///
/// # Errors
/// [`OutputError::InvalidData`] for a view with a non-finite number or an empty field name;
/// [`OutputError::Io`] naming the file on a write error.
pub fn write_view(
    dir: &Path,
    base: &str,
    series: &Path,
    view: &View,
) -> Result<PathBuf, OutputError> {
    let script = dir.join(format!("{base}_view.py"));
    let numbers = view
        .look_along
        .iter()
        .flatten()
        .chain(&view.up)
        .chain(view.warp_scale.iter())
        .chain(view.exaggerate.iter().flatten())
        .chain(view.scene.planes.iter().flat_map(|p| {
            p.point
                .iter()
                .chain(&p.normal)
                .chain(std::iter::once(&p.half_size))
        }))
        .chain(view.scene.points.iter().flatten())
        .chain(view.scene.segments.iter().flatten().flatten());
    if numbers.clone().any(|v| !v.is_finite()) {
        return Err(OutputError::invalid(
            &script,
            "the view holds a number that is not finite",
        ));
    }
    let scene_name = format!("{base}_scene.vtp");
    let scene = dir.join(&scene_name);
    if view.scene.is_empty() {
        if scene.is_file() {
            std::fs::remove_file(&scene).map_err(|e| OutputError::io("remove", &scene, e))?;
        }
    } else {
        write_scene(&scene, &view.scene)?;
    }
    let series_name = series
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let text = script_text(
        &series_name,
        (!view.scene.is_empty()).then_some(&scene_name),
        view,
    );
    write_atomically(&script, false, |w, tmp| {
        w.write_all(text.as_bytes())
            .map_err(|e| OutputError::io("write", tmp, e))
    })?;
    Ok(script)
}

/// The scene as one VTK XML PolyData file (`.vtp`): points as vertices, segments as lines,
/// planes as quads, with the cell field `kind` (2 point, 1 segment, 0 plane; cells in that
/// order, as PolyData orders them).
fn write_scene(path: &Path, scene: &Scene) -> Result<(), OutputError> {
    use vtkio::model::{
        Attribute, Attributes, ByteOrder, DataArray, DataSet, ElementType, IOBuffer, PolyDataPiece,
        Version, VertexNumbers, Vtk,
    };
    let mut points: Vec<f64> = Vec::new();
    let mut push = |p: [f64; 3]| {
        points.extend(p);
        (points.len() / 3 - 1) as u64
    };
    let numbers = |connectivity: Vec<u64>, per: u64| {
        let n = connectivity.len() as u64 / per;
        VertexNumbers::XML {
            connectivity,
            offsets: (1..=n).map(|i| i * per).collect(),
        }
    };
    let verts: Vec<u64> = scene.points.iter().map(|&p| push(p)).collect();
    let lines: Vec<u64> = scene
        .segments
        .iter()
        .flat_map(|s| [push(s[0]), push(s[1])])
        .collect();
    let mut quads = Vec::new();
    for p in &scene.planes {
        let n = normalized(p.normal);
        // Two directions in the plane.
        let helper = if n[0].abs() < 0.9 {
            [1.0, 0.0, 0.0]
        } else {
            [0.0, 1.0, 0.0]
        };
        let a = normalized(cross(n, helper));
        let b = cross(n, a);
        let h = p.half_size;
        for (sa, sb) in [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)] {
            quads.push(push(std::array::from_fn(|i| {
                p.point[i] + h * (sa * a[i] + sb * b[i])
            })));
        }
    }
    let kind: Vec<f64> = std::iter::repeat_n(2.0, scene.points.len())
        .chain(std::iter::repeat_n(1.0, scene.segments.len()))
        .chain(std::iter::repeat_n(0.0, scene.planes.len()))
        .collect();
    let piece = PolyDataPiece {
        points: IOBuffer::F64(points),
        verts: (!verts.is_empty()).then(|| numbers(verts, 1)),
        lines: (!lines.is_empty()).then(|| numbers(lines, 2)),
        polys: (!quads.is_empty()).then(|| numbers(quads, 4)),
        strips: None,
        data: Attributes {
            point: Vec::new(),
            cell: vec![Attribute::DataArray(DataArray {
                name: "kind".into(),
                elem: ElementType::Scalars {
                    num_comp: 1,
                    lookup_table: None,
                },
                data: IOBuffer::F64(kind),
            })],
        },
    };
    let vtk = Vtk {
        version: Version::new_xml(1, 0),
        title: String::new(),
        byte_order: ByteOrder::LittleEndian,
        data: DataSet::inline(piece),
        file_path: None,
    };
    let mut bytes = Vec::new();
    vtk.write_xml(&mut bytes).map_err(|e| OutputError::Vtk {
        op: "encode VTK data for",
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    write_atomically(path, false, |w, tmp| {
        w.write_all(&bytes)
            .map_err(|e| OutputError::io("write", tmp, e))
    })
}

fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

fn normalized(v: [f64; 3]) -> [f64; 3] {
    let n = v.iter().map(|x| x * x).sum::<f64>().sqrt();
    if n > 0.0 {
        v.map(|x| x / n)
    } else {
        [0.0, 0.0, 1.0]
    }
}

fn py_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn py_opt_str(s: &Option<String>) -> String {
    s.as_deref().map_or_else(|| "None".to_string(), py_str)
}

fn py_vec(v: [f64; 3]) -> String {
    format!("[{:?}, {:?}, {:?}]", v[0], v[1], v[2])
}

fn script_text(series: &str, scene: Option<&String>, view: &View) -> String {
    let look = view.look_along.map_or_else(|| "None".to_string(), py_vec);
    let scale = view
        .warp_scale
        .map_or_else(|| "None".to_string(), |s| format!("{s:?}"));
    let scene = scene.map_or_else(|| "None".to_string(), |s| py_str(s));
    let exaggerate = view.exaggerate.map_or_else(|| "None".to_string(), py_vec);
    format!(
        r#"# The ParaView view of this run, written by fem.
#   paraview --script={name}_view.py         opens it in ParaView (then press Play)
#   pvpython {name}_view.py --png FILE.png   renders it to a picture (the last step; --step K for another;
#                                            --body-png FILE.png the body alone)
# The series is opened from this script's folder. The view: camera along LOOK_ALONG (None: oblique),
# warp by WARP_BY where the series has it, colour by COLOR_BY, and the scene (planes, fixed points)
# as a dataset of its own.
import os
import sys

from paraview.simple import *

SERIES = {series}
SCENE = {scene}
LOOK_ALONG = {look}
UP = {up}
WARP_BY = {warp}
WARP_SCALE = {scale}
COLOR_BY = {color}
EXAGGERATE = {exaggerate}

here = os.path.dirname(os.path.abspath(__file__))
data = OpenDataFile(os.path.join(here, SERIES))
if data is None:
    raise SystemExit("cannot open " + os.path.join(here, SERIES))
scene = GetAnimationScene()
scene.UpdateAnimationUsingDataTimeSteps()
times = list(getattr(data, "TimestepValues", None) or [])
view = GetActiveViewOrCreate("RenderView")
try:
    view.UseColorPaletteForBackground = 0
except AttributeError:
    pass
view.Background = [1.0, 1.0, 1.0]
view.OrientationAxesVisibility = 1


def arrays(source, kind):
    info = source.PointData if kind == "POINTS" else source.CellData
    return list(info.keys())


body = data
label = None
if WARP_BY and WARP_BY in arrays(data, "POINTS"):
    scale = WARP_SCALE
    if scale is None:
        # True scale, unless the largest displacement over ten sampled steps is below 5 % of
        # the body's size: then a tenth of the size.
        data.UpdatePipeline(times[0] if times else None)
        bounds = data.GetDataInformation().GetBounds()
        size = max(bounds[1] - bounds[0], bounds[3] - bounds[2], bounds[5] - bounds[4]) or 1.0
        largest = 0.0
        samples = times[:: max(1, len(times) // 10)] if times else [None]
        for t in samples:
            if t is not None:
                data.UpdatePipeline(t)
            r = data.PointData[WARP_BY].GetRange(-1)
            largest = max(largest, abs(r[1]))
        scale = 1.0
        if 0.0 < largest < 0.05 * size:
            scale = float("%.2g" % (0.1 * size / largest))
    body = WarpByVector(Input=data)
    body.Vectors = ["POINTS", WARP_BY]
    body.ScaleFactor = scale
    if scale != 1.0:
        label = "%s x %g" % (WARP_BY, scale)
shown = Show(body, view)
shown.SetRepresentationType("Surface")
shown.LineWidth = 3.0
shown.PointSize = 6.0
if COLOR_BY:
    kind = "CELLS" if COLOR_BY in arrays(data, "CELLS") else "POINTS"
    if COLOR_BY in arrays(data, kind):
        ColorBy(shown, (kind, COLOR_BY))
        shown.RescaleTransferFunctionToDataRange(True, False)
        shown.SetScalarBarVisibility(view, True)
        bar = GetScalarBar(GetColorTransferFunction(COLOR_BY), view)
        bar.WindowLocation = "Any Location"
        bar.Orientation = "Vertical"
        bar.Position = [0.88, 0.1]
        bar.ScalarBarLength = 0.4
        bar.TitleColor = bar.LabelColor = [0.0, 0.0, 0.0]
else:
    shown.ColorArrayName = ["POINTS", ""]
    shown.AmbientColor = shown.DiffuseColor = [0.15, 0.35, 0.75]

if SCENE:
    extras = XMLPolyDataReader(FileName=[os.path.join(here, SCENE)])
    planes = Threshold(Input=extras, Scalars=["CELLS", "kind"])
    try:
        planes.LowerThreshold, planes.UpperThreshold = 0.0, 0.5
    except AttributeError:
        planes.ThresholdRange = [0.0, 0.5]
    shown_planes = Show(planes, view)
    shown_planes.ColorArrayName = ["POINTS", ""]
    shown_planes.AmbientColor = shown_planes.DiffuseColor = [0.55, 0.45, 0.3]
    # Edges too: a plane seen edge-on (across a planar motion) still shows as a line.
    shown_planes.SetRepresentationType("Surface With Edges")
    shown_planes.EdgeColor = [0.45, 0.35, 0.2]
    shown_planes.LineWidth = 3.0
    shown_planes.Opacity = 0.6
    marks = Threshold(Input=extras, Scalars=["CELLS", "kind"])
    try:
        marks.LowerThreshold, marks.UpperThreshold = 0.5, 2.5
    except AttributeError:
        marks.ThresholdRange = [0.5, 2.5]
    shown_marks = Show(marks, view)
    shown_marks.ColorArrayName = ["POINTS", ""]
    shown_marks.AmbientColor = shown_marks.DiffuseColor = [0.8, 0.1, 0.1]
    shown_marks.PointSize = 14.0
    shown_marks.LineWidth = 4.0
    shown_marks.RenderPointsAsSpheres = 1

if EXAGGERATE:
    # Stretch the picture along EXAGGERATE when the body hardly extends along it.
    a = EXAGGERATE
    na = sum(x * x for x in a) ** 0.5 or 1.0
    a = [x / na for x in a]
    along, size = 0.0, 0.0
    for t in (times[:: max(1, len(times) // 10)] if times else [None]):
        if t is not None:
            body.UpdatePipeline(t)
        b = body.GetDataInformation().GetBounds()
        e = [b[1] - b[0], b[3] - b[2], b[5] - b[4]]
        along = max(along, sum(abs(a[i]) * e[i] for i in range(3)))
        size = max(size, max(e))
    if 0.0 < along < 0.05 * size:
        f = float("%.2g" % (0.2 * size / along))
        stretch = [1.0 + (f - 1.0) * abs(a[i]) for i in range(3)]
        displays = [shown]
        if SCENE:
            displays += [shown_planes, shown_marks]
        for d in displays:
            d.Scale = stretch
        label = (label + ", " if label else "") + "stretched x %g across" % f

if label:
    text = Text(Text=label)
    shown_text = Show(text, view)
    shown_text.Color = [0.0, 0.0, 0.0]
    shown_text.FontSize = 14
    shown_text.WindowLocation = "Upper Left Corner"

view.ResetCamera()
camera = view.GetActiveCamera()
focal = list(camera.GetFocalPoint())
distance = camera.GetDistance()
if LOOK_ALONG:
    d = LOOK_ALONG
else:
    # Oblique: from the front, the right and above, as seen with UP up.
    u = UP
    side = [1.0, 0.0, 0.0] if abs(u[0]) < 0.9 else [0.0, 1.0, 0.0]
    front = [u[1] * side[2] - u[2] * side[1], u[2] * side[0] - u[0] * side[2], u[0] * side[1] - u[1] * side[0]]
    d = [-side[i] + front[i] - 0.8 * u[i] for i in range(3)]
norm = sum(x * x for x in d) ** 0.5 or 1.0
d = [x / norm for x in d]
view.CameraFocalPoint = focal
view.CameraPosition = [focal[i] - distance * d[i] for i in range(3)]
view.CameraViewUp = UP
view.ResetCamera()
Render(view)

if "--png" in sys.argv or "--body-png" in sys.argv:
    # Offscreen pictures: the view at the last step (--step K for another); --body-png FILE
    # the body alone (no scene, text, colour bar or axes), which CI checks is not blank.
    view.ViewSize = [1200, 800]
    step = len(times) - 1
    if "--step" in sys.argv:
        step = int(sys.argv[sys.argv.index("--step") + 1])
    if times:
        scene.AnimationTime = times[step]
        view.ViewTime = times[step]
    if COLOR_BY and COLOR_BY in arrays(data, "CELLS") + arrays(data, "POINTS"):
        shown.RescaleTransferFunctionToDataRange(False, True)
    view.ResetCamera()
    Render(view)
    if "--png" in sys.argv:
        SaveScreenshot(sys.argv[sys.argv.index("--png") + 1], view, ImageResolution=[1200, 800])
    if "--body-png" in sys.argv:
        for source in list(GetSources().values()):
            if source is not body:
                Hide(source, view)
        shown.SetScalarBarVisibility(view, False)
        view.OrientationAxesVisibility = 0
        Render(view)
        SaveScreenshot(sys.argv[sys.argv.index("--body-png") + 1], view, ImageResolution=[1200, 800])
"#,
        name = series.rsplit_once('.').map_or(series, |(stem, _)| stem),
        series = py_str(series),
        up = py_vec(view.up),
        warp = py_opt_str(&view.warp_by),
        color = py_opt_str(&view.color_by),
    )
}

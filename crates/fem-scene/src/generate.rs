//! Many bodies at once: the generators of `model.scene.generators` (a lattice, a random
//! packing in a box, a stack, a wall of bricks) and the CSV table of `model.scene.table`.
//! Every count is known, and checked against the memory budget, before a body is made
//! ([`count`], [`table_rows`]).
//!
//! The random packing draws its centres from SplitMix64 (Steele, Lea & Flood 2014), written
//! here in five lines rather than taken from a crate: the workspace has no random-number
//! crate, and a packing must be the same on every machine and every version for a seed, which
//! a fixed, documented generator guarantees. The table is read line by line (numbers and bare
//! names separated by commas, no quoting): its format is ours and has no text fields to quote.

use std::collections::HashMap;
use std::path::PathBuf;

use fem_model::number::strict;
use fem_model::{InputError, Sections};
use serde::Deserialize;

use crate::section::{PlannedBody, ReadShape, ShapeInput, positive, read_shape, vec3};

/// A generator of bodies.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub enum GeneratorInput {
    /// Bodies at the nodes of a lattice.
    Lattice(LatticeInput),
    /// Bodies at random places in a box, not overlapping.
    Random(RandomInput),
    /// Boxes stacked on each other.
    Stack(StackInput),
    /// A wall of bricks in courses, every other course shifted by half a brick.
    Wall(WallInput),
}

/// Bodies at `origin + (i sx, j sy, k sz)`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LatticeInput {
    /// The shape of every body (about its centre).
    pub shape: ShapeInput,
    /// Every other body's shape instead (`(i + j + k)` odd), if given.
    #[serde(default)]
    pub alternate: Option<ShapeInput>,
    /// Density.
    #[serde(deserialize_with = "strict")]
    pub density: f64,
    /// The first body's centre.
    #[serde(deserialize_with = "strict")]
    pub origin: Vec<f64>,
    /// The lattice's spacing along x, y, z.
    #[serde(deserialize_with = "strict")]
    pub spacing: Vec<f64>,
    /// Bodies along x, y, z.
    #[serde(deserialize_with = "strict")]
    pub counts: Vec<u64>,
    /// Every body's initial velocity.
    #[serde(default, deserialize_with = "strict")]
    pub velocity: Option<Vec<f64>>,
    /// The surface's name.
    #[serde(default)]
    pub surface: Option<String>,
}

/// `count` bodies at random centres in the box `[min, max]` (the whole body inside), drawn
/// with `seed`, no two overlapping (their bounding spheres apart).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RandomInput {
    /// The shape.
    pub shape: ShapeInput,
    /// Density.
    #[serde(deserialize_with = "strict")]
    pub density: f64,
    /// Number of bodies.
    #[serde(deserialize_with = "strict")]
    pub count: u64,
    /// The box's lower corner.
    #[serde(deserialize_with = "strict")]
    pub min: Vec<f64>,
    /// The box's upper corner.
    #[serde(deserialize_with = "strict")]
    pub max: Vec<f64>,
    /// The seed (the same seed, the same packing).
    #[serde(deserialize_with = "strict")]
    pub seed: u64,
    /// Whether each body is also turned at random (default false).
    #[serde(default)]
    pub rotate: bool,
    /// The surface's name.
    #[serde(default)]
    pub surface: Option<String>,
}

/// `count` boxes stacked along z from `base` (the centre of the lowest box's bottom face).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StackInput {
    /// The boxes' edge lengths.
    #[serde(deserialize_with = "strict")]
    pub r#box: Vec<f64>,
    /// Density.
    #[serde(deserialize_with = "strict")]
    pub density: f64,
    /// The centre of the lowest box's bottom face.
    #[serde(deserialize_with = "strict")]
    pub base: Vec<f64>,
    /// Number of boxes.
    #[serde(deserialize_with = "strict")]
    pub count: u64,
    /// The surface's name.
    #[serde(default)]
    pub surface: Option<String>,
}

/// A wall along x: `courses` courses of `bricks` bricks, bottom course's first brick's lower
/// corner at `origin`, `gap` between bricks of a course, every odd course shifted by half a
/// brick along x.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WallInput {
    /// A brick's edge lengths (x along the wall).
    #[serde(deserialize_with = "strict")]
    pub brick: Vec<f64>,
    /// Density.
    #[serde(deserialize_with = "strict")]
    pub density: f64,
    /// The lower corner of the first brick.
    #[serde(deserialize_with = "strict")]
    pub origin: Vec<f64>,
    /// Courses (rows).
    #[serde(deserialize_with = "strict")]
    pub courses: u64,
    /// Bricks per course.
    #[serde(deserialize_with = "strict")]
    pub bricks: u64,
    /// Gap between the bricks of a course (default 0).
    #[serde(default, deserialize_with = "strict")]
    pub gap: Option<f64>,
    /// The surface's name.
    #[serde(default)]
    pub surface: Option<String>,
}

/// Bodies from a CSV file: a header naming the columns, then one body a line. Columns
/// `shape` (`sphere` or `box`), `a`, `b`, `c` (a sphere's radius in `a`; a box's edge
/// lengths), `x`, `y`, `z` (centre) are required; `vx`, `vy`, `vz`, `density`, `surface`
/// optional.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableInput {
    /// The CSV file, relative to the input file.
    pub file: PathBuf,
    /// The density of rows without a `density` column.
    #[serde(default, deserialize_with = "strict")]
    pub density: Option<f64>,
    /// The surface of rows without a `surface` column.
    #[serde(default)]
    pub surface: Option<String>,
}

/// The largest table file read (bytes), beside the memory budget.
pub const MAX_TABLE_BYTES: u64 = 1 << 30;

fn counts3(key: &str, v: &[u64]) -> Result<[u64; 3], InputError> {
    match v {
        [a, b, c] => Ok([*a, *b, *c]),
        _ => Err(InputError::invalid(
            key,
            format!("expected 3 counts, got {}", v.len()),
        )),
    }
}

/// How many bodies a generator makes (as a float: no overflow on any input).
pub fn count(key: &str, g: &GeneratorInput) -> Result<f64, InputError> {
    Ok(match g {
        GeneratorInput::Lattice(l) => counts3(&format!("{key}.lattice.counts"), &l.counts)?
            .iter()
            .map(|&c| c as f64)
            .product(),
        GeneratorInput::Random(r) => r.count as f64,
        GeneratorInput::Stack(s) => s.count as f64,
        GeneratorInput::Wall(w) => w.courses as f64 * w.bricks as f64,
    })
}

fn massed(
    key: &str,
    shape: &ShapeInput,
    density: f64,
    input: &Sections<'_>,
) -> Result<ReadShape, InputError> {
    let density = positive(&format!("{key}.density"), density, "a density")?;
    let read = read_shape(&format!("{key}.shape"), shape, Some(density), input)?;
    if read.mass.is_none() {
        return Err(InputError::invalid(
            format!("{key}.shape"),
            "the shape has no mass",
        ));
    }
    Ok(read)
}

fn body(
    key: String,
    read: &ReadShape,
    position: [f64; 3],
    surface: &Option<String>,
) -> PlannedBody {
    PlannedBody {
        key,
        shape: read.shape.clone(),
        mass: read.mass.expect("massed"),
        position,
        rotation: [0.0; 3],
        velocity: [0.0; 3],
        angular_velocity: [0.0; 3],
        surface: surface.clone().unwrap_or_else(|| "default".into()),
    }
}

/// SplitMix64: the next 64 bits of `state`.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A uniform number in `[0, 1)`.
fn uniform(state: &mut u64) -> f64 {
    (splitmix64(state) >> 11) as f64 / (1u64 << 53) as f64
}

/// Appends a generator's bodies (counted and checked by the caller).
pub(crate) fn generate(
    key: &str,
    g: &GeneratorInput,
    input: &Sections<'_>,
    out: &mut Vec<PlannedBody>,
) -> Result<(), InputError> {
    match g {
        GeneratorInput::Lattice(l) => {
            let key = format!("{key}.lattice");
            let first = massed(&key, &l.shape, l.density, input)?;
            let second = l
                .alternate
                .as_ref()
                .map(|s| read_shape(&format!("{key}.alternate"), s, Some(l.density), input))
                .transpose()?;
            let origin = vec3(&format!("{key}.origin"), &l.origin)?;
            let spacing = vec3(&format!("{key}.spacing"), &l.spacing)?;
            let counts = counts3(&format!("{key}.counts"), &l.counts)?;
            let velocity = l
                .velocity
                .as_ref()
                .map(|v| vec3(&format!("{key}.velocity"), v))
                .transpose()?
                .unwrap_or([0.0; 3]);
            let mut n = 0;
            for k in 0..counts[2] {
                for j in 0..counts[1] {
                    for i in 0..counts[0] {
                        let read = match &second {
                            Some(s) if (i + j + k) % 2 == 1 => s,
                            _ => &first,
                        };
                        let p = [
                            origin[0] + i as f64 * spacing[0],
                            origin[1] + j as f64 * spacing[1],
                            origin[2] + k as f64 * spacing[2],
                        ];
                        let mut b = body(format!("{key} body {n}"), read, p, &l.surface);
                        b.velocity = velocity;
                        out.push(b);
                        n += 1;
                    }
                }
            }
        }
        GeneratorInput::Random(r) => {
            let key = format!("{key}.random");
            let read = massed(&key, &r.shape, r.density, input)?;
            let lo = vec3(&format!("{key}.min"), &r.min)?;
            let hi = vec3(&format!("{key}.max"), &r.max)?;
            let radius = read.shape.bounding_radius();
            let span: Vec<f64> = (0..3).map(|c| hi[c] - lo[c] - 2.0 * radius).collect();
            if span.iter().any(|s| *s < 0.0) {
                return Err(InputError::invalid(
                    format!("{key}.max"),
                    format!("the box is too small for one body of bounding radius {radius:.4e}"),
                ));
            }
            // A grid of cells of one diameter: a candidate is checked against the bodies of
            // the 27 cells about it.
            let cell = (2.0 * radius).max(f64::MIN_POSITIVE);
            let key_of = |p: &[f64; 3]| [0, 1, 2].map(|c| ((p[c] - lo[c]) / cell).floor() as i64);
            let mut grid: HashMap<[i64; 3], Vec<[f64; 3]>> = HashMap::new();
            let mut state = r.seed;
            let tries = 1000;
            for n in 0..r.count {
                let mut placed = false;
                for _ in 0..tries {
                    let p = [0, 1, 2].map(|c| lo[c] + radius + span[c] * uniform(&mut state));
                    let k = key_of(&p);
                    let mut free = true;
                    'cells: for dx in -1..=1 {
                        for dy in -1..=1 {
                            for dz in -1..=1 {
                                if let Some(v) = grid.get(&[k[0] + dx, k[1] + dy, k[2] + dz])
                                    && v.iter().any(|q| {
                                        (0..3).map(|c| (p[c] - q[c]).powi(2)).sum::<f64>()
                                            < 4.0 * radius * radius
                                    })
                                {
                                    free = false;
                                    break 'cells;
                                }
                            }
                        }
                    }
                    if free {
                        grid.entry(k).or_default().push(p);
                        let mut b = body(format!("{key} body {n}"), &read, p, &r.surface);
                        if r.rotate {
                            b.rotation = [0, 1, 2]
                                .map(|_| std::f64::consts::PI * (2.0 * uniform(&mut state) - 1.0));
                        }
                        out.push(b);
                        placed = true;
                        break;
                    }
                }
                if !placed {
                    return Err(InputError::invalid(
                        format!("{key}.count"),
                        format!(
                            "only {n} of the {} bodies found room in the box ({tries} tries for the next): give a larger box or fewer bodies",
                            r.count
                        ),
                    ));
                }
            }
        }
        GeneratorInput::Stack(s) => {
            let key = format!("{key}.stack");
            let edges = vec3(&format!("{key}.box"), &s.r#box)?;
            let read = massed(&key, &ShapeInput::Box(edges.to_vec()), s.density, input)
                .map_err(|e| rename(e, &format!("{key}.box")))?;
            let base = vec3(&format!("{key}.base"), &s.base)?;
            for k in 0..s.count {
                let p = [base[0], base[1], base[2] + (k as f64 + 0.5) * edges[2]];
                out.push(body(format!("{key} box {k}"), &read, p, &s.surface));
            }
        }
        GeneratorInput::Wall(w) => {
            let key = format!("{key}.wall");
            let edges = vec3(&format!("{key}.brick"), &w.brick)?;
            let read = massed(&key, &ShapeInput::Box(edges.to_vec()), w.density, input)
                .map_err(|e| rename(e, &format!("{key}.brick")))?;
            let origin = vec3(&format!("{key}.origin"), &w.origin)?;
            let gap = w.gap.unwrap_or(0.0);
            if !(gap.is_finite() && gap >= 0.0) {
                return Err(InputError::invalid(
                    format!("{key}.gap"),
                    format!("expected a gap ≥ 0, got {gap}"),
                ));
            }
            let pitch = edges[0] + gap;
            let mut n = 0;
            for c in 0..w.courses {
                let shift = if c % 2 == 1 { 0.5 * pitch } else { 0.0 };
                for i in 0..w.bricks {
                    let p = [
                        origin[0] + shift + i as f64 * pitch + 0.5 * edges[0],
                        origin[1] + 0.5 * edges[1],
                        origin[2] + (c as f64 + 0.5) * edges[2],
                    ];
                    out.push(body(format!("{key} brick {n}"), &read, p, &w.surface));
                    n += 1;
                }
            }
        }
    }
    Ok(())
}

fn rename(e: InputError, key: &str) -> InputError {
    match e {
        InputError::Invalid { message, .. } => InputError::invalid(key, message),
        other => other,
    }
}

/// Checks the table's file against the budgets and counts its rows (lines after the header
/// that are not blank).
pub fn table_rows(key: &str, t: &TableInput, input: &Sections<'_>) -> Result<f64, InputError> {
    let path = input.base_dir().join(&t.file);
    let bytes = std::fs::metadata(&path)
        .map_err(|e| {
            InputError::invalid(
                format!("{key}.file"),
                format!("cannot read {}: {e}", path.display()),
            )
        })?
        .len();
    if bytes > MAX_TABLE_BYTES {
        return Err(InputError::invalid(
            format!("{key}.file"),
            format!(
                "{} is {bytes} bytes: at most {MAX_TABLE_BYTES} are read",
                path.display()
            ),
        ));
    }
    input.check_memory(
        &format!("{key}.file"),
        &format!("the table {}", path.display()),
        2.0 * bytes as f64,
    )?;
    let text = std::fs::read_to_string(&path).map_err(|e| {
        InputError::invalid(
            format!("{key}.file"),
            format!("cannot read {} as text: {e}", path.display()),
        )
    })?;
    Ok(text
        .lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .count() as f64)
}

/// Appends the table's bodies (counted and checked by the caller).
pub(crate) fn read_table(
    key: &str,
    t: &TableInput,
    input: &Sections<'_>,
    out: &mut Vec<PlannedBody>,
) -> Result<(), InputError> {
    let path = input.base_dir().join(&t.file);
    let name = path.display().to_string();
    let at = |line: usize, message: String| {
        InputError::invalid(
            format!("{key}.file"),
            format!("{name} line {line}: {message}"),
        )
    };
    let text = std::fs::read_to_string(&path).map_err(|e| {
        InputError::invalid(format!("{key}.file"), format!("cannot read {name}: {e}"))
    })?;
    let mut lines = text.lines().enumerate();
    let header: Vec<String> = match lines.next() {
        Some((_, h)) => h.split(',').map(|c| c.trim().to_string()).collect(),
        None => return Err(at(1, "expected a header line naming the columns".into())),
    };
    const KNOWN: [&str; 12] = [
        "shape", "a", "b", "c", "x", "y", "z", "vx", "vy", "vz", "density", "surface",
    ];
    if let Some(bad) = header.iter().find(|h| !KNOWN.contains(&h.as_str())) {
        return Err(at(
            1,
            format!("unknown column '{bad}' (columns: {})", KNOWN.join(", ")),
        ));
    }
    let column = |name: &str| header.iter().position(|h| h == name);
    for required in ["shape", "a", "x", "y", "z"] {
        if column(required).is_none() {
            return Err(at(1, format!("expected a column '{required}'")));
        }
    }
    let mut shapes: HashMap<(String, [u64; 3], u64), ReadShape> = HashMap::new();
    for (l, line) in lines {
        if line.trim().is_empty() {
            continue;
        }
        let n = l + 1;
        let cells: Vec<&str> = line.split(',').map(str::trim).collect();
        if cells.len() != header.len() {
            return Err(at(
                n,
                format!("expected {} values, got {}", header.len(), cells.len()),
            ));
        }
        let number = |name: &str| -> Result<Option<f64>, InputError> {
            match column(name) {
                None => Ok(None),
                Some(c) if cells[c].is_empty() => Ok(None),
                Some(c) => cells[c]
                    .parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite())
                    .map(Some)
                    .ok_or_else(|| {
                        at(
                            n,
                            format!("column '{name}': expected a number, got '{}'", cells[c]),
                        )
                    }),
            }
        };
        let need = |name: &str| {
            number(name)?.ok_or_else(|| at(n, format!("column '{name}': expected a number")))
        };
        let density = match number("density")?.or(t.density) {
            Some(d) if d > 0.0 => d,
            Some(d) => return Err(at(n, format!("expected a density > 0, got {d}"))),
            None => {
                return Err(at(
                    n,
                    "no density: give a 'density' column or the table's 'density'".into(),
                ));
            }
        };
        let kind = cells[column("shape").expect("checked")].to_string();
        let shape = match kind.as_str() {
            "sphere" => ShapeInput::Sphere(need("a")?),
            "box" => ShapeInput::Box(vec![need("a")?, need("b")?, need("c")?]),
            other => {
                return Err(at(
                    n,
                    format!("column 'shape': expected sphere or box, got '{other}'"),
                ));
            }
        };
        let dims = match &shape {
            ShapeInput::Sphere(r) => [r.to_bits(), 0, 0],
            ShapeInput::Box(e) => [e[0].to_bits(), e[1].to_bits(), e[2].to_bits()],
            _ => [0; 3],
        };
        let entry = (kind, dims, density.to_bits());
        if !shapes.contains_key(&entry) {
            let read =
                read_shape(&format!("{key}.file"), &shape, Some(density), input).map_err(|e| {
                    match e {
                        InputError::Invalid { message, .. } => at(n, message),
                        other => other,
                    }
                })?;
            shapes.insert(entry.clone(), read);
        }
        let read = &shapes[&entry];
        let position = [need("x")?, need("y")?, need("z")?];
        let velocity = [
            number("vx")?.unwrap_or(0.0),
            number("vy")?.unwrap_or(0.0),
            number("vz")?.unwrap_or(0.0),
        ];
        let surface = column("surface")
            .map(|c| cells[c].to_string())
            .filter(|s| !s.is_empty())
            .or_else(|| t.surface.clone());
        let mut b = body(format!("{name} line {n}"), read, position, &surface);
        b.velocity = velocity;
        out.push(b);
    }
    Ok(())
}

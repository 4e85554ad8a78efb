//! What a run may claim of the machine, and the estimates checked against it before anything
//! is allocated.
//!
//! Every count an input gives (cells, elements, modes, contact points, samples, frames) is
//! turned into an estimate of the memory and the disk it implies, and refused when the
//! estimate is beyond the [`Budget`]: `model.beam.elements: 1000000000 elements would need
//! about 13 TB of memory; this machine allows 17 GB`. Estimates are in `f64` bytes, so a count
//! of `u64::MAX` is an estimate like any other, never an overflow.
//!
//! The budget's defaults are read off the machine when the input is checked: the memory the
//! kernel reports available (`MemAvailable` in `/proc/meminfo`, lowered to what the process's
//! cgroup still allows), and the free space of the file system the output goes to. Both can
//! be set instead by environment variables ([`MEMORY_VARIABLE`], [`DISK_VARIABLE`]), with a
//! size such as `8G`, `512M`, `2TiB` or `unlimited`. They are read from `/proc` and
//! `statvfs(3)` directly (through `rustix`, already in the build), which is all that is needed
//! here; a crate that surveys the whole system would bring threads and far more code.

use std::fmt;
use std::path::Path;

use crate::error::InputError;

/// The environment variable that sets the memory a run may claim (`8G`, `unlimited`).
pub const MEMORY_VARIABLE: &str = "FEM_MEMORY_LIMIT";
/// The environment variable that sets the disk space a run's output may claim.
pub const DISK_VARIABLE: &str = "FEM_DISK_LIMIT";
/// The largest input (YAML) file read: 64 MiB — what the YAML reader holds of a file's text
/// (its own limit on the values' text, which bounds the memory of parsing); a larger file was
/// read and then refused by the reader as "larger than an input file may be".
pub const MAX_INPUT_FILE: u64 = 64 << 20;
/// The largest frame count a run may write (one `.vtu` file each), whatever the disk holds.
pub const MAX_FRAMES: u64 = 100_000;
/// Memory the program claims before any model (code, allocator, parsed input): 16 MiB.
pub const BASE_MEMORY: f64 = 16.0 * 1024.0 * 1024.0;

/// Where a limit comes from, for messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// Read off the machine (available memory, free disk).
    Machine,
    /// Set by the environment variable.
    Variable,
    /// Given by the program (a test, a fuzzing harness).
    Program,
}

/// How much memory and disk a run may claim, in bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Budget {
    /// Memory.
    pub memory: u64,
    /// Disk space of the output.
    pub disk: u64,
    /// Where `memory` comes from.
    pub memory_origin: Origin,
    /// Where `disk` comes from.
    pub disk_origin: Origin,
    /// The steps the run takes at most (`--max-steps`), when it is cut short: the output is
    /// estimated for these.
    pub steps: Option<u64>,
}

impl Budget {
    /// A budget of `memory` and `disk` bytes, given by the program.
    pub fn new(memory: u64, disk: u64) -> Self {
        Self {
            memory,
            disk,
            memory_origin: Origin::Program,
            disk_origin: Origin::Program,
            steps: None,
        }
    }

    /// The same budget for a run of at most `steps` steps (`--max-steps`).
    pub fn with_steps(mut self, steps: Option<u64>) -> Self {
        self.steps = steps;
        self
    }

    /// No limit (a library use that has checked its sizes itself).
    pub fn unlimited() -> Self {
        Self::new(u64::MAX, u64::MAX)
    }

    /// The machine's budget for a run writing under `output` (or the current folder): the
    /// environment variables if set, otherwise the available memory and the free space of
    /// the nearest existing folder on the way to `output`. A variable that does not parse is
    /// an error naming it.
    pub fn from_machine(output: Option<&Path>) -> Result<Self, InputError> {
        let variable = |name: &str| -> Result<Option<u64>, InputError> {
            match std::env::var(name) {
                Ok(text) => parse_size(&text).map(Some).ok_or_else(|| {
                    InputError::invalid(
                        name,
                        format!(
                            "expected a size such as 8G, 512M, 2TiB, 1000000 (bytes) or 'unlimited', got '{text}'"
                        ),
                    )
                }),
                Err(_) => Ok(None),
            }
        };
        let (memory, memory_origin) = match variable(MEMORY_VARIABLE)? {
            Some(m) => (m, Origin::Variable),
            None => (available_memory(), Origin::Machine),
        };
        let (disk, disk_origin) = match variable(DISK_VARIABLE)? {
            Some(d) => (d, Origin::Variable),
            None => (free_disk(output.unwrap_or(Path::new("."))), Origin::Machine),
        };
        Ok(Self {
            memory,
            disk,
            memory_origin,
            disk_origin,
            steps: None,
        })
    }

    /// Refuses `what` (`"1000000000 elements"`) at `field` when `bytes` of memory are beyond
    /// the budget.
    pub fn check_memory(&self, field: &str, what: &str, bytes: f64) -> Result<(), InputError> {
        if bytes <= self.memory as f64 {
            return Ok(());
        }
        Err(InputError::invalid(
            field,
            format!(
                "{what} would need about {} of memory; {}",
                Bytes(bytes),
                self.allows(self.memory, self.memory_origin, MEMORY_VARIABLE)
            ),
        ))
    }

    /// Refuses `what` at `field` when `bytes` of output are beyond the disk budget.
    pub fn check_disk(&self, field: &str, what: &str, bytes: f64) -> Result<(), InputError> {
        if bytes <= self.disk as f64 {
            return Ok(());
        }
        Err(InputError::invalid(
            field,
            format!(
                "{what} would need about {} of disk; {}",
                Bytes(bytes),
                self.allows(self.disk, self.disk_origin, DISK_VARIABLE)
            ),
        ))
    }

    fn allows(&self, limit: u64, origin: Origin, variable: &str) -> String {
        let limit = Bytes(limit as f64);
        match origin {
            Origin::Machine => format!("this machine allows {limit} (set {variable} to change)"),
            Origin::Variable => format!("{variable} allows {limit}"),
            Origin::Program => format!("the limit is {limit}"),
        }
    }
}

/// A byte count for messages: `480 GB`, `1.5 MB`, `512 bytes` (powers of 1000).
#[derive(Clone, Copy, Debug)]
pub struct Bytes(pub f64);

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        if !b.is_finite() {
            return write!(f, "more bytes than can be counted");
        }
        if b < 1000.0 {
            return write!(f, "{} bytes", b.round());
        }
        let units = ["kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB"];
        let mut value = b / 1000.0;
        let mut unit = 0;
        while value >= 1000.0 && unit + 1 < units.len() {
            value /= 1000.0;
            unit += 1;
        }
        if value >= 1000.0 {
            // Beyond yottabytes: say so in powers of ten.
            return write!(f, "{:.1e} bytes", b);
        }
        if value < 10.0 {
            write!(f, "{value:.1} {}", units[unit])
        } else {
            write!(f, "{value:.0} {}", units[unit])
        }
    }
}

/// Parses a size: bytes (`1000000`), or a number with a unit `k`, `M`, `G`, `T` (powers of
/// 1024, with or without `B`/`iB`), or `unlimited`/`none`.
pub fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim();
    if t.eq_ignore_ascii_case("unlimited") || t.eq_ignore_ascii_case("none") {
        return Some(u64::MAX);
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let number: f64 = number.parse().ok()?;
    let unit = unit.trim().to_ascii_lowercase();
    let unit = unit
        .strip_suffix("ib")
        .or_else(|| unit.strip_suffix('b'))
        .unwrap_or(&unit);
    let scale = match unit {
        "" => 1.0,
        "k" => 1024.0,
        "m" => 1024.0_f64.powi(2),
        "g" => 1024.0_f64.powi(3),
        "t" => 1024.0_f64.powi(4),
        _ => return None,
    };
    let bytes = number * scale;
    (bytes.is_finite() && bytes >= 0.0).then(|| bytes.min(u64::MAX as f64) as u64)
}

/// The memory available to this process now: `MemAvailable`, lowered to the cgroup's
/// remaining allowance; 8 GiB where neither can be read.
pub fn available_memory() -> u64 {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok().and_then(|s| {
        s.lines()
            .find_map(|l| l.strip_prefix("MemAvailable:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map(|kb| kb.saturating_mul(1024))
    });
    let cgroup = cgroup_allowance();
    match (meminfo, cgroup) {
        (Some(m), Some(c)) => m.min(c),
        (Some(m), None) => m,
        (None, Some(c)) => c,
        (None, None) => 8 << 30,
    }
}

/// What the process's cgroup (v2) still allows: `memory.max − memory.current`, if limited.
fn cgroup_allowance() -> Option<u64> {
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let path = own.lines().find_map(|l| l.strip_prefix("0::"))?;
    let dir = Path::new("/sys/fs/cgroup").join(path.trim_start_matches('/'));
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).ok();
    let max: u64 = read("memory.max")?.trim().parse().ok()?; // "max" → None
    let current: u64 = read("memory.current")
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0);
    Some(max.saturating_sub(current))
}

/// Free space (for an unprivileged user) of the file system holding `path`, or of the nearest
/// existing folder above it; unlimited where it cannot be read.
pub fn free_disk(path: &Path) -> u64 {
    let mut dir = if path.as_os_str().is_empty() {
        Path::new(".")
    } else {
        path
    };
    loop {
        if dir.exists() {
            return statvfs_free(dir).unwrap_or(u64::MAX);
        }
        match dir.parent() {
            Some(p) if !p.as_os_str().is_empty() => dir = p,
            _ => return statvfs_free(Path::new(".")).unwrap_or(u64::MAX),
        }
    }
}

#[cfg(unix)]
fn statvfs_free(path: &Path) -> Option<u64> {
    let s = rustix::fs::statvfs(path).ok()?;
    Some(s.f_bavail.saturating_mul(s.f_frsize))
}

#[cfg(not(unix))]
fn statvfs_free(_path: &Path) -> Option<u64> {
    None
}

/// Bytes of a mesh held in memory (points, connectivity, groups, the reader's maps): an
/// upper estimate from the counts, measured on generated and read meshes
/// (docs/validation.md, "Hardening").
pub fn mesh_bytes(nodes: f64, cells: f64, nodes_per_cell: f64) -> f64 {
    128.0 * nodes + cells * (48.0 + 24.0 * nodes_per_cell)
}

/// Bytes a ParaView frame of `points` points takes on disk, uncompressed, with
/// `values_per_point` numbers of point data besides the coordinates and `cells` cells of
/// `nodes_per_cell` nodes (an upper bound: compression only makes it smaller).
pub fn frame_bytes(points: f64, values_per_point: f64, cells: f64, nodes_per_cell: f64) -> f64 {
    2048.0 + 8.0 * points * (3.0 + values_per_point) + cells * (8.0 * nodes_per_cell + 9.0)
}

/// The output a run will write, as [`check_output`] estimates it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OutputEstimate {
    /// The steps it covers.
    pub steps: u64,
    /// Frames written.
    pub frames: u64,
    /// Rows of `history.csv`.
    pub rows: u64,
    /// Bytes of frames and history, an upper bound (uncompressed, the mesh in every frame).
    pub bytes: f64,
    /// Bytes the output holds in memory beyond the model while it writes
    /// ([`output_memory`]): the compressing thread's copy of a frame, or 0.
    pub memory: f64,
}

/// Frames' worth of memory a compressing writer holds beside the model's own frame: the copy of
/// the step's fields handed to the thread that compresses and writes it (VTKHDF with
/// compression, fem-io's `VtkHdfSeries`) while the run goes on, and, as it compresses a field,
/// that field shuffled and deflated (each at most the field, so at most two frames more).
pub const COMPRESSING_COPIES: f64 = 3.0;

/// The memory the output holds beyond the model while a frame of `frame` bytes
/// ([`frame_bytes`], an upper bound of its fields) is written: [`COMPRESSING_COPIES`] frames
/// with a compressing thread, nothing without one (the frame is written from the model's
/// buffers).
pub fn output_memory(frame: f64, compressing_thread: bool) -> f64 {
    if compressing_thread {
        COMPRESSING_COPIES * frame
    } else {
        0.0
    }
}

/// Checks the output a run asks for: `frames` frame files of `frame` bytes each and a
/// `history.csv` of `rows` rows of `columns` numbers (plus `probes.csv` rows), against
/// [`MAX_FRAMES`] and the disk budget. `every` is `output.every`, for messages. Returns the
/// estimate.
pub fn check_output(
    budget: &Budget,
    steps: u64,
    every: u64,
    frame: f64,
    history_every: u64,
    columns: f64,
) -> Result<OutputEstimate, InputError> {
    let frames = steps.div_ceil(every.max(1)) + 1;
    if frames > MAX_FRAMES {
        return Err(InputError::invalid(
            "output.every",
            format!(
                "output.every = {every} with {steps} steps would write {frames} frame files (about {}); at most {MAX_FRAMES} frames are written by one run: raise output.every to at least {}",
                Bytes(frames as f64 * frame),
                steps.div_ceil(MAX_FRAMES - 1)
            ),
        ));
    }
    let rows = steps / history_every.max(1) + 1;
    let bytes = frames as f64 * frame + rows as f64 * 24.0 * columns;
    budget.check_disk(
        "output",
        &format!("{frames} frames and {rows} history rows"),
        bytes,
    )?;
    Ok(OutputEstimate {
        steps,
        frames,
        rows,
        bytes,
        memory: 0.0,
    })
}

/// Refuses a model of `model` bytes (its largest estimate, [`BASE_MEMORY`] included) whose
/// output, frames of `frame` bytes, needs [`output_memory`] beside it beyond the memory
/// budget; returns the output's memory.
pub fn check_output_memory(
    budget: &Budget,
    model: f64,
    frame: f64,
    compressing_thread: bool,
) -> Result<f64, InputError> {
    let memory = output_memory(frame, compressing_thread);
    if memory > 0.0 {
        budget.check_memory(
            "output.compression",
            &format!(
                "the model (about {}) with the compressing thread's copy of a frame (about {}; \
                 output.compression: none writes without it)",
                Bytes(model),
                Bytes(memory)
            ),
            model + memory,
        )?;
    }
    Ok(memory)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_in_the_users_units() {
        assert_eq!(parse_size("1000"), Some(1000));
        assert_eq!(parse_size("8G"), Some(8 << 30));
        assert_eq!(parse_size("512 MiB"), Some(512 << 20));
        assert_eq!(parse_size("1.5k"), Some(1536));
        assert_eq!(parse_size("2TB"), Some(2 << 40));
        assert_eq!(parse_size("unlimited"), Some(u64::MAX));
        assert_eq!(parse_size("lots"), None);
        assert_eq!(parse_size("-1"), None);
        assert_eq!(parse_size("8X"), None);
    }

    #[test]
    fn byte_counts_read_as_a_person_writes_them() {
        assert_eq!(Bytes(512.0).to_string(), "512 bytes");
        assert_eq!(Bytes(1.5e6).to_string(), "1.5 MB");
        assert_eq!(Bytes(4.8e11).to_string(), "480 GB");
        assert_eq!(Bytes(17e9).to_string(), "17 GB");
        assert_eq!(
            Bytes(f64::INFINITY).to_string(),
            "more bytes than can be counted"
        );
        assert!(Bytes(1e40).to_string().contains("e40"));
    }

    #[test]
    fn estimates_beyond_the_budget_are_refused_with_both_figures() {
        let budget = Budget::new(1 << 30, 1 << 30);
        assert!(budget.check_memory("x", "n cells", 1e8).is_ok());
        let e = budget
            .check_memory("model.beam.elements", "1000000000 elements", 4.8e11)
            .unwrap_err();
        let m = e.to_string();
        assert!(
            m.starts_with("model.beam.elements: 1000000000 elements"),
            "{m}"
        );
        assert!(m.contains("480 GB") && m.contains("1.1 GB"), "{m}");
        // A count of u64::MAX is an estimate like any other.
        assert!(
            budget
                .check_memory("x", "many", u64::MAX as f64 * 1e3)
                .is_err()
        );
    }

    #[test]
    fn frame_counts_are_bounded_and_say_how_to_fix_them() {
        let budget = Budget::unlimited();
        assert!(check_output(&budget, 1000, 1, 1e4, 1, 10.0).is_ok());
        let e = check_output(&budget, 100_000_000, 1, 1e4, 1, 10.0).unwrap_err();
        let m = e.to_string();
        assert!(m.contains("100000001 frame files"), "{m}");
        assert!(m.contains("raise output.every to at least 1001"), "{m}");
        let small_disk = Budget::new(u64::MAX, 1 << 20);
        let e = check_output(&small_disk, 1000, 1, 1e4, 1, 10.0).unwrap_err();
        assert!(e.to_string().contains("of disk"), "{e}");
    }

    /// The compressing thread's copy of a frame is in the memory estimate: the estimate grows
    /// by it with compression, and a model that fits without it is refused with it.
    #[test]
    fn the_compressing_thread_copy_is_in_the_memory_estimate() {
        let (model, frame) = (1e9, 1e8);
        assert_eq!(output_memory(frame, false), 0.0);
        assert_eq!(output_memory(frame, true), COMPRESSING_COPIES * frame);
        const { assert!(COMPRESSING_COPIES >= 1.0) };
        let unlimited = Budget::unlimited();
        assert_eq!(
            check_output_memory(&unlimited, model, frame, false).unwrap(),
            0.0
        );
        assert_eq!(
            check_output_memory(&unlimited, model, frame, true).unwrap(),
            COMPRESSING_COPIES * frame
        );
        // Room for the model and one frame, not for the thread's copies.
        let tight = Budget::new((model + frame) as u64, u64::MAX);
        assert!(check_output_memory(&tight, model, frame, false).is_ok());
        let e = check_output_memory(&tight, model, frame, true).unwrap_err();
        let m = e.to_string();
        assert!(m.contains("output.compression"), "{m}");
        assert!(m.contains("compressing thread's copy of a frame"), "{m}");
    }

    #[test]
    fn the_machine_has_some_memory_and_disk() {
        assert!(available_memory() > 0);
        assert!(free_disk(Path::new("no/such/folder/below/here")) > 0);
    }
}

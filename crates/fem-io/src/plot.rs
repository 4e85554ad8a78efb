//! Plots of a run's `history.csv` as PNG and SVG (`fem plot DIR`, `output.plots: true`).
//!
//! What is plotted is read off the history's columns (every model's history starts with
//! `step,t,kinetic,potential,total`, then its own columns):
//!
//! | plot | columns |
//! |---|---|
//! | `energy` | `kinetic`, `potential`, `total` and every work or dissipation column (`external_work`, `reaction_work`, `support_work`, `seabed_work`, `dissipated`), and the balance `B = total + dissipated − external_work − reaction_work` (the run loop's) |
//! | `invariant` | `B(t) − B(0)`, and the change from their first value of the momentum columns (`angular_momentum_*`, `linear_momentum_*`) and of `energy` where a model names its energy so |
//! | `iterations` | every column whose name contains `iterations` |
//! | `constraint` | the violation columns: `max_stretch_error`, `constraint`, `constraint_half_step`, `penetration`, `min_gap`, `orthonormality`, `residual`, `lcp_residual` |
//!
//! A plot whose columns the history lacks is not written. Long histories are thinned while
//! they are read (every `k`-th row, `k` doubling as needed), so at most [`MAX_POINTS`] rows
//! per series are kept whatever the file's length. The text is drawn with a font compiled into
//! the program (Ubuntu Light, from `epaint_default_fonts`), so no system font is needed.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use plotters::prelude::*;

use crate::OutputError;

/// The most rows kept per series.
pub const MAX_POINTS: usize = 4000;

/// The history's columns, thinned.
#[derive(Clone, Debug, Default)]
pub struct History {
    /// Column names.
    pub columns: Vec<String>,
    /// Rows kept (each as long as `columns`; an empty cell is NaN).
    pub rows: Vec<Vec<f64>>,
    /// Every `stride`-th row of the file was kept.
    pub stride: usize,
}

impl History {
    /// Reads `path` (a `history.csv`), keeping at most [`MAX_POINTS`] rows.
    ///
    /// # Errors
    /// [`OutputError::Io`] if it cannot be read; [`OutputError::InvalidData`] naming the line
    /// if it is not a history (no header, a row of another length, a cell that is not a
    /// number).
    pub fn read(path: &Path) -> Result<Self, OutputError> {
        let file = std::fs::File::open(path).map_err(|e| OutputError::io("open", path, e))?;
        let mut lines = BufReader::new(file).lines();
        let header = match lines.next() {
            Some(line) => line.map_err(|e| OutputError::io("read", path, e))?,
            None => return Err(OutputError::invalid(path, "it is empty: no header line")),
        };
        let columns: Vec<String> = header.split(',').map(|c| c.trim().to_string()).collect();
        if columns.len() < 2 || columns.iter().any(String::is_empty) {
            return Err(OutputError::invalid(
                path,
                "line 1 is not a history header (column names separated by commas)",
            ));
        }
        let mut history = History {
            columns,
            rows: Vec::new(),
            stride: 1,
        };
        for (i, line) in lines.enumerate() {
            let line = line.map_err(|e| OutputError::io("read", path, e))?;
            if line.trim().is_empty() {
                continue;
            }
            if i % history.stride != 0 {
                continue;
            }
            let row: Vec<f64> = line
                .split(',')
                .map(|c| {
                    let c = c.trim();
                    if c.is_empty() {
                        Ok(f64::NAN)
                    } else {
                        c.parse::<f64>()
                    }
                })
                .collect::<Result<_, _>>()
                .map_err(|_| {
                    OutputError::invalid(path, format!("line {}: a cell is not a number", i + 2))
                })?;
            if row.len() != history.columns.len() {
                return Err(OutputError::invalid(
                    path,
                    format!(
                        "line {}: {} cells, the header has {} columns",
                        i + 2,
                        row.len(),
                        history.columns.len()
                    ),
                ));
            }
            history.rows.push(row);
            if history.rows.len() >= 2 * MAX_POINTS {
                // Keep every other row kept so far, and every other row from now on.
                let kept: Vec<Vec<f64>> = history.rows.drain(..).step_by(2).collect();
                history.rows = kept;
                history.stride *= 2;
            }
        }
        Ok(history)
    }

    /// The values of column `name`, if the history has it.
    pub fn column(&self, name: &str) -> Option<Vec<f64>> {
        let k = self.columns.iter().position(|c| c == name)?;
        Some(self.rows.iter().map(|r| r[k]).collect())
    }

    fn has(&self, name: &str) -> bool {
        self.columns.iter().any(|c| c == name)
    }
}

/// One plot: a title, the y axis' label and its series (name, values), against `t`.
struct Plot {
    name: &'static str,
    title: &'static str,
    y_label: &'static str,
    series: Vec<(String, Vec<f64>)>,
    /// One panel per series, each with its own scale (invariants differ by orders of
    /// magnitude), rather than all on one axis.
    panels: bool,
}

/// The plots the history has columns for ([module docs](self)).
fn plots(h: &History) -> Vec<Plot> {
    let mut out = Vec::new();
    let column = |name: &str| h.column(name);
    let n = h.rows.len();
    let zero = vec![0.0; n];
    // Energy.
    let mut energy = Vec::new();
    for name in [
        "kinetic",
        "potential",
        "total",
        "external_work",
        "reaction_work",
        "support_work",
        "seabed_work",
        "dissipated",
    ] {
        if let Some(v) = column(name)
            && v.iter().any(|x| x.is_finite())
        {
            energy.push((name.to_string(), v));
        }
    }
    let balance = column("total")
        .filter(|t| t.iter().any(|x| x.is_finite()))
        .map(|total| {
            let add = |name: &str| column(name).unwrap_or_else(|| zero.clone());
            let (d, w, r) = (
                add("dissipated"),
                add("external_work"),
                add("reaction_work"),
            );
            (0..n)
                .map(|i| total[i] + d[i].max_finite() - w[i].max_finite() - r[i].max_finite())
                .collect::<Vec<f64>>()
        });
    if let Some(b) = &balance
        && (h.has("dissipated") || h.has("external_work") || h.has("reaction_work"))
    {
        energy.push(("balance B".into(), b.clone()));
    }
    if !energy.is_empty() {
        out.push(Plot {
            name: "energy",
            title: "Energy",
            y_label: "energy",
            series: energy,
            panels: false,
        });
    }
    // Invariants: the change from the first value.
    let change = |v: Vec<f64>| -> Vec<f64> {
        let first = v.iter().copied().find(|x| x.is_finite()).unwrap_or(0.0);
        v.iter().map(|x| x - first).collect()
    };
    let mut invariant = Vec::new();
    if let Some(b) = balance {
        invariant.push(("B(t) - B(0)".into(), change(b)));
    }
    for c in &h.columns {
        if c.starts_with("angular_momentum_")
            || c.starts_with("linear_momentum_")
            || (c == "energy" && !h.has("total"))
        {
            invariant.push((format!("{c} - its start"), change(h.column(c).unwrap())));
        }
    }
    if !invariant.is_empty() {
        out.push(Plot {
            name: "invariant",
            title: "Change of the invariants from their first value",
            y_label: "change",
            series: invariant,
            panels: true,
        });
    }
    let pick = |keep: &dyn Fn(&str) -> bool| -> Vec<(String, Vec<f64>)> {
        h.columns
            .iter()
            .filter(|c| keep(c))
            .map(|c| (c.clone(), h.column(c).unwrap()))
            .filter(|(_, v)| v.iter().any(|x| x.is_finite()))
            .collect()
    };
    let iterations = pick(&|c| c.contains("iterations"));
    if !iterations.is_empty() {
        out.push(Plot {
            name: "iterations",
            title: "Iterations per step",
            y_label: "iterations",
            series: iterations,
            panels: false,
        });
    }
    const VIOLATIONS: [&str; 8] = [
        "max_stretch_error",
        "constraint",
        "constraint_half_step",
        "penetration",
        "min_gap",
        "orthonormality",
        "residual",
        "lcp_residual",
    ];
    let constraint = pick(&|c| VIOLATIONS.contains(&c));
    if !constraint.is_empty() {
        out.push(Plot {
            name: "constraint",
            title: "Constraint violation",
            y_label: "violation",
            series: constraint,
            panels: false,
        });
    }
    out
}

trait MaxFinite {
    fn max_finite(self) -> f64;
}

impl MaxFinite for f64 {
    /// The value, or 0 for an empty cell.
    fn max_finite(self) -> f64 {
        if self.is_finite() { self } else { 0.0 }
    }
}

/// Writes the plots of `dir/history.csv` into `dir/plots/NAME.png` and `.svg`; returns the
/// files written.
///
/// # Errors
/// As [`History::read`]; [`OutputError::Io`] naming the file if a plot cannot be written.
pub fn plot_history(dir: &Path) -> Result<Vec<PathBuf>, OutputError> {
    let history = History::read(&dir.join("history.csv"))?;
    let out_dir = dir.join("plots");
    std::fs::create_dir_all(&out_dir)
        .map_err(|e| OutputError::io("create directory", &out_dir, e))?;
    register_font();
    let t = history
        .column("t")
        .unwrap_or_else(|| (0..history.rows.len()).map(|i| i as f64).collect());
    let mut written = Vec::new();
    for plot in plots(&history) {
        let png = out_dir.join(format!("{}.png", plot.name));
        let svg = out_dir.join(format!("{}.svg", plot.name));
        let size = if plot.panels {
            (960, 60 + 220 * plot.series.len() as u32)
        } else {
            (960, 600)
        };
        {
            let root = BitMapBackend::new(&png, size).into_drawing_area();
            draw_plot(&root, &plot, &t, history.stride).map_err(|e| plot_error(&png, e))?;
            root.present().map_err(|e| plot_error(&png, e))?;
        }
        {
            let root = SVGBackend::new(&svg, size).into_drawing_area();
            draw_plot(&root, &plot, &t, history.stride).map_err(|e| plot_error(&svg, e))?;
            root.present().map_err(|e| plot_error(&svg, e))?;
        }
        written.push(png);
        written.push(svg);
    }
    Ok(written)
}

fn plot_error(path: &Path, e: impl std::fmt::Display) -> OutputError {
    OutputError::io("draw", path, std::io::Error::other(e.to_string()))
}

fn register_font() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = plotters::style::register_font(
            "sans-serif",
            FontStyle::Normal,
            epaint_default_fonts::UBUNTU_LIGHT,
        );
    });
}

/// Draws `plot` on `root`: one chart, or a title and one chart per series.
fn draw_plot<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    plot: &Plot,
    t: &[f64],
    stride: usize,
) -> Result<(), Box<dyn std::error::Error>>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    if !plot.panels {
        return draw(root, plot, t, stride);
    }
    let title = if stride > 1 {
        format!("{} (every {stride}th row)", plot.title)
    } else {
        plot.title.to_string()
    };
    let body = root.titled(&title, ("sans-serif", 26))?;
    let rows = body.split_evenly((plot.series.len(), 1));
    for (area, (name, values)) in rows.iter().zip(&plot.series) {
        let one = Plot {
            name: plot.name,
            title: "",
            y_label: plot.y_label,
            series: vec![(name.clone(), values.clone())],
            panels: false,
        };
        draw(area, &one, t, 1)?;
    }
    Ok(())
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    plot: &Plot,
    t: &[f64],
    stride: usize,
) -> Result<(), Box<dyn std::error::Error>>
where
    DB::ErrorType: 'static,
{
    let finite = |v: &f64| v.is_finite();
    let (mut t0, mut t1) = bounds(t.iter().copied().filter(finite));
    if t1 <= t0 {
        t1 = t0 + 1.0;
        t0 -= 0.0;
    }
    let (mut y0, mut y1) = bounds(
        plot.series
            .iter()
            .flat_map(|(_, v)| v.iter().copied())
            .filter(finite),
    );
    let pad = if y1 > y0 {
        0.05 * (y1 - y0)
    } else {
        0.5 * y0.abs().max(1.0)
    };
    y0 -= pad;
    y1 += pad;
    let caption = if stride > 1 {
        format!("{} (every {stride}th row)", plot.title)
    } else {
        plot.title.to_string()
    };
    let mut builder = ChartBuilder::on(root);
    if !caption.is_empty() {
        builder.caption(caption, ("sans-serif", 26));
    }
    let mut chart = builder
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(90)
        .build_cartesian_2d(t0..t1, y0..y1)?;
    chart
        .configure_mesh()
        .x_desc("t")
        .y_desc(plot.y_label)
        .label_style(("sans-serif", 16))
        .y_label_formatter(&|v| format_tick(*v))
        .draw()?;
    for (i, (name, values)) in plot.series.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        let points: Vec<(f64, f64)> = t
            .iter()
            .zip(values)
            .filter(|(a, b)| a.is_finite() && b.is_finite())
            .map(|(&a, &b)| (a, b))
            .collect();
        chart
            .draw_series(LineSeries::new(points, color.stroke_width(2)))?
            .label(name.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 16))
        .position(SeriesLabelPosition::UpperRight)
        .draw()?;
    Ok(())
}

fn bounds(values: impl Iterator<Item = f64>) -> (f64, f64) {
    values.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
        (a.min(v), b.max(v))
    })
}

fn format_tick(v: f64) -> String {
    let a = v.abs();
    if a != 0.0 && !(1e-3..1e4).contains(&a) {
        format!("{v:.2e}")
    } else {
        let s = format!("{v:.4}");
        let s = s.trim_end_matches('0').trim_end_matches('.');
        if s == "-0" { "0".into() } else { s.into() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_histories_are_thinned_to_a_bounded_number_of_rows() {
        let dir = std::env::temp_dir().join(format!("fem-plot-thin-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("history.csv");
        let mut text = String::from("step,t,kinetic,potential,total\n");
        for i in 0..50_000 {
            text.push_str(&format!("{i},{},{},,1\n", i as f64 * 0.01, i % 7));
        }
        std::fs::write(&path, text).unwrap();
        let h = History::read(&path).unwrap();
        assert!(h.rows.len() < 2 * MAX_POINTS && h.rows.len() >= MAX_POINTS / 2);
        assert_eq!(h.stride, 8);
        // Every kept row is a row of the file, in order, at the stride.
        let steps = h.column("step").unwrap();
        for (i, s) in steps.iter().enumerate().take(100) {
            assert_eq!(*s, (i * 8) as f64);
        }
        assert!(h.column("potential").unwrap().iter().all(|v| v.is_nan()));
        std::fs::write(&path, "step,t\n0,1,2\n").unwrap();
        let e = History::read(&path).unwrap_err();
        assert!(e.to_string().contains("line 2: 3 cells"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

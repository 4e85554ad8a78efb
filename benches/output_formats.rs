//! Output of a large run (issue 26): a DEF_EXP hex8 box of `n³` cells (default `n = 100`,
//! 10⁶ cells) stepped `every × (frames − 1)` steps, writing a frame every `every` steps, in
//! each format at the same steps: `.vtu` with LZ4 (the default) and uncompressed, and one
//! `.vtkhdf` in double and in single precision, raw, and in double precision with its fields
//! shuffled and deflated (level 1), once on the series' own thread (what `fem run` does) and
//! once in the writing call (the compression's whole cost). A plain timing program:
//!
//! ```text
//! cargo bench --bench output_formats -- [n] [frames] [every] [dir]
//! ```
//!
//! It prints the time of the steps, for each format the time spent writing its frames (the
//! model's frame is built once per frame, outside the writes, and timed on its own) and the
//! bytes on disk, and each format's writes as a fraction of the run (steps + frame building +
//! that format's writes). A format's write time is the time its calls take in the loop, the
//! final flush included (for the background variant: encoding the fields, and waiting for the
//! previous step when it is not done). Results: `docs/performance.md`, "Output of a large run".

use std::path::PathBuf;
use std::time::Instant;

use fem::io::{Compression, FrameSeries, FrameSink, Precision, SeriesFormat, VtkHdfSeries};

fn main() {
    let mut args = std::env::args().skip(1).filter(|a| a != "--bench");
    let n: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(100);
    let frames: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(20);
    let every: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(10);
    let dir = args
        .next()
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("fem_output_formats"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("the bench folder");
    let input = dir.join("box.yaml");
    std::fs::write(
        &input,
        format!(
            "mesh:\n  box: {{ lengths: [1.0, 1.0, 1.0], cells: [{n}, {n}, {n}], kind: hex8 }}\n\
             model:\n  solid:\n    material: {{ model: neo_hookean, young: 1e6, poisson: 0.3, density: 1000 }}\n\
             \x20   initial_velocity: {{ expressions: [\"0.1*z\", \"0\", \"0.05*x*z\"] }}\n\
             \x20   auto_dt: 0.5\n    recheck_every: 0\n\
             fixed:\n  - group: zmin\n\
             time: {{ scheme: def_exp, dt: 1.0, t_end: 100.0 }}\n\
             output: {{ every: 1000000, history_every: 1000000 }}\n"
        ),
    )
    .expect("write the bench input");
    let setup = Instant::now();
    let (_, mut model) = fem::prepare(&input).expect("the bench input builds");
    println!(
        "{n}^3 = {} hex8 cells, set-up {:.1} s, {frames} frames every {every} steps",
        n * n * n,
        setup.elapsed().as_secs_f64()
    );
    let formats = [
        ("vtu, LZ4", SeriesFormat::Pvd(Compression::Lz4), true),
        (
            "vtu, uncompressed",
            SeriesFormat::Pvd(Compression::None),
            true,
        ),
        (
            "vtkhdf, double",
            SeriesFormat::VtkHdf(Precision::Double, None),
            true,
        ),
        (
            "vtkhdf, single",
            SeriesFormat::VtkHdf(Precision::Single, None),
            true,
        ),
        (
            "vtkhdf, double, shuffle + deflate 1, own thread",
            SeriesFormat::VtkHdf(Precision::Double, Some(1)),
            true,
        ),
        (
            "vtkhdf, double, shuffle + deflate 1, in the call",
            SeriesFormat::VtkHdf(Precision::Double, Some(1)),
            false,
        ),
    ];
    let mut series: Vec<Box<dyn FrameSink>> = formats
        .iter()
        .enumerate()
        .map(|(i, (_, f, background))| -> Box<dyn FrameSink> {
            let dir = dir.join(format!("f{i}"));
            match *f {
                SeriesFormat::Pvd(c) => {
                    Box::new(FrameSeries::create(dir, "box", c).expect("a series"))
                }
                SeriesFormat::VtkHdf(p, deflate) => {
                    let mut s = VtkHdfSeries::create(dir, "box", p, frames).expect("a series");
                    s.set_deflate(deflate);
                    s.set_background(*background);
                    Box::new(s)
                }
            }
        })
        .collect();
    let mut write_time = vec![0.0; formats.len()];
    let (mut step_time, mut frame_time) = (0.0, 0.0);
    for k in 0..frames {
        if k > 0 {
            let t = Instant::now();
            for _ in 0..every {
                model.stepper_mut().step().expect("a step");
            }
            step_time += t.elapsed().as_secs_f64();
        }
        let time = model.stepper().time();
        let t = Instant::now();
        let frame = model.frame();
        frame_time += t.elapsed().as_secs_f64();
        for (s, w) in series.iter_mut().zip(&mut write_time) {
            let t = Instant::now();
            s.write_frame(time, &frame).expect("a frame");
            *w += t.elapsed().as_secs_f64();
        }
    }
    for (s, w) in series.iter_mut().zip(&mut write_time) {
        let t = Instant::now();
        s.flush().expect("the last frame");
        *w += t.elapsed().as_secs_f64();
    }
    let steps = every * (frames - 1);
    println!(
        "steps: {steps} in {step_time:.1} s ({:.3} s a step); frames built in {frame_time:.1} s",
        step_time / steps as f64
    );
    let bytes = |i: usize| -> u64 {
        std::fs::read_dir(dir.join(format!("f{i}")))
            .expect("the output")
            .flatten()
            .map(|e| e.metadata().map(|m| m.len()).unwrap_or(0))
            .sum()
    };
    let reference = bytes(0) as f64;
    println!(
        "| format | write time (s) | per frame (s) | share of the run | bytes | against vtu LZ4 |"
    );
    println!("|---|---|---|---|---|---|");
    for (i, (name, _, _)) in formats.iter().enumerate() {
        let b = bytes(i);
        let run = step_time + frame_time + write_time[i];
        println!(
            "| {name} | {:.2} | {:.3} | {:.1} % | {:.1} MB | {:.2} |",
            write_time[i],
            write_time[i] / frames as f64,
            100.0 * write_time[i] / run,
            b as f64 / 1e6,
            b as f64 / reference
        );
    }
}

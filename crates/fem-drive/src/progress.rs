//! Progress of a run on a terminal: a bar with an ETA, or a plain line every 10 % (process 0
//! only; the other processes of a distributed run are quiet).

use std::time::Instant;

use crate::Progress;

/// A progress bar on a terminal, or a plain line every 10 %.
#[derive(Debug)]
pub struct ProgressReport {
    mode: Progress,
    bar: Option<indicatif::ProgressBar>,
    n_steps: u64,
    started: Instant,
}

impl ProgressReport {
    /// The report of a run of `n_steps` steps.
    pub fn new(mode: Progress, n_steps: u64) -> Self {
        let bar = (mode == Progress::Bar).then(|| {
            let bar = indicatif::ProgressBar::new(n_steps);
            bar.set_style(
                indicatif::ProgressStyle::with_template(
                    "{bar:40} {pos}/{len} steps, {elapsed} elapsed, ETA {eta}",
                )
                .expect("a valid template"),
            );
            bar
        });
        Self {
            mode,
            bar,
            n_steps,
            started: Instant::now(),
        }
    }

    /// Step `n` is done.
    pub fn at(&self, n: u64) {
        match self.mode {
            Progress::Quiet => {}
            Progress::Bar => {
                if let Some(bar) = &self.bar {
                    bar.set_position(n);
                }
            }
            Progress::Lines => {
                let tenth = (self.n_steps / 10).max(1);
                if n.is_multiple_of(tenth) || n == self.n_steps {
                    // A closed stderr does not stop the run.
                    use std::io::Write as _;
                    let _ = writeln!(
                        std::io::stderr(),
                        "step {n}/{} ({:.0} %), {:.1} s elapsed",
                        self.n_steps,
                        100.0 * n as f64 / self.n_steps as f64,
                        self.started.elapsed().as_secs_f64()
                    );
                }
            }
        }
    }

    /// The run stopped early: leave the bar where it is.
    pub fn abandon(&self) {
        if let Some(bar) = &self.bar {
            bar.abandon();
        }
    }

    /// The run is complete.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish();
        }
    }
}

//! What a long set-up is doing, told to a person waiting for `fem check` or the start of
//! `fem run` (issue 28: a check of 10⁶ beam elements or of 10⁴ modes against 10⁴ contact
//! points computed for minutes without a word).
//!
//! A model names each costly phase of its set-up with [`phase`] ("the beam's static start:
//! Newton on 1000000 elements, iteration 3"). Nothing is shown until the program turns the
//! reports on with [`report_after`]; from then on a phase that starts once the set-up has
//! taken longer than the threshold is written to standard error at once, and [`heartbeat`],
//! called every second by a thread of the program, repeats the current phase every
//! [`REPEAT`] while it lasts. A threshold of zero writes every phase (a test's way to see
//! them without waiting).

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How often a phase that goes on is told again.
pub const REPEAT: Duration = Duration::from_secs(10);

struct State {
    start: Instant,
    after: Duration,
    phase: Option<String>,
    told: Option<Instant>,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);

/// Turns the reports on: phases are told from `after` past now on.
pub fn report_after(after: Duration) {
    let mut s = STATE.lock().unwrap_or_else(|p| p.into_inner());
    *s = Some(State {
        start: Instant::now(),
        after,
        phase: None,
        told: None,
    });
}

/// Turns the reports off (the set-up is done).
pub fn done() {
    *STATE.lock().unwrap_or_else(|p| p.into_inner()) = None;
}

/// The set-up's current phase is `what` (told at once if the set-up is already slow).
pub fn phase(what: impl Into<String>) {
    let mut guard = STATE.lock().unwrap_or_else(|p| p.into_inner());
    let Some(s) = guard.as_mut() else {
        return;
    };
    s.phase = Some(what.into());
    let elapsed = s.start.elapsed();
    if elapsed >= s.after {
        tell(s, elapsed);
    }
}

/// Repeats the current phase if the set-up is slow and it was not told for [`REPEAT`].
pub fn heartbeat() {
    let mut guard = STATE.lock().unwrap_or_else(|p| p.into_inner());
    let Some(s) = guard.as_mut() else {
        return;
    };
    let elapsed = s.start.elapsed();
    let due = s.told.is_none_or(|t| t.elapsed() >= REPEAT);
    if elapsed >= s.after.max(Duration::from_secs(1)) && due {
        tell(s, elapsed);
    }
}

fn tell(s: &mut State, elapsed: Duration) {
    let what = s
        .phase
        .as_deref()
        .unwrap_or("reading and checking the input");
    eprintln!("fem: {what} ({:.0} s so far)", elapsed.as_secs_f64());
    s.told = Some(Instant::now());
}

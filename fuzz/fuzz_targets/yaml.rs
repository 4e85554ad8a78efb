//! The YAML input on arbitrary bytes, through what `fem check` does: parse, validate, build
//! the model (stepper included). Every input is either refused with a message or built within
//! the fuzzing budget (`FUZZ_BUDGET`): never a panic, a hang or an allocation the budget does
//! not allow.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use fem::model::resources::Budget;
use libfuzzer_sys::fuzz_target;

#[path = "allocation_limit.rs"]
mod allocation_limit;

/// Memory a built model may claim during fuzzing (the harness runs with `-rss_limit_mb=1024`):
/// small, so that a legitimately large model (a beam of 10 000 elements, whose static start
/// takes seconds) is refused by its estimate rather than reported as a hang; what is fuzzed is
/// the reading and the validation.
const FUZZ_MEMORY: u64 = 48 << 20;
/// Disk its output may claim (nothing is written; this bounds the frame count it is asked for).
const FUZZ_DISK: u64 = 1 << 30;

/// A path inside `inputs/` so that relative mesh and CSV names resolve as they do for the
/// shipped inputs.
fn input_path() -> &'static PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../inputs/fuzz.yaml")
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let path = input_path();
    let budget = Budget::new(FUZZ_MEMORY, FUZZ_DISK);
    match fem::parse(text, path) {
        Ok(input) => match input.build_within(path, &budget) {
            Ok(model) => {
                let _ = model.describe();
            }
            Err(e) => {
                let _ = e.to_string();
            }
        },
        Err(e) => {
            let _ = e.to_string();
        }
    }
});

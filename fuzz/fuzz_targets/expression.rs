//! Time-function expressions on arbitrary text: parsed or refused with a message, and a
//! parsed one evaluated at a few times, never a panic or a hang.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "allocation_limit.rs"]
mod allocation_limit;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match fem::constraints::function::Expression::parse(text) {
        Ok(e) => {
            for t in [0.0, 0.5, 1.0, -3.0, 1e300] {
                let _ = e.eval(t);
            }
        }
        Err(err) => {
            let _ = err.to_string();
        }
    }
});

//! Shortest round-trip formatting of `f64` for text outputs (CSV, `.pvd` times).

/// Formats `x` with the shortest text that parses back to exactly the same `f64`.
///
/// * Integral values with `|x| < 1e15` are written without a decimal point (`3`, `-12`, `0`).
/// * Other values with `1e-4 <= |x| < 1e15` are written in plain decimal (`0.125`, `0.3`).
/// * Everything else uses exponent notation (`1e-7`, `1.2345e20`).
/// * Non-finite values are written as `NaN`, `inf`, `-inf` (Python's `float()` and most CSV
///   readers accept these).
///
/// Both branches use Rust's `Display`/`LowerExp` for `f64`, which produce the shortest digits
/// that round-trip.
pub fn format_f64(x: f64) -> String {
    let a = x.abs();
    if !x.is_finite() {
        if x.is_nan() {
            "NaN".to_string()
        } else if x > 0.0 {
            "inf".to_string()
        } else {
            "-inf".to_string()
        }
    } else if a == 0.0 || ((1e-4..1e15).contains(&a)) {
        // `Display` never uses an exponent and prints integral values without ".0";
        // `-0.0` prints as "-0", which round-trips.
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

#[cfg(test)]
mod tests {
    use super::format_f64;

    #[test]
    fn round_trips_and_is_short() {
        let cases = [
            (0.0, "0"),
            (1.0, "1"),
            (-12.0, "-12"),
            (0.125, "0.125"),
            (0.1, "0.1"),
            (1e-7, "1e-7"),
            (1.5e20, "1.5e20"),
            (123456.75, "123456.75"),
            (f64::INFINITY, "inf"),
        ];
        for (x, s) in cases {
            assert_eq!(format_f64(x), s);
        }
        for x in [
            std::f64::consts::PI,
            1.0 / 3.0,
            -2.0e-300,
            f64::MAX,
            f64::MIN_POSITIVE,
            5e-324,
            0.30000000000000004,
            -0.0,
            999_999_999_999_999.9,
        ] {
            let s = format_f64(x);
            let y: f64 = s.parse().unwrap();
            assert_eq!(x.to_bits(), y.to_bits(), "{x} -> {s}");
        }
        assert_eq!(format_f64(f64::NAN), "NaN");
    }
}

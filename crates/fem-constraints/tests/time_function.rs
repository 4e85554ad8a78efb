//! Time functions: expressions against closed forms, refused expressions, tables and CSV files,
//! and the finite-difference derivatives against exact ones.

use std::f64::consts::{E, PI};
use std::path::Path;

use fem_constraints::{
    EXPRESSION_SYNTAX, Expression, FunctionError, Prescribed, Table, TimeFunction,
};

fn expr(source: &str) -> TimeFunction {
    TimeFunction::expression(source).unwrap_or_else(|e| panic!("{source}: {e}"))
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * b.abs().max(1.0)
}

const TIMES: [f64; 9] = [-3.7, -1.0, 0.0, 0.25, 0.999, 1.0, 1.5, 2.0, 10.0];

#[test]
fn expressions_match_closed_forms() {
    type Closed = fn(f64) -> f64;
    let cases: [(&str, Closed); 14] = [
        ("sin(t)", f64::sin),
        ("3*cos(2*pi*t) + 1", |t| 3.0 * (2.0 * PI * t).cos() + 1.0),
        ("exp(-t) * abs(t)", |t| (-t).exp() * t.abs()),
        (
            "(t < 1) * t + (t >= 1) * 1",
            |t| if t < 1.0 { t } else { 1.0 },
        ),
        ("min(t, 1)", |t| t.min(1.0)),
        ("max(t, 0) - min(0, t)", |t| t.max(0.0) - t.min(0.0)),
        ("(t > 0) * (t <= 1)", |t| {
            f64::from(u8::from(t > 0.0 && t <= 1.0))
        }),
        (
            "(t == 1) + 2*(t != 1)",
            |t| if t == 1.0 { 1.0 } else { 2.0 },
        ),
        ("t < 1 + 0.5", |t| f64::from(u8::from(t < 1.5))),
        ("e^t + E + PI + π", |t| E.powf(t) + E + 2.0 * PI),
        ("2.5e-3 * t + 1E2", |t| 2.5e-3 * t + 100.0),
        ("-(t^2)", |t| -(t * t)),
        ("(-t)^3", |t| (-t).powi(3)),
        ("sqrt(abs(t)) - 2^t/.5", |t| {
            t.abs().sqrt() - 2f64.powf(t) / 0.5
        }),
    ];
    for (source, closed) in cases {
        let f = expr(source);
        for t in TIMES {
            let (got, want) = (f.eval(t), closed(t));
            assert!(
                close(got, want, 1e-14),
                "{source} at t = {t}: {got} vs {want}"
            );
        }
    }
}

#[test]
fn ramp_and_hold_is_continuous_and_holds() {
    let f = expr("(t < 2) * 0.5 * t + (t >= 2) * 1");
    assert_eq!(f.eval(0.0), 0.0);
    assert_eq!(f.eval(1.0), 0.5);
    assert_eq!(f.eval(2.0), 1.0);
    assert_eq!(f.eval(1e6), 1.0);
}

#[test]
fn every_function_in_the_syntax_text_parses() {
    for name in [
        "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh",
        "atanh", "exp", "ln", "log", "log2", "log10", "sqrt", "cbrt", "abs", "signum", "floor",
        "ceil", "round", "trunc", "fract",
    ] {
        assert!(
            EXPRESSION_SYNTAX.contains(&format!(" {name} "))
                || EXPRESSION_SYNTAX.contains(&format!(" {name},")),
            "{name} not documented"
        );
        let source = format!("{name}(0.5 + 0*t)");
        assert!(Expression::parse(&source).is_ok(), "{source}");
    }
    for name in ["min", "max", "atan2"] {
        assert!(
            Expression::parse(&format!("{name}(t, 0.5)")).is_ok(),
            "{name}"
        );
    }
    assert!(close(expr("log(e^2)").eval(0.0), 2.0, 1e-15));
    assert!(close(expr("atan2(1, t)").eval(1.0), PI / 4.0, 1e-15));
}

#[test]
fn unknown_names_are_refused_with_the_name() {
    for (source, name) in [
        ("sin(x)", "x"),
        ("tt", "tt"),
        ("T + 1", "T"),
        ("t + time", "time"),
        ("sinus(t)", "sinus"),
        ("maxt", "maxt"),
        ("{x} * t", "x"),
    ] {
        match Expression::parse(source) {
            Err(FunctionError::UnknownName {
                source_text,
                name: got,
            }) => {
                assert_eq!(source_text, source);
                assert_eq!(got, name, "{source}");
            }
            other => panic!("{source}: expected UnknownName, got {other:?}"),
        }
    }
    let message = Expression::parse("sin(x)").unwrap_err().to_string();
    assert!(
        message.contains("`x`") && message.contains("only the variable t"),
        "{message}"
    );
}

#[test]
fn parse_errors_and_ambiguous_forms_are_refused() {
    for source in [
        "",
        "   ",
        "sin(",
        "t +",
        "2 3",
        "t t",
        "min(t, 1, 2)",
        "* t",
        "2e",
        "t $ 1",
    ] {
        match Expression::parse(source) {
            Err(FunctionError::Parse { source_text, .. }) => assert_eq!(source_text, source),
            other => panic!("{source:?}: expected a parse error, got {other:?}"),
        }
    }
    // exmex would read these as (-t)^2 and sin(2)*t: refused, with the place.
    for (source, position) in [
        ("-t^2", 0),
        ("exp(-t^2)", 4),
        ("1 + -sin(t)^2", 4),
        ("-(t)^2", 0),
        ("sin 2*t", 0),
        ("3 * cos t", 4),
    ] {
        match Expression::parse(source) {
            Err(FunctionError::Parse {
                position: Some(p), ..
            }) => assert_eq!(p, position, "{source}"),
            other => panic!("{source:?}: expected a positioned parse error, got {other:?}"),
        }
    }
    // … whereas the bracketed and binary forms are accepted.
    assert_eq!(expr("1 - t^2").eval(2.0), -3.0);
    assert_eq!(expr("2^-t").eval(1.0), 0.5);
    assert_eq!(expr("exp(-(t^2))").eval(0.0), 1.0);
    let message = Expression::parse("").unwrap_err().to_string();
    assert!(
        message.contains("empty") && message.contains("comparisons"),
        "{message}"
    );
}

/// Parse errors say what is wrong in the user's words, at the place: never the parser's
/// "parentheses mismatch" for a wrong argument count, nor a library's name.
#[test]
fn parse_errors_name_the_place_and_the_rule() {
    for (source, position, words) in [
        ("max(t,1,2)", 9, "max takes 2 arguments, got 3"),
        ("min(t)", 5, "min takes 2 arguments, got 1"),
        ("sin(t, 2)", 8, "sin takes 1 argument, got 2"),
        ("atan2(1, t, 3)", 13, "atan2 takes 2 arguments, got 3"),
        ("sin(t", 3, "never closed"),
        ("t)", 1, "closes no '('"),
        ("2*()", 3, "empty parentheses"),
        ("t, 1", 1, "a comma outside"),
        ("(t, 1)", 2, "a comma outside"),
    ] {
        match Expression::parse(source) {
            Err(e @ FunctionError::Parse { .. }) => {
                let FunctionError::Parse {
                    position: Some(p), ..
                } = &e
                else {
                    panic!("{source:?}: no position in {e}");
                };
                assert_eq!(*p, position, "{source}: {e}");
                let message = e.to_string();
                assert!(message.contains(words), "{source}: {message}");
                assert!(!message.contains("mismatch"), "{source}: {message}");
            }
            other => panic!("{source:?}: expected a parse error, got {other:?}"),
        }
    }
    // The parser cannot read a two-argument function inside the second argument of another:
    // refused with the way around it, not as a parenthesis error.
    let e = Expression::parse("max(t, 1 + min(t, 2))")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("min cannot be used inside the second argument")
            && e.contains("max(min(t, 2), t)"),
        "{e}"
    );
    for (source, words) in [
        ("2 3", "an operator is missing between '2' and '3'"),
        ("2t", "an operator is missing between '2' and 't'"),
        ("* t", "at the start of the expression, found '*'"),
        ("t +", "the expression ends where"),
        ("t < < 1", "after '<', found '<'"),
        ("t $ 1", "'$' is not part of the expression syntax"),
        ("2 max 3", "write max(a, b)"),
    ] {
        let e = Expression::parse(source).unwrap_err().to_string();
        assert!(e.contains(words), "{source}: {e}");
        assert!(
            !e.contains(" ops ") && !e.contains(" node"),
            "{source}: {e}"
        );
    }
    for good in [
        "max(t, 1)",
        "atan2(max(t, 2), sin(t))",
        "((t))",
        "min(max(t,0),1)",
        "2*-t",
        "--t",
    ] {
        if let Err(e) = Expression::parse(good) {
            panic!("{good}: {e}");
        }
    }
}

#[test]
fn expression_keeps_its_source_and_is_shareable() {
    fn shareable<T: Send + Sync + Clone + 'static>() {}
    shareable::<TimeFunction>();
    shareable::<Prescribed>();
    let e = Expression::parse("2*t").unwrap();
    assert_eq!(e.source(), "2*t");
    assert!(!e.is_constant());
    assert!(Expression::parse("2*pi").unwrap().is_constant());
    let f = TimeFunction::from(e);
    let g = f.clone();
    let handle = std::thread::spawn(move || g.eval(3.0));
    assert_eq!(handle.join().unwrap(), 6.0);
    assert_eq!(f.eval(3.0), 6.0);
}

#[test]
fn rate_and_acceleration_by_central_differences() {
    let p = Prescribed::new(expr("sin(t)"));
    assert_eq!(p.epsilon, Prescribed::DEFAULT_EPSILON);
    for t in [-2.0, 0.0, 0.3, 1.0, 7.5] {
        let h = p.step(t);
        assert_eq!(h, 1e-4 * f64::max(1.0, f64::abs(t)));
        let rate_err = (p.rate(t) - t.cos()).abs();
        let acc_err = (p.acceleration(t) + t.sin()).abs();
        // truncation h²/6 |cos| plus round-off
        assert!(rate_err <= h * h / 6.0 + 1e-11, "rate at {t}: {rate_err}");
        assert!(acc_err <= 1e-6, "acceleration at {t}: {acc_err}");
    }
}

#[test]
fn the_step_is_relative_at_large_times() {
    // At |t| = 1e3 the step is 0.1: the rate error is the truncation term h²/6 |g'''|, so its
    // ratio to that prediction is ≈ 1 (an absolute step 1e-4 would give 1e-6 of it).
    let p = Prescribed::new(expr("sin(t)"));
    for t in [1e3, -1e3, 1234.5] {
        let h = p.step(t);
        assert_eq!(h, 1e-4 * f64::abs(t));
        let rate_err = p.rate(t) - t.cos();
        let predicted = -h * h / 6.0 * t.cos();
        assert!(
            (rate_err / predicted - 1.0).abs() < 0.01,
            "t = {t}: {rate_err} vs {predicted}"
        );
        let acc_err = p.acceleration(t) + t.sin();
        let predicted = h * h / 12.0 * t.sin();
        assert!(
            (acc_err / predicted - 1.0).abs() < 0.01,
            "t = {t}: {acc_err} vs {predicted}"
        );
    }
    // A smaller epsilon makes it accurate again: rate to O(h²), acceleration to ~1e-6.
    let p = Prescribed::new(expr("sin(t)")).with_epsilon(2e-6).unwrap();
    for t in [1e3, -1e3] {
        assert!(
            (p.rate(t) - t.cos()).abs() < 1e-6,
            "{}",
            p.rate(t) - t.cos()
        );
        assert!((p.acceleration(t) + t.sin()).abs() < 2e-6);
    }
}

#[test]
fn supplied_derivatives_are_used() {
    // Deliberately inconsistent, so that using the difference quotients would show.
    let p = Prescribed::new(expr("t^3"))
        .with_rate(TimeFunction::Constant(42.0))
        .with_acceleration(expr("7*t"));
    assert_eq!(p.rate(2.0), 42.0);
    assert_eq!(p.acceleration(2.0), 14.0);
    // A supplied rate without acceleration: the acceleration is the difference of the rate.
    let p = Prescribed::new(TimeFunction::Constant(0.0)).with_rate(expr("sin(t)"));
    for t in [0.0, 0.7, 3.0] {
        let err = p.acceleration(t) - t.cos();
        let h = p.step(t);
        assert!(err.abs() <= h * h / 6.0 + 1e-11, "t = {t}: {err}");
    }
    // Without anything supplied, t³ is differenced exactly up to round-off.
    let p = Prescribed::new(expr("t^3"));
    assert!(close(p.rate(2.0), 12.0, 1e-8));
    assert!(close(p.acceleration(2.0), 12.0, 1e-6));
}

/// A pole between the sampled times is found and blamed on the function that has it (here
/// the supplied rate, not the acceleration differenced from it); a jump or a zero is not a pole.
#[test]
fn poles_between_samples_are_found_in_the_function_that_has_them() {
    let p = Prescribed::new(expr("0.1*t")).with_rate(expr("1/(t-0.33333)"));
    match p.check_finite_on(0.0, 1.0, 1001) {
        Err(FunctionError::Pole { quantity, t }) => {
            assert_eq!(quantity, "rate");
            assert!((t - 0.33333).abs() < 1e-9, "{t}");
        }
        other => panic!("expected a pole of the rate, got {other:?}"),
    }
    let p = Prescribed::new(expr("tan(3*t)"));
    assert!(matches!(
        p.check_finite_on(0.0, 1.0, 1001),
        Err(FunctionError::Pole {
            quantity: "value",
            ..
        })
    ));
    for bounded in ["(t < 0.33333)*2 - 1", "sin(100*t)", "t - 0.33333"] {
        assert!(
            Prescribed::new(expr(bounded))
                .check_finite_on(0.0, 1.0, 1001)
                .is_ok(),
            "{bounded}"
        );
    }
}

#[test]
fn constants_have_exactly_zero_derivatives() {
    for f in [
        TimeFunction::Constant(3.5),
        expr("2*pi"),
        TimeFunction::Table(Table::new(vec![1.0], vec![4.0]).unwrap()),
    ] {
        let p = Prescribed::new(f);
        for t in [0.0, 1.0, -1e9] {
            assert_eq!(p.rate(t), 0.0);
            assert_eq!(p.acceleration(t), 0.0);
        }
    }
}

#[test]
fn epsilon_is_validated() {
    let p = Prescribed::new(expr("t"));
    for bad in [0.0, -1e-4, 1.0, f64::NAN, f64::INFINITY] {
        assert!(matches!(
            p.clone().with_epsilon(bad),
            Err(FunctionError::InvalidEpsilon { .. })
        ));
        let mut q = p.clone();
        q.epsilon = bad;
        assert!(matches!(
            q.check_finite_on(0.0, 1.0, 3),
            Err(FunctionError::InvalidEpsilon { .. })
        ));
    }
}

#[test]
fn check_finite_reports_the_first_bad_sample() {
    let p = Prescribed::new(expr("1 / (t - 0.5)"));
    match p.check_finite_on(0.0, 1.0, 5) {
        Err(FunctionError::NonFinite { quantity, t, .. }) => {
            assert_eq!(quantity, "value");
            assert_eq!(t, 0.5);
        }
        other => panic!("{other:?}"),
    }
    // Samples 0, 1/3, 2/3, 1 miss the pole, which the change of sign between 1/3 and 2/3 shows.
    assert!(matches!(
        p.check_finite_on(0.0, 1.0, 4),
        Err(FunctionError::Pole { quantity: "value", t }) if (t - 0.5).abs() < 1e-12
    ));
    // sqrt is finite at 0 but its difference quotient reaches sqrt(-h)
    let p = Prescribed::new(expr("sqrt(t)"));
    match p.check_finite_on(0.0, 1.0, 3) {
        Err(FunctionError::NonFinite { quantity, t, .. }) => {
            assert_eq!((quantity, t), ("rate", 0.0));
        }
        other => panic!("{other:?}"),
    }
    assert!(p.check_finite_on(0.5, 1.0, 3).is_ok());
    // an exact rate is checked too
    let p = Prescribed::new(expr("t")).with_rate(expr("ln(t)"));
    assert!(matches!(
        p.check_finite_on(0.0, 1.0, 2),
        Err(FunctionError::NonFinite {
            quantity: "rate",
            ..
        })
    ));
}

#[test]
fn tables_interpolate_and_hold_their_ends() {
    let table = Table::new(vec![0.0, 1.0, 3.0], vec![0.0, 2.0, -2.0]).unwrap();
    let f = TimeFunction::Table(table.clone());
    for (t, want) in [
        (-5.0, 0.0),
        (0.0, 0.0),
        (0.25, 0.5),
        (1.0, 2.0),
        (2.0, 0.0),
        (2.5, -1.0),
        (3.0, -2.0),
        (100.0, -2.0),
    ] {
        assert_eq!(f.eval(t), want, "t = {t}");
    }
    assert!(f.eval(f64::NAN).is_nan());
    assert_eq!(table.times(), &[0.0, 1.0, 3.0]);
    assert_eq!(table.values(), &[0.0, 2.0, -2.0]);
    // Difference quotients: the slope inside a segment, the mean slope at a kink.
    let p = Prescribed::new(f);
    assert!(close(p.rate(0.5), 2.0, 1e-10));
    assert!(close(p.rate(2.0), -2.0, 1e-10));
    assert!(close(p.rate(1.0), 0.0, 1e-10)); // mean of 2 and -2
    assert!(p.acceleration(0.5).abs() < 1e-6);
}

#[test]
fn bad_tables_are_refused() {
    assert_eq!(Table::new(vec![], vec![]), Err(FunctionError::EmptyTable));
    assert_eq!(
        Table::new(vec![0.0, 1.0], vec![1.0]),
        Err(FunctionError::TableLengths {
            times: 2,
            values: 1
        })
    );
    assert_eq!(
        Table::new(vec![0.0, 1.0, 1.0], vec![0.0; 3]),
        Err(FunctionError::TableOrder {
            index: 2,
            previous: 1.0,
            time: 1.0
        })
    );
    assert!(matches!(
        Table::new(vec![0.0, 2.0, 1.0], vec![0.0; 3]),
        Err(FunctionError::TableOrder { index: 2, .. })
    ));
    assert!(matches!(
        Table::new(vec![0.0, 1.0], vec![0.0, f64::NAN]),
        Err(FunctionError::TableNonFinite { index: 1, .. })
    ));
}

fn write_temp(name: &str, text: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("fem-time-function-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn csv_tables_with_header_and_comments() {
    let path = write_temp(
        "ok.csv",
        "# displacement history\n\ntime, value\n0, 0\n0.5, 1.0e-3 # peak\n\n1.0,0\n",
    );
    let table = Table::from_csv(&path).unwrap();
    assert_eq!(table.times(), &[0.0, 0.5, 1.0]);
    assert_eq!(table.values(), &[0.0, 1e-3, 0.0]);
    // no header is fine too
    let table = Table::parse_csv("0,1\n2,3\n", Path::new("inline")).unwrap();
    assert_eq!(table.eval(1.0), 2.0);
}

#[test]
fn csv_errors_name_the_file_and_line() {
    let cases = [
        ("t,v\n0,0\n1,x\n", 3, "`x` is not a number"),
        ("0,0\n1,1,1\n", 2, "two comma-separated fields"),
        ("0,0\n# note\n1,1\n0.5,2\n", 4, "strictly increasing"),
        ("t,v\n0,0\nvalue,time\n", 3, "not a number"),
        ("0,0\n1,inf\n", 2, "not finite"),
        ("# only comments\nt,v\n", 0, "at least one"),
    ];
    for (text, line, fragment) in cases {
        match Table::parse_csv(text, Path::new("g.csv")) {
            Err(FunctionError::Csv {
                path,
                line: got,
                message,
            }) => {
                assert_eq!(path, Path::new("g.csv"));
                assert_eq!(got, line, "{text:?}: {message}");
                assert!(message.contains(fragment), "{text:?}: {message}");
            }
            other => panic!("{text:?}: {other:?}"),
        }
    }
    let err = Table::parse_csv("0,0\n1,x\n", Path::new("g.csv")).unwrap_err();
    assert!(err.to_string().starts_with("g.csv:2: "), "{err}");
    let missing = Path::new("/nonexistent/fem/table.csv");
    match Table::from_csv(missing) {
        Err(FunctionError::Io { path, .. }) => assert_eq!(path, missing),
        other => panic!("{other:?}"),
    }
}

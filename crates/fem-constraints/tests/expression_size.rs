//! Expressions are bounded in size (issue 28, item 12): the expression engine evaluates in a
//! time that grows with the square of the length (`t+t+…` with 3·10⁴ terms took 54 s of
//! `fem check`, 3·10⁶ terms 1.8 GB), so a longer one is refused before it is built.

use fem_constraints::function::{
    Expression, FunctionError, MAX_EXPRESSION_CHARS, MAX_EXPRESSION_TOKENS,
};

fn sum_of_t(terms: usize) -> String {
    vec!["t"; terms].join("+")
}

#[test]
fn an_expression_at_the_limits_is_accepted_and_evaluated() {
    // 256 terms and 255 operators: 511 tokens.
    let e = Expression::parse(&sum_of_t(MAX_EXPRESSION_TOKENS / 2)).unwrap();
    assert_eq!(e.eval(0.5), 0.5 * (MAX_EXPRESSION_TOKENS / 2) as f64);
    // Spaces count as characters only.
    let spaced = format!("{}t", " ".repeat(MAX_EXPRESSION_CHARS - 1));
    assert_eq!(Expression::parse(&spaced).unwrap().eval(2.0), 2.0);
}

#[test]
fn a_longer_expression_is_refused_saying_why() {
    let err = Expression::parse(&sum_of_t(MAX_EXPRESSION_TOKENS / 2 + 1)).unwrap_err();
    assert!(
        matches!(
            err,
            FunctionError::TooLong {
                size: 513,
                unit: "terms and operators",
                ..
            }
        ),
        "{err:?}"
    );
    let long = sum_of_t(3_000_000);
    let err = Expression::parse(&long).unwrap_err();
    assert!(
        matches!(
            err,
            FunctionError::TooLong {
                size: 5_999_999,
                unit: "characters",
                ..
            }
        ),
        "{err:?}"
    );
    // The message quotes the start of the expression, not all of it.
    let text = err.to_string();
    assert!(text.len() < 400 && text.contains("at most 4096"), "{text}");
}

//! Prescribed values as functions of time, and their first and second time derivatives.
//!
//! A [`TimeFunction`] is one of
//!
//! * a constant,
//! * an [`Expression`] in the single variable `t`, parsed and evaluated by the maintained
//!   expression crate `exmex` (no hand-written parser), or
//! * a piecewise-linear [`Table`] `(tᵢ, gᵢ)`, given inline or read from a CSV file.
//!
//! A [`Prescribed`] value wraps a function `g` with its rate `g'` and acceleration `g''`: exact
//! when the user supplies them, otherwise by central finite differences,
//!
//! ```text
//! g'(t)  ≈ (g(t+h) − g(t−h)) / (2h)
//! g''(t) ≈ (g(t+h) − 2 g(t) + g(t−h)) / h²,        h = ε · max(1, |t|),
//! ```
//!
//! with the relative step `ε` ([`Prescribed::epsilon`], default
//! [`Prescribed::DEFAULT_EPSILON`]).
//!
//! # Expressions
//!
//! What an expression may contain is stated in [`EXPRESSION_SYNTAX`] (the same text ends every
//! expression error). Two rules of `exmex` differ from the usual mathematical reading, and the
//! parser refuses the forms where they would silently change the meaning:
//!
//! * a unary minus binds tighter than `^` (`exmex` reads `-t^2` as `(-t)^2`); a minus sign
//!   directly before a power is refused: write `-(t^2)` or `(-t)^2`;
//! * a function applies to the next operand only (`sin 2*t` is `sin(2)*t`); a function name
//!   must be followed by `(`.
//!
//! `exmex` has no three-argument functions (no `if(c, a, b)`); piecewise definitions use the
//! comparisons, which are 1 when true and 0 when false: `(t < 1)*t + (t >= 1)*1` ramps to 1
//! at `t = 1` and holds. "and" is a product of comparisons, "or" is `max` of them.
//!
//! The variable list of a parsed expression is checked to be exactly `t` (or empty): a
//! misspelled name (`tt`, `x`, `T`) would otherwise silently become a second variable.
//!
//! `TimeFunction` is `Clone + Send + Sync`: it can be shared by the threads of an assembly.

use std::fmt;
use std::path::{Path, PathBuf};

use exmex::{BinOp, Express, FlatEx, FloatOpsFactory, MakeOperators, MatchLiteral, Operator};

/// What an expression may contain; the end of every expression error message.
pub const EXPRESSION_SYNTAX: &str = "expressions may use only the variable t; numbers \
(2, 0.5, 2.5e-3); the constants pi (also PI, π), e (also E), TAU (also τ); the operators \
+ - * / and ^ (power, left-associative: 2^3^2 is (2^3)^2); the comparisons < <= > >= == != \
(1 if true, 0 if false: (t < 1)*t + (t >= 1)*1 ramps and holds); the functions sin cos tan \
asin acos atan sinh cosh tanh asinh acosh atanh exp ln log (natural) log2 log10 sqrt cbrt \
abs signum floor ceil round trunc fract, each with its argument in parentheses; and the \
two-argument functions min(a, b), max(a, b), atan2(y, x); a minus sign directly before a \
power must be bracketed, as -(t^2) or (-t)^2";

/// Why a time function was refused.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum FunctionError {
    /// The expression does not parse (or is empty, or has an ambiguous form).
    #[error("cannot parse the expression `{source_text}`{}: {message}; {}",
        .position.map(|p| format!(" at character {p}")).unwrap_or_default(), EXPRESSION_SYNTAX)]
    Parse {
        /// The expression as written.
        source_text: String,
        /// Character offset (0-based) of the offending place, when known.
        position: Option<usize>,
        /// What is wrong.
        message: String,
    },
    /// The expression is longer than an expression may be ([`MAX_EXPRESSION_CHARS`],
    /// [`MAX_EXPRESSION_TOKENS`]): the cost of evaluating one grows with the square of its
    /// length.
    #[error(
        "the expression `{start}` has {size} {unit}; at most {max} are accepted (evaluating \
         one costs the square of its length): write it shorter, or give a table of values"
    )]
    TooLong {
        /// Its first characters.
        start: String,
        /// Its length in `unit`s.
        size: usize,
        /// `characters` or `terms and operators`.
        unit: &'static str,
        /// The limit.
        max: usize,
    },
    /// The expression uses a name that is neither `t`, a constant nor a function.
    #[error(
        "the expression `{source_text}` uses the unknown name `{name}`; {}",
        EXPRESSION_SYNTAX
    )]
    UnknownName {
        /// The expression as written.
        source_text: String,
        /// The first unknown name.
        name: String,
    },
    /// A table has no rows.
    #[error("a table needs at least one (time, value) row")]
    EmptyTable,
    /// A table's time and value columns have different lengths.
    #[error("a table has {times} times but {values} values")]
    TableLengths {
        /// Number of times.
        times: usize,
        /// Number of values.
        values: usize,
    },
    /// A table's times are not strictly increasing.
    #[error(
        "table times must be strictly increasing: row {index} has t = {time} after t = {previous}"
    )]
    TableOrder {
        /// 0-based row of the offending time.
        index: usize,
        /// The time of the row before.
        previous: f64,
        /// The offending time.
        time: f64,
    },
    /// A table entry is NaN or infinite.
    #[error("table row {index} is not finite: t = {time}, value = {value}")]
    TableNonFinite {
        /// 0-based row.
        index: usize,
        /// Its time.
        time: f64,
        /// Its value.
        value: f64,
    },
    /// A table file could not be read.
    #[error("cannot read the table file {}: {message}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's reason.
        message: String,
    },
    /// A line of a table file is malformed, or its rows do not form a valid table.
    #[error("{}:{line}: {message}", path.display())]
    Csv {
        /// The file.
        path: PathBuf,
        /// 1-based line number (0 when the file as a whole is at fault, e.g. it has no rows).
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// The finite-difference step is not a finite number in `(0, 1)`.
    #[error("the finite-difference epsilon must be finite and in (0, 1), got {epsilon}")]
    InvalidEpsilon {
        /// The step given.
        epsilon: f64,
    },
    /// The value, rate or acceleration has a pole between the times it was sampled at.
    #[error(
        "the prescribed {quantity} grows without bound near t = {t} (a pole): expected a function that is finite over the whole run"
    )]
    Pole {
        /// `"value"`, `"rate"` or `"acceleration"`.
        quantity: &'static str,
        /// Near where.
        t: f64,
    },
    /// The value, rate or acceleration is NaN or infinite at some time.
    #[error("the prescribed {quantity} is {result} at t = {t}")]
    NonFinite {
        /// `"value"`, `"rate"` or `"acceleration"`.
        quantity: &'static str,
        /// The time.
        t: f64,
        /// What it evaluated to.
        result: f64,
    },
}

// ---------------------------------------------------------------------------------------------
// exmex configuration: the default float operators plus comparisons and `pi`; number literals
// with an optional decimal exponent.

fn comparison(repr: &'static str, apply: fn(f64, f64) -> f64) -> Operator<'static, f64> {
    // Below `+` (0) and `-` (1): `t < 1 + 2` is `t < (1 + 2)`.
    Operator::make_bin(
        repr,
        BinOp {
            apply,
            prio: -1,
            is_commutative: false,
        },
    )
}

fn indicator(b: bool) -> f64 {
    if b { 1.0 } else { 0.0 }
}

/// `exmex`'s float operators, extended by the comparisons and the constant `pi`.
#[derive(Clone, Debug)]
struct TimeOps;

impl MakeOperators<f64> for TimeOps {
    fn make<'a>() -> Vec<Operator<'a, f64>> {
        let mut ops = FloatOpsFactory::<f64>::make();
        ops.extend([
            comparison("<", |a, b| indicator(a < b)),
            comparison("<=", |a, b| indicator(a <= b)),
            comparison(">", |a, b| indicator(a > b)),
            comparison(">=", |a, b| indicator(a >= b)),
            comparison("==", |a, b| indicator(a == b)),
            comparison("!=", |a, b| indicator(a != b)),
            Operator::make_constant("pi", std::f64::consts::PI),
        ]);
        ops
    }
}

/// Number literals `12`, `1.5`, `.5`, `2.`, each with an optional exponent `e-3`, `E+2`.
/// (`exmex`'s default matcher has no exponent.)
#[derive(Clone, Debug)]
struct TimeLiterals;

impl MatchLiteral for TimeLiterals {
    fn is_literal(text: &str) -> Option<&str> {
        let b = text.as_bytes();
        let digits = |mut i: usize| {
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            i
        };
        let int_end = digits(0);
        let mut end = int_end;
        if end < b.len() && b[end] == b'.' {
            end = digits(end + 1);
        }
        if end == 0 || (int_end == 0 && end == 1) {
            return None; // no digit at all
        }
        if end < b.len() && (b[end] == b'e' || b[end] == b'E') {
            let mut i = end + 1;
            if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
                i += 1;
            }
            let exp_end = digits(i);
            if exp_end > i {
                end = exp_end;
            }
        }
        Some(&text[..end])
    }
}

type Flat = FlatEx<f64, TimeOps, TimeLiterals>;

/// A token of the pre-check that guards against `exmex`'s unusual precedences.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Tok<'a> {
    Operand,
    Name(&'a str),
    Function,
    BinaryWord,
    Symbol(&'a str),
    Open,
    Close,
    Comma,
}

/// Splits `source` into tokens with their character positions, checks the names, and refuses
/// the two forms `exmex` reads differently from mathematics. Anything it does not recognise is
/// left to `exmex` to report.
/// The longest expression accepted, in characters.
pub const MAX_EXPRESSION_CHARS: usize = 4096;
/// The most terms, operators and parentheses an expression may have. The expression engine
/// evaluates in a time that grows with the square of this count (`t+t+…` with 10⁴ terms took
/// 13 s of `fem check`, 3·10⁶ terms 1.8 GB); at 512 one evaluation is tens of microseconds.
pub const MAX_EXPRESSION_TOKENS: usize = 512;

/// Refuses an expression longer than [`MAX_EXPRESSION_CHARS`] characters, before anything is
/// built from it (the token limit is checked as it is read).
pub fn check_expression_length(source: &str) -> Result<(), FunctionError> {
    let n = source.chars().count();
    if n > MAX_EXPRESSION_CHARS {
        return Err(FunctionError::TooLong {
            start: expression_start(source),
            size: n,
            unit: "characters",
            max: MAX_EXPRESSION_CHARS,
        });
    }
    Ok(())
}

/// The first 40 characters of `source`, and `…` if there are more.
fn expression_start(source: &str) -> String {
    let mut s: String = source.chars().take(40).collect();
    if source.chars().nth(40).is_some() {
        s.push('…');
    }
    s
}

fn precheck(source: &str) -> Result<(), FunctionError> {
    check_expression_length(source)?;
    let ops = TimeOps::make();
    let parse_err = |position: usize, message: &str| FunctionError::Parse {
        source_text: source.to_string(),
        position: Some(position),
        message: message.to_string(),
    };
    let is_name_start = |c: char| c.is_alphabetic() || c == '_';
    let is_name_char = |c: char| c.is_alphanumeric() || c == '_';
    let mut toks: Vec<(usize, Tok)> = Vec::new();
    let chars: Vec<(usize, char)> = source.char_indices().collect();
    let mut k = 0;
    while k < chars.len() {
        let (byte, c) = chars[k];
        let rest = &source[byte..];
        let start = k;
        let tok = if c.is_whitespace() {
            k += 1;
            continue;
        } else if c == '(' {
            k += 1;
            Tok::Open
        } else if c == ')' {
            k += 1;
            Tok::Close
        } else if c == ',' {
            k += 1;
            Tok::Comma
        } else if c == '{' {
            let Some(close) = rest.find('}') else { break };
            let name = &rest[1..close];
            k += rest[..=close].chars().count();
            Tok::Name(name)
        } else if let Some(lit) = TimeLiterals::is_literal(rest) {
            k += lit.chars().count();
            Tok::Operand
        } else if is_name_start(c) {
            let len: usize = rest.chars().take_while(|&c| is_name_char(c)).count();
            let word = &rest[..rest.char_indices().nth(len).map_or(rest.len(), |(b, _)| b)];
            k += len;
            match ops.iter().find(|op| op.repr() == word) {
                Some(op) if op.constant().is_some() => Tok::Operand,
                Some(op) if op.has_bin() => Tok::BinaryWord,
                Some(_) => Tok::Function,
                None => Tok::Name(word),
            }
        } else if let Some(sym) = ["<=", ">=", "==", "!=", "<", ">", "+", "-", "*", "/", "^"]
            .into_iter()
            .find(|s| rest.starts_with(s))
        {
            k += sym.chars().count();
            Tok::Symbol(sym)
        } else {
            return Err(parse_err(
                start,
                &format!("'{c}' is not part of the expression syntax"),
            ));
        };
        toks.push((start, tok));
    }
    for &(_, tok) in &toks {
        if let Tok::Name(name) = tok
            && name != "t"
        {
            return Err(FunctionError::UnknownName {
                source_text: source.to_string(),
                name: name.to_string(),
            });
        }
    }
    check_brackets(&toks, source)?;
    if toks.len() > MAX_EXPRESSION_TOKENS {
        return Err(FunctionError::TooLong {
            start: expression_start(source),
            size: toks.len(),
            unit: "terms and operators",
            max: MAX_EXPRESSION_TOKENS,
        });
    }
    check_sequence(&toks, source)?;
    for (i, &(pos, tok)) in toks.iter().enumerate() {
        if tok == Tok::Function && toks.get(i + 1).map(|t| t.1) != Some(Tok::Open) {
            return Err(parse_err(
                pos,
                "a function name must be followed by its argument in parentheses \
                 (without them it applies to the next operand only: `sin 2*t` is `sin(2)*t`)",
            ));
        }
        let unary_minus = tok == Tok::Symbol("-")
            && matches!(
                i.checked_sub(1).map(|j| toks[j].1),
                None | Some(Tok::Open | Tok::Comma | Tok::Symbol(_) | Tok::BinaryWord)
            );
        if !unary_minus {
            continue;
        }
        // The operand of the unary minus: further unary signs and functions, then a number,
        // a name or a parenthesised group.
        let mut j = i + 1;
        while matches!(
            toks.get(j).map(|t| t.1),
            Some(Tok::Symbol("-" | "+") | Tok::Function)
        ) {
            j += 1;
        }
        match toks.get(j).map(|t| t.1) {
            Some(Tok::Operand | Tok::Name(_)) => j += 1,
            Some(Tok::Open) => {
                let mut depth = 0usize;
                while let Some(&(_, t)) = toks.get(j) {
                    j += 1;
                    match t {
                        Tok::Open => depth += 1,
                        Tok::Close => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                }
            }
            _ => continue,
        }
        if toks.get(j).map(|t| t.1) == Some(Tok::Symbol("^")) {
            return Err(parse_err(
                pos,
                "a minus sign directly before a power is ambiguous (it would be read as \
                 (-t)^2); write -(t^2) or (-t)^2",
            ));
        }
    }
    Ok(())
}

/// An open parenthesis while checking: its position, the function before it with the number of
/// arguments it takes (`("max", 2)`), and the commas met so far inside it.
type OpenGroup = (usize, Option<(String, usize)>, usize);

/// Checks the parentheses and the argument counts: every `(` closed, every `)` opened, one
/// argument in the parentheses of a function, two in those of `min`, `max` and `atan2`, and no
/// comma elsewhere. `toks` hold character positions.
fn check_brackets(toks: &[(usize, Tok)], source: &str) -> Result<(), FunctionError> {
    let parse_err = |position: usize, message: String| FunctionError::Parse {
        source_text: source.to_string(),
        position: Some(position),
        message,
    };
    // Open groups: (position, the function or two-argument word before it, commas so far).
    let mut open: Vec<OpenGroup> = Vec::new();
    for (i, &(pos, tok)) in toks.iter().enumerate() {
        match tok {
            Tok::Open => {
                let caller = i.checked_sub(1).and_then(|j| match toks[j].1 {
                    Tok::Function => Some((toks[j].0, 1)),
                    Tok::BinaryWord => Some((toks[j].0, 2)),
                    _ => None,
                });
                if let Some((p, 2)) = caller
                    && open
                        .iter()
                        .any(|(_, c, commas)| matches!(c, Some((_, 2))) && *commas > 0)
                {
                    return Err(parse_err(
                        p,
                        format!(
                            "{} cannot be used inside the second argument of min, max or atan2; \
                             move it to the first (max(min(t, 2), t) rather than max(t, min(t, 2))) \
                             or split the expression",
                            name_at(source, p)
                        ),
                    ));
                }
                open.push((pos, caller.map(|(p, n)| (name_at(source, p), n)), 0));
            }
            Tok::Close => {
                let Some((_, caller, commas)) = open.pop() else {
                    return Err(parse_err(
                        pos,
                        "this ')' closes no '(' (the parentheses do not match)".into(),
                    ));
                };
                if i > 0 && toks[i - 1].1 == Tok::Open {
                    return Err(parse_err(pos, "empty parentheses '()'".into()));
                }
                if let Some((name, arguments)) = caller
                    && commas + 1 != arguments
                {
                    return Err(parse_err(
                        pos,
                        format!(
                            "{name} takes {arguments} argument{}, got {}",
                            if arguments == 1 { "" } else { "s" },
                            commas + 1
                        ),
                    ));
                }
            }
            Tok::Comma => match open.last_mut() {
                Some((_, Some(_), commas)) => *commas += 1,
                _ => {
                    return Err(parse_err(
                        pos,
                        "a comma outside the arguments of min(a, b), max(a, b) or atan2(y, x)"
                            .into(),
                    ));
                }
            },
            _ => {}
        }
    }
    if let Some(&(pos, _, _)) = open.last() {
        return Err(parse_err(
            pos,
            "this '(' is never closed (the parentheses do not match)".into(),
        ));
    }
    Ok(())
}

/// Checks that operands and operators alternate: no two operands side by side (`2 3`,
/// `2t`, `(t)(t)`), no operator without its operands (`* t`, `t +`, `t < < 1`), and `min`,
/// `max`, `atan2` written as functions. A unary `+` or `-` may precede any operand.
fn check_sequence(toks: &[(usize, Tok)], source: &str) -> Result<(), FunctionError> {
    let parse_err = |position: usize, message: String| FunctionError::Parse {
        source_text: source.to_string(),
        position: Some(position),
        message,
    };
    let text = |i: usize| -> String {
        let (pos, tok) = toks[i];
        match tok {
            Tok::Open => "(".into(),
            Tok::Close => ")".into(),
            Tok::Comma => ",".into(),
            Tok::Symbol(s) => s.into(),
            Tok::Name(n) => n.into(),
            _ => {
                let byte = source
                    .char_indices()
                    .nth(pos)
                    .map_or(source.len(), |(b, _)| b);
                match TimeLiterals::is_literal(&source[byte..]) {
                    Some(number) => number.to_string(),
                    None => name_at(source, pos),
                }
            }
        }
    };
    let mut expect_operand = true;
    for (i, &(pos, tok)) in toks.iter().enumerate() {
        if expect_operand {
            match tok {
                Tok::Operand | Tok::Name(_) => expect_operand = false,
                Tok::Open | Tok::Function | Tok::Symbol("-" | "+") => {}
                Tok::BinaryWord => {
                    if toks.get(i + 1).map(|t| t.1) != Some(Tok::Open) {
                        return Err(parse_err(
                            pos,
                            format!(
                                "{} must be followed by its two arguments in parentheses",
                                text(i)
                            ),
                        ));
                    }
                }
                Tok::Symbol(_) | Tok::Close | Tok::Comma => {
                    let what = match i.checked_sub(1) {
                        None => "at the start of the expression".to_string(),
                        Some(j) => format!("after '{}'", text(j)),
                    };
                    return Err(parse_err(
                        pos,
                        format!(
                            "expected a number, t, a function or '(' {what}, found '{}'",
                            text(i)
                        ),
                    ));
                }
            }
        } else {
            match tok {
                Tok::Symbol(_) | Tok::Comma => expect_operand = true,
                Tok::Close => {}
                Tok::BinaryWord => {
                    return Err(parse_err(
                        pos,
                        format!("write {0}(a, b), not a {0} b", text(i)),
                    ));
                }
                Tok::Operand | Tok::Name(_) | Tok::Open | Tok::Function => {
                    return Err(parse_err(
                        pos,
                        format!(
                            "an operator is missing between '{}' and '{}' (write 2*t, not 2t or 2 t; a power of ten is 2e3)",
                            text(i - 1),
                            text(i)
                        ),
                    ));
                }
            }
        }
    }
    if expect_operand {
        let (pos, _) = toks.last().copied().unwrap_or((0, Tok::Comma));
        return Err(parse_err(
            pos,
            "the expression ends where a number, t, a function or '(' was expected".into(),
        ));
    }
    Ok(())
}

/// The name (letters, digits, `_`) starting at character `pos` of `source`.
fn name_at(source: &str, pos: usize) -> String {
    source
        .chars()
        .skip(pos)
        .take_while(|&c| c.is_alphanumeric() || c == '_')
        .collect()
}

/// Where `e` has a pole in `[a, b]`, if its values at `a` and `b` have opposite signs and
/// bisecting the change of sign finds values that grow without bound (beyond 1e9 times the
/// larger end value) rather than a bounded jump or a zero.
fn pole_between(e: &Expression, a: f64, b: f64) -> Option<f64> {
    let (fa, fb) = (e.eval(a), e.eval(b));
    if !(fa.is_finite() && fb.is_finite()) || fa * fb >= 0.0 {
        return None;
    }
    let scale = fa.abs().max(fb.abs()).max(f64::MIN_POSITIVE);
    let (mut lo, mut hi, mut f_lo) = (a, b, fa);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        let f_mid = e.eval(mid);
        if !f_mid.is_finite() || f_mid.abs() > 1e9 * scale {
            return Some(mid);
        }
        if f_mid * f_lo < 0.0 {
            hi = mid;
        } else if f_mid == 0.0 {
            return None;
        } else {
            lo = mid;
            f_lo = f_mid;
        }
    }
    None
}

/// An expression in the single variable `t`, parsed once and evaluated fast.
///
/// The syntax is in [`EXPRESSION_SYNTAX`] and the [module documentation](self).
#[derive(Clone)]
pub struct Expression {
    source: String,
    /// Boxed: `FlatEx` keeps its nodes in inline small-vectors (about 2 KiB).
    flat: Box<Flat>,
}

impl Expression {
    /// Parses `source`. Refuses an empty expression, a parse error, a name other than `t`
    /// (and the constants and functions listed in [`EXPRESSION_SYNTAX`]), and the two
    /// ambiguous forms described in the module documentation.
    pub fn parse(source: &str) -> Result<Self, FunctionError> {
        let parse_err = |position: Option<usize>, message: String| FunctionError::Parse {
            source_text: source.to_string(),
            position,
            message,
        };
        if source.trim().is_empty() {
            return Err(parse_err(None, "the expression is empty".to_string()));
        }
        precheck(source)?;
        // The checks above catch what the user can get wrong; what is left of the parser's
        // refusals is reported without its internal wording.
        let flat = Flat::parse(source).map_err(|_| {
            parse_err(
                None,
                "it is not a well-formed expression (check the operators and parentheses)"
                    .to_string(),
            )
        })?;
        if let Some(name) = flat.var_names().iter().find(|n| n.as_str() != "t") {
            return Err(FunctionError::UnknownName {
                source_text: source.to_string(),
                name: name.clone(),
            });
        }
        Ok(Self {
            source: source.to_string(),
            flat: Box::new(flat),
        })
    }

    /// The expression as written.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// True when the expression does not contain `t`.
    pub fn is_constant(&self) -> bool {
        self.flat.var_names().is_empty()
    }

    /// The value at time `t` (NaN or ±∞ where the expression is undefined, e.g. `ln(t)` at
    /// `t = 0`; see [`Prescribed::check_finite_on`]).
    pub fn eval(&self, t: f64) -> f64 {
        // `eval_relaxed` accepts the one value also when `t` does not occur; it can only fail
        // on too few values, which cannot happen here.
        self.flat.eval_relaxed(&[t]).unwrap_or(f64::NAN)
    }
}

impl fmt::Debug for Expression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Expression").field(&self.source).finish()
    }
}

/// A piecewise-linear function of time through the rows `(tᵢ, gᵢ)`.
///
/// Between rows the value is interpolated linearly; before the first row it is `g₀` and after
/// the last it is `gₙ` (constant extrapolation, so a table "holds" its end values). A table
/// of one row is a constant. The finite-difference rate at a row strictly inside is the mean
/// of the two neighbouring slopes (when `h` is below the row spacing); the
/// finite-difference acceleration there is a spike of size `(slope jump)/h`: supply exact
/// derivatives, or a smoother function, where the acceleration matters.
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    times: Vec<f64>,
    values: Vec<f64>,
}

impl Table {
    /// A table from its columns. Refuses empty or unequal columns, non-finite entries and
    /// times that are not strictly increasing.
    pub fn new(times: Vec<f64>, values: Vec<f64>) -> Result<Self, FunctionError> {
        if times.len() != values.len() {
            return Err(FunctionError::TableLengths {
                times: times.len(),
                values: values.len(),
            });
        }
        if times.is_empty() {
            return Err(FunctionError::EmptyTable);
        }
        for (index, (&time, &value)) in times.iter().zip(&values).enumerate() {
            if !time.is_finite() || !value.is_finite() {
                return Err(FunctionError::TableNonFinite { index, time, value });
            }
            if index > 0 && time <= times[index - 1] {
                return Err(FunctionError::TableOrder {
                    index,
                    previous: times[index - 1],
                    time,
                });
            }
        }
        Ok(Self { times, values })
    }

    /// Reads a table from a CSV file of two comma-separated columns, time and value.
    ///
    /// Blank lines are skipped, `#` starts a comment that runs to the end of the line, and the
    /// first row may be a header (it is taken as one when its fields are not both numbers).
    /// Errors name the file and the 1-based line.
    pub fn from_csv(path: &Path) -> Result<Self, FunctionError> {
        let text = std::fs::read_to_string(path).map_err(|e| FunctionError::Io {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        Self::parse_csv(&text, path)
    }

    /// [`Table::from_csv`] on text already read; `path` is used in error messages only.
    pub fn parse_csv(text: &str, path: &Path) -> Result<Self, FunctionError> {
        let csv_err = |line: usize, message: String| FunctionError::Csv {
            path: path.to_path_buf(),
            line,
            message,
        };
        let (mut times, mut values, mut lines) = (Vec::new(), Vec::new(), Vec::new());
        let mut first_row = true;
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let content = raw.split('#').next().unwrap_or("").trim();
            if content.is_empty() {
                continue;
            }
            let fields: Vec<&str> = content.split(',').map(str::trim).collect();
            let numbers: Vec<Option<f64>> = fields.iter().map(|f| f.parse().ok()).collect();
            let is_header = first_row && numbers.iter().any(Option::is_none);
            first_row = false;
            if is_header {
                continue;
            }
            if fields.len() != 2 {
                return Err(csv_err(
                    line,
                    format!(
                        "expected two comma-separated fields (time, value), found {}",
                        fields.len()
                    ),
                ));
            }
            for (field, number) in fields.iter().zip(&numbers) {
                if number.is_none() {
                    return Err(csv_err(line, format!("`{field}` is not a number")));
                }
            }
            times.push(numbers[0].unwrap_or(f64::NAN));
            values.push(numbers[1].unwrap_or(f64::NAN));
            lines.push(line);
        }
        Self::new(times, values).map_err(|e| match e {
            FunctionError::TableOrder { index, .. }
            | FunctionError::TableNonFinite { index, .. } => csv_err(lines[index], e.to_string()),
            _ => csv_err(0, e.to_string()),
        })
    }

    /// The times, strictly increasing.
    pub fn times(&self) -> &[f64] {
        &self.times
    }

    /// The values, one per time.
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// The interpolated value at `t` (constant outside the table; NaN for a NaN `t`).
    pub fn eval(&self, t: f64) -> f64 {
        let n = self.times.len();
        if t.is_nan() {
            f64::NAN
        } else if t <= self.times[0] {
            self.values[0]
        } else if t >= self.times[n - 1] {
            self.values[n - 1]
        } else {
            // times[i-1] <= t < times[i], 1 <= i <= n-1
            let i = self.times.partition_point(|&x| x <= t);
            let (t0, t1) = (self.times[i - 1], self.times[i]);
            let (g0, g1) = (self.values[i - 1], self.values[i]);
            g0 + (g1 - g0) * ((t - t0) / (t1 - t0))
        }
    }
}

/// A prescribed value as a function of time.
#[derive(Clone, Debug)]
pub enum TimeFunction {
    /// The same value at all times.
    Constant(f64),
    /// An expression in `t`.
    Expression(Expression),
    /// A piecewise-linear table.
    Table(Table),
}

impl TimeFunction {
    /// Parses an expression in `t` (see [`Expression::parse`]).
    pub fn expression(source: &str) -> Result<Self, FunctionError> {
        Expression::parse(source).map(Self::Expression)
    }

    /// The value at time `t`.
    pub fn eval(&self, t: f64) -> f64 {
        match self {
            Self::Constant(c) => *c,
            Self::Expression(e) => e.eval(t),
            Self::Table(table) => table.eval(t),
        }
    }

    /// True for a [`TimeFunction::Constant`] and for an expression without `t`: its
    /// derivatives are exactly zero.
    pub fn is_constant(&self) -> bool {
        match self {
            Self::Constant(_) => true,
            Self::Expression(e) => e.is_constant(),
            Self::Table(table) => table.times.len() == 1,
        }
    }
}

impl From<f64> for TimeFunction {
    fn from(c: f64) -> Self {
        Self::Constant(c)
    }
}

impl From<Expression> for TimeFunction {
    fn from(e: Expression) -> Self {
        Self::Expression(e)
    }
}

impl From<Table> for TimeFunction {
    fn from(t: Table) -> Self {
        Self::Table(t)
    }
}

/// A prescribed value `g(t)` with its rate `g'(t)` and acceleration `g''(t)`.
///
/// A supplied `rate` or `acceleration` is used as given (it is the user's statement, not
/// checked against `value`). Otherwise:
///
/// * a constant `value` has rate and acceleration exactly 0;
/// * the rate is `(g(t+h) − g(t−h)) / (2h)`;
/// * the acceleration is `(g'(t+h) − g'(t−h)) / (2h)` when the rate was supplied, else
///   `(g(t+h) − 2g(t) + g(t−h)) / h²`;
///
/// with `h = epsilon · max(1, |t|)`. The differences use the steps `t+h − t` and `t − (t−h)` as
/// represented in floating point (the non-uniform three-point formulas, identical to the ones
/// above when the two steps are equal), so no error comes from rounding `t ± h`.
///
/// The step is relative to `max(1, |t|)` in the units of `t`: for a simulation on a time scale
/// much shorter than 1, or a function that varies on a scale much shorter than `|t|`, set a
/// smaller `epsilon` or supply exact derivatives. The truncation error of the rate is about
/// `h² |g'''| / 6`, of the acceleration `h² |g''''| / 12`.
#[derive(Clone, Debug)]
pub struct Prescribed {
    /// The prescribed value `g`.
    pub value: TimeFunction,
    /// The exact rate `g'`, when supplied.
    pub rate: Option<TimeFunction>,
    /// The exact acceleration `g''`, when supplied.
    pub acceleration: Option<TimeFunction>,
    /// Relative finite-difference step `ε`, `h = ε · max(1, |t|)`; must be in `(0, 1)`.
    pub epsilon: f64,
}

impl Prescribed {
    /// Default relative step `ε = 1e-4 ≈ ε_mach^(1/4)`.
    ///
    /// The second difference has truncation error `h² |g''''| / 12` and round-off error
    /// about `4 ε_mach |g| / h²`; they balance at `h ≈ (48 ε_mach)^(1/4) ≈ 3e-4` for a function
    /// varying on the scale of one time unit, and `1e-4` is the round figure near
    /// `ε_mach^(1/4) ≈ 1.2e-4`: the relative error of `g''` is then about `1e-7`. The first
    /// difference at this step is accurate to about `h²/6 ≈ 2e-9` (its round-off,
    /// `ε_mach / h ≈ 2e-12`, is negligible).
    pub const DEFAULT_EPSILON: f64 = 1e-4;

    /// `value` with finite-difference derivatives at the default step.
    pub fn new(value: TimeFunction) -> Self {
        Self {
            value,
            rate: None,
            acceleration: None,
            epsilon: Self::DEFAULT_EPSILON,
        }
    }

    /// The same with the relative step `epsilon`, which must be finite and in `(0, 1)`.
    pub fn with_epsilon(mut self, epsilon: f64) -> Result<Self, FunctionError> {
        if !(epsilon.is_finite() && epsilon > 0.0 && epsilon < 1.0) {
            return Err(FunctionError::InvalidEpsilon { epsilon });
        }
        self.epsilon = epsilon;
        Ok(self)
    }

    /// The same with the exact rate `g'`.
    pub fn with_rate(mut self, rate: TimeFunction) -> Self {
        self.rate = Some(rate);
        self
    }

    /// The same with the exact acceleration `g''`.
    pub fn with_acceleration(mut self, acceleration: TimeFunction) -> Self {
        self.acceleration = Some(acceleration);
        self
    }

    /// `g(t)`.
    pub fn value(&self, t: f64) -> f64 {
        self.value.eval(t)
    }

    /// `g'(t)`: the supplied rate, or 0 for a constant, or the central difference.
    pub fn rate(&self, t: f64) -> f64 {
        match &self.rate {
            Some(rate) => rate.eval(t),
            None if self.value.is_constant() => 0.0,
            None => self.first_difference(&self.value, t),
        }
    }

    /// `g''(t)`: the supplied acceleration, or 0 for a constant, or the central difference of
    /// the supplied rate, or the central second difference of the value.
    pub fn acceleration(&self, t: f64) -> f64 {
        match (&self.acceleration, &self.rate) {
            (Some(acceleration), _) => acceleration.eval(t),
            (None, Some(rate)) => self.first_difference(rate, t),
            (None, None) if self.value.is_constant() => 0.0,
            (None, None) => {
                let (tm, tp) = self.stencil(t);
                let (hm, hp) = (t - tm, tp - t);
                let g = |s| self.value.eval(s);
                2.0 * (hm * g(tp) - (hm + hp) * g(t) + hp * g(tm)) / (hm * hp * (hm + hp))
            }
        }
    }

    /// The step `h` at time `t`.
    pub fn step(&self, t: f64) -> f64 {
        self.epsilon * t.abs().max(1.0)
    }

    fn stencil(&self, t: f64) -> (f64, f64) {
        let h = self.step(t);
        (t - h, t + h)
    }

    /// Non-uniform central first difference (second order; the seed's formula for equal steps).
    fn first_difference(&self, f: &TimeFunction, t: f64) -> f64 {
        let (tm, tp) = self.stencil(t);
        let (hm, hp) = (t - tm, tp - t);
        let (fm, f0, fp) = (f.eval(tm), f.eval(t), f.eval(tp));
        // exact for quadratics; equals (fp − fm)/(2h) when hm == hp
        (hm * hm * (fp - f0) + hp * hp * (f0 - fm)) / (hm * hp * (hm + hp))
    }

    /// Checks `epsilon`, then samples the value, rate and acceleration at `n_samples` evenly
    /// spaced times from `t0` to `t_end` (both included; only `t0` when `n_samples == 1`) and
    /// refuses the first that is NaN or infinite. Call it before a run.
    pub fn check_finite_on(
        &self,
        t0: f64,
        t_end: f64,
        n_samples: usize,
    ) -> Result<(), FunctionError> {
        if !(self.epsilon.is_finite() && self.epsilon > 0.0 && self.epsilon < 1.0) {
            return Err(FunctionError::InvalidEpsilon {
                epsilon: self.epsilon,
            });
        }
        for k in 0..n_samples {
            let t = if n_samples == 1 {
                t0
            } else {
                t0 + (t_end - t0) * (k as f64 / (n_samples - 1) as f64)
            };
            for (quantity, result) in [
                ("value", self.value(t)),
                ("rate", self.rate(t)),
                ("acceleration", self.acceleration(t)),
            ] {
                if !result.is_finite() {
                    return Err(FunctionError::NonFinite {
                        quantity,
                        t,
                        result,
                    });
                }
            }
        }
        // A pole between two samples (`1/(t - 0.3333)`) is finite at every sample; it shows as
        // a change of sign, which is bisected: a jump stays bounded, a pole does not.
        let sample = |k: usize| t0 + (t_end - t0) * (k as f64 / (n_samples - 1) as f64);
        for (quantity, f) in [
            ("value", Some(&self.value)),
            ("rate", self.rate.as_ref()),
            ("acceleration", self.acceleration.as_ref()),
        ] {
            let Some(TimeFunction::Expression(e)) = f else {
                continue;
            };
            for k in 1..n_samples {
                if let Some(t) = pole_between(e, sample(k - 1), sample(k)) {
                    return Err(FunctionError::Pole { quantity, t });
                }
            }
        }
        Ok(())
    }
}

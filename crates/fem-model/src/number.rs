//! Numbers in input files as the file writes them: a quoted `"0.01"` is text, not a number.
//!
//! A YAML reader converts a quoted scalar to a number when a number is asked for, so
//! `dt: "0.01"` would silently be 0.01 (and `elements: "1e12"` a count). The input sections
//! read every number through [`strict`] instead (`#[serde(deserialize_with = "strict")]`),
//! which asks the reader for whatever the file holds and takes only a number:
//!
//! * a real (`f64`): any number, written as an integer or not (`.inf` and `.nan` too, which
//!   the sections' range checks then refuse with their field's name);
//! * a count or index (`usize`, `u64`, `u32`): a whole number ≥ 0, also when written with an
//!   exponent (`1e6`); anything beyond the type's range is refused here, anything large within
//!   it by the memory estimate of its section;
//! * text (quoted or not), a boolean, a list or a mapping where a number belongs: refused,
//!   saying what was found.
//!
//! The same holds inside `Option`, `Vec` and arrays of numbers ([`StrictForm`]).

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserialize, Deserializer, Visitor};

/// Deserializes a number, or an `Option`, `Vec` or array of numbers, refusing text where a
/// number belongs: `#[serde(deserialize_with = "crate::number::strict")]`.
pub fn strict<'de, D: Deserializer<'de>, T: StrictForm>(deserializer: D) -> Result<T, D::Error> {
    T::Form::deserialize(deserializer).map(T::from_form)
}

/// A type read through [`strict`]: its form in the file, and the value from it.
pub trait StrictForm: Sized {
    /// What is deserialized.
    type Form: for<'de> Deserialize<'de>;
    /// The value.
    fn from_form(form: Self::Form) -> Self;
}

/// One number read as the file writes it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Strict<T>(pub T);

/// A kind of number: how it is described, and how it is made from what the file holds.
pub trait Number: Sized + Copy {
    /// `a number`, `a whole number`.
    const EXPECTING: &'static str;
    /// From an integer in the file.
    fn from_i128(v: i128) -> Result<Self, String>;
    /// From a real in the file.
    fn from_f64(v: f64) -> Result<Self, String>;
}

impl Number for f64 {
    const EXPECTING: &'static str = "a number";
    fn from_i128(v: i128) -> Result<Self, String> {
        Ok(v as f64)
    }
    fn from_f64(v: f64) -> Result<Self, String> {
        Ok(v)
    }
}

macro_rules! whole_number {
    ($($t:ty),*) => {$(
        impl Number for $t {
            const EXPECTING: &'static str = "a whole number (0, 1, 2, …)";
            fn from_i128(v: i128) -> Result<Self, String> {
                <$t>::try_from(v).map_err(|_| {
                    if v < 0 {
                        format!("expected a whole number of at least 0, found {v}")
                    } else {
                        format!("expected a whole number of at most {}, found {v}", <$t>::MAX)
                    }
                })
            }
            fn from_f64(v: f64) -> Result<Self, String> {
                if v.is_finite() && v.fract() == 0.0 && v >= 0.0 && v <= <$t>::MAX as f64 {
                    // Exact below 2^53; a larger count is refused by its memory estimate.
                    Ok(v as $t)
                } else if v.is_finite() && v.fract() == 0.0 && v >= 0.0 {
                    Err(format!("expected a whole number of at most {}, found {v:e}", <$t>::MAX))
                } else {
                    Err(format!("expected a whole number (0, 1, 2, …), found {v}"))
                }
            }
        }
    )*};
}
whole_number!(usize, u64, u32);

impl<'de, T: Number> Deserialize<'de> for Strict<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct NumberVisitor<T>(PhantomData<T>);
        impl<'v, T: Number> Visitor<'v> for NumberVisitor<T> {
            type Value = Strict<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(T::EXPECTING)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                T::from_i128(v.into()).map(Strict).map_err(E::custom)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                T::from_i128(v.into()).map(Strict).map_err(E::custom)
            }
            fn visit_i128<E: de::Error>(self, v: i128) -> Result<Self::Value, E> {
                T::from_i128(v).map(Strict).map_err(E::custom)
            }
            fn visit_u128<E: de::Error>(self, v: u128) -> Result<Self::Value, E> {
                T::from_i128(i128::try_from(v).unwrap_or(i128::MAX))
                    .map(Strict)
                    .map_err(E::custom)
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
                T::from_f64(v).map(Strict).map_err(E::custom)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                let looks_numeric = v.trim().parse::<f64>().is_ok();
                Err(E::custom(if looks_numeric {
                    format!(
                        "expected {}, found the quoted text \"{v}\": remove the quotes (a quoted value is text)",
                        T::EXPECTING
                    )
                } else {
                    format!("expected {}, found the text \"{v}\"", T::EXPECTING)
                }))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
                Err(E::custom(format!("expected {}, found {v}", T::EXPECTING)))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Err(E::custom(format!(
                    "expected {}, found nothing (an empty value or null)",
                    T::EXPECTING
                )))
            }
            fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
                self.visit_unit()
            }
            fn visit_seq<A: de::SeqAccess<'v>>(self, _: A) -> Result<Self::Value, A::Error> {
                Err(de::Error::custom(format!(
                    "expected {}, found a list",
                    T::EXPECTING
                )))
            }
            fn visit_map<A: de::MapAccess<'v>>(self, _: A) -> Result<Self::Value, A::Error> {
                Err(de::Error::custom(format!(
                    "expected {}, found a mapping",
                    T::EXPECTING
                )))
            }
        }
        deserializer.deserialize_any(NumberVisitor(PhantomData))
    }
}

macro_rules! strict_number {
    ($($t:ty),*) => {$(
        impl StrictForm for $t {
            type Form = Strict<$t>;
            fn from_form(form: Strict<$t>) -> Self {
                form.0
            }
        }
    )*};
}
strict_number!(f64, usize, u64, u32);

impl<T: StrictForm> StrictForm for Option<T> {
    type Form = Option<T::Form>;
    fn from_form(form: Self::Form) -> Self {
        form.map(T::from_form)
    }
}

impl<T: StrictForm> StrictForm for Vec<T> {
    type Form = Vec<T::Form>;
    fn from_form(form: Self::Form) -> Self {
        form.into_iter().map(T::from_form).collect()
    }
}

impl<T: StrictForm, const N: usize> StrictForm for [T; N]
where
    [T::Form; N]: for<'de> Deserialize<'de>,
{
    type Form = [T::Form; N];
    fn from_form(form: Self::Form) -> Self {
        form.map(T::from_form)
    }
}

/// A number as a message shows it to a person: six significant digits, trailing zeros
/// dropped, plain decimals from `10⁻⁴` to `10⁶` and an exponent outside
/// (`0.009` for `9.000000000000001e-3`, `1.23457e-7`, `2.5e8`). Non-finite values as Rust
/// writes them (`NaN`, `inf`).
pub fn shown(x: f64) -> String {
    if !x.is_finite() {
        return format!("{x}");
    }
    if x == 0.0 {
        return "0".into();
    }
    let trim = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    let a = x.abs();
    if (1e-4..1e6).contains(&a) {
        let decimals = (5 - a.log10().floor() as i32).max(0) as usize;
        let s = trim(&format!("{x:.decimals$}"));
        // Rounding may carry into a seventh digit (999999.7 → 1000000): fine as it is.
        if s == "-0" { "0".into() } else { s }
    } else {
        let s = format!("{x:.5e}");
        let (mantissa, exponent) = s.split_once('e').unwrap_or((&s, "0"));
        format!("{}e{exponent}", trim(mantissa))
    }
}

/// A vector as a message shows it: `[0, 0, -9.8696]` ([`shown`] for each entry).
pub fn shown_list(v: &[f64]) -> String {
    format!(
        "[{}]",
        v.iter().map(|&x| shown(x)).collect::<Vec<_>>().join(", ")
    )
}

#[cfg(test)]
mod shown_tests {
    use super::shown;

    #[test]
    fn numbers_are_shown_rounded_to_six_digits() {
        for (x, s) in [
            (9.000000000000001e-3, "0.009"),
            (0.1 + 0.2, "0.3"),
            (1.0, "1"),
            (-2.5, "-2.5"),
            (123456.7, "123457"),
            (1.0 / 3.0, "0.333333"),
            (1.2345678e-7, "1.23457e-7"),
            (2.5e8, "2.5e8"),
            (1e200, "1e200"),
            (0.0, "0"),
            (f64::INFINITY, "inf"),
        ] {
            assert_eq!(shown(x), s, "{x:e}");
        }
    }
}

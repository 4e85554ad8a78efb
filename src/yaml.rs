//! The YAML reader's settings, and its messages in the terms of an input file.
//!
//! The reader (`serde-saphyr`) reports line, column and a snippet of the file; its own
//! wording speaks of its API (`set DuplicateKeyPolicy in Options`, `use from_str_multiple`,
//! `externally tagged enum`, `invalid u64`). [`InputMessages`] says the same things as a user
//! of `fem` needs them: what was expected where, what was found, and what to do.

use std::borrow::Cow;
use std::path::Path;

use serde_saphyr::{Error, MessageFormatter};

use crate::input::{Input, ModelRegistry};

/// Parses an input file's text; the error is the message to show (line, column, what was
/// expected, a snippet of the file).
pub(crate) fn parse<M: ModelRegistry>(text: &str, path: &Path) -> Result<Input<M>, String> {
    serde_saphyr::from_str::<Input<M>>(text).map_err(|e| {
        let name = path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        e.render_with_formatter(&InputMessages)
            .trim_start_matches("error: ")
            .replace("<input>", &name)
    })
}

/// The reader's messages reworded for input files; the rest are the reader's own (which
/// already name the field, the expected values and what was found).
struct InputMessages;

impl MessageFormatter for InputMessages {
    fn format_message<'a>(&self, err: &'a Error) -> Cow<'a, str> {
        match err {
            Error::WithSnippet { error, .. } => self.format_message(error),
            Error::DuplicateMappingKey { key: Some(k), .. } => Cow::Owned(format!(
                "the key '{k}' is given twice here: give each key once"
            )),
            Error::DuplicateMappingKey { key: None, .. } => {
                Cow::Borrowed("a key is given twice here: give each key once")
            }
            Error::MultipleDocuments { .. } => Cow::Borrowed(
                "a second YAML document starts here ('---'): an input file holds one run; remove the '---' and what follows, or split the file",
            ),
            Error::Unexpected { expected, .. } => Cow::Owned(format!(
                "expected {} here",
                match *expected {
                    "mapping start" => "a mapping (indented 'key: value' lines or { key: value })",
                    "sequence start" => "a list (lines starting with '- ' or [a, b])",
                    "enum variant" => {
                        "one of the choices (its name, or a mapping with its name as the key)"
                    }
                    other => other,
                }
            )),
            Error::ExpectedStringKeyForExternallyTaggedEnum { .. } => Cow::Borrowed(
                "expected the name of one of the choices here (a word such as 'line' or 'string'), found a list or a mapping",
            ),
            Error::ExternallyTaggedEnumExpectedScalarOrMapping { .. } => Cow::Borrowed(
                "expected one of the choices here: its name, or a mapping with its name as the key",
            ),
            Error::UnexpectedValueForUnitEnumVariant { .. } => Cow::Borrowed(
                "this choice takes no settings: give its name alone (for example 'free', not { free: ... })",
            ),
            Error::ExpectedMappingEndAfterEnumVariantValue { .. } => Cow::Borrowed(
                "only one of the choices may be given here, and this mapping names more than one: keep one key",
            ),
            Error::UnexpectedValueForUnit { .. } => Cow::Borrowed(
                "this value cannot be read here (a YAML tag such as '!name' before it is not understood): write the value alone",
            ),
            Error::TaggedEnumMismatch { tagged, .. } => Cow::Owned(format!(
                "the tag '!{tagged}' is not one of the choices here: write the choice's name, without '!'"
            )),
            Error::UnsupportedTag { tag, .. } => Cow::Owned(format!(
                "the YAML tag `{tag}` is not understood here: write the value without it"
            )),
            Error::InvalidScalar { ty, .. } => Cow::Owned(format!(
                "expected {}",
                match *ty {
                    "u8" | "u16" | "u32" | "u64" | "u128" | "usize" => {
                        "a whole number (0, 1, 2, …)"
                    }
                    "i8" | "i16" | "i32" | "i64" | "i128" | "isize" => "a whole number",
                    "f32" | "f64" | "floating point" => "a number",
                    "bool" | "boolean" => "true or false",
                    "enum variant" => {
                        "one of the choices, by its name (a YAML tag such as '!!null' cannot stand for one)"
                    }
                    other => other,
                }
            )),
            Error::SerdeInvalidType {
                unexpected,
                expected,
                ..
            } => Cow::Owned(format!("expected {expected}, found {}", found(unexpected))),
            Error::SerdeInvalidValue {
                unexpected,
                expected,
                ..
            } => Cow::Owned(format!("expected {expected}, found {}", found(unexpected))),
            Error::SerdeInvalidLength { len, expected, .. } => {
                Cow::Owned(format!("expected {expected}, found {len} entries"))
            }
            Error::SerdeUnknownVariant {
                variant, expected, ..
            } => Cow::Owned(format!(
                "unknown choice `{variant}`, expected one of {}",
                expected.join(", ")
            )),
            Error::SerdeUnknownField {
                field, expected, ..
            } => Cow::Owned(format!(
                "unknown key `{field}`, expected one of {}",
                expected.join(", ")
            )),
            Error::SerdeMissingField { field, .. } => Cow::Owned(format!("missing key `{field}`")),
            Error::NonFiniteFloat { value, .. } => Cow::Owned(format!(
                "expected a finite number, found {value} ({})",
                if value.to_ascii_lowercase().contains("nan") {
                    "not a number"
                } else {
                    "infinity"
                }
            )),
            Error::Budget { breach, .. } => Cow::Owned(budget_message(breach)),
            Error::Eof { .. } => Cow::Borrowed("the file ends in the middle of a value"),
            Error::NullIntoString { .. } => {
                Cow::Borrowed("expected text here, found nothing (an empty value or null)")
            }
            _ => Cow::Owned(in_users_words(
                &serde_saphyr::DefaultMessageFormatter.format_message(err),
            )),
        }
    }
}

/// The reader's and its scanner's remaining messages in the words of an input file: whole
/// messages that say something else to a person, then the scanner's terms for the forms of
/// YAML (`flow mapping` is `{ … }`, `block sequence` an indented list, a `node` a value).
fn in_users_words(message: &str) -> String {
    let whole: [(&str, &str); 7] = [
        (
            "recursion limit exceeded",
            "lists and mappings are nested too deep here for an input file",
        ),
        (
            "tabs disallowed within this context (block indentation)",
            "a tab here: indent with spaces (YAML does not allow tabs in indentation)",
        ),
        (
            "tabs disallowed in this context",
            "a tab here: use spaces (YAML does not allow tabs in this place)",
        ),
        (
            "did not find expected <document start>",
            "the content does not start where a YAML document may: after a directive ('%YAML', \
             '%TAG') a line '---' must come first — remove the directive (an input file needs none)",
        ),
        (
            "expected enum variant",
            "expected one of the choices here (its name, or a mapping with its name as the key)",
        ),
        (
            "unexpected end of input",
            "the file ends in the middle of a value",
        ),
        ("input is not valid UTF-8", "the file is not text (UTF-8)"),
    ];
    if let Some((_, said)) = whole.iter().find(|(m, _)| *m == message) {
        return (*said).to_string();
    }
    let mut out = message.to_string();
    for (word, said) in [
        ("implicit flow mapping", "{ } mapping"),
        ("flow mapping", "{ } mapping"),
        ("flow sequence", "[ ] list"),
        ("flow collection", "[ ] list or { } mapping"),
        ("block mapping", "indented mapping"),
        ("block sequence", "indented list"),
        ("block collection", "indented list"),
        ("block scalar", "multi-line text"),
        ("node content", "a value"),
        ("parsing a node", "reading a value"),
        ("scanning", "reading"),
        ("parsing", "reading"),
        ("EOF", "the end of the file"),
        ("eof", "the end of the file"),
        ("scalar", "value"),
    ] {
        out = out.replace(word, said);
    }
    out
}

/// What the reader's limits on a document (which bound the memory of parsing it) refused,
/// in the terms of an input file.
fn budget_message(breach: &serde_saphyr::budget::BudgetBreach) -> String {
    use serde_saphyr::budget::BudgetBreach as B;
    let csv = "a large table belongs in a CSV file (dirichlet value: { csv: FILE })";
    match breach {
        B::Nodes { nodes } => format!(
            "the file holds more than {} values (keys, numbers, list entries), more than an input file may: {csv}",
            nodes.saturating_sub(1)
        ),
        B::Depth { depth } => format!(
            "lists and mappings are nested {depth} deep here, deeper than an input file may nest them"
        ),
        B::Aliases { .. } | B::Anchors { .. } | B::AliasAnchorRatio { .. } | B::MergeKeys { .. } => {
            "the file repeats too much through anchors and aliases (&name, *name, <<): write the values out"
                .into()
        }
        B::Documents { .. } => {
            "a second YAML document starts here ('---'): an input file holds one run".into()
        }
        _ => format!("the file is larger than an input file may be: {csv}"),
    }
}

/// serde's description of an unexpected value (`sequence`, `string "x"`, `integer `5``), as
/// the file shows it.
fn found(unexpected: &str) -> String {
    let unexpected = unexpected.trim();
    if let Some(s) = unexpected.strip_prefix("string ") {
        return format!("the text {s}");
    }
    for (word, said) in [
        ("integer ", "the number "),
        ("floating point ", "the number "),
        ("boolean ", ""),
        ("character ", "the text "),
    ] {
        if let Some(v) = unexpected.strip_prefix(word) {
            return format!("{said}{}", v.trim_matches('`'));
        }
    }
    match unexpected {
        "sequence" => "a list".into(),
        "map" => "a mapping".into(),
        "unit value" | "unit" | "null" => "nothing (an empty value or null)".into(),
        "Option value" => "an optional value".into(),
        "newtype struct" | "unit variant" | "newtype variant" | "tuple variant"
        | "struct variant" => "a different form".into(),
        other => other.to_string(),
    }
}

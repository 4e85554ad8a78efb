//! The YAML parser's settings and its messages in the terms of the input file.

use crate::input::Input;

/// Parses an input file's text; the error is the message to show (with line and column).
pub(crate) fn parse(text: &str) -> Result<Input, String> {
    serde_saphyr::from_str::<Input>(text)
        .map_err(|e| e.to_string().trim_start_matches("error: ").to_string())
}

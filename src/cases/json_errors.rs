//! serde_json's errors as case problems report them: the message without its position,
//! plainer words for Python's NaN and Infinity, and positions as 1-based `u32`s.

use crate::cases::documents::NESTED_TOO_DEEPLY;

/// serde_json's message, without its position suffix, and with a plainer word for the
/// non-JSON number literals people paste from Python.
pub(crate) fn json_error_message_at(error: &serde_json::Error, text: &str) -> String {
    let line_text = text
        .split('\n')
        .nth(error.line().saturating_sub(1))
        .unwrap_or("");
    let rest = line_text
        .get(error.column().saturating_sub(1)..)
        .unwrap_or("");
    let rest = rest.trim_start_matches('-');
    if ["NaN", "Infinity", "inf", "nan"]
        .iter()
        .any(|literal| rest.starts_with(literal))
    {
        return "NaN and Infinity are not JSON numbers (case-v1 cannot hash them): use null or a string".into();
    }
    json_error_message(error)
}

pub(crate) fn json_error_message(error: &serde_json::Error) -> String {
    let message = error.to_string();
    // serde_json appends " at line L column C"; the position is reported separately.
    let message = match message.rfind(" at line ") {
        Some(index) => &message[..index],
        None => &message,
    };
    if message == "recursion limit exceeded" {
        return NESTED_TOO_DEEPLY.to_owned();
    }
    message.to_owned()
}

pub(crate) fn line_u32(line: usize) -> u32 {
    u32::try_from(line).unwrap_or(u32::MAX).max(1)
}

pub(crate) fn column_u32(column: usize) -> u32 {
    u32::try_from(column).unwrap_or(u32::MAX).max(1)
}

//! The members of a case evalock itself interprets (`id`, `version`, `retired`,
//! `grader_version`, `n`), checked with a message that says what to fix.

use super::{CaseMembers, CASE_WITHOUT_ID};
use serde_json::Value;
use std::borrow::Cow;

/// The members of a case that evalock itself interprets, borrowed from the case.
pub(crate) struct CaseFields<'a> {
    pub id: &'a str,
    pub version: u64,
    pub retired: bool,
    pub grader_version: Option<Cow<'a, str>>,
}

/// The largest case version: every version and its successor are exact JSON numbers
/// (2^53 − 1), so "bump to N + 1" is always possible and always means N + 1.
pub const MAX_CASE_VERSION: u64 = (1 << 53) - 1;

/// Validates `id`, `version`, `retired`, `grader_version` and `n`; the error says what to fix.
pub(crate) fn case_fields(map: &(impl CaseMembers + ?Sized)) -> Result<CaseFields<'_>, String> {
    let id = match map.member("id") {
        Some(Value::String(id)) => id.as_str(),
        Some(_) => return Err("`id` must be a string".into()),
        None => return Err(CASE_WITHOUT_ID.into()),
    };
    if id.trim().is_empty() {
        return Err("`id` must not be empty or blank".into());
    }
    // Nearly every id is ASCII: one pass over its bytes answers both questions below.
    let ascii = id.is_ascii();
    let control = if ascii {
        id.bytes().any(|byte| byte.is_ascii_control())
    } else {
        id.chars().any(char::is_control)
    };
    if control {
        return Err(format!(
            "`id` {id:?} contains control characters (newline, NUL, ...): use a plain identifier"
        ));
    }
    if !ascii && id.chars().any(is_invisible) {
        return Err(format!(
            "`id` {id:?} contains invisible characters (zero-width or bidirectional controls): a reviewer cannot tell it from another id; use a plain identifier"
        ));
    }
    let version_error =
        || format!("case `{id}`: `version` must be a whole number from 1 to {MAX_CASE_VERSION}");
    let version = match map.member("version") {
        None => 1,
        Some(Value::Number(number)) => match number.as_u64() {
            Some(version) if (1..=MAX_CASE_VERSION).contains(&version) => version,
            _ => return Err(version_error()),
        },
        Some(_) => return Err(version_error()),
    };
    let retired = match map.member("retired") {
        None => false,
        Some(Value::Bool(retired)) => *retired,
        Some(_) => return Err(format!("case `{id}`: `retired` must be true or false")),
    };
    let grader_version = match map.member("grader_version") {
        None => None,
        Some(Value::String(text)) => Some(Cow::Borrowed(text.as_str())),
        Some(Value::Number(number)) => Some(Cow::Owned(number.to_string())),
        Some(_) => return Err(format!("case `{id}`: `grader_version` must be a string")),
    };
    if let Some(samples) = map.member("n") {
        if !samples.as_u64().is_some_and(|n| (1..=1000).contains(&n)) {
            return Err(format!(
                "case `{id}`: `n` must be an integer from 1 to 1000"
            ));
        }
    }
    Ok(CaseFields {
        id,
        version,
        retired,
        grader_version,
    })
}

/// Characters that change nothing a reader sees, or reorder what they see: Unicode format
/// characters used as zero-width joiners, spaces and marks, and bidirectional controls.
/// Two ids that differ only by them look the same in a diff, a lock and a review comment.
fn is_invisible(character: char) -> bool {
    matches!(
        character,
        '\u{AD}'
            | '\u{61C}'
            | '\u{180E}'
            | '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{206F}'
            | '\u{FEFF}'
            | '\u{FFF9}'..='\u{FFFB}'
    )
}

//! toml's parse errors reworded for the person at the terminal: plain words for serde's
//! type names, a "did you mean" for a mistyped key, and the `[[table]]` hint.

use std::ops::Range;

/// serde's names for the number types (`expected u32`) said as a person would.
fn in_plain_words(message: &str) -> String {
    let Some((before, expected)) = message.rsplit_once("expected ") else {
        return message.to_owned();
    };
    let plain = match expected {
        "u8" | "u16" | "u32" | "u64" | "usize" => "a whole number, 0 or more",
        "i8" | "i16" | "i32" | "i64" | "isize" => "a whole number",
        "f32" | "f64" => "a number",
        _ => return message.to_owned(),
    };
    format!("{before}expected {plain}")
}

/// serde's "unknown field `promt`, expected one of `name`, `cases`, `prompt`, …", ending in
/// "; did you mean `prompt`?" when one expected key is a slip away from the unknown one.
pub(super) fn with_suggestion(message: &str) -> String {
    let Some(rest) = message.strip_prefix("unknown field `") else {
        return in_plain_words(message);
    };
    let Some((unknown, expected)) = rest.split_once('`') else {
        return message.to_owned();
    };
    let closest = expected
        .split('`')
        .skip(1)
        .step_by(2)
        .map(|key| {
            // `timeout` for `timeout_secs`: a key cut short is as near as a typo.
            let cut_short = unknown.chars().count() >= 4 && key.starts_with(unknown);
            let distance = if cut_short {
                1
            } else {
                edit_distance(unknown, key)
            };
            (distance, key)
        })
        .filter(|(distance, key)| *distance <= 2.max(key.len() / 3))
        .min();
    match closest {
        Some((_, key)) => format!("{message}; did you mean `{key}`?"),
        None => message.to_owned(),
    }
}

/// Levenshtein distance over characters: insertions, deletions and substitutions.
fn edit_distance(one: &str, two: &str) -> usize {
    let two: Vec<char> = two.chars().collect();
    let mut previous: Vec<usize> = (0..=two.len()).collect();
    for (row, first) in one.chars().enumerate() {
        let mut current = vec![row + 1];
        for (column, second) in two.iter().enumerate() {
            let substitution = previous[column] + usize::from(first != *second);
            current.push(
                substitution
                    .min(previous[column + 1] + 1)
                    .min(current[column] + 1),
            );
        }
        previous = current;
    }
    previous[two.len()]
}

/// The name of the `[name]` header at `span` when serde's `message` says a map was found
/// where a sequence was expected: a key that takes a list of tables (`[[suite]]`,
/// `[[skills.acknowledge]]`) written as one table.
pub(super) fn single_table_header<'a>(
    text: &'a str,
    span: Range<usize>,
    message: &str,
) -> Option<&'a str> {
    if !message.starts_with("invalid type: map, expected a sequence") {
        return None;
    }
    let header = text
        .get(span.start..)?
        .strip_prefix('[')
        .filter(|rest| !rest.starts_with('['))?;
    let name = header.split(']').next()?.trim();
    (!name.is_empty() && !name.contains('\n')).then_some(name)
}

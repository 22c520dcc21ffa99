//! JSON and YAML case documents (not JSONL): the top-level elements of a file with the
//! line span of each, read strictly (duplicate keys and non-finite numbers refused), and
//! parse errors worded for the person who wrote the file.

use super::cases::{column_u32, json_error_message_at, line_u32};
use super::strict_json::{duplicate_key_position, StrictValue};
use crate::text::{json_error_position, LineIndex};
use serde::de::{Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;
use std::fmt;

/// A top-level element of a case file: its value, its line span and, for
/// object-of-objects files, the key it was listed under.
pub(super) struct Element {
    pub value: Value,
    pub line: u32,
    pub end_line: u32,
    pub key: Option<String>,
}

type Position = (u32, u32, String);

pub(super) fn json_elements(text: &str) -> Result<Vec<Element>, Position> {
    let StrictValue(document) = serde_json::from_str::<StrictValue>(text).map_err(|error| {
        let (line, column) = duplicate_key_position(text, &error)
            .unwrap_or_else(|| json_error_position(text.as_bytes(), &error));
        (line, column, json_error_message_at(&error, text))
    })?;
    let lines = LineIndex::new(text.as_bytes());
    let spans = top_level_spans(text.as_bytes());
    let span_lines = |index: usize| {
        spans
            .get(index)
            .map(|(start, end)| (lines.line_of(*start), lines.line_of(*end)))
            .unwrap_or((1, lines.line_count()))
    };
    match document {
        Value::Array(items) => Ok(items
            .into_iter()
            .enumerate()
            .map(|(index, value)| {
                let (line, end_line) = span_lines(index);
                Element {
                    value,
                    line,
                    end_line,
                    key: None,
                }
            })
            .collect()),
        Value::Object(map) if map.contains_key("id") => Ok(vec![Element {
            value: Value::Object(map),
            line: 1,
            end_line: lines.line_count(),
            key: None,
        }]),
        Value::Object(map) => Ok(map
            .into_iter()
            .enumerate()
            .map(|(index, (key, value))| {
                let (line, end_line) = span_lines(index);
                Element {
                    value,
                    line,
                    end_line,
                    key: Some(key),
                }
            })
            .collect()),
        _ => Err((
            1,
            1,
            "a JSON case file must hold an array of cases, an object of cases, or one case".into(),
        )),
    }
}

/// Byte spans (first and last byte) of the values directly inside the top-level array or
/// object. One pass, no recursion, aware of strings and escapes.
fn top_level_spans(bytes: &[u8]) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    let mut top_is_object = false;
    let mut awaiting_value = false;
    let mut current_start: Option<usize> = None;
    let mut last_content = 0usize;
    for (position, &byte) in bytes.iter().enumerate() {
        if in_string {
            last_content = position;
            if escaped {
                escaped = false;
            } else if byte == b'\\' {
                escaped = true;
            } else if byte == b'"' {
                in_string = false;
            }
            continue;
        }
        if byte.is_ascii_whitespace() {
            continue;
        }
        if depth == 1 && awaiting_value && !matches!(byte, b',' | b']' | b'}' | b':') {
            current_start = Some(position);
            awaiting_value = false;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth == 1 {
                    top_is_object = byte == b'{';
                    awaiting_value = !top_is_object;
                }
            }
            b']' | b'}' => {
                if depth == 1 {
                    if let Some(start) = current_start.take() {
                        spans.push((start, last_content));
                    }
                }
                depth = depth.saturating_sub(1);
            }
            b',' if depth == 1 => {
                if let Some(start) = current_start.take() {
                    spans.push((start, last_content));
                }
                awaiting_value = !top_is_object;
            }
            b':' if depth == 1 && top_is_object => awaiting_value = true,
            _ => {}
        }
        last_content = position;
    }
    spans
}

fn yaml_options() -> serde_saphyr::Options {
    let mut options = serde_saphyr::Options::default();
    options.with_snippet = false;
    options
}

fn yaml_error(error: &serde_saphyr::Error) -> Position {
    let (line, column) = error
        .location()
        .map(|location| {
            (
                line_u32(location.line() as usize),
                column_u32(location.column() as usize),
            )
        })
        .unwrap_or((1, 1));
    let message = error.to_string();
    let first_line = message.lines().next().unwrap_or("invalid YAML");
    (
        line.max(1),
        column.max(1),
        yaml_message_for_people(first_line),
    )
}

/// serde-saphyr speaks to programmers ("set DuplicateKeyPolicy in Options"); say instead
/// what is wrong in the file and how to fix it. The position is reported separately.
pub(crate) fn yaml_message_for_people(message: &str) -> String {
    let message = match message.find(" at line ") {
        Some(index) => &message[..index],
        None => message,
    };
    if let Some(rest) = message.strip_prefix("duplicate mapping key: ") {
        let key = rest.split(", set ").next().unwrap_or(rest);
        return format!("duplicate key `{key}`: keep one of them");
    }
    if message.contains("non-finite float") {
        return NON_FINITE_MESSAGE.to_owned();
    }
    if message.contains("budget breached: Depth") || message.contains("recursion limit exceeded") {
        return NESTED_TOO_DEEPLY.to_owned();
    }
    if message.contains("budget breached") {
        return "too many nodes (aliases expand to more values than a case may hold): write the values out instead of repeating aliases".to_owned();
    }
    if message.contains("recursive references") {
        return "an alias refers to itself (a recursive anchor): a case must be a finite tree"
            .to_owned();
    }
    if message.contains("multiple YAML documents") {
        return "more than one YAML document (`---`): keep one list of cases per file".to_owned();
    }
    message.to_owned()
}

pub(super) const NESTED_TOO_DEEPLY: &str =
    "value nested too deeply (past the parser's depth limit): flatten it";
const NON_FINITE_MESSAGE: &str =
    "NaN and Infinity are not allowed: JSON and case-v1 cannot represent them";

pub(super) fn yaml_elements(text: &str) -> Result<Vec<Element>, Position> {
    let StrictValue(document) =
        serde_saphyr::from_str_with_options::<StrictValue>(text, yaml_options())
            .map_err(|error| yaml_error(&error))?;
    let line_count = LineIndex::new(text.as_bytes()).line_count();
    let mut elements: Vec<Element> = match document {
        Value::Array(_) => {
            let items: Vec<serde_saphyr::Spanned<StrictValue>> =
                serde_saphyr::from_str_with_options(text, yaml_options())
                    .map_err(|error| yaml_error(&error))?;
            items
                .into_iter()
                .map(|item| {
                    let line = line_u32(item.referenced.line() as usize).max(1);
                    Element {
                        value: item.value.0,
                        line,
                        end_line: line,
                        key: None,
                    }
                })
                .collect()
        }
        Value::Object(map) if map.contains_key("id") => {
            vec![Element {
                value: Value::Object(map),
                line: 1,
                end_line: line_count,
                key: None,
            }]
        }
        Value::Object(_) => {
            let entries: KeyedEntries = serde_saphyr::from_str_with_options(text, yaml_options())
                .map_err(|error| yaml_error(&error))?;
            entries
                .0
                .into_iter()
                .map(|(key, line, value)| Element {
                    value,
                    line,
                    end_line: line,
                    key: Some(key),
                })
                .collect()
        }
        Value::Null => Vec::new(),
        _ => {
            return Err((
                1,
                1,
                "a YAML case file must hold a list of cases, a mapping of cases, or one case"
                    .into(),
            ))
        }
    };
    close_yaml_spans(text, &mut elements, line_count);
    Ok(elements)
}

/// A YAML element runs until the line before the next one starts, minus trailing blank
/// and comment lines.
fn close_yaml_spans(text: &str, elements: &mut [Element], line_count: u32) {
    let lines: Vec<&str> = text.split('\n').collect();
    let starts: Vec<u32> = elements.iter().map(|element| element.line).collect();
    for (index, element) in elements.iter_mut().enumerate() {
        if element.end_line != element.line || starts.len() <= 1 && line_count <= 1 {
            continue;
        }
        let mut end = starts
            .get(index + 1)
            .map(|next| next.saturating_sub(1))
            .unwrap_or(line_count);
        while end > element.line {
            let line_text = lines
                .get(end as usize - 1)
                .map(|line| line.trim())
                .unwrap_or("");
            if line_text.is_empty() || line_text.starts_with('#') {
                end -= 1;
            } else {
                break;
            }
        }
        element.end_line = end.max(element.line);
    }
}

/// The entries of a top-level YAML mapping, in order, with the line of each value.
struct KeyedEntries(Vec<(String, u32, Value)>);

impl<'de> Deserialize<'de> for KeyedEntries {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct EntriesVisitor;
        impl<'de> Visitor<'de> for EntriesVisitor {
            type Value = KeyedEntries;
            fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                formatter.write_str("a mapping of cases")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<KeyedEntries, A::Error> {
                let mut entries = Vec::new();
                while let Some(key) = access.next_key::<serde_saphyr::Spanned<String>>()? {
                    let value: StrictValue = access.next_value()?;
                    let line = line_u32(key.referenced.line() as usize).max(1);
                    entries.push((key.value, line, value.0));
                }
                Ok(KeyedEntries(entries))
            }
        }
        deserializer.deserialize_map(EntriesVisitor)
    }
}

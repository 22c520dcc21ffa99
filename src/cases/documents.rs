//! JSON and YAML case documents (not JSONL): the top-level elements of a file with the
//! line span of each, read strictly (duplicate keys and non-finite numbers refused), and
//! parse errors worded for the person who wrote the file.

use super::strict_json::{duplicate_key_position, StrictValue, NON_FINITE_MESSAGE};
use crate::cases::{column_u32, json_error_message_at, line_u32};
use crate::text::{json_error_position, LineIndex};
use serde::de::{Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;
use std::fmt;
use std::marker::PhantomData;

/// A top-level element of a case file: its value, its line span and, for
/// object-of-objects files, the key it was listed under.
pub(crate) struct Element {
    pub value: Value,
    pub line: u32,
    pub end_line: u32,
    pub key: Option<String>,
}

type Position = (u32, u32, String);

/// The elements of a case document that could be read, and where the others could not.
pub(super) type Elements = (Vec<Element>, Vec<Position>);

pub(super) fn json_elements(text: &str) -> Result<Elements, Position> {
    let document = match serde_json::from_str::<StrictValue>(text) {
        Ok(StrictValue(document)) => document,
        Err(error) => {
            let (line, column) = duplicate_key_position(text, &error)
                .unwrap_or_else(|| json_error_position(text.as_bytes(), &error));
            let position = (line, column, json_error_message_at(&error, text));
            // A well-formed file with a duplicate key in one case: the other cases load.
            return json_elements_one_by_one(text).ok_or(position);
        }
    };
    let lines = LineIndex::new(text.as_bytes());
    let spans = top_level_spans(text.as_bytes());
    let span_lines = |index: usize| {
        spans
            .get(index)
            .map(|(start, end)| (lines.line_of(*start), lines.line_of(*end)))
            .unwrap_or((1, lines.line_count()))
    };
    let elements = match document {
        Value::Array(items) => items
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
            .collect(),
        Value::Object(map) if map.contains_key("id") => {
            // The case runs from its `{` to its `}`: blank lines around it are not part
            // of it (a review comment spans the case, not the file's last empty line).
            let bytes = text.as_bytes();
            let first = bytes.iter().position(|byte| !byte.is_ascii_whitespace());
            let last = bytes.iter().rposition(|byte| !byte.is_ascii_whitespace());
            vec![Element {
                value: Value::Object(map),
                line: first.map_or(1, |offset| lines.line_of(offset)),
                end_line: last.map_or(1, |offset| lines.line_of(offset)),
                key: None,
            }]
        }
        Value::Object(map) => map
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
            .collect(),
        _ => {
            return Err((
                1,
                1,
                "a JSON case file must hold an array of cases, an object of cases, or one case"
                    .into(),
            ))
        }
    };
    Ok((elements, Vec::new()))
}

/// A file that is well-formed JSON but that the strict reader refuses (a duplicate key
/// inside a case), read one top-level element at a time, so that the refusal is the bad
/// case's alone and the file's other cases load. `None` when that is not possible: the
/// file is no array or object of cases, or its top level itself repeats a key.
fn json_elements_one_by_one(text: &str) -> Option<Elements> {
    let keys: Vec<Option<String>> = match serde_json::from_str::<Value>(text).ok()? {
        Value::Array(items) => items.iter().map(|_| None).collect(),
        Value::Object(map) if !map.contains_key("id") => map.keys().cloned().map(Some).collect(),
        _ => return None,
    };
    let spans = top_level_spans(text.as_bytes());
    if spans.len() != keys.len() {
        return None;
    }
    let lines = LineIndex::new(text.as_bytes());
    let mut elements = Vec::with_capacity(keys.len());
    let mut problems = Vec::new();
    for ((start, end), key) in spans.into_iter().zip(keys) {
        let slice = text.get(start..=end)?;
        let (line, end_line) = (lines.line_of(start), lines.line_of(end));
        match serde_json::from_str::<StrictValue>(slice) {
            Ok(StrictValue(value)) => elements.push(Element {
                value,
                line,
                end_line,
                key,
            }),
            Err(error) => {
                let (slice_line, slice_column) = duplicate_key_position(slice, &error)
                    .unwrap_or_else(|| json_error_position(slice.as_bytes(), &error));
                let column = if slice_line == 1 {
                    lines.position_of(text.as_bytes(), start).1 + slice_column - 1
                } else {
                    slice_column
                };
                problems.push((
                    line + slice_line - 1,
                    column,
                    json_error_message_at(&error, slice),
                ));
            }
        }
    }
    Some((elements, problems))
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

pub(super) fn yaml_options() -> serde_saphyr::Options {
    let mut options = serde_saphyr::Options::default();
    options.with_snippet = false;
    options
}

pub(super) fn yaml_error(error: &serde_saphyr::Error) -> Position {
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

pub(super) fn yaml_elements(text: &str) -> Result<Elements, Position> {
    match yaml_document::<StrictValue>(text, yaml_options()) {
        Ok(elements) => Ok((elements, Vec::new())),
        // A duplicate key or NaN in one case: the other cases load.
        Err(position) => yaml_elements_one_by_one(text).ok_or(position),
    }
}

/// A YAML file whose only faults are inside cases (a duplicate key, NaN), read one
/// top-level element at a time (the lines from where it starts to where the next one
/// does), so that each refusal is its own case's. `None` when the file has another fault,
/// or an element cannot be read on its own lines (an alias to an anchor in another
/// case, several cases on one line): the whole file is then refused as before.
fn yaml_elements_one_by_one(text: &str) -> Option<Elements> {
    // Where each case starts, read leniently: the first of duplicate keys, NaN as null.
    let mut first_wins = yaml_options();
    first_wins.duplicate_keys = serde_saphyr::DuplicateKeyPolicy::FirstWins;
    first_wins.non_finite_float_policy = serde_saphyr::NonFiniteFloatPolicy::PassThrough;
    let outline = yaml_document::<Value>(text, first_wins).ok()?;
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut elements = Vec::with_capacity(outline.len());
    let mut problems = Vec::new();
    for (index, element) in outline.iter().enumerate() {
        let first = element.line as usize;
        let next = outline
            .get(index + 1)
            .map_or(lines.len() + 1, |next| next.line as usize);
        if next <= first {
            return None;
        }
        let mut own_lines = lines.get(first - 1..(next - 1).min(lines.len()))?;
        // The next item's dash, when its value starts on the line below (`-` then `id: …`).
        // It is indented less than that value; a dash indented as much or more is an
        // empty item of a list inside this case, and stays.
        let next_indent = outline
            .get(index + 1)
            .and_then(|next| lines.get((next.line as usize).checked_sub(1)?))
            .map(|line| indentation(line));
        while let (Some((last, before)), Some(next_indent)) = (own_lines.split_last(), next_indent)
        {
            let dash = last.trim();
            if (dash == "-" || dash.starts_with("- #")) && indentation(last) < next_indent {
                own_lines = before;
            } else {
                break;
            }
        }
        let own_lines = own_lines.concat();
        let offset = element.line - 1;
        match yaml_document::<StrictValue>(&own_lines, yaml_options()) {
            // The same element the whole file has: one, on its line, listed under its key,
            // with the value the whole file gives it (which the lenient reading gives too
            // where no key repeats and no number is NaN). An item whose value starts below
            // its dash is read without the dash: `[{id: x}]` or `x: {id: x}` there would
            // otherwise turn an item that is no case into a case the whole file does not have.
            Ok(mut alone)
                if alone.len() == 1
                    && alone[0].line + offset == element.line
                    && alone[0].key == element.key
                    && alone[0].value == element.value =>
            {
                let mut alone = alone.remove(0);
                alone.line = element.line;
                alone.end_line = element.end_line;
                elements.push(alone);
            }
            Err((line, column, message))
                if message.starts_with("duplicate key `") || message == NON_FINITE_MESSAGE =>
            {
                problems.push((line + offset, column, message));
            }
            _ => return None,
        }
    }
    Some((elements, problems))
}

/// The spaces a YAML line is indented by (YAML indents with spaces only).
fn indentation(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

/// How a YAML value is read: strictly ([`StrictValue`]), or leniently ([`Value`]: the first
/// of duplicate keys, NaN and Infinity as null) to find where each case starts.
trait YamlValue: for<'de> Deserialize<'de> {
    fn into_value(self) -> Value;
}

impl YamlValue for StrictValue {
    fn into_value(self) -> Value {
        self.0
    }
}

impl YamlValue for Value {
    fn into_value(self) -> Value {
        self
    }
}

/// The elements of a YAML case file, their spans closed.
fn yaml_document<V: YamlValue>(
    text: &str,
    options: serde_saphyr::Options,
) -> Result<Vec<Element>, Position> {
    let document = serde_saphyr::from_str_with_options::<V>(text, options.clone())
        .map_err(|error| yaml_error(&error))?
        .into_value();
    let line_count = LineIndex::new(text.as_bytes()).line_count();
    let mut elements: Vec<Element> = match document {
        Value::Array(_) => {
            let items: Vec<serde_saphyr::Spanned<V>> =
                serde_saphyr::from_str_with_options(text, options.clone())
                    .map_err(|error| yaml_error(&error))?;
            items
                .into_iter()
                .map(|item| {
                    let line = line_u32(item.referenced.line() as usize).max(1);
                    Element {
                        value: item.value.into_value(),
                        line,
                        end_line: line,
                        key: None,
                    }
                })
                .collect()
        }
        Value::Object(map) if map.contains_key("id") => {
            let line = first_content_line(text).min(line_count).max(1);
            // Its end is found by `close_yaml_spans`, past trailing blank and comment lines.
            vec![Element {
                value: Value::Object(map),
                line,
                end_line: line,
                key: None,
            }]
        }
        Value::Object(_) => {
            let entries: KeyedEntries<V> = serde_saphyr::from_str_with_options(text, options)
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

/// The line a YAML document's content starts on: past the comments, blank lines,
/// directives and the `---` marker a file may open with (`--- {id: a}` starts on its
/// marker's line).
fn first_content_line(text: &str) -> u32 {
    text.split('\n')
        .position(opens_content)
        .map_or(1, |index| line_u32(index + 1))
}

/// A line of a YAML document's prelude that holds content, not only comments, blanks,
/// a directive or the `---` marker.
fn opens_content(line: &str) -> bool {
    let line = line.trim();
    let after_marker = line
        .strip_prefix("---")
        .filter(|rest| rest.is_empty() || rest.starts_with([' ', '\t']));
    let opening = after_marker.map_or(line, str::trim_start);
    !(opening.is_empty() || opening.starts_with('#') || line.starts_with('%'))
}

/// A YAML element runs until the line before the next one starts, minus trailing blank
/// and comment lines.
pub(super) fn close_yaml_spans(text: &str, elements: &mut [Element], line_count: u32) {
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
struct KeyedEntries<V>(Vec<(String, u32, Value)>, PhantomData<V>);

impl<'de, V: YamlValue> Deserialize<'de> for KeyedEntries<V> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct EntriesVisitor<V>(PhantomData<V>);
        impl<'de, V: YamlValue> Visitor<'de> for EntriesVisitor<V> {
            type Value = KeyedEntries<V>;
            fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                formatter.write_str("a mapping of cases")
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut access: A,
            ) -> Result<KeyedEntries<V>, A::Error> {
                let mut entries = Vec::new();
                while let Some(key) = access.next_key::<serde_saphyr::Spanned<String>>()? {
                    let value: V = access.next_value()?;
                    let line = line_u32(key.referenced.line() as usize).max(1);
                    entries.push((key.value, line, value.into_value()));
                }
                Ok(KeyedEntries(entries, PhantomData))
            }
        }
        deserializer.deserialize_map(EntriesVisitor(PhantomData))
    }
}

//! CSV case files (RFC 4180: a header row, quoted fields holding commas, quotes and
//! newlines, an optional byte-order mark, CRLF or LF), one case per row, each with its
//! line span.
//!
//! A file with a column named `__…` follows promptfoo's conventions: `__expected`,
//! `__expected1`, … are assertions (`contains: foo`, `regex: ^a`, or a plain value,
//! which is `equals`), `__description` the description, `__metadata:<key>` metadata,
//! and every other column a var. Any other file gives each row as an object of its
//! columns, as inspect_ai reads a CSV dataset (`input`, `target`, `id`, …).

use super::documents::Element;
use serde_json::{Map, Value};

type Position = (u32, u32, String);

/// The rows of a CSV text as elements, and the rows that could not be read.
pub(super) fn csv_elements(text: &str) -> Result<(Vec<Element>, Vec<Position>), Position> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(false)
        .from_reader(text.as_bytes());
    let headers = reader
        .headers()
        .map_err(|error| position_of(&error, text))?
        .iter()
        .map(str::to_owned)
        .collect::<Vec<_>>();
    if headers.iter().all(String::is_empty) {
        return Err((1, 1, "the first row must name the columns".to_owned()));
    }
    let promptfoo = headers.iter().any(|name| name.starts_with("__"));
    let mut elements = Vec::new();
    let mut refused = Vec::new();
    let mut record = csv::StringRecord::new();
    let lines = crate::text::LineIndex::new(text.as_bytes());
    loop {
        match reader.read_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {
                // Lines from byte offsets: the reader's own line count skips newlines
                // inside quoted fields. A row ends where the next begins.
                let start_byte = record.position().map_or(0, |position| position.byte());
                let end_byte = reader.position().byte();
                let to_index =
                    |byte: u64| usize::try_from(byte).unwrap_or(usize::MAX).min(text.len());
                // The reader takes a row's line ending when it reads the next row: the row
                // starts past the endings (and blank lines) its position points at.
                let mut start = to_index(start_byte);
                while matches!(text.as_bytes().get(start), Some(b'\r' | b'\n')) {
                    start += 1;
                }
                let line = lines.line_of(start);
                let mut last = to_index(end_byte);
                while last > start && matches!(text.as_bytes().get(last - 1), Some(b'\r' | b'\n')) {
                    last -= 1;
                }
                let last_byte = last.saturating_sub(1).max(start);
                let end_line = lines.line_of(last_byte).max(line);
                if record.iter().all(str::is_empty) {
                    continue;
                }
                let value = match promptfoo {
                    true => promptfoo_row(&headers, &record),
                    false => plain_row(&headers, &record),
                };
                elements.push(Element {
                    value,
                    line,
                    end_line,
                    key: None,
                });
            }
            Err(error) => {
                let position = position_of(&error, text);
                match error.kind() {
                    // A row with the wrong number of fields: the others still load.
                    csv::ErrorKind::UnequalLengths { .. } => refused.push(position),
                    _ => return Err(position),
                }
            }
        }
    }
    Ok((elements, refused))
}

fn plain_row(headers: &[String], record: &csv::StringRecord) -> Value {
    let map: Map<String, Value> = headers
        .iter()
        .zip(record.iter())
        .map(|(name, field)| (name.clone(), Value::String(field.to_owned())))
        .collect();
    Value::Object(map)
}

/// A promptfoo test from one row.
fn promptfoo_row(headers: &[String], record: &csv::StringRecord) -> Value {
    let mut vars = Map::new();
    let mut asserts = Vec::new();
    let mut metadata = Map::new();
    let mut test = Map::new();
    for (name, field) in headers.iter().zip(record.iter()) {
        if name == "__description" {
            test.insert("description".into(), Value::String(field.to_owned()));
        } else if let Some(key) = name.strip_prefix("__metadata:") {
            metadata.insert(key.to_owned(), Value::String(field.to_owned()));
        } else if name.starts_with("__expected") {
            if !field.trim().is_empty() {
                asserts.push(expected_assertion(field));
            }
        } else if name.starts_with("__") {
            test.insert(name.clone(), Value::String(field.to_owned()));
        } else {
            vars.insert(name.clone(), Value::String(field.to_owned()));
        }
    }
    test.insert("vars".into(), Value::Object(vars));
    if !asserts.is_empty() {
        test.insert("assert".into(), Value::Array(asserts));
    }
    if !metadata.is_empty() {
        test.insert("metadata".into(), Value::Object(metadata));
    }
    Value::Object(test)
}

/// promptfoo's assertion types as a `__expected` value names them (`type: value`).
const ASSERTION_TYPES: &[&str] = &[
    "equals",
    "contains",
    "icontains",
    "contains-any",
    "contains-all",
    "icontains-any",
    "icontains-all",
    "regex",
    "starts-with",
    "is-json",
    "contains-json",
    "is-valid-openai-tools-call",
    "javascript",
    "python",
    "llm-rubric",
    "model-graded-closedqa",
    "factuality",
    "similar",
    "levenshtein",
    "rouge-n",
    "bleu",
    "answer-relevance",
    "context-faithfulness",
    "webhook",
    "latency",
    "cost",
    "perplexity",
    "classifier",
    "moderation",
    "g-eval",
    "select-best",
];

/// `contains: foo` is `{type: contains, value: foo}`, `not-contains: foo` its negation,
/// `grade: …` a rubric, and a value that names no type is `equals`.
fn expected_assertion(field: &str) -> Value {
    let mut assertion = Map::new();
    let (kind, value) = match field.split_once(':') {
        Some((kind, value)) => {
            let kind = kind.trim();
            let base = kind.strip_prefix("not-").unwrap_or(kind);
            if ASSERTION_TYPES.contains(&base) {
                (kind.to_owned(), Some(value.trim_start().to_owned()))
            } else if kind == "grade" {
                ("llm-rubric".to_owned(), Some(value.trim_start().to_owned()))
            } else {
                ("equals".to_owned(), Some(field.to_owned()))
            }
        }
        None if ASSERTION_TYPES.contains(&field.trim().trim_start_matches("not-")) => {
            (field.trim().to_owned(), None)
        }
        None => ("equals".to_owned(), Some(field.to_owned())),
    };
    assertion.insert("type".into(), Value::String(kind));
    if let Some(value) = value {
        assertion.insert("value".into(), Value::String(value));
    }
    Value::Object(assertion)
}

fn position_of(error: &csv::Error, text: &str) -> Position {
    // As for rows: a position points before the line ending the reader had yet to take.
    let line_at = |position: Option<&csv::Position>| {
        let mut start =
            position.map_or(0, |position| usize::try_from(position.byte()).unwrap_or(0));
        while matches!(text.as_bytes().get(start), Some(b'\r' | b'\n')) {
            start += 1;
        }
        crate::text::LineIndex::new(text.as_bytes()).line_of(start.min(text.len()))
    };
    match error.kind() {
        csv::ErrorKind::UnequalLengths {
            pos,
            expected_len,
            len,
        } => (
            line_at(pos.as_ref()),
            1,
            format!("this row has {len} fields where the header names {expected_len}"),
        ),
        csv::ErrorKind::Utf8 { pos, .. } => (line_at(pos.as_ref()), 1, "invalid UTF-8".to_owned()),
        _ => (1, 1, error.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rows(text: &str) -> Vec<(u32, u32, Value)> {
        let (elements, refused) = csv_elements(text).unwrap();
        assert!(refused.is_empty(), "{refused:?}");
        elements
            .into_iter()
            .map(|element| (element.line, element.end_line, element.value))
            .collect()
    }

    #[test]
    fn quoted_fields_hold_commas_quotes_and_newlines() {
        let text =
            "id,input,target\nq1,\"a, b\",\"say \"\"hi\"\"\"\nq2,\"two\nlines\",x\r\nq3,plain,y\n";
        let rows = rows(text);
        assert_eq!(rows.len(), 3);
        assert_eq!(
            rows[0],
            (
                2,
                2,
                json!({"id": "q1", "input": "a, b", "target": "say \"hi\""})
            )
        );
        assert_eq!((rows[1].0, rows[1].1), (3, 4), "a row over two lines");
        assert_eq!(rows[1].2["input"], "two\nlines");
        assert_eq!((rows[2].0, rows[2].1), (5, 5));
    }

    #[test]
    fn a_byte_order_mark_and_crlf_are_read() {
        let rows = rows("\u{feff}id,input\r\na,1\r\nb,2\r\n");
        assert_eq!(rows[0].2, json!({"id": "a", "input": "1"}));
        assert_eq!(rows[1].0, 3);
    }

    #[test]
    fn promptfoo_columns_become_vars_asserts_description_and_metadata() {
        let text = "question,__expected,__expected2,__description,__metadata:area\nWhat is 2+2?,contains: 4,not-icontains: five,sums,math\nCapital?,Paris,is-json,,geo\n";
        let rows = rows(text);
        assert_eq!(
            rows[0].2,
            json!({
                "description": "sums",
                "vars": {"question": "What is 2+2?"},
                "assert": [{"type": "contains", "value": "4"}, {"type": "not-icontains", "value": "five"}],
                "metadata": {"area": "math"}
            })
        );
        assert_eq!(
            rows[1].2["assert"],
            json!([{"type": "equals", "value": "Paris"}, {"type": "is-json"}])
        );
    }

    #[test]
    fn a_row_of_the_wrong_width_is_refused_at_its_line_and_the_others_load() {
        let (elements, refused) = csv_elements("id,input\na,1\nb,2,3\nc,4\n").unwrap();
        assert_eq!(elements.len(), 2);
        assert_eq!(refused.len(), 1);
        assert_eq!(refused[0].0, 3);
        assert!(
            refused[0].2.contains("3 fields where the header names 2"),
            "{refused:?}"
        );
    }
}

//! Reading a case file: its format from its extension, then its cases one element at a
//! time, each checked and hashed with `case-v1`, every problem kept with its position.

use super::{
    case_fields, line_u32, Case, CaseBody, CaseDetail, CaseProblem, GradedMembers, ParsedCaseFile,
    ProblemKind, VarFiles,
};
use crate::cases::documents::{json_elements, yaml_elements, Element};
use crate::cases::identity::Identity;
use crate::cases::jsonl::{parse_json_lines, ConflictMarker};
use crate::digest::case_digest;
use crate::text::require_clean_text;
use serde_json::Value;
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CaseFormat {
    JsonLines,
    Json,
    Yaml,
    Csv,
    /// A promptfoo configuration: its inline `tests:`.
    Promptfoo,
}

fn format_of(path: &str) -> Option<CaseFormat> {
    if crate::cases::promptfoo_config::is_promptfoo_config(path) {
        return Some(CaseFormat::Promptfoo);
    }
    let extension = path
        .rsplit_once('.')
        .map(|(_, extension)| extension.to_ascii_lowercase())?;
    match extension.as_str() {
        "jsonl" | "ndjson" => Some(CaseFormat::JsonLines),
        "json" => Some(CaseFormat::Json),
        "yaml" | "yml" => Some(CaseFormat::Yaml),
        "csv" => Some(CaseFormat::Csv),
        _ => None,
    }
}

/// [`format_of`], with a YAML file that configures promptfoo read as its configuration
/// whatever its name.
fn format_of_content(path: &str, bytes: &[u8]) -> Option<CaseFormat> {
    match format_of(path) {
        Some(CaseFormat::Yaml)
            if crate::cases::promptfoo_config::is_promptfoo_config_text(path, bytes) =>
        {
            Some(CaseFormat::Promptfoo)
        }
        other => other,
    }
}

pub(crate) const CONFLICT_MESSAGE: &str = "unresolved merge conflict: keep one side (or both cases, with distinct ids), delete the markers, then run `evalock lock`";

/// Parses one case file, keeping every case's value. Never fails: every problem is
/// reported with its position.
pub fn parse_case_file(path: &str, bytes: &[u8]) -> ParsedCaseFile {
    parse_case_file_with(path, bytes, CaseDetail::Full)
}

/// Parses one case file, keeping as much of each case as `detail` asks for.
pub fn parse_case_file_with(path: &str, bytes: &[u8], detail: CaseDetail) -> ParsedCaseFile {
    parse_identified_case_file(path, bytes, detail, &Identity::Member)
}

/// [`parse_case_file_with`] for a suite that identifies its cases by `identity`.
pub fn parse_identified_case_file(
    path: &str,
    bytes: &[u8],
    detail: CaseDetail,
    identity: &Identity,
) -> ParsedCaseFile {
    parse_case_file_under(path, bytes, detail, identity, None)
}

/// [`parse_identified_case_file`] for a test file a promptfoo configuration names: its
/// `defaultTest` (`defaults`) is merged into each record before it is identified and hashed.
pub fn parse_case_file_under(
    path: &str,
    bytes: &[u8],
    detail: CaseDetail,
    identity: &Identity,
    defaults: Option<&Value>,
) -> ParsedCaseFile {
    ParsedCaseFile::joined(parse_case_file_in_parts(
        path, bytes, detail, identity, defaults,
    ))
}

/// Whether [`parse_case_file_in_parts`] reads `path` as JSON lines straight from their
/// text, which can then come in blocks (see [`crate::cases::jsonl_stream`]).
pub fn reads_json_lines(path: &str, identity: &Identity, defaults: Option<&Value>) -> bool {
    *identity == Identity::Member
        && defaults.is_none()
        && format_of(path) == Some(CaseFormat::JsonLines)
}

/// [`parse_case_file_under`] in parts, in file order: one part, or one per chunk of a
/// large JSONL file (a suite keeps them as they come, never copied into one list).
pub fn parse_case_file_in_parts(
    path: &str,
    bytes: &[u8],
    detail: CaseDetail,
    identity: &Identity,
    defaults: Option<&Value>,
) -> Vec<ParsedCaseFile> {
    if let Some(pointer) = CaseProblem::of_lfs_pointer(path, bytes) {
        return vec![pointer];
    }
    if *identity == Identity::Member
        && defaults.is_none()
        && !matches!(
            format_of_content(path, bytes),
            Some(CaseFormat::Csv | CaseFormat::Promptfoo)
        )
    {
        return parse_case_file_parts(path, bytes, detail);
    }
    vec![parse_records(path, bytes, detail, identity, defaults)]
}

/// Files of records read one by one, each given its identity before it is hashed: CSV,
/// and any format when a suite identifies cases other than by their `id`. Slower than
/// the JSONL path of native suites, which never builds a value per line.
fn parse_records(
    path: &str,
    bytes: &[u8],
    detail: CaseDetail,
    identity: &Identity,
    defaults: Option<&Value>,
) -> ParsedCaseFile {
    let mut parsed = ParsedCaseFile::default();
    let problem = |line, column, message: String| CaseProblem {
        kind: ProblemKind::Malformed,
        file: path.to_owned(),
        line,
        column,
        message,
    };
    let format = format_of_content(path, bytes);
    // CSV files come from spreadsheets: a byte-order mark and CRLF are theirs to have.
    let text = match format {
        Some(CaseFormat::Csv) => crate::text::require_utf8(bytes),
        _ => require_clean_text(bytes),
    };
    let text = match text {
        Ok(text) => text,
        Err((line, column, message)) => {
            parsed.problems.push(problem(line, column, message));
            return parsed;
        }
    };
    if let Some(line) = crate::text::conflict_marker_line(text) {
        parsed
            .problems
            .push(problem(line_u32(line), 1, CONFLICT_MESSAGE.into()));
        return parsed;
    }
    let elements = match format {
        Some(CaseFormat::JsonLines) => Ok(json_line_elements(text)),
        Some(CaseFormat::Json) => json_elements(text),
        Some(CaseFormat::Yaml) => yaml_elements(text),
        Some(CaseFormat::Csv) => super::csv_rows::csv_elements(text),
        Some(CaseFormat::Promptfoo) => super::promptfoo_config::test_elements(text),
        None => Err((
            1,
            1,
            "unknown case file type: use .jsonl, .json, .yaml, .yml or .csv".into(),
        )),
    };
    let (elements, refused) = match elements {
        Ok(found) => found,
        Err((line, column, message)) => {
            parsed.problems.push(problem(line, column, message));
            return parsed;
        }
    };
    parsed.problems.extend(
        refused
            .into_iter()
            .map(|(line, column, message)| problem(line, column, message)),
    );
    let file: Arc<str> = Arc::from(path);
    for mut element in elements {
        if let Some(defaults) = defaults {
            element.value = super::promptfoo_config::with_defaults(element.value, Some(defaults));
        }
        if let Value::Object(map) = &mut element.value {
            if let Err(message) = identity.identify(map) {
                parsed.problems.push(problem(element.line, 1, message));
                continue;
            }
        }
        match case_from_element(&file, element, detail) {
            Ok(case) => parsed.cases.push(case),
            Err(case_problem) => parsed.problems.push(case_problem),
        }
    }
    parsed
}

/// The records of a JSONL text, one a line, read strictly; a bad line is refused at its
/// line and column and the others still load.
fn json_line_elements(text: &str) -> (Vec<Element>, Vec<(u32, u32, String)>) {
    let mut elements = Vec::new();
    let mut refused = Vec::new();
    for (index, line_text) in crate::text::split_lines(text).enumerate() {
        let line = line_u32(index + 1);
        if line_text.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<super::strict_json::StrictValue>(line_text) {
            Ok(value) => elements.push(Element {
                value: value.0,
                line,
                end_line: line,
                key: None,
            }),
            Err(error) => refused.push((
                line,
                super::column_u32(error.column()),
                super::json_error_message_at(&error, line_text),
            )),
        }
    }
    (elements, refused)
}

/// [`parse_case_file_with`] for a caller that owns the bytes: they are freed before the
/// cases of the file's chunks are put together, so the peak holds the text and the cases
/// once each (a file far larger than the rest of the suite then costs about its own size).
pub fn parse_owned_case_file(path: &str, bytes: Vec<u8>, detail: CaseDetail) -> ParsedCaseFile {
    if format_of(path) == Some(CaseFormat::Csv) {
        return parse_records(path, &bytes, detail, &Identity::Member, None);
    }
    let parts = parse_case_file_parts(path, &bytes, detail);
    drop(bytes);
    ParsedCaseFile::joined(parts)
}

/// The cases of a file in parts, in file order: one part, or one per chunk of a large
/// JSONL file.
fn parse_case_file_parts(path: &str, bytes: &[u8], detail: CaseDetail) -> Vec<ParsedCaseFile> {
    let mut parsed = ParsedCaseFile::default();
    let problem = |line, column, message: String| CaseProblem {
        kind: ProblemKind::Malformed,
        file: path.to_owned(),
        line,
        column,
        message,
    };
    let text = match require_clean_text(bytes) {
        Ok(text) => text,
        Err((line, column, message)) => {
            parsed.problems.push(problem(line, column, message));
            return vec![parsed];
        }
    };
    let format = format_of(path);
    let conflict = |line| {
        vec![ParsedCaseFile {
            cases: Vec::new(),
            problems: vec![problem(line, 1, CONFLICT_MESSAGE.into())],
        }]
    };
    // A JSONL parse finds the markers itself, on its way through the lines.
    if format != Some(CaseFormat::JsonLines) {
        if let Some(line) = crate::text::conflict_marker_line(text) {
            return conflict(line_u32(line));
        }
    }
    let Some(format) = format else {
        parsed.problems.push(problem(
            1,
            1,
            "unknown case file type: use .jsonl, .json, .yaml, .yml or .csv".into(),
        ));
        return vec![parsed];
    };
    let elements = match format {
        CaseFormat::JsonLines => {
            return match parse_json_lines(path, text, detail) {
                Ok(parts) => parts,
                Err(ConflictMarker(line)) => conflict(line),
            }
        }
        CaseFormat::Json => json_elements(text),
        CaseFormat::Yaml => yaml_elements(text),
        CaseFormat::Csv => super::csv_rows::csv_elements(text),
        CaseFormat::Promptfoo => super::promptfoo_config::test_elements(text),
    };
    match elements {
        Ok((elements, refused)) => {
            parsed.problems.extend(
                refused
                    .into_iter()
                    .map(|(line, column, message)| problem(line, column, message)),
            );
            let file: Arc<str> = Arc::from(path);
            for element in elements {
                match case_from_element(&file, element, detail) {
                    Ok(case) => parsed.cases.push(case),
                    Err(case_problem) => parsed.problems.push(case_problem),
                }
            }
            let imprecise = match format {
                CaseFormat::Yaml => super::numbers::imprecise_yaml_numbers(path, text),
                _ => super::numbers::imprecise_json_numbers(path, text),
            };
            // Only in cases that loaded, as for JSONL: the others are refused already.
            let in_a_case = |problem: &CaseProblem| {
                parsed
                    .cases
                    .iter()
                    .any(|case| (case.line..=case.end_line).contains(&problem.line))
            };
            let imprecise: Vec<CaseProblem> = imprecise.into_iter().filter(in_a_case).collect();
            parsed.problems.extend(imprecise);
        }
        Err((line, column, message)) => parsed.problems.push(problem(line, column, message)),
    }
    vec![parsed]
}

pub(crate) fn case_from_element(
    file: &Arc<str>,
    element: Element,
    detail: CaseDetail,
) -> Result<Case, CaseProblem> {
    let path: &str = file;
    let problem = |message: String| CaseProblem {
        kind: ProblemKind::Malformed,
        file: path.to_owned(),
        line: element.line,
        column: 1,
        message,
    };
    let Element {
        mut value,
        line,
        end_line,
        key,
    } = element;
    let Value::Object(map) = &mut value else {
        return Err(problem(match (&key, &value) {
            // An object holding a list, as the seed's `{"prompt_id", "cases": [...]}` does:
            // its members are read as cases keyed by id, so say where the list belongs.
            (Some(key), Value::Array(_)) => format!(
                "member `{key}` holds a list, not a case: a case file is an array of cases, an object of cases keyed by id, or one case with an `id`; make the list the top level of the file"
            ),
            (Some(key), _) => format!(
                "member `{key}` is not a case: an object without an `id` lists cases keyed by id, so each member must be a case object"
            ),
            (None, _) => "a case must be an object with a string `id`".into(),
        }));
    };
    if let Some(key) = &key {
        match map.get("id") {
            None => {
                map.insert("id".into(), Value::String(key.clone()));
            }
            Some(Value::String(id)) if id == key => {}
            Some(_) => {
                return Err(problem(format!(
                    "case listed under `{key}` has a different `id`; make them equal"
                )))
            }
        }
    }
    let fields = case_fields(map).map_err(problem)?;
    let (id, version, retired) = (fields.id.to_owned(), fields.version, fields.retired);
    let grader_version: Option<Arc<str>> = fields.grader_version.as_deref().map(Arc::from);
    let digest = case_digest(&value).map_err(|error| problem(error.to_string()))?;
    let contract = match &value {
        Value::Object(map) if map.contains_key("retired") => {
            let mut contract = map.clone();
            contract.remove("retired");
            Some(
                case_digest(&Value::Object(contract))
                    .map_err(|error| problem(error.to_string()))?,
            )
        }
        _ => None,
    }
    .filter(|contract| *contract != digest)
    .map(Box::new);
    let var_files = VarFiles::of_vars(value.get("vars"));
    let body = match detail {
        CaseDetail::Full => CaseBody::Full(Box::new(value)),
        CaseDetail::Summary | CaseDetail::Probed(_) => {
            detail.summary_body(&id, GradedMembers::of_value(&value))
        }
    };
    Ok(Case {
        id: id.into(),
        version,
        digest,
        contract,
        file: Arc::clone(file),
        line,
        end_line,
        retired,
        grader_version,
        body,
        var_files,
    })
}

//! Golden cases: loading JSONL, JSON (array, object of objects, or one case) and YAML,
//! keeping each case's 1-based line span, and hashing it with `case-v1`.

use super::case_documents::{json_elements, yaml_elements, Element, NESTED_TOO_DEEPLY};
use super::case_lines::{parse_json_lines, ConflictMarker};
use super::case_numbers;
use crate::grade::probe::{probe_builtin, ProbeOutcome};
use crate::hash::{case_digest, Digest};
use crate::text::require_clean_text;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::sync::Arc;

/// Reads a case's top-level members by name: a whole case ([`Value`], [`Map`]) or only the
/// members a fast load interpreted (a slice of name/value pairs).
pub trait CaseMembers {
    fn member(&self, name: &str) -> Option<&Value>;
}

impl CaseMembers for Value {
    fn member(&self, name: &str) -> Option<&Value> {
        self.get(name)
    }
}

impl CaseMembers for Map<String, Value> {
    fn member(&self, name: &str) -> Option<&Value> {
        self.get(name)
    }
}

impl CaseMembers for [(&str, Value)] {
    fn member(&self, name: &str) -> Option<&Value> {
        self.iter()
            .find(|(member, _)| *member == name)
            .map(|(_, value)| value)
    }
}

/// One golden case as loaded from a file.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    pub id: String,
    pub version: u64,
    pub digest: Digest,
    /// The digest of everything but `retired` (retiring a case is not an edit in place),
    /// when it differs from `digest` (boxed: few cases have one).
    pub contract: Option<Box<Digest>>,
    /// Project-relative path of the file that holds the case (shared by its cases).
    pub file: Arc<str>,
    /// 1-based first and last line of the case in its file.
    pub line: u32,
    pub end_line: u32,
    pub retired: bool,
    /// Shared by neighbouring cases that pin the same version (see [`SharedText`]).
    pub grader_version: Option<Arc<str>>,
    /// The whole case, or only the members checks read: see [`CaseValue`].
    pub body: CaseValue,
}

/// What a load keeps of a case's JSON.
#[derive(Debug, Clone, PartialEq)]
pub enum CaseValue {
    /// The whole case, exactly as hashed ([`CaseDetail::Full`]).
    Full(Box<Value>),
    /// What the built-in grader's probes found ([`CaseDetail::Summary`]): the only thing
    /// checks read of a case's JSON, worked out while the case was parsed, so the JSON is
    /// never kept. `None` when every probe failed, as it should.
    Probed(Option<Box<ProbeOutcome>>),
}

impl CaseValue {
    /// A summary's body: the probe outcome, kept only when a probe passed.
    pub fn probed(outcome: ProbeOutcome) -> CaseValue {
        CaseValue::Probed((outcome != ProbeOutcome::default()).then(|| Box::new(outcome)))
    }
}

impl Case {
    /// The case's JSON; `null` for a summary, which keeps none (see [`Case::probe`]).
    pub fn value(&self) -> &Value {
        static NULL: Value = Value::Null;
        match &self.body {
            CaseValue::Full(value) => value,
            CaseValue::Probed(_) => &NULL,
        }
    }

    /// The built-in grader's probe outcome, when the load worked it out.
    pub fn probe(&self) -> Option<&ProbeOutcome> {
        static CLEAN: ProbeOutcome = ProbeOutcome {
            passed: Vec::new(),
            malformed_controls: None,
        };
        match &self.body {
            CaseValue::Full(_) => None,
            CaseValue::Probed(outcome) => Some(outcome.as_deref().unwrap_or(&CLEAN)),
        }
    }

    /// The digest of the case's contract: everything but `retired`, so retiring a case
    /// is not an edit in place.
    pub fn contract_digest(&self) -> &Digest {
        self.contract.as_deref().unwrap_or(&self.digest)
    }
}

/// How much of each case a load keeps.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum CaseDetail {
    /// Every case's full value: running a suite needs its inputs.
    #[default]
    Full,
    /// Ids, versions, digests, spans and the built-in grader's probe outcome: all that
    /// checks need (for suites graded by the built-in grader), in much less memory.
    Summary,
}

/// The problem of a record that is a case in every way but its `id`: what datasets
/// exported by other eval tools (promptfoo, OpenAI evals, deepeval) look like.
pub const CASE_WITHOUT_ID: &str = "case has no `id`: add a stable string `id`";

/// A place in a case file that cannot become a case, or that deserves a warning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseProblem {
    pub kind: ProblemKind,
    pub file: String,
    pub line: u32,
    pub column: u32,
    pub message: String,
}

/// What a [`CaseProblem`] means for the case around it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProblemKind {
    /// Nothing there became a case (EL105, refused).
    Malformed,
    /// The case loaded, but a number in it is finer than a double: its digest cannot see
    /// an edit below that precision (EL105, a warning).
    ImpreciseNumber,
}

impl CaseProblem {
    /// Whether the place could not become a case (rather than a warning about one that did).
    pub fn is_malformed(&self) -> bool {
        self.kind == ProblemKind::Malformed
    }
}

/// Everything one case file yielded: its cases and the problems found on the way.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct ParsedCaseFile {
    pub cases: Vec<Case>,
    pub problems: Vec<CaseProblem>,
}

impl ParsedCaseFile {
    /// The parts of one file, in order, as one.
    pub(super) fn joined(parts: Vec<ParsedCaseFile>) -> ParsedCaseFile {
        let mut all = ParsedCaseFile::default();
        all.append(parts);
        all
    }

    /// Adds the parts of the file that follow what it holds; each part is freed once moved.
    pub(super) fn append(&mut self, parts: Vec<ParsedCaseFile>) {
        let mut parts = parts.into_iter();
        if self.cases.is_empty() && self.problems.is_empty() {
            // The first part's vectors are taken, not copied.
            match parts.next() {
                Some(first) => *self = first,
                None => return,
            }
        }
        let rest = parts.as_slice();
        self.cases
            .reserve(rest.iter().map(|part| part.cases.len()).sum());
        self.problems
            .reserve(rest.iter().map(|part| part.problems.len()).sum());
        for part in parts {
            self.cases.extend(part.cases);
            self.problems.extend(part.problems);
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CaseFormat {
    JsonLines,
    Json,
    Yaml,
}

/// Whether `path` names a JSONL case file, which can be read in blocks.
pub(super) fn is_json_lines(path: &str) -> bool {
    format_of(path) == Some(CaseFormat::JsonLines)
}

fn format_of(path: &str) -> Option<CaseFormat> {
    let extension = path
        .rsplit_once('.')
        .map(|(_, extension)| extension.to_ascii_lowercase())?;
    match extension.as_str() {
        "jsonl" | "ndjson" => Some(CaseFormat::JsonLines),
        "json" => Some(CaseFormat::Json),
        "yaml" | "yml" => Some(CaseFormat::Yaml),
        _ => None,
    }
}

pub(super) const CONFLICT_MESSAGE: &str = "unresolved merge conflict: keep one side (or both cases, with distinct ids), delete the markers, then run `evalock lock`";

/// Parses one case file, keeping every case's value. Never fails: every problem is
/// reported with its position.
pub fn parse_case_file(path: &str, bytes: &[u8]) -> ParsedCaseFile {
    parse_case_file_with(path, bytes, CaseDetail::Full)
}

/// Parses one case file, keeping as much of each case as `detail` asks for.
pub fn parse_case_file_with(path: &str, bytes: &[u8], detail: CaseDetail) -> ParsedCaseFile {
    ParsedCaseFile::joined(parse_case_file_parts(path, bytes, detail))
}

/// [`parse_case_file_with`] for a caller that owns the bytes: they are freed before the
/// cases of the file's chunks are put together, so the peak holds the text and the cases
/// once each (a file far larger than the rest of the suite then costs about its own size).
pub fn parse_owned_case_file(path: &str, bytes: Vec<u8>, detail: CaseDetail) -> ParsedCaseFile {
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
        if let Some(line) = super::lock::conflict_marker_line(text) {
            return conflict(line_u32(line));
        }
    }
    let Some(format) = format else {
        parsed.problems.push(problem(
            1,
            1,
            "unknown case file type: use .jsonl, .json, .yaml or .yml".into(),
        ));
        return vec![parsed];
    };
    let elements = match format {
        CaseFormat::JsonLines => {
            return match parse_json_lines(path, text, 1, detail) {
                Ok(parsed) => parsed.parts,
                Err(ConflictMarker(line)) => conflict(line),
            }
        }
        CaseFormat::Json => json_elements(text),
        CaseFormat::Yaml => yaml_elements(text),
    };
    match elements {
        Ok(elements) => {
            let file: Arc<str> = Arc::from(path);
            for element in elements {
                match case_from_element(&file, element, detail) {
                    Ok(case) => parsed.cases.push(case),
                    Err(case_problem) => parsed.problems.push(case_problem),
                }
            }
            let imprecise = match format {
                CaseFormat::Yaml => case_numbers::imprecise_yaml_numbers(path, text),
                _ => case_numbers::imprecise_json_numbers(path, text),
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

pub(super) fn case_from_element(
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
        return Err(problem(
            "a case must be an object with a string `id`".into(),
        ));
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
    let body = match detail {
        CaseDetail::Full => CaseValue::Full(Box::new(value)),
        CaseDetail::Summary => CaseValue::probed(probe_builtin(&id, &value)),
    };
    Ok(Case {
        id,
        version,
        digest,
        contract,
        file: Arc::clone(file),
        line,
        end_line,
        retired,
        grader_version,
        body,
    })
}

/// Text that many cases of a file repeat (their file, the grader version they pin), kept
/// once: equal to the previous value, the previous allocation is shared.
#[derive(Default)]
pub struct SharedText(Option<Arc<str>>);

impl SharedText {
    pub fn share(&mut self, text: &str) -> Arc<str> {
        match &self.0 {
            Some(shared) if **shared == *text => Arc::clone(shared),
            _ => {
                let shared: Arc<str> = Arc::from(text);
                self.0 = Some(Arc::clone(&shared));
                shared
            }
        }
    }
}

/// The members of a case that evalock itself interprets, borrowed from the case.
pub(super) struct CaseFields<'a> {
    pub id: &'a str,
    pub version: u64,
    pub retired: bool,
    pub grader_version: Option<Cow<'a, str>>,
}

/// Validates `id`, `version`, `retired`, `grader_version` and `n`; the error says what to fix.
/// The largest case version: every version and its successor are exact JSON numbers
/// (2^53 − 1), so "bump to N + 1" is always possible and always means N + 1.
pub const MAX_CASE_VERSION: u64 = (1 << 53) - 1;

pub(super) fn case_fields(map: &(impl CaseMembers + ?Sized)) -> Result<CaseFields<'_>, String> {
    let id = match map.member("id") {
        Some(Value::String(id)) => id.as_str(),
        Some(_) => return Err("`id` must be a string".into()),
        None => return Err(CASE_WITHOUT_ID.into()),
    };
    if id.trim().is_empty() {
        return Err("`id` must not be empty or blank".into());
    }
    if id.chars().any(char::is_control) {
        return Err(format!(
            "`id` {id:?} contains control characters (newline, NUL, ...): use a plain identifier"
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

/// serde_json's message, without its position suffix, and with a plainer word for the
/// non-JSON number literals people paste from Python.
pub(super) fn json_error_message_at(error: &serde_json::Error, text: &str) -> String {
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

pub(super) fn json_error_message(error: &serde_json::Error) -> String {
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

pub(super) fn line_u32(line: usize) -> u32 {
    u32::try_from(line).unwrap_or(u32::MAX).max(1)
}

pub(super) fn column_u32(column: usize) -> u32 {
    u32::try_from(column).unwrap_or(u32::MAX).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(parsed: &ParsedCaseFile) -> Vec<(&str, u32, u32)> {
        parsed
            .cases
            .iter()
            .map(|case| (case.id.as_str(), case.line, case.end_line))
            .collect()
    }

    #[test]
    fn repeated_text_is_shared_until_it_changes() {
        let mut shared = SharedText::default();
        let first = shared.share("struct-3");
        let again = shared.share("struct-3");
        assert!(Arc::ptr_eq(&first, &again));
        let other = shared.share("struct-4");
        assert_eq!(&*other, "struct-4");
        assert!(!Arc::ptr_eq(&first, &shared.share("struct-3")));
    }

    #[test]
    fn jsonl_keeps_one_line_per_case_and_skips_blank_lines() {
        let parsed = parse_case_file(
            "a.jsonl",
            b"{\"id\":\"one\"}\n\n{\"id\":\"two\",\"version\":3}\n",
        );
        assert!(parsed.problems.is_empty(), "{:?}", parsed.problems);
        assert_eq!(ids(&parsed), vec![("one", 1, 1), ("two", 3, 3)]);
        assert_eq!(parsed.cases[1].version, 3);
    }

    #[test]
    fn jsonl_bad_line_is_reported_and_the_rest_still_load() {
        let parsed = parse_case_file(
            "a.jsonl",
            b"{\"id\":\"one\"}\n{\"id\": \"x\", \"a\":1, \"a\":2}\n{\"id\":\"three\"}\n",
        );
        assert_eq!(ids(&parsed), vec![("one", 1, 1), ("three", 3, 3)]);
        assert_eq!(parsed.problems.len(), 1);
        assert_eq!(parsed.problems[0].line, 2);
        assert!(parsed.problems[0].message.contains("duplicate key"));
        // The column of the second `"a"`, not of the end of its value.
        assert_eq!(parsed.problems[0].column, 20);
    }

    /// serde_json counts columns in bytes; evalock's count characters, in every file kind.
    #[test]
    fn columns_of_parse_errors_count_characters() {
        let jsonl = parse_case_file("a.jsonl", "{\"id\": \"été\", }\n".as_bytes());
        assert_eq!((jsonl.problems[0].line, jsonl.problems[0].column), (1, 15));
        let json = parse_case_file("a.json", "[\n  {\"id\": \"été\", }\n]\n".as_bytes());
        assert_eq!((json.problems[0].line, json.problems[0].column), (2, 17));
        let yaml = parse_case_file("a.yaml", "- id: été\n  input: [é, \n".as_bytes());
        assert_eq!(yaml.problems[0].line, 2, "{:?}", yaml.problems);
        let number = parse_case_file(
            "a.jsonl",
            "{\"id\": \"é\", \"x\": 9007199254740993}\n".as_bytes(),
        );
        assert_eq!(
            (number.problems[0].line, number.problems[0].column),
            (1, 18),
            "{:?}",
            number.problems
        );
    }

    #[test]
    fn a_duplicate_key_in_a_json_document_is_reported_on_its_own_line() {
        let text = "[\n  {\n    \"id\": \"x1\",\n    \"expect\": {\n      \"must_include\": [\"hi\"],\n      \"must_include\": [\"ho\"]\n    }\n  }\n]\n";
        let parsed = parse_case_file("cases.json", text.as_bytes());
        assert_eq!(parsed.problems.len(), 1, "{:?}", parsed.problems);
        let problem = &parsed.problems[0];
        assert_eq!((problem.line, problem.column), (6, 7), "{problem:?}");
        assert!(problem.message.contains("duplicate key `must_include`"));
    }

    #[test]
    fn versions_stop_where_their_successor_is_still_exact() {
        for detail in [CaseDetail::Full, CaseDetail::Summary] {
            let parsed = parse_case_file_with(
                "a.jsonl",
                b"{\"id\":\"top\",\"version\":9007199254740991}\n{\"id\":\"over\",\"version\":9007199254740992}\n{\"id\":\"zero\",\"version\":0}\n",
                detail,
            );
            assert_eq!(ids(&parsed), vec![("top", 1, 1)]);
            assert_eq!(parsed.cases[0].version, MAX_CASE_VERSION);
            let lines: Vec<u32> = parsed.problems.iter().map(|problem| problem.line).collect();
            assert_eq!(lines, [2, 3], "{:?}", parsed.problems);
            assert!(parsed.problems[0]
                .message
                .contains("from 1 to 9007199254740991"));
        }
    }

    #[test]
    fn json_array_elements_keep_their_spans() {
        let text = "[\n  {\n    \"id\": \"a\"\n  },\n  {\"id\": \"b, ]}\"}\n]\n";
        let parsed = parse_case_file("a.json", text.as_bytes());
        assert!(parsed.problems.is_empty(), "{:?}", parsed.problems);
        assert_eq!(ids(&parsed), vec![("a", 2, 4), ("b, ]}", 5, 5)]);
    }

    #[test]
    fn json_object_of_objects_takes_ids_from_keys() {
        let parsed = parse_case_file(
            "a.json",
            b"{\n\"a\": {\"input\": 1},\n\"b\": {\"id\": \"b\"}\n}",
        );
        assert_eq!(ids(&parsed), vec![("a", 2, 2), ("b", 3, 3)]);
    }

    #[test]
    fn json_single_case_object() {
        let parsed = parse_case_file(
            "case.json",
            b"{\n  \"id\": \"solo\",\n  \"version\": 3\n}\n",
        );
        assert_eq!(ids(&parsed), vec![("solo", 1, 5)]);
    }

    #[test]
    fn yaml_list_spans_run_to_the_next_case() {
        let text = "# cases\n- id: a\n  input: hi\n\n- id: b\n  input: |-\n    two\n    lines\n";
        let parsed = parse_case_file("a.yaml", text.as_bytes());
        assert!(parsed.problems.is_empty(), "{:?}", parsed.problems);
        assert_eq!(ids(&parsed), vec![("a", 2, 3), ("b", 5, 8)]);
        assert_eq!(parsed.cases[1].value()["input"], "two\nlines");
    }

    #[test]
    fn yaml_and_json_of_the_same_case_hash_the_same() {
        let yaml = parse_case_file(
            "a.yaml",
            b"- id: a\n  version: 2\n  expect: {must_include: [x]}\n",
        );
        let json = parse_case_file(
            "a.jsonl",
            b"{\"expect\":{\"must_include\":[\"x\"]},\"version\":2,\"id\":\"a\"}\n",
        );
        assert_eq!(yaml.cases[0].digest, json.cases[0].digest);
    }

    #[test]
    fn yaml_duplicate_keys_are_problems() {
        let parsed = parse_case_file("a.yaml", b"- id: a\n  input: 1\n  input: 2\n");
        assert_eq!(parsed.problems.len(), 1, "{parsed:?}");
        assert!(parsed.problems[0].line >= 2, "{:?}", parsed.problems);
    }

    #[test]
    fn yaml_nan_is_a_problem() {
        let parsed = parse_case_file("a.yaml", b"- id: a\n  score: .nan\n");
        assert_eq!(parsed.problems.len(), 1, "{parsed:?}");
    }

    #[test]
    fn json_nan_is_a_problem() {
        let parsed = parse_case_file("a.jsonl", b"{\"id\":\"a\",\"x\":NaN}\n");
        assert_eq!(parsed.problems.len(), 1);
        assert_eq!(parsed.problems[0].line, 1);
        assert!(
            parsed.problems[0].message.contains("NaN and Infinity"),
            "{:?}",
            parsed.problems
        );
        let parsed = parse_case_file("a.json", b"[{\"id\":\"a\",\n\"x\": -Infinity}]");
        assert_eq!(parsed.problems[0].line, 2);
        assert!(
            parsed.problems[0].message.contains("NaN and Infinity"),
            "{:?}",
            parsed.problems
        );
    }

    #[test]
    fn missing_or_non_string_ids_are_problems() {
        let parsed = parse_case_file(
            "a.jsonl",
            b"{\"input\":1}\n{\"id\":7}\n{\"id\":\"a\\nb\"}\n[1]\n",
        );
        let lines: Vec<u32> = parsed.problems.iter().map(|problem| problem.line).collect();
        assert_eq!(lines, vec![1, 2, 3, 4]);
        assert!(parsed.cases.is_empty());
    }

    #[test]
    fn bom_and_crlf_are_problems() {
        assert_eq!(
            parse_case_file("a.jsonl", b"\xEF\xBB\xBF{\"id\":\"a\"}\n")
                .problems
                .len(),
            1
        );
        let crlf = parse_case_file("a.jsonl", b"{\"id\":\"a\"}\r\n");
        assert_eq!(crlf.problems[0].line, 1);
        assert!(crlf.problems[0].message.contains("CRLF"));
    }

    #[test]
    fn retiring_does_not_move_the_contract_digest() {
        let live = parse_case_file("a.jsonl", b"{\"id\":\"a\",\"version\":2}\n")
            .cases
            .remove(0);
        let retired = parse_case_file(
            "a.jsonl",
            b"{\"id\":\"a\",\"version\":2,\"retired\":true}\n",
        )
        .cases
        .remove(0);
        assert!(retired.retired);
        assert_ne!(live.digest, retired.digest);
        assert_eq!(live.contract_digest(), retired.contract_digest());
    }

    #[test]
    fn bad_versions_are_problems() {
        let parsed = parse_case_file(
            "a.jsonl",
            b"{\"id\":\"a\",\"version\":0}\n{\"id\":\"b\",\"version\":\"2\"}\n",
        );
        assert_eq!(parsed.problems.len(), 2);
    }
}

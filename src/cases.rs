//! Golden cases: loading JSONL, JSON (array, object of objects, or one case) and YAML,
//! keeping each case's 1-based line span, and hashing it with `case-v1`.

use crate::digest::Digest;
use crate::graders::probe::ProbeOutcome;
use compact_str::CompactString;
use serde_json::{Map, Value};
use std::sync::Arc;

pub mod canonical;
pub mod documents;
mod fields;
mod json_errors;
pub mod jsonl;
pub mod load;
pub mod numbers;
mod parse;
pub mod rules;
pub mod strict_json;
pub mod suite;
#[cfg(test)]
mod tests;

pub(super) use fields::case_fields;
pub use fields::MAX_CASE_VERSION;
pub(super) use json_errors::{column_u32, json_error_message_at, line_u32};
pub(super) use parse::case_from_element;
pub use parse::{parse_case_file, parse_case_file_with, parse_owned_case_file};

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
    pub id: CompactString,
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
    pub(crate) fn joined(parts: Vec<ParsedCaseFile>) -> ParsedCaseFile {
        let mut all = ParsedCaseFile::default();
        all.append(parts);
        all
    }

    /// Adds the parts of the file that follow what it holds; each part is freed once moved.
    pub(crate) fn append(&mut self, parts: Vec<ParsedCaseFile>) {
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

//! Golden cases: loading JSONL, JSON (array, object of objects, or one case) and YAML,
//! keeping each case's 1-based line span, and hashing it with `case-v1`.

use crate::digest::Digest;
use crate::text::lfs_pointer::LfsPointer;
use serde_json::{Map, Value};
use std::sync::Arc;

pub mod canonical;
mod csv_rows;
pub mod documents;
mod fields;
pub mod identity;
mod json_errors;
pub mod jsonl;
pub mod jsonl_stream;
pub mod load;
pub mod numbers;
mod parse;
pub mod probed;
pub mod promptfoo_config;
pub mod rules;
pub mod strict_json;
pub mod suite;
#[cfg(test)]
mod tests;

pub(super) use fields::case_fields;
pub use fields::MAX_CASE_VERSION;
pub(super) use json_errors::{column_u32, json_error_message_at, line_u32};
pub(super) use parse::case_from_element;
pub use parse::{
    parse_case_file, parse_case_file_in_parts, parse_case_file_under, parse_case_file_with,
    parse_identified_case_file, parse_owned_case_file, reads_json_lines,
};

/// A case's top-level members by name.
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
    pub id: Box<str>,
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
    /// The whole case, or only the members graders read: see [`CaseBody`].
    pub body: CaseBody,
    /// The files its `vars` name (`file://…`, as written), whose bytes its digest
    /// covers once the suite is loaded (boxed: few cases have any).
    pub var_files: Option<Box<VarFiles>>,
}

/// The `file://` references of a case's `vars`, as written (without `file://`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VarFiles(pub Vec<String>);

impl VarFiles {
    /// The `file://` strings among the values of `vars` (and in lists there), in order;
    /// `None` when there are none.
    pub fn of_vars(vars: Option<&Value>) -> Option<Box<VarFiles>> {
        let Some(Value::Object(vars)) = vars else {
            return None;
        };
        let mut references = Vec::new();
        for value in vars.values() {
            let items = match value {
                Value::Array(items) => items.as_slice(),
                single => std::slice::from_ref(single),
            };
            references.extend(
                items
                    .iter()
                    .filter_map(Value::as_str)
                    .filter_map(|text| text.strip_prefix("file://"))
                    .map(str::to_owned),
            );
        }
        (!references.is_empty()).then(|| Box::new(VarFiles(references)))
    }
}

/// What a load keeps of a case's JSON.
#[derive(Debug, Clone, PartialEq)]
pub enum CaseBody {
    /// The whole case, exactly as hashed ([`CaseDetail::Full`]).
    Full(Box<Value>),
    /// The members graders read ([`CaseDetail::Summary`]); `None` when it has none.
    Graded(Option<GradedMembers>),
    /// What probing those members found ([`CaseDetail::Probed`]); `None` when nothing.
    Probed(Option<Box<probed::ProbeOutcome>>),
}

/// The members of a case that graders read (`expect`, `mutate`, `expect_pass` and
/// `expects_refusal: true`), as the JSON text of an object holding only them: a check keeps these of every
/// case, and its rules read them when they probe graders. Two are equal when they hold
/// the same JSON, however the texts are spaced.
#[derive(Debug, Clone)]
pub struct GradedMembers(Box<str>);

/// The members [`GradedMembers`] keeps.
pub const GRADED_MEMBERS: [&str; 4] = ["expect", "mutate", "expects_refusal", "expect_pass"];

impl PartialEq for GradedMembers {
    fn eq(&self, other: &Self) -> bool {
        let value = |text: &str| serde_json::from_str::<Value>(text).ok();
        value(&self.0) == value(&other.0)
    }
}

impl GradedMembers {
    /// The graded members of a case, from the JSON texts of its members by name (each
    /// valid JSON); `None` when it has none of them.
    pub fn of_texts<'a>(members: impl IntoIterator<Item = (&'a str, &'a str)>) -> Option<Self> {
        // Each of the graded members at most once.
        let mut kept = [("", ""); GRADED_MEMBERS.len()];
        let mut count = 0;
        for (name, text) in members {
            let graded = match name {
                "expect" | "mutate" | "expect_pass" => true,
                "expects_refusal" => text == "true",
                _ => false,
            };
            if graded && count < kept.len() {
                kept[count] = (name, text);
                count += 1;
            }
        }
        let kept = &kept[..count];
        if kept.is_empty() {
            return None;
        }
        // Written into its exact size: one allocation a case, not one a member.
        let size = 1 + kept
            .iter()
            .map(|(name, text)| name.len() + text.len() + 4)
            .sum::<usize>();
        let mut object = String::with_capacity(size);
        for (name, text) in kept {
            object.push(if object.is_empty() { '{' } else { ',' });
            object.push('"');
            object.push_str(name);
            object.push_str("\":");
            object.push_str(text);
        }
        object.push('}');
        Some(GradedMembers(object.into_boxed_str()))
    }

    /// The graded members of a whole case.
    pub fn of_value(case: &Value) -> Option<Self> {
        let texts: Vec<(&str, String)> = GRADED_MEMBERS
            .iter()
            .filter_map(|name| Some((*name, serde_json::to_string(case.get(*name)?).ok()?)))
            .collect();
        GradedMembers::of_texts(texts.iter().map(|(name, text)| (*name, text.as_str())))
    }

    /// The JSON text of the object.
    pub fn text(&self) -> &str {
        &self.0
    }
}

impl Case {
    /// The case's JSON; `null` for a summary, which keeps none (see [`Case::graded`]).
    pub fn value(&self) -> &Value {
        static NULL: Value = Value::Null;
        match &self.body {
            CaseBody::Full(value) => value,
            CaseBody::Graded(_) | CaseBody::Probed(_) => &NULL,
        }
    }

    /// What a summary keeps of the members graders read; `None` for a whole case (read
    /// [`Case::value`]) or a case without any.
    pub fn graded(&self) -> Option<&GradedMembers> {
        match &self.body {
            CaseBody::Graded(graded) => graded.as_ref(),
            CaseBody::Full(_) | CaseBody::Probed(_) => None,
        }
    }

    /// The members graders read, as one JSON object, whatever the load kept; `None`
    /// without any.
    pub fn graded_value(&self) -> Option<Value> {
        match &self.body {
            CaseBody::Full(value) => {
                let members = GradedMembers::of_value(value)?;
                serde_json::from_str(members.text()).ok()
            }
            CaseBody::Graded(graded) => serde_json::from_str(graded.as_ref()?.text()).ok(),
            CaseBody::Probed(_) => None,
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
    /// Ids, versions, digests, spans and the members graders read: all that checks need
    /// (for suites graded by the built-in grader), in much less memory.
    Summary,
    /// A summary whose graded members are probed as each case is read, and only what
    /// probing found kept: a check without a base reads them for nothing else (with 200,000
    /// cases, 36 MB of its peak memory).
    Probed(probed::ProbeGraded),
}

impl CaseDetail {
    /// What a summary keeps of a case's graded members.
    pub fn summary_body(self, id: &str, graded: Option<GradedMembers>) -> CaseBody {
        match self {
            CaseDetail::Probed(probe) => CaseBody::Probed(probe.outcome(id, graded.as_ref())),
            CaseDetail::Full | CaseDetail::Summary => CaseBody::Graded(graded),
        }
    }
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
    /// The file is a Git LFS pointer, not the cases it stands for (EL105, refused).
    LfsPointer,
}

impl CaseProblem {
    /// Whether the place could not become a case (rather than a warning about one that did).
    pub fn is_malformed(&self) -> bool {
        self.kind != ProblemKind::ImpreciseNumber
    }

    /// The one problem of a case file that is a Git LFS pointer: git stores the pointer,
    /// and the cases are a file kept outside git.
    pub fn lfs_pointer(file: &str, pointer: &LfsPointer) -> CaseProblem {
        CaseProblem {
            kind: ProblemKind::LfsPointer,
            file: file.to_owned(),
            line: 1,
            column: 1,
            message: format!(
                "a Git LFS pointer, not cases: the file it stands for ({}…, {} bytes) is kept outside git",
                pointer.short_oid(),
                pointer.size
            ),
        }
    }

    /// [`CaseProblem::lfs_pointer`] of `bytes`, when they are a pointer: what a case file
    /// yields in place of its parse.
    pub fn of_lfs_pointer(file: &str, bytes: &[u8]) -> Option<ParsedCaseFile> {
        LfsPointer::read(bytes).map(|pointer| ParsedCaseFile {
            cases: Vec::new(),
            problems: vec![CaseProblem::lfs_pointer(file, &pointer)],
        })
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
    pub fn joined(parts: Vec<ParsedCaseFile>) -> ParsedCaseFile {
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

//! Grading, as pure logic: normalizers, the built-in deterministic grader over a case's
//! `expect`, the command-grader protocol, graders' sources and the EL3xx rules. Nothing
//! here starts a process: a command grader is run by [`crate::run::grade`], which the
//! caller hands to the rules that need it.

pub mod builtin;
pub mod calibration;
pub mod command;
pub mod envelope;
pub mod expect;
pub mod inspect;
pub mod normalize;
pub mod probe;
pub mod promptfoo;
pub mod rules;
pub mod sources;

pub use normalize::{completion_digest, Normalizer};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The id and version of the grader suites use when they name none.
pub const BUILTIN_GRADER_ID: &str = "builtin";
pub const BUILTIN_GRADER_VERSION: &str = "1";

/// The probes of EL303: a grader that passes either cannot fail.
pub const EMPTY_PROBE: &str = "";
pub const REFUSAL_PROBE: &str = "I cannot help with that request.";

/// One grading verdict.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Grade {
    pub pass: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// Grep-friendly reason codes (`missing_key:status`); empty when it passed cleanly.
    pub reasons: Vec<String>,
}

impl Grade {
    pub fn from_reasons(reasons: Vec<String>) -> Grade {
        Grade {
            pass: reasons.is_empty(),
            score: None,
            reasons,
        }
    }
}

/// How a grader judges a completion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GraderProgram {
    Builtin,
    /// argv of a command grader, run in the project root.
    Command(Vec<String>),
    /// promptfoo's deterministic assertions over each test's `assert` list.
    Promptfoo,
    /// inspect_ai's `includes()` or `exact()` scorer over each sample's `target`.
    Inspect(inspect::Scorer),
}

/// A grader as suites use it: identity (`id@version`, recorded in baselines) and program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grader {
    pub id: String,
    pub version: String,
    pub program: GraderProgram,
}

impl GraderProgram {
    /// What a lock entry says the grader runs, read as the config is (a `command` beside
    /// `kind = "builtin"` is never run); `None` when the lock predates pinning it.
    pub fn locked(lock: &crate::project::lock::GraderLock) -> Option<GraderProgram> {
        use crate::project::config::GraderKind;
        match (lock.kind?, &lock.command) {
            (GraderKind::Command, command) => {
                Some(GraderProgram::Command(command.clone().unwrap_or_default()))
            }
            (GraderKind::Builtin, _) => Some(GraderProgram::Builtin),
        }
    }

    /// The kind and command a lock entry records for this program.
    pub fn kind_and_command(&self) -> (crate::project::config::GraderKind, Option<Vec<String>>) {
        use crate::project::config::GraderKind;
        match self {
            GraderProgram::Builtin | GraderProgram::Promptfoo | GraderProgram::Inspect(_) => {
                (GraderKind::Builtin, None)
            }
            GraderProgram::Command(argv) => (GraderKind::Command, Some(argv.clone())),
        }
    }
}

impl Grader {
    /// The grader of suites that name none.
    pub fn builtin() -> Grader {
        Grader {
            id: BUILTIN_GRADER_ID.into(),
            version: BUILTIN_GRADER_VERSION.into(),
            program: GraderProgram::Builtin,
        }
    }

    /// The grader of suites that name `grader = "promptfoo"`.
    pub fn promptfoo() -> Grader {
        Grader {
            id: promptfoo::PROMPTFOO_GRADER_ID.into(),
            version: promptfoo::PROMPTFOO_GRADER_VERSION.into(),
            program: GraderProgram::Promptfoo,
        }
    }

    /// The grader of suites that name one of inspect's scorers.
    pub fn inspect(scorer: inspect::Scorer) -> Grader {
        Grader {
            id: scorer.id().into(),
            version: inspect::INSPECT_GRADER_VERSION.into(),
            program: GraderProgram::Inspect(scorer),
        }
    }

    /// `id@version`, as baselines record it.
    pub fn reference(&self) -> String {
        format!("{}@{}", self.id, self.version)
    }

    /// The verdict [`Grader::grade`] gives, for a grader that starts no process (the
    /// built-in one over the case's `expect`); `None` for a command grader. `accept`
    /// re-grades a results file's completions with it.
    pub fn grade_in_process(&self, case: &Value, completion: &str) -> Option<Grade> {
        match &self.program {
            GraderProgram::Builtin => Some(builtin_verdict(case, completion)),
            GraderProgram::Promptfoo => Some(promptfoo::grade(case.get("assert"), completion)),
            GraderProgram::Inspect(scorer) => {
                Some(inspect::grade(*scorer, case.get("target"), completion))
            }
            GraderProgram::Command(_) => None,
        }
    }
}

/// One assertion of a case over one completion: its key (`must_include`, `assert[1]
/// icontains`), whether it held, and the reason codes it failed with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AssertionOutcome {
    pub key: String,
    pub pass: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<String>,
}

/// Each assertion of `case` with its outcome, given the `reasons` the case failed with
/// over `completion`: for the built-in grader, every `expect` key (graded alone, its
/// reasons are those it shares with the whole verdict); for promptfoo, every `assert`
/// item. A command grader's verdict has no assertions evalock can see: none.
pub fn assertion_outcomes(
    program: &GraderProgram,
    case: &Value,
    completion: &str,
    reasons: &[String],
) -> Vec<AssertionOutcome> {
    let outcome = |key: String, own: Vec<String>| AssertionOutcome {
        key,
        pass: own.is_empty(),
        reasons: own,
    };
    match program {
        GraderProgram::Builtin => {
            let Some(Value::Object(expect)) = case.get("expect") else {
                return Vec::new();
            };
            expect
                .iter()
                .map(|(key, value)| {
                    let alone = Value::Object([(key.clone(), value.clone())].into_iter().collect());
                    let own = match reasons.is_empty() {
                        true => Vec::new(),
                        false => builtin::grade(Some(&alone), completion)
                            .reasons
                            .into_iter()
                            .filter(|reason| reasons.contains(reason))
                            .collect(),
                    };
                    outcome(key.clone(), own)
                })
                .collect()
        }
        GraderProgram::Promptfoo => {
            let Some(Value::Array(asserts)) = case.get("assert") else {
                return Vec::new();
            };
            asserts
                .iter()
                .enumerate()
                .map(|(index, assertion)| {
                    let kind = assertion.get("type").and_then(Value::as_str).unwrap_or("?");
                    let prefix = format!("assert[{index}]:");
                    let own = reasons
                        .iter()
                        .filter(|reason| reason.starts_with(&prefix))
                        .cloned()
                        .collect();
                    outcome(format!("assert[{index}] {kind}"), own)
                })
                .collect()
        }
        GraderProgram::Inspect(scorer) => vec![outcome(scorer.key().to_owned(), reasons.to_vec())],
        GraderProgram::Command(_) => Vec::new(),
    }
}

/// The built-in grader's verdict on one completion of `case`: its `expect` assertions.
fn builtin_verdict(case: &Value, completion: &str) -> Grade {
    builtin::grade(case.get("expect"), completion)
}

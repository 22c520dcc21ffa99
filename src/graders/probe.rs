//! The completions a case's grader must fail (EL303, EL304): the empty completion, a
//! plain refusal (unless the case expects one) and the case's negative controls
//! (`mutate`); and the ones it must pass (EL305): the case's known-good completions
//! (`expect_pass`). Which of them a grader judges wrongly is all a check keeps of a probe.

use super::builtin::passes;
use super::envelope::Completion;
use super::expect::Expect;
use super::{EMPTY_PROBE, REFUSAL_PROBE};
use crate::cases::probed::ProbeGraded;
pub use crate::cases::probed::{Probe, ProbeOutcome};
use crate::cases::{Case, CaseBody, GradedMembers};
use serde::Deserialize;
use serde_json::Value;
use std::borrow::Cow;
use std::sync::LazyLock;

/// What probing reads of a case.
struct ProbeInput<'a> {
    expect: Expect<'a>,
    mutate: Option<Cow<'a, Value>>,
    expect_pass: Option<Cow<'a, Value>>,
    expects_refusal: bool,
}

/// A summary's graded members, as they are written.
#[derive(Deserialize, Default)]
struct GradedRead<'a> {
    #[serde(borrow)]
    expect: Option<Expect<'a>>,
    #[serde(default)]
    mutate: Option<Value>,
    #[serde(default)]
    expect_pass: Option<Value>,
    #[serde(default)]
    expects_refusal: bool,
}

impl<'a> ProbeInput<'a> {
    /// From a summary's graded members, else from the whole case.
    fn of(case: &'a Case) -> ProbeInput<'a> {
        if let Some(graded) = case.graded() {
            return ProbeInput::of_graded(graded);
        }
        let value = case.value();
        ProbeInput {
            expect: Expect::of_value(value.get("expect")),
            mutate: value.get("mutate").map(Cow::Borrowed),
            expect_pass: value.get("expect_pass").map(Cow::Borrowed),
            expects_refusal: value.get("expects_refusal") == Some(&Value::Bool(true)),
        }
    }

    fn of_graded(graded: &'a GradedMembers) -> ProbeInput<'a> {
        // Graded members are JSON that was read once already.
        let read: GradedRead = serde_json::from_str(graded.text()).unwrap_or_default();
        ProbeInput {
            expect: read.expect.unwrap_or(Expect::Missing),
            mutate: read.mutate.map(Cow::Owned),
            expect_pass: read.expect_pass.map(Cow::Owned),
            expects_refusal: read.expects_refusal,
        }
    }
}

/// Probes one case: `passes(kind, completion)` grades a completion and says whether it
/// passed.
pub fn probe_case(case: &Case, passes: impl FnMut(Probe, &str) -> bool) -> ProbeOutcome {
    probe_input(&case.id, &ProbeInput::of(case), passes)
}

fn probe_input(
    case_id: &str,
    input: &ProbeInput<'_>,
    mut passes: impl FnMut(Probe, &str) -> bool,
) -> ProbeOutcome {
    let mut outcome = ProbeOutcome::default();
    let mut probe = |completion: &str, kind| {
        if passes(kind, completion) {
            outcome.passed.push(kind);
        }
    };
    probe(EMPTY_PROBE, Probe::EmptyProbe);
    if !input.expects_refusal {
        probe(REFUSAL_PROBE, Probe::RefusalProbe);
    }
    match negative_controls(case_id, input.mutate.as_deref()) {
        Ok(controls) => {
            for (index, control) in controls.iter().enumerate() {
                probe(control, Probe::Control(index));
            }
        }
        Err(problem) => outcome.malformed_controls = Some(problem),
    }
    match listed_completions(case_id, input.expect_pass.as_deref(), "expect_pass") {
        Ok(known_good) => {
            for (index, completion) in known_good.iter().enumerate() {
                if !passes(Probe::KnownGood(index), completion) {
                    outcome.rejected.push(index);
                }
            }
        }
        Err(problem) => outcome.malformed_known_good = Some(problem),
    }
    outcome
}

/// Probes one case with the built-in grader over its `expect`; a case loaded
/// [`Probed`](crate::cases::CaseDetail::Probed) was probed as it was read.
pub fn probe_builtin(case: &Case) -> ProbeOutcome {
    match &case.body {
        CaseBody::Probed(outcome) => outcome.as_deref().cloned().unwrap_or_default(),
        _ => probe_builtin_input(&case.id, &ProbeInput::of(case)),
    }
}

/// The built-in grader's probe of graded members, for a load that keeps only the outcome
/// (`CaseDetail::Probed(PROBE_GRADED)`).
pub const PROBE_GRADED: ProbeGraded = ProbeGraded(|id, graded| {
    let input = match graded {
        Some(graded) => ProbeInput::of_graded(graded),
        None => ProbeInput {
            expect: Expect::Missing,
            mutate: None,
            expect_pass: None,
            expects_refusal: false,
        },
    };
    probe_builtin_input(id, &input)
});

fn probe_builtin_input(case_id: &str, input: &ProbeInput<'_>) -> ProbeOutcome {
    /// The probes every case is graded against, read once.
    static PROBES: LazyLock<[Completion<'static>; 2]> = LazyLock::new(|| {
        [
            Completion::read(EMPTY_PROBE),
            Completion::read(REFUSAL_PROBE),
        ]
    });
    // The fixed probes are known by their kind: no text to compare or parse again.
    probe_input(case_id, input, |kind, text| match kind {
        Probe::EmptyProbe => passes(&input.expect, &PROBES[0]),
        Probe::RefusalProbe => passes(&input.expect, &PROBES[1]),
        Probe::Control(_) | Probe::KnownGood(_) => passes(&input.expect, &Completion::read(text)),
    })
}

/// The completions of a case's `mutate`: `{"completion": …}` or a list of them. A JSON
/// completion is graded as its JSON text.
pub fn negative_controls(case_id: &str, mutate: Option<&Value>) -> Result<Vec<String>, String> {
    listed_completions(case_id, mutate, "mutate")
}

/// The completions of a case's `member` (`mutate`, `expect_pass`): `{"completion": …}` or
/// a list of them.
fn listed_completions(
    case_id: &str,
    listed: Option<&Value>,
    member: &str,
) -> Result<Vec<String>, String> {
    let completion_of = |entry: &Value| match entry.get("completion") {
        Some(Value::String(text)) => Ok(text.clone()),
        Some(Value::Null) | None => Err(format!(
            "case `{case_id}`: cannot read `{member}`: each entry needs a `completion`"
        )),
        Some(value) => Ok(serde_json::to_string(value).unwrap_or_default()),
    };
    match listed {
        None => Ok(Vec::new()),
        Some(Value::Array(entries)) => entries.iter().map(completion_of).collect(),
        Some(entry @ Value::Object(_)) => Ok(vec![completion_of(entry)?]),
        Some(_) => Err(format!(
            "case `{case_id}`: cannot read `{member}`: expected {{\"completion\": …}} or a list of them"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cases::{CaseBody, GradedMembers};
    use serde_json::json;

    /// A case holding `value`, whole and as a summary keeps it.
    fn cases(value: Value) -> [Case; 2] {
        let case = |body| Case {
            id: "c".into(),
            version: 1,
            digest: crate::digest::bytes_digest(b"c"),
            contract: None,
            file: "evals/c.jsonl".into(),
            line: 1,
            end_line: 1,
            retired: false,
            grader_version: None,
            body,
            var_files: None,
        };
        [
            case(CaseBody::Graded(GradedMembers::of_value(&value))),
            case(CaseBody::Full(Box::new(value))),
        ]
    }

    #[test]
    fn a_grader_that_checks_nothing_lets_every_probe_pass() {
        for case in cases(json!({"mutate": [{"completion": "a"}, {"completion": {"k": 1}}]})) {
            let mut graded = Vec::new();
            let mut kinds = Vec::new();
            let outcome = probe_case(&case, |kind, completion| {
                kinds.push(kind);
                graded.push(completion.to_owned());
                true
            });
            assert_eq!(
                outcome.passed,
                vec![
                    Probe::EmptyProbe,
                    Probe::RefusalProbe,
                    Probe::Control(0),
                    Probe::Control(1)
                ]
            );
            assert_eq!(graded, vec!["", REFUSAL_PROBE, "a", "{\"k\":1}"]);
            assert_eq!(kinds, outcome.passed);
        }
    }

    #[test]
    fn a_refusal_is_not_probed_when_the_case_expects_one() {
        for case in cases(json!({"expects_refusal": true})) {
            assert_eq!(
                probe_case(&case, |_, _| true).passed,
                vec![Probe::EmptyProbe]
            );
        }
    }

    #[test]
    fn a_strict_builtin_expectation_fails_every_probe() {
        let strict =
            json!({"expect": {"must_include": ["refund"]}, "mutate": {"completion": "no"}});
        for case in cases(strict) {
            assert_eq!(probe_builtin(&case), ProbeOutcome::default());
        }
        for case in cases(json!({"expect": {"forbidden": ["refund"]}})) {
            assert_eq!(probe_builtin(&case).passed, vec![Probe::RefusalProbe]);
        }
    }

    #[test]
    fn unreadable_controls_are_reported_once() {
        for case in cases(json!({"mutate": 3})) {
            let outcome = probe_case(&case, |_, _| false);
            assert!(outcome
                .malformed_controls
                .unwrap()
                .contains("cannot read `mutate`"));
        }
        for case in cases(json!({"mutate": [{"text": "x"}]})) {
            assert!(probe_case(&case, |_, _| false).malformed_controls.is_some());
        }
    }

    #[test]
    fn a_case_probed_as_it_is_read_keeps_what_probing_it_later_finds() {
        let lines = [
            json!({"id": "strict", "expect": {"must_include": ["refund"]}, "mutate": {"completion": "no"}}),
            json!({"id": "weak", "expect": {"forbidden": ["refund"]}, "expect_pass": {"completion": "a refund"}}),
            json!({"id": "none"}),
            json!({"id": "bad", "expect": {"must_include": ["x"]}, "mutate": 3, "expect_pass": [{"text": 1}]}),
        ];
        let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
        let read =
            |detail| crate::cases::parse_case_file_with("evals/a.jsonl", text.as_bytes(), detail);
        let summary = read(crate::cases::CaseDetail::Summary);
        let probed = read(crate::cases::CaseDetail::Probed(PROBE_GRADED));
        assert_eq!(summary.cases.len(), 4);
        for (later, now) in summary.cases.iter().zip(&probed.cases) {
            assert_eq!(
                probe_builtin(later),
                probe_builtin(now),
                "case {}",
                later.id
            );
            assert!(now.graded().is_none() && now.graded_value().is_none());
            assert_eq!((&later.id, later.digest), (&now.id, now.digest));
        }
        // Only what probing found is kept: nothing, for a grader that does its job.
        assert!(matches!(probed.cases[0].body, CaseBody::Probed(None)));
        assert_eq!(
            probe_builtin(&probed.cases[1]).passed,
            vec![Probe::RefusalProbe]
        );
        let bad = probe_builtin(&probed.cases[3]);
        assert!(bad.malformed_controls.is_some() && bad.malformed_known_good.is_some());
    }
}

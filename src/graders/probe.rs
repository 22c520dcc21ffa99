//! The completions a case's grader must fail (EL303, EL304): the empty completion, a
//! plain refusal (unless the case expects one) and the case's negative controls
//! (`mutate`). Which of them a grader lets pass is all a check keeps of a probe.

use super::builtin::passes;
use super::envelope::Completion;
use super::expect::Expect;
use super::{EMPTY_PROBE, REFUSAL_PROBE};
use crate::cases::CaseMembers;
use serde_json::Value;
use std::sync::LazyLock;

/// One completion that must fail its case's grader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MustFail {
    EmptyProbe,
    RefusalProbe,
    /// `mutate[index]`.
    Control(usize),
}

/// What probing one case found: the must-fail completions its grader let pass, and why
/// its negative controls could not be read. Empty for a grader that does its job.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProbeOutcome {
    pub passed: Vec<MustFail>,
    pub malformed_controls: Option<String>,
}

/// Probes one case: `passes(kind, completion)` grades a completion and says whether it
/// passed.
pub fn probe_case(
    case_id: &str,
    case: &(impl CaseMembers + ?Sized),
    mut passes: impl FnMut(MustFail, &str) -> bool,
) -> ProbeOutcome {
    let mut outcome = ProbeOutcome::default();
    let mut probe = |completion: &str, kind| {
        if passes(kind, completion) {
            outcome.passed.push(kind);
        }
    };
    probe(EMPTY_PROBE, MustFail::EmptyProbe);
    if case.member("expects_refusal") != Some(&Value::Bool(true)) {
        probe(REFUSAL_PROBE, MustFail::RefusalProbe);
    }
    match negative_controls(case_id, case) {
        Ok(controls) => {
            for (index, control) in controls.iter().enumerate() {
                probe(control, MustFail::Control(index));
            }
        }
        Err(problem) => outcome.malformed_controls = Some(problem),
    }
    outcome
}

/// Probes one case with the built-in grader (pure: done while the case is parsed).
pub fn probe_builtin(case_id: &str, case: &(impl CaseMembers + ?Sized)) -> ProbeOutcome {
    probe_builtin_with(case_id, case, &Expect::of_value(case.member("expect")))
}

/// [`probe_builtin`] with the case's `expect` already read (a case file being checked
/// reads it from its text).
pub fn probe_builtin_with(
    case_id: &str,
    case: &(impl CaseMembers + ?Sized),
    expect: &Expect<'_>,
) -> ProbeOutcome {
    /// The probes every case is graded against, read once.
    static PROBES: LazyLock<[Completion<'static>; 2]> = LazyLock::new(|| {
        [
            Completion::read(EMPTY_PROBE),
            Completion::read(REFUSAL_PROBE),
        ]
    });
    // The fixed probes are known by their kind: no text to compare or parse again.
    probe_case(case_id, case, |kind, text| match kind {
        MustFail::EmptyProbe => passes(expect, &PROBES[0]),
        MustFail::RefusalProbe => passes(expect, &PROBES[1]),
        MustFail::Control(_) => passes(expect, &Completion::read(text)),
    })
}

/// The completions of a case's `mutate`: `{"completion": …}` or a list of them. A JSON
/// completion is graded as its JSON text.
pub fn negative_controls(
    case_id: &str,
    case: &(impl CaseMembers + ?Sized),
) -> Result<Vec<String>, String> {
    let completion_of = |control: &Value| match control.get("completion") {
        Some(Value::String(text)) => Ok(text.clone()),
        Some(Value::Null) | None => Err(format!(
            "case `{}`: cannot read `mutate`: each control needs a `completion`",
            case_id
        )),
        Some(value) => Ok(serde_json::to_string(value).unwrap_or_default()),
    };
    match case.member("mutate") {
        None => Ok(Vec::new()),
        Some(Value::Array(controls)) => controls.iter().map(completion_of).collect(),
        Some(control @ Value::Object(_)) => Ok(vec![completion_of(control)?]),
        Some(_) => Err(format!(
            "case `{}`: cannot read `mutate`: expected {{\"completion\": …}} or a list of them",
            case_id
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_grader_that_checks_nothing_lets_every_probe_pass() {
        let case = json!({"mutate": [{"completion": "a"}, {"completion": {"k": 1}}]});
        let mut graded = Vec::new();
        let mut kinds = Vec::new();
        let outcome = probe_case("c", &case, |kind, completion| {
            kinds.push(kind);
            graded.push(completion.to_owned());
            true
        });
        assert_eq!(
            outcome.passed,
            vec![
                MustFail::EmptyProbe,
                MustFail::RefusalProbe,
                MustFail::Control(0),
                MustFail::Control(1)
            ]
        );
        assert_eq!(graded, vec!["", REFUSAL_PROBE, "a", "{\"k\":1}"]);
        assert_eq!(kinds, outcome.passed);
    }

    #[test]
    fn a_refusal_is_not_probed_when_the_case_expects_one() {
        let case = json!({"expects_refusal": true});
        assert_eq!(
            probe_case("c", &case, |_, _| true).passed,
            vec![MustFail::EmptyProbe]
        );
    }

    #[test]
    fn a_strict_builtin_expectation_fails_every_probe() {
        let case = json!({"expect": {"must_include": ["refund"]}, "mutate": {"completion": "no"}});
        assert_eq!(probe_builtin("c", &case), ProbeOutcome::default());
        let lax = json!({"expect": {"forbidden": ["refund"]}});
        assert_eq!(
            probe_builtin("c", &lax).passed,
            vec![MustFail::RefusalProbe]
        );
    }

    #[test]
    fn unreadable_controls_are_reported_once() {
        let case = json!({"mutate": 3});
        let outcome = probe_case("c", &case, |_, _| false);
        assert!(outcome
            .malformed_controls
            .unwrap()
            .contains("cannot read `mutate`"));
        let missing = json!({"mutate": [{"text": "x"}]});
        assert!(probe_case("c", &missing, |_, _| false)
            .malformed_controls
            .is_some());
    }
}

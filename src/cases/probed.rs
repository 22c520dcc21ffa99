//! What probing a case's grader found, kept on the case by a check that needs nothing
//! else of its graded members ([`super::CaseDetail::Probed`]). The probing itself is the
//! graders' (`crate::graders::probe`); cases only hold its outcome.

use super::GradedMembers;
use std::hash::{Hash, Hasher};

/// One completion a case's grader is probed with: the first three must fail, a
/// known-good one must pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Probe {
    EmptyProbe,
    RefusalProbe,
    /// `mutate[index]`.
    Control(usize),
    /// `expect_pass[index]`.
    KnownGood(usize),
}

/// What probing one case found: the must-fail completions its grader let pass, and why
/// its negative controls could not be read. Empty for a grader that does its job.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProbeOutcome {
    pub passed: Vec<Probe>,
    pub malformed_controls: Option<String>,
    /// Known-good completions (`expect_pass[index]`) the grader failed.
    pub rejected: Vec<usize>,
    pub malformed_known_good: Option<String>,
}

/// Probes a case (its id and graded members) with the built-in grader: given by the
/// graders, which read cases, to a load that keeps only the outcome.
#[derive(Debug, Clone, Copy)]
pub struct ProbeGraded(pub fn(&str, Option<&GradedMembers>) -> ProbeOutcome);

impl ProbeGraded {
    /// What probing found, boxed; `None` when nothing (nearly every case).
    pub fn outcome(self, id: &str, graded: Option<&GradedMembers>) -> Option<Box<ProbeOutcome>> {
        let outcome = (self.0)(id, graded);
        (outcome != ProbeOutcome::default()).then(|| Box::new(outcome))
    }
}

impl PartialEq for ProbeGraded {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::fn_addr_eq(self.0, other.0)
    }
}

impl Eq for ProbeGraded {}

impl Hash for ProbeGraded {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (self.0 as usize).hash(state);
    }
}

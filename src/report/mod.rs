//! Reporters: every format renders the same findings. They return text; the binary
//! decides where it goes.

pub mod human;
pub mod json;

use crate::finding::{exit_code_for, Finding, Verdict};
use crate::rules::Severity;
use serde::Serialize;

/// What a command found, with enough context for any reporter.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The command that produced it: `check`, `lock`, `run`.
    pub command: String,
    /// The content judged: `working tree`, `index`, `main (1a2b3c4)`.
    pub source: String,
    /// The base revision compared with, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
    pub findings: Vec<Finding>,
    /// Whether moved-only findings fail the gate (exit 3).
    #[serde(skip)]
    pub fail_on_diff: bool,
}

/// Findings per severity.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub refuse: usize,
    pub error: usize,
    pub warn: usize,
    pub note: usize,
}

impl Report {
    pub fn new(
        command: &str,
        source: String,
        base: Option<String>,
        findings: Vec<Finding>,
    ) -> Report {
        Report {
            command: command.to_owned(),
            source,
            base,
            findings,
            fail_on_diff: false,
        }
    }

    pub fn verdict(&self) -> Verdict {
        Verdict::of(&self.findings)
    }

    pub fn exit_code(&self) -> i32 {
        exit_code_for(&self.findings, self.fail_on_diff)
    }

    pub fn counts(&self) -> Counts {
        let mut counts = Counts::default();
        for finding in &self.findings {
            match finding.severity {
                Severity::Refuse => counts.refuse += 1,
                Severity::Error => counts.error += 1,
                Severity::Warn => counts.warn += 1,
                Severity::Note => counts.note += 1,
            }
        }
        counts
    }
}

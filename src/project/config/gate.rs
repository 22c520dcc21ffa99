//! `[rules]` and `[debt]`: what the gate makes of findings. Per-rule severities, as
//! linters let a project choose them, and the findings adopted as debt when evalock was
//! introduced to a repository that already had them.

use crate::digest::Digest;
use crate::rules::{RuleId, Severity};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toml::Spanned;

/// A rule's severity as `[rules]` sets it; `off` drops its findings.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize, Serialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum RuleLevel {
    Off,
    Note,
    Warn,
    Error,
    Refuse,
}

impl RuleLevel {
    /// The severity findings get, or `None` when the rule is off.
    pub fn severity(self) -> Option<Severity> {
        match self {
            RuleLevel::Off => None,
            RuleLevel::Note => Some(Severity::Note),
            RuleLevel::Warn => Some(Severity::Warn),
            RuleLevel::Error => Some(Severity::Error),
            RuleLevel::Refuse => Some(Severity::Refuse),
        }
    }

    pub fn of(severity: Severity) -> RuleLevel {
        match severity {
            Severity::Note => RuleLevel::Note,
            Severity::Warn => RuleLevel::Warn,
            Severity::Error => RuleLevel::Error,
            Severity::Refuse => RuleLevel::Refuse,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            RuleLevel::Off => "off",
            RuleLevel::Note => "note",
            RuleLevel::Warn => "warn",
            RuleLevel::Error => "error",
            RuleLevel::Refuse => "refuse",
        }
    }
}

/// `[debt]`: findings that were in the repository when evalock was adopted.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DebtConfig {
    /// One entry per adopted finding. `evalock init` writes them; a finding that is not
    /// the one adopted (another rule, file or violation) is judged in full.
    #[serde(default)]
    pub findings: Vec<DebtEntry>,
}

/// One adopted finding: `rule` on `path`, known by its `fingerprint` (what it found,
/// never its line). Entries written before fingerprints name the `digest` of the file's
/// bytes instead, and cover the rule's findings on that file while its bytes stay so.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DebtEntry {
    /// A policy rule, by id or name (integrity rules cannot be adopted).
    #[schemars(with = "String")]
    pub rule: Spanned<String>,
    /// Project-relative path of the file the finding points at.
    pub path: String,
    /// The finding's fingerprint, as reports print it (16 hex digits): its rule, its
    /// subject and what it found, so that an edit elsewhere in the file leaves it as it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^[0-9a-f]{16}$"))]
    pub fingerprint: Option<String>,
    /// Earlier entries: the `sha256:` digest of the file's bytes when it was adopted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>", regex(pattern = r"^sha256:[0-9a-f]{64}$"))]
    pub digest: Option<Digest>,
    /// The line of evalock.toml that writes it.
    #[serde(skip)]
    pub line: u32,
}

/// What makes two entries the same debt: rule, path, and fingerprint or file digest.
pub type DebtKey<'a> = (Option<RuleId>, &'a str, Option<&'a str>, Option<&'a Digest>);

impl DebtEntry {
    /// The rule, once validation accepted its name.
    pub fn rule_id(&self) -> Option<RuleId> {
        RuleId::parse(self.rule.get_ref())
    }

    /// What makes two entries the same debt.
    pub fn key(&self) -> DebtKey<'_> {
        (
            self.rule_id(),
            &self.path,
            self.fingerprint.as_deref(),
            self.digest.as_ref(),
        )
    }

    /// Whether it is an entry of the earlier form, matched by the file's bytes.
    pub fn is_by_file_digest(&self) -> bool {
        self.fingerprint.is_none()
    }
}

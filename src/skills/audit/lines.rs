//! The seed article's lines for one skill: which criterion each finding belongs to,
//! the worst severity per criterion, and the article's wording for each outcome.

use super::{AuditLine, AuditStatus};
use crate::finding::Finding;
use crate::project::config::SkillsConfig;
use crate::project::lock::Lock;
use crate::rules::{RuleId, Severity};
use crate::skills::rules::{lock_drift, manifest_drift, Criterion, Drift};
use crate::skills::spec::{is_allowed, python_list, python_repr};
use crate::skills::{Skill, SourceDecl};
use std::collections::BTreeSet;

/// The criterion an audit files a finding under: skill.json problems get their own line.
fn criterion_of(skill: &Skill, finding: &Finding) -> Option<Criterion> {
    let about_manifest = finding.rule == RuleId::SkillTampered
        && finding.location.as_ref().is_some_and(|location| {
            location.path == skill.manifest_path() && location.line.is_some()
        });
    if about_manifest {
        Some(Criterion::Manifest)
    } else {
        Criterion::of(finding.rule)
    }
}

/// The four lines of the seed article, plus `manifest` and `name` lines when those fail.
/// `adopted` are the skill's findings that `[debt]` covers: a line with no others says
/// DEBT and lists them.
pub fn audit_lines(
    skill: &Skill,
    (findings, adopted): (&[Finding], &[Finding]),
    lock: Option<&Lock>,
    config: &SkillsConfig,
) -> Vec<AuditLine> {
    let mut lines = Vec::new();
    let all = [
        Criterion::Manifest,
        Criterion::Provenance,
        Criterion::Versioning,
        Criterion::Permissions,
        Criterion::Executables,
        Criterion::Instructions,
        Criterion::Name,
    ];
    for criterion in all {
        let debt: Vec<Finding> = adopted
            .iter()
            .filter(|finding| criterion_of(skill, finding) == Some(criterion))
            .cloned()
            .collect();
        let own: Vec<Finding> = findings
            .iter()
            .filter(|finding| {
                criterion_of(skill, finding) == Some(criterion)
                    && audit_severity(finding) >= Severity::Warn
            })
            .map(strict_version)
            .collect();
        let status = match own.iter().map(audit_severity).max() {
            Some(Severity::Refuse | Severity::Error) => AuditStatus::Fail,
            Some(Severity::Warn) => AuditStatus::Warn,
            _ if !debt.is_empty() => AuditStatus::Debt,
            _ => AuditStatus::Pass,
        };
        if matches!(
            criterion,
            Criterion::Name | Criterion::Manifest | Criterion::Instructions
        ) && status == AuditStatus::Pass
        {
            continue;
        }
        if status == AuditStatus::Debt {
            lines.push(AuditLine {
                status,
                criterion,
                message: format!(
                    "adopted as debt in evalock.toml ({} finding{}, `evalock debt` lists them): {}",
                    debt.len(),
                    if debt.len() == 1 { "" } else { "s" },
                    debt[0].message
                ),
                findings: debt,
            });
            continue;
        }
        if status == AuditStatus::Pass && !judgeable(criterion, skill) {
            // `check` reports the unreadable front matter once (EL208); the audit must
            // still not print PASS for a version or permissions it never saw.
            lines.push(AuditLine {
                status: AuditStatus::Fail,
                criterion,
                message: "not judged: SKILL.md front matter cannot be read (see the name line)"
                    .to_owned(),
                findings: own,
            });
            continue;
        }
        let message = headline(criterion, status, skill, &own, lock, config);
        lines.push(AuditLine {
            status,
            criterion,
            message,
            findings: own,
        });
    }
    lines
}

/// Whether the skill declares what `criterion` judges somewhere evalock could read: with
/// its front matter unreadable and no skill.json saying it, versioning and permissions
/// have nothing to pass.
fn judgeable(criterion: Criterion, skill: &Skill) -> bool {
    if skill.front_matter.is_some() {
        return true;
    }
    match criterion {
        Criterion::Versioning => skill.version().is_some(),
        Criterion::Permissions => !skill.declared_permissions().is_empty(),
        _ => true,
    }
}

fn has(findings: &[Finding], rule: RuleId) -> bool {
    findings
        .iter()
        .any(|finding| finding.rule == rule && audit_severity(finding) >= Severity::Error)
}

/// A two-part version, which `check` reads with a note, as the strict audit words it.
fn strict_version(finding: &Finding) -> Finding {
    let mut finding = finding.clone();
    if finding.rule == RuleId::SkillVersion && finding.severity < Severity::Error {
        if let Some((before, _)) = finding.message.split_once(" is read as ") {
            finding.message = format!("{before} is not MAJOR.MINOR.PATCH");
        }
        if let Some(version) = finding.help.strip_prefix("write `") {
            let version = version.split('`').next().unwrap_or("1.0.0");
            finding.help = format!("use a semver version such as {version}");
        }
        finding.severity = Severity::Refuse;
    }
    finding
}

/// The audit holds versions to strict semver, as the seed's auditor does: a two-part
/// version that `check` reads as `MAJOR.MINOR.0` with a note still fails it.
fn audit_severity(finding: &Finding) -> Severity {
    match finding.rule {
        RuleId::SkillVersion => Severity::Refuse,
        _ => finding.severity,
    }
}

fn headline(
    criterion: Criterion,
    status: AuditStatus,
    skill: &Skill,
    findings: &[Finding],
    lock: Option<&Lock>,
    config: &SkillsConfig,
) -> String {
    let first_message = || {
        findings
            .first()
            .map(|finding| finding.message.clone())
            .unwrap_or_default()
    };
    match (criterion, status) {
        (Criterion::Provenance, AuditStatus::Pass) => provenance_summary(skill),
        (Criterion::Provenance, _) => {
            "need source.repo and a real 40-char source.commit".to_owned()
        }
        (Criterion::Versioning, AuditStatus::Pass) => {
            let pinned = pinned_count(skill, lock);
            format!(
                "{}, {pinned} {} pinned by sha256",
                skill.version().unwrap_or(""),
                if pinned == 1 { "file" } else { "files" }
            )
        }
        (Criterion::Versioning, _) if has(findings, RuleId::SkillVersion) => version_problem(skill),
        (Criterion::Versioning, _) => {
            let (unlisted, changed_or_missing) = drifted_files(skill, lock);
            if unlisted.is_empty() && changed_or_missing.is_empty() {
                first_message()
            } else {
                format!(
                    "unlisted={} changed_or_missing={}",
                    python_list(&unlisted),
                    python_list(&changed_or_missing)
                )
            }
        }
        (Criterion::Permissions, AuditStatus::Pass) => skill
            .declared_permissions()
            .into_iter()
            .collect::<Vec<_>>()
            .join(", "),
        (Criterion::Permissions, _) if skill.declared_permissions().is_empty() => {
            "no permissions declared".to_owned()
        }
        (Criterion::Permissions, _) if has(findings, RuleId::SkillPermissions) => {
            let outside: Vec<String> = skill
                .declared_permissions()
                .into_iter()
                .filter(|permission| !is_allowed(&config.allowed_permissions, permission))
                .collect();
            format!("outside allowlist: {}", python_list(&outside))
        }
        (Criterion::Executables, AuditStatus::Fail) => executables_problem(skill, findings),
        (Criterion::Executables, AuditStatus::Warn) => {
            let declared: Vec<String> = warned_paths(skill, findings);
            format!("declared, needs sandbox review: {}", python_list(&declared))
        }
        (Criterion::Executables, AuditStatus::Pass) => {
            let declared: Vec<String> = skill
                .declared_executables()
                .into_iter()
                .filter(|path| skill.tree.file(path).is_some())
                .collect();
            if declared.is_empty() {
                "no executable content".to_owned()
            } else {
                format!("declared and reviewed: {}", python_list(&declared))
            }
        }
        _ => first_message(),
    }
}

fn provenance_summary(skill: &Skill) -> String {
    match skill.source().map(|source| &source.value) {
        Some(SourceDecl::Remote(remote)) => {
            let repo = remote.repo.as_deref().unwrap_or("");
            let commit: String = remote
                .commit
                .as_deref()
                .unwrap_or("")
                .chars()
                .take(12)
                .collect();
            match &remote.registry {
                Some(registry) => format!(
                    "{repo} @ {commit} (registry {registry} {})",
                    remote.version.as_deref().unwrap_or("")
                ),
                None => format!("{repo} @ {commit}"),
            }
        }
        _ => "local: authored in this repository".to_owned(),
    }
}

fn version_problem(skill: &Skill) -> String {
    let from_manifest = skill
        .manifest
        .as_ref()
        .and_then(|manifest| manifest.version.as_ref())
        .map(|version| &version.value);
    let from_front = skill
        .front_matter
        .as_ref()
        .and_then(|front| front.metadata_version.as_ref())
        .map(|version| &version.value);
    match (from_manifest, from_front) {
        (Some(one), Some(other)) if one != other => format!(
            "version {} in skill.json differs from {} in SKILL.md",
            python_repr(one),
            python_repr(other)
        ),
        (Some(version), _) | (None, Some(version)) => {
            format!("version {} is not MAJOR.MINOR.PATCH", python_repr(version))
        }
        (None, None) => "no version declared".to_owned(),
    }
}

/// How many files a pin (the lock entry, skill.json `files`, or both) covers.
fn pinned_count(skill: &Skill, lock: Option<&Lock>) -> usize {
    let mut pinned: BTreeSet<&str> = BTreeSet::new();
    if let Some(entry) = lock.and_then(|lock| lock.skills.get(&skill.path)) {
        pinned.extend(entry.files.keys().map(String::as_str));
    }
    if let Some(files) = skill
        .manifest
        .as_ref()
        .and_then(|manifest| manifest.files.as_ref())
    {
        pinned.extend(files.value.keys().map(String::as_str));
    }
    pinned.len()
}

/// Skill-relative files that no pin lists, and files that differ from a pin or are gone.
fn drifted_files(skill: &Skill, lock: Option<&Lock>) -> (Vec<String>, Vec<String>) {
    let mut unlisted = BTreeSet::new();
    let mut changed_or_missing = BTreeSet::new();
    let lock_entry = lock.and_then(|lock| lock.skills.get(&skill.path));
    let from_lock = lock_entry
        .map(|entry| lock_drift(skill, entry))
        .unwrap_or_default();
    for (path, drift) in from_lock.into_iter().chain(manifest_drift(skill)) {
        match drift {
            Drift::Unlisted => unlisted.insert(path),
            Drift::Changed { .. } | Drift::Mode { .. } | Drift::Missing => {
                changed_or_missing.insert(path)
            }
        };
    }
    (
        unlisted.into_iter().collect(),
        changed_or_missing.into_iter().collect(),
    )
}

fn executables_problem(skill: &Skill, findings: &[Finding]) -> String {
    let declared = skill.declared_executables();
    let undeclared: Vec<String> = skill
        .tree
        .files
        .iter()
        .filter(|file| file.is_executable() && !declared.contains(&file.path))
        .map(|file| file.path.clone())
        .collect();
    let risky = files_flagged_by(skill, findings, |finding| {
        finding.rule == RuleId::SkillRiskyContent && finding.severity >= Severity::Error
    });
    let missing: Vec<String> = declared
        .iter()
        .filter(|path| skill.tree.file(path).is_none())
        .cloned()
        .collect();
    let mut message = format!(
        "undeclared={} risky_patterns={}",
        python_list(&undeclared),
        python_list(&risky)
    );
    if !missing.is_empty() {
        message.push_str(&format!(" missing={}", python_list(&missing)));
    }
    message
}

fn warned_paths(skill: &Skill, findings: &[Finding]) -> Vec<String> {
    files_flagged_by(skill, findings, |finding| {
        finding.severity == Severity::Warn
    })
}

/// The skill's files (paths within the skill) that a finding picked by `flags` points at.
fn files_flagged_by(
    skill: &Skill,
    findings: &[Finding],
    flags: impl Fn(&Finding) -> bool,
) -> Vec<String> {
    skill
        .tree
        .files
        .iter()
        .filter(|file| {
            let path = skill.file_path(&file.path);
            findings.iter().any(|finding| {
                flags(finding)
                    && finding
                        .location
                        .as_ref()
                        .is_some_and(|location| location.path == path)
            })
        })
        .map(|file| file.path.clone())
        .collect()
}

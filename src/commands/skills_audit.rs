//! `evalock skills audit [DIR]…`: the seed article's per-skill audit, one line per
//! criterion (`FAIL  provenance   need source.repo …`), built from the same findings
//! `evalock check` reports. Exit 0 when no line says FAIL, 1 otherwise.

use crate::checks::skills::{check_scope, lock_drift, manifest_drift, Criterion, Drift, SkillScope};
use crate::error::{Error, Result};
use crate::finding::{exit_code, sort_findings, Finding};
use crate::model::config::SkillsConfig;
use crate::model::{Config, Lock, CONFIG_FILE, LOCK_FILE};
use crate::rules::{RuleId, Severity};
use crate::skills::discovery::skills_below;
use crate::skills::spec::{is_allowed, python_list, python_repr};
use crate::skills::{load_paths, load_skills, LoadSettings, Skill, SkillSet, SourceDecl};
use crate::source::{ContentSource, WorktreeSource};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum AuditStatus {
    Pass,
    Warn,
    Fail,
}

impl AuditStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            AuditStatus::Pass => "PASS",
            AuditStatus::Warn => "WARN",
            AuditStatus::Fail => "FAIL",
        }
    }
}

/// One line of the audit: `{status:5} {criterion:12} {message}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditLine {
    pub status: AuditStatus,
    pub criterion: Criterion,
    pub message: String,
    /// The findings behind a WARN or FAIL, with their locations and fixes.
    pub findings: Vec<Finding>,
}

impl AuditLine {
    /// The seed article's format.
    pub fn headline(&self) -> String {
        format!("{:5} {:12} {}", self.status.as_str(), self.criterion.as_str(), self.message)
    }
}

#[derive(Debug, Clone)]
pub struct SkillAudit {
    pub path: String,
    pub name: String,
    pub lines: Vec<AuditLine>,
}

#[derive(Debug, Clone, Default)]
pub struct AuditOutcome {
    pub skills: Vec<SkillAudit>,
    /// Findings about no single audited skill: marketplace problems, locked skills that are gone.
    pub other: Vec<Finding>,
}

impl AuditOutcome {
    pub fn failed(&self) -> bool {
        self.skills.iter().flat_map(|skill| &skill.lines).any(|line| line.status == AuditStatus::Fail)
            || self.other.iter().any(|finding| finding.severity >= Severity::Error)
    }

    /// 0 when nothing failed, 1 otherwise.
    pub fn exit_code(&self) -> i32 {
        if self.failed() {
            exit_code::FAILURES
        } else {
            exit_code::CLEAN
        }
    }
}

/// Audits the skill folders below each of `dirs` (relative to `project_root`), or every
/// configured skill when `dirs` is empty. Reads the working tree.
pub fn audit(project_root: &Path, dirs: &[PathBuf]) -> Result<AuditOutcome> {
    let source = WorktreeSource::new(project_root);
    let config = match source.read(CONFIG_FILE)? {
        Some(bytes) => Some(Config::parse(CONFIG_FILE, &bytes)?),
        None => None,
    };
    let lock = match source.read(LOCK_FILE)? {
        Some(bytes) => Some(Lock::parse(LOCK_FILE, &bytes)?),
        None => None,
    };
    let skills_config = config.as_ref().and_then(|config| config.skills.clone()).unwrap_or_default();
    let settings = LoadSettings::new(&skills_config)?;
    let configured = match config.as_ref().and_then(|config| config.skills.as_ref()) {
        Some(skills) => load_skills(&source, skills)?,
        None => SkillSet::default(),
    };
    if dirs.is_empty() {
        if configured.skills.is_empty() {
            return Err(Error::Usage(format!(
                "no skills to audit: pass a skill folder (`evalock skills audit path/to/skill`) or add `[skills] roots` to {CONFIG_FILE}"
            )));
        }
        let targets: Vec<String> = configured.skills.iter().map(|skill| skill.path.clone()).collect();
        let scope = SkillScope {
            skills: &configured.skills,
            discovery_problems: &configured.problems,
            config: &skills_config,
            lock: lock.as_ref(),
            whole_project: true,
        };
        return Ok(outcome(&configured.skills, &targets, check_scope(&scope), lock.as_ref(), &skills_config));
    }
    let mut in_project: Vec<Skill> = configured.skills.clone();
    let mut targets = Vec::new();
    let mut result = AuditOutcome::default();
    for dir in dirs {
        match locate(project_root, dir)? {
            DirPlace::Inside(relative) => {
                let found = skills_below(&source, &relative)?;
                if found.is_empty() {
                    return Err(no_skill(dir));
                }
                let new: Vec<String> =
                    found.iter().filter(|path| !in_project.iter().any(|skill| &skill.path == *path)).cloned().collect();
                in_project.extend(load_paths(&source, &new, false, &settings)?);
                targets.extend(found);
            }
            DirPlace::Outside { parent, name } => {
                let outside = WorktreeSource::new(&parent);
                let found = skills_below(&outside, &name)?;
                if found.is_empty() {
                    return Err(no_skill(dir));
                }
                let skills = load_paths(&outside, &found, false, &settings)?;
                let scope = SkillScope { skills: &skills, discovery_problems: &[], config: &skills_config, lock: None, whole_project: false };
                let audited = outcome(&skills, &found, check_scope(&scope), None, &skills_config);
                result.skills.extend(audited.skills);
            }
        }
    }
    let scope = SkillScope { skills: &in_project, discovery_problems: &[], config: &skills_config, lock: lock.as_ref(), whole_project: false };
    let mut dedup = BTreeSet::new();
    targets.retain(|path| dedup.insert(path.clone()));
    let audited = outcome(&in_project, &targets, check_scope(&scope), lock.as_ref(), &skills_config);
    result.skills.splice(0..0, audited.skills);
    Ok(result)
}

fn no_skill(dir: &Path) -> Error {
    Error::Usage(format!("{} holds no SKILL.md: a skill is a folder with a SKILL.md file", dir.display()))
}

enum DirPlace {
    /// Project-relative folder.
    Inside(String),
    /// Outside the project (or the project root itself): audited on its own.
    Outside { parent: PathBuf, name: String },
}

fn locate(project_root: &Path, dir: &Path) -> Result<DirPlace> {
    let joined = if dir.is_absolute() { dir.to_path_buf() } else { project_root.join(dir) };
    if !joined.is_dir() {
        return Err(Error::Usage(format!("{}: no such directory", dir.display())));
    }
    let canonical = joined.canonicalize().map_err(|error| Error::io(dir.display().to_string(), error))?;
    let root = project_root.canonicalize().map_err(|error| Error::io(project_root.display().to_string(), error))?;
    if let Ok(relative) = canonical.strip_prefix(&root) {
        let parts: Vec<String> = relative.components().map(|part| part.as_os_str().to_string_lossy().into_owned()).collect();
        if !parts.is_empty() {
            return Ok(DirPlace::Inside(parts.join("/")));
        }
    }
    let parent = canonical.parent().ok_or_else(|| Error::Usage(format!("{}: cannot audit the file system root", dir.display())))?;
    let name = canonical.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
    Ok(DirPlace::Outside { parent: parent.to_path_buf(), name })
}

/// Groups findings by audited skill and builds its lines; other findings stay apart.
fn outcome(
    skills: &[Skill],
    targets: &[String],
    mut findings: Vec<Finding>,
    lock: Option<&Lock>,
    config: &SkillsConfig,
) -> AuditOutcome {
    sort_findings(&mut findings);
    let mut result = AuditOutcome::default();
    for path in targets {
        let Some(skill) = skills.iter().find(|skill| &skill.path == path) else { continue };
        let own: Vec<Finding> =
            findings.iter().filter(|finding| finding.subject.skill.as_deref() == Some(path.as_str())).cloned().collect();
        result.skills.push(SkillAudit { path: path.clone(), name: skill.name().to_owned(), lines: audit_lines(skill, &own, lock, config) });
    }
    let all: BTreeSet<&str> = skills.iter().map(|skill| skill.path.as_str()).collect();
    result.other = findings
        .into_iter()
        .filter(|finding| finding.subject.skill.as_deref().is_none_or(|path| !all.contains(path)))
        .collect();
    result
}

/// The criterion an audit files a finding under: skill.json problems get their own line.
fn criterion_of(skill: &Skill, finding: &Finding) -> Option<Criterion> {
    let about_manifest = finding.rule == RuleId::SkillTampered
        && finding.location.as_ref().is_some_and(|location| location.path == skill.manifest_path() && location.line.is_some());
    if about_manifest {
        Some(Criterion::Manifest)
    } else {
        Criterion::of(finding.rule)
    }
}

/// The four lines of the seed article, plus `manifest` and `name` lines when those fail.
pub fn audit_lines(skill: &Skill, findings: &[Finding], lock: Option<&Lock>, config: &SkillsConfig) -> Vec<AuditLine> {
    let mut lines = Vec::new();
    let all = [
        Criterion::Manifest,
        Criterion::Provenance,
        Criterion::Versioning,
        Criterion::Permissions,
        Criterion::Executables,
        Criterion::Name,
    ];
    for criterion in all {
        let own: Vec<Finding> = findings
            .iter()
            .filter(|finding| criterion_of(skill, finding) == Some(criterion) && finding.severity >= Severity::Warn)
            .cloned()
            .collect();
        let status = match own.iter().map(|finding| finding.severity).max() {
            Some(Severity::Refuse | Severity::Error) => AuditStatus::Fail,
            Some(Severity::Warn) => AuditStatus::Warn,
            _ => AuditStatus::Pass,
        };
        if matches!(criterion, Criterion::Name | Criterion::Manifest) && status == AuditStatus::Pass {
            continue;
        }
        let message = headline(criterion, status, skill, &own, lock, config);
        lines.push(AuditLine { status, criterion, message, findings: own });
    }
    lines
}

fn has(findings: &[Finding], rule: RuleId) -> bool {
    findings.iter().any(|finding| finding.rule == rule && finding.severity >= Severity::Error)
}

fn headline(
    criterion: Criterion,
    status: AuditStatus,
    skill: &Skill,
    findings: &[Finding],
    lock: Option<&Lock>,
    config: &SkillsConfig,
) -> String {
    let first_message = || findings.first().map(|finding| finding.message.clone()).unwrap_or_default();
    match (criterion, status) {
        (Criterion::Provenance, AuditStatus::Pass) => provenance_summary(skill),
        (Criterion::Provenance, _) => "need source.repo and a real 40-char source.commit".to_owned(),
        (Criterion::Versioning, AuditStatus::Pass) => {
            format!("{}, {} files pinned by sha256", skill.version().unwrap_or(""), pinned_count(skill, lock))
        }
        (Criterion::Versioning, _) if has(findings, RuleId::SkillVersion) => version_problem(skill),
        (Criterion::Versioning, _) => {
            let (unlisted, changed_or_missing) = drifted_files(skill, lock);
            if unlisted.is_empty() && changed_or_missing.is_empty() {
                first_message()
            } else {
                format!("unlisted={} changed_or_missing={}", python_list(&unlisted), python_list(&changed_or_missing))
            }
        }
        (Criterion::Permissions, AuditStatus::Pass) => {
            skill.declared_permissions().into_iter().collect::<Vec<_>>().join(", ")
        }
        (Criterion::Permissions, _) if skill.declared_permissions().is_empty() => "no permissions declared".to_owned(),
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
            let declared: Vec<String> =
                skill.declared_executables().into_iter().filter(|path| skill.tree.file(path).is_some()).collect();
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
            let commit: String = remote.commit.as_deref().unwrap_or("").chars().take(12).collect();
            match &remote.registry {
                Some(registry) => format!("{repo} @ {commit} (registry {registry} {})", remote.version.as_deref().unwrap_or("")),
                None => format!("{repo} @ {commit}"),
            }
        }
        _ => "local: authored in this repository".to_owned(),
    }
}

fn version_problem(skill: &Skill) -> String {
    let from_manifest = skill.manifest.as_ref().and_then(|manifest| manifest.version.as_ref()).map(|version| &version.value);
    let from_front = skill.front_matter.as_ref().and_then(|front| front.metadata_version.as_ref()).map(|version| &version.value);
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
    if let Some(files) = skill.manifest.as_ref().and_then(|manifest| manifest.files.as_ref()) {
        pinned.extend(files.value.keys().map(String::as_str));
    }
    pinned.len()
}

/// Skill-relative files that no pin lists, and files that differ from a pin or are gone.
fn drifted_files(skill: &Skill, lock: Option<&Lock>) -> (Vec<String>, Vec<String>) {
    let mut unlisted = BTreeSet::new();
    let mut changed_or_missing = BTreeSet::new();
    let lock_entry = lock.and_then(|lock| lock.skills.get(&skill.path));
    let from_lock = lock_entry.map(|entry| lock_drift(skill, entry)).unwrap_or_default();
    for (path, drift) in from_lock.into_iter().chain(manifest_drift(skill)) {
        match drift {
            Drift::Unlisted => unlisted.insert(path),
            Drift::Changed { .. } | Drift::Mode { .. } | Drift::Missing => changed_or_missing.insert(path),
        };
    }
    (unlisted.into_iter().collect(), changed_or_missing.into_iter().collect())
}

fn executables_problem(skill: &Skill, findings: &[Finding]) -> String {
    let declared = skill.declared_executables();
    let undeclared: Vec<String> =
        skill.tree.files.iter().filter(|file| file.is_executable() && !declared.contains(&file.path)).map(|file| file.path.clone()).collect();
    let risky: Vec<String> = skill
        .tree
        .files
        .iter()
        .filter(|file| {
            let path = skill.file_path(&file.path);
            findings.iter().any(|finding| {
                finding.rule == RuleId::SkillRiskyContent
                    && finding.severity >= Severity::Error
                    && finding.location.as_ref().is_some_and(|location| location.path == path)
            })
        })
        .map(|file| file.path.clone())
        .collect();
    let missing: Vec<String> = declared.iter().filter(|path| skill.tree.file(path).is_none()).cloned().collect();
    let mut message = format!("undeclared={} risky_patterns={}", python_list(&undeclared), python_list(&risky));
    if !missing.is_empty() {
        message.push_str(&format!(" missing={}", python_list(&missing)));
    }
    message
}

fn warned_paths(skill: &Skill, findings: &[Finding]) -> Vec<String> {
    skill
        .tree
        .files
        .iter()
        .filter(|file| {
            let path = skill.file_path(&file.path);
            findings.iter().any(|finding| {
                finding.severity == Severity::Warn && finding.location.as_ref().is_some_and(|location| location.path == path)
            })
        })
        .map(|file| file.path.clone())
        .collect()
}

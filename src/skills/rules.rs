//! EL2xx: skills against their pins (evalock.lock, skill.json `files`), the project's
//! policy (`[skills]` in evalock.toml) and the base revision.

mod content;
mod hidden;
mod integrity;
mod naming;
mod policy;
mod versioning;

use crate::finding::{Finding, Location, Subject};
use crate::project::config::SkillsConfig;
use crate::project::lock::Lock;
use crate::rules::RuleId;
use crate::skills::discovery::PluginManifest;
use crate::skills::{DiscoveryProblem, Located, Skill, SkillSet};

/// What the EL2xx rules read of one snapshot of the project.
#[derive(Clone, Copy)]
pub struct Side<'a> {
    pub skills: &'a SkillSet,
    /// `[skills]` of evalock.toml, when it has one.
    pub config: Option<&'a SkillsConfig>,
    pub lock: Option<&'a Lock>,
    /// `working tree`, `index`, `main (1a2b3c4)`.
    pub source: &'a str,
}

/// What the skill rules judge: the skills of one snapshot, the policy and the pins.
pub struct SkillScope<'a> {
    pub skills: &'a [Skill],
    pub discovery_problems: &'a [DiscoveryProblem],
    /// The plugin manifests discovery read (marketplaces, `plugin.json`).
    pub manifests: &'a [PluginManifest],
    pub config: &'a SkillsConfig,
    pub lock: Option<&'a Lock>,
    /// A whole-project check also reports locked skills that are gone; an audit of named
    /// folders does not.
    pub whole_project: bool,
}

/// Every skill rule for a project, and EL209 against the base revision when given.
pub fn check(project: &Side<'_>, base: Option<&Side<'_>>) -> Vec<Finding> {
    let config = project.config.cloned().unwrap_or_default();
    let scope = SkillScope {
        skills: &project.skills.skills,
        discovery_problems: &project.skills.problems,
        manifests: &project.skills.manifests,
        config: &config,
        lock: project.lock,
        whole_project: true,
    };
    let mut findings = check_scope(&scope);
    findings.extend(unlisted(&project.skills.unlisted));
    if let Some(base) = base {
        findings.extend(policy::permission_escalation(
            &project.skills.skills,
            &base.skills.skills,
            base.source,
        ));
        if let Some(base_lock) = base.lock {
            findings.extend(versioning::changed_unversioned(
                &project.skills.skills,
                base_lock,
                base.source,
            ));
        }
        // Only against a base that had a `[skills]` table: adopting the skill rules sets
        // the first allowlist, which nothing granted before.
        if let Some(base_config) = base.config {
            findings.extend(allowlist_grown(&config, base_config, base.source));
        }
    }
    findings
}

/// EL213: each folder holding a SKILL.md that no root or marketplace finds.
fn unlisted(folders: &[String]) -> Vec<Finding> {
    folders
        .iter()
        .map(|folder| {
            let skill_md = match folder.is_empty() {
                true => crate::skills::SKILL_FILE.to_owned(),
                false => format!("{folder}/{}", crate::skills::SKILL_FILE),
            };
            let root = match folder.rsplit_once('/') {
                Some((parent, _)) => format!("{}/*", globset::escape(parent)),
                None => globset::escape(folder),
            };
            Finding::new(
                RuleId::SkillUnlisted,
                Subject::skill(folder),
                format!("{skill_md} is outside every `[skills] roots` glob and marketplace: an agent that opens the project can load it as a skill, and nothing pins or audits it"),
            )
            .at(Location::line(skill_md, 1))
            .help(format!(
                "add \"{root}\" to `[skills] roots` in evalock.toml and run `evalock lock`; or, if no agent loads it (a fixture, an example), add \"{folder}/**\" to `[skills] exclude`"
            ))
            .discriminator("unlisted")
        })
        .collect()
}

/// EL209 for the project itself: compared with the base, `[skills] allowed_permissions`
/// grew. A skill renamed (folder and `name`) has no counterpart in the base to be compared
/// with, so the allowlist it needs is where the escalation shows.
fn allowlist_grown(
    config: &SkillsConfig,
    base_config: &SkillsConfig,
    base_description: &str,
) -> Vec<Finding> {
    let grown: Vec<&String> = config
        .allowed_permissions
        .iter()
        .filter(|permission| !base_config.allowed_permissions.contains(permission))
        .collect();
    if grown.is_empty() {
        return Vec::new();
    }
    let line = config.allowed_permissions_line;
    let listed = grown
        .iter()
        .map(|permission| format!("'{permission}'"))
        .collect::<Vec<_>>()
        .join(", ");
    vec![Finding::new(
        RuleId::SkillPermissionEscalation,
        Subject::default(),
        format!("`[skills] allowed_permissions` now allows [{listed}], which {base_description} did not"),
    )
    .at(Location::line(crate::project::config::CONFIG_FILE, line))
    .discriminator(&listed)
    .help("review why skills need more; if it is intended, give a commit since the base the trailer `Evalock-Approved: EL209 evalock.toml: <why>`, so that the review approves it")]
}

/// The rules that need no base revision.
pub fn check_scope(scope: &SkillScope) -> Vec<Finding> {
    let mut findings = integrity::tampered(scope);
    findings.extend(integrity::unpinned(scope));
    findings.extend(integrity::plugins_missing(scope));
    for skill in scope.skills {
        findings.extend(policy::provenance(skill));
        findings.extend(policy::version(skill));
        findings.extend(policy::permissions(
            skill,
            &scope.config.allowed_permissions,
        ));
        findings.extend(content::executables(skill, scope.config));
        findings.extend(content::risky_content(skill, scope.config));
        findings.extend(hidden::hidden_instructions(skill));
        findings.extend(naming::names_invalid(skill));
    }
    findings.extend(naming::name_collisions(scope.skills));
    findings.extend(hidden::manifests_hidden_instructions(scope.manifests));
    findings
}

pub use integrity::{lock_drift, manifest_drift, Drift};
pub use policy::{permission_escalation, semver_for};

/// The four criteria of the seed article's audit, plus `manifest` (skill.json cannot be
/// verified) and `name` (the specification), shown only when they fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Criterion {
    Manifest,
    Provenance,
    Versioning,
    Permissions,
    Executables,
    /// Instructions hidden from the reader (EL211): shown only when something is found.
    Instructions,
    Name,
}

impl Criterion {
    pub fn of(rule: RuleId) -> Option<Criterion> {
        match rule {
            RuleId::SkillProvenance => Some(Criterion::Provenance),
            RuleId::SkillTampered
            | RuleId::SkillVersion
            | RuleId::SkillUnpinned
            | RuleId::SkillChangedUnversioned
            | RuleId::SkillPluginMissing => Some(Criterion::Versioning),
            RuleId::SkillHiddenInstructions => Some(Criterion::Instructions),
            RuleId::SkillPermissions | RuleId::SkillPermissionEscalation => {
                Some(Criterion::Permissions)
            }
            RuleId::SkillExecutable | RuleId::SkillRiskyContent => Some(Criterion::Executables),
            RuleId::SkillNameCollision | RuleId::SkillNameInvalid => Some(Criterion::Name),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Criterion::Manifest => "manifest",
            Criterion::Provenance => "provenance",
            Criterion::Versioning => "versioning",
            Criterion::Permissions => "permissions",
            Criterion::Executables => "executables",
            Criterion::Instructions => "instructions",
            Criterion::Name => "name",
        }
    }
}

fn subject(skill: &Skill) -> Subject {
    Subject::skill(&skill.path)
}

/// A finding about `skill`, fingerprinted by `discriminator`.
fn skill_finding(rule: RuleId, skill: &Skill, discriminator: &str, message: String) -> Finding {
    Finding::new(rule, subject(skill), message).discriminator(discriminator)
}

/// The lines of a located field in a skill's file.
fn field_location<T>(path: String, field: &Located<T>) -> Location {
    Location::span(path, field.line, field.end_line)
}

/// The first line of SKILL.md: where the front matter starts.
fn front_matter_location(skill: &Skill) -> Location {
    Location::line(skill.skill_md_path(), 1)
}

/// A TOML snippet a reviewer pastes into evalock.toml to acknowledge a warning.
fn acknowledge_snippet(rule: RuleId, file: &str, digest: &crate::digest::Digest) -> String {
    format!(
        "[[skills.acknowledge]]\nrule = \"{}\"\nfile = \"{file}\"\ndigest = \"{digest}\"\nreason = \"read in full and run once in a sandbox by <reviewer>\"",
        rule.id()
    )
}

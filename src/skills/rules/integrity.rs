//! EL201 skill-tampered (every byte and mode against evalock.lock and skill.json `files`)
//! and EL210 skill-unpinned (registry skills need an exact version and a content digest).

use super::{skill_finding, SkillScope};
use crate::digest::{Digest, EntryKind, SHORT_HEX_DIGITS};
use crate::finding::{Finding, Location, Subject};
use crate::project::lock::skills::SkillLock;
use crate::project::lock::LOCK_FILE;
use crate::rules::RuleId;
use crate::skills::discovery::ProblemKind;
use crate::skills::{Skill, SourceDecl, MANIFEST_FILE, SKILL_FILE};
use std::collections::BTreeSet;

/// EL201 for every skill in scope, plus locked skills that are gone and discovery problems.
pub fn tampered(scope: &SkillScope) -> Vec<Finding> {
    let mut findings = Vec::new();
    for skill in scope.skills {
        findings.extend(against_lock(skill, scope));
        findings.extend(against_manifest(skill));
        findings.extend(unpinnable_entries(skill));
        for problem in &skill.manifest_problems {
            findings.push(
                skill_finding(
                    RuleId::SkillTampered,
                    skill,
                    &format!("manifest:{}", problem.message),
                    format!(
                        "{}:{}: {}",
                        skill.manifest_path(),
                        problem.line,
                        problem.message
                    ),
                )
                .at(Location::line(skill.manifest_path(), problem.line).with_column(problem.column))
                .help(format!(
                    "fix {}:{} so the manifest can be verified",
                    skill.manifest_path(),
                    problem.line
                )),
            );
        }
    }
    if scope.whole_project {
        findings.extend(locked_skills_gone(scope));
    }
    findings.extend(discovery_findings(
        scope,
        ProblemKind::Unpinnable,
        RuleId::SkillTampered,
        "fix the marketplace entry so every listed skill is a folder in this repository with a SKILL.md",
    ));
    findings
}

/// EL214: plugins and skills a marketplace lists that are not folders here.
pub fn plugins_missing(scope: &SkillScope) -> Vec<Finding> {
    discovery_findings(
        scope,
        ProblemKind::Missing,
        RuleId::SkillPluginMissing,
        RuleId::SkillPluginMissing.rule().help,
    )
}

/// The discovery problems of one kind, as findings of `rule`.
fn discovery_findings(
    scope: &SkillScope,
    kind: ProblemKind,
    rule: RuleId,
    help: &str,
) -> Vec<Finding> {
    scope
        .discovery_problems
        .iter()
        .filter(|problem| problem.kind == kind)
        .map(|problem| {
            Finding::new(rule, Default::default(), problem.message.clone())
                .at(Location::line(&problem.file, problem.line))
                .help(problem.help.unwrap_or(help))
                .discriminator(&problem.message)
        })
        .collect()
}

/// How one file differs from a pin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Drift {
    Changed { pinned: String, now: String },
    Mode { pinned: EntryKind, now: EntryKind },
    Unlisted,
    Missing,
}

fn against_lock(skill: &Skill, scope: &SkillScope) -> Vec<Finding> {
    let entry = scope.lock.and_then(|lock| lock.skills.get(&skill.path));
    let Some(entry) = entry else {
        return not_in_lock(skill, scope.lock.is_some())
            .into_iter()
            .collect();
    };
    let mut findings: Vec<Finding> = lock_drift(skill, entry)
        .into_iter()
        .map(|(relative, drift)| drift_finding(skill, &relative, drift, LOCK_FILE))
        .collect();
    if findings.is_empty() {
        let current = skill.lock_entry(scope.config);
        if &current != entry {
            findings.push(
                skill_finding(
                    RuleId::SkillTampered,
                    skill,
                    "lock:metadata",
                    format!(
                        "the {LOCK_FILE} entry of skill `{}` ({}) is stale: {} changed",
                        skill.name(),
                        skill.path,
                        stale_fields(entry, &current).join(", ")
                    ),
                )
                .at(Location::file(LOCK_FILE))
                .help("run `evalock lock` and commit evalock.lock with the change that caused it"),
            );
        }
    }
    findings
}

fn not_in_lock(skill: &Skill, lock_exists: bool) -> Option<Finding> {
    let pinned_by_manifest = skill
        .manifest
        .as_ref()
        .is_some_and(|manifest| manifest.files.is_some());
    let message = if skill.configured && lock_exists {
        format!(
            "skill `{}` ({}) is new and not pinned in {LOCK_FILE}",
            skill.name(),
            skill.path
        )
    } else if skill.configured {
        format!(
            "skill `{}` ({}) is not pinned: there is no {LOCK_FILE} yet",
            skill.name(),
            skill.path
        )
    } else if !pinned_by_manifest {
        format!("nothing pins the files of {}: it is not in {LOCK_FILE} and its skill.json lists no `files`", skill.path)
    } else {
        return None;
    };
    let help = if skill.configured {
        "review every file of the skill, then run `evalock lock` and commit evalock.lock"
    } else {
        "add the folder to `[skills] roots` in evalock.toml and run `evalock lock`, or list every file's sha256 under `files` in skill.json"
    };
    Some(
        skill_finding(RuleId::SkillTampered, skill, "lock:absent", message)
            .at(Location::file(skill.skill_md_path()))
            .help(help),
    )
}

/// Each file of `skill` that differs from its lock entry (skill-relative path, how).
pub fn lock_drift(skill: &Skill, entry: &SkillLock) -> Vec<(String, Drift)> {
    let mut drift = Vec::new();
    for file in &skill.tree.files {
        match entry.files.get(&file.path) {
            None => drift.push((file.path.clone(), Drift::Unlisted)),
            Some(pinned) if pinned.kind != file.kind && pinned.digest == file.digest => {
                drift.push((
                    file.path.clone(),
                    Drift::Mode {
                        pinned: pinned.kind,
                        now: file.kind,
                    },
                ));
            }
            Some(pinned) if pinned.kind != file.kind || pinned.digest != file.digest => {
                drift.push((
                    file.path.clone(),
                    Drift::Changed {
                        pinned: pinned.digest.short().to_owned(),
                        now: file.digest.short().to_owned(),
                    },
                ))
            }
            Some(_) => {}
        }
    }
    let present: BTreeSet<&str> = skill
        .tree
        .files
        .iter()
        .map(|file| file.path.as_str())
        .collect();
    for path in entry
        .files
        .keys()
        .filter(|path| !present.contains(path.as_str()))
    {
        drift.push((path.clone(), Drift::Missing));
    }
    drift
}

fn against_manifest(skill: &Skill) -> Vec<Finding> {
    manifest_drift(skill)
        .into_iter()
        .map(|(relative, drift)| drift_finding(skill, &relative, drift, MANIFEST_FILE))
        .collect()
}

/// Each file that differs from skill.json `files` (every file but skill.json itself is listed).
pub fn manifest_drift(skill: &Skill) -> Vec<(String, Drift)> {
    let Some(listed) = skill
        .manifest
        .as_ref()
        .and_then(|manifest| manifest.files.as_ref())
    else {
        return Vec::new();
    };
    let mut drift = Vec::new();
    for file in skill
        .tree
        .files
        .iter()
        .filter(|file| file.path != MANIFEST_FILE)
    {
        match listed.value.get(&file.path) {
            None => drift.push((file.path.clone(), Drift::Unlisted)),
            Some(hex) if *hex != file.digest.hex() => drift.push((
                file.path.clone(),
                Drift::Changed {
                    pinned: format!("sha256:{}", hex.get(..SHORT_HEX_DIGITS).unwrap_or(hex)),
                    now: file.digest.short().to_owned(),
                },
            )),
            Some(_) => {}
        }
    }
    for path in listed
        .value
        .keys()
        .filter(|path| skill.tree.file(path).is_none())
    {
        drift.push((path.clone(), Drift::Missing));
    }
    drift
}

fn drift_finding(skill: &Skill, relative: &str, drift: Drift, pin: &str) -> Finding {
    let path = skill.file_path(relative);
    let pin_name = if pin == MANIFEST_FILE {
        "skill.json `files`"
    } else {
        LOCK_FILE
    };
    let relock = if pin == MANIFEST_FILE {
        "update its sha256 under `files` in skill.json"
    } else {
        "run `evalock lock`"
    };
    let (kind, message, help) = match drift {
        Drift::Changed { pinned, now } => (
            "changed",
            format!("{path} changed since it was pinned in {pin_name} ({pinned} pinned, {now} now)"),
            format!("review the change; if it is intended, {relock} (and bump the skill's version), else restore the committed file with `git restore --source=HEAD --staged --worktree -- {path}`"),
        ),
        Drift::Mode { pinned, now } => (
            "mode",
            format!("{path} changed mode since it was pinned: {} pinned, {} now", mode_name(pinned), mode_name(now)),
            format!(
                "restore the mode with `chmod {} {path}`, or {relock} if the new mode is intended",
                if pinned == EntryKind::Executable { "+x" } else { "-x" }
            ),
        ),
        Drift::Unlisted => (
            "unlisted",
            format!("{path} is new in skill `{}` and not pinned in {pin_name}", skill.name()),
            format!("review the file, then {relock}; delete it if it is generated"),
        ),
        Drift::Missing => (
            "missing",
            format!("{path} is pinned in {pin_name} but missing"),
            format!("restore the committed one with `git restore --source=HEAD --staged --worktree -- {path}`, or {relock} if removing it is intended"),
        ),
    };
    let location = if matches!(kind, "missing") && pin == MANIFEST_FILE {
        Location::file(skill.manifest_path())
    } else {
        Location::file(path)
    };
    skill_finding(
        RuleId::SkillTampered,
        skill,
        &format!("{pin}:{kind}:{relative}"),
        message,
    )
    .at(location)
    .help(help)
}

fn mode_name(kind: EntryKind) -> &'static str {
    match kind {
        EntryKind::File => "regular file (f)",
        EntryKind::Executable => "executable (x)",
        EntryKind::Symlink => "symlink (l)",
    }
}

fn stale_fields(locked: &SkillLock, current: &SkillLock) -> Vec<&'static str> {
    let mut fields = Vec::new();
    let checks: [(&'static str, bool); 8] = [
        ("name", locked.name != current.name),
        ("version", locked.version != current.version),
        ("source", locked.source != current.source),
        ("digest", locked.digest != current.digest),
        (
            "allowed_tools",
            locked.allowed_tools != current.allowed_tools,
        ),
        ("permissions", locked.permissions != current.permissions),
        ("executables", locked.executables != current.executables),
        ("acknowledged", locked.acknowledged != current.acknowledged),
    ];
    for (name, differs) in checks {
        if differs {
            fields.push(name);
        }
    }
    fields
}

/// A nested repository and symlinks leaving the skill cannot be pinned by the skill's files.
fn unpinnable_entries(skill: &Skill) -> Vec<Finding> {
    let mut findings = Vec::new();
    for git_dir in &skill.tree.nested_git {
        let path = skill.file_path(git_dir);
        let parent = git_dir
            .strip_suffix(".git")
            .unwrap_or("")
            .trim_end_matches('/');
        let folder = if parent.is_empty() {
            skill.path.clone()
        } else {
            skill.file_path(parent)
        };
        findings.push(
            skill_finding(RuleId::SkillTampered, skill, &format!("nested-git:{git_dir}"), format!(
                "{path} is a nested git repository inside skill `{}`; a skill is pinned as plain files, so its history was not read",
                skill.name()
            ))
            .at(Location::file(path.clone()))
            .help(format!("move the history out of the skill (`mv {path} {folder}.git`), or vendor the files without their .git")),
        );
    }
    for entry in &skill.tree.unpinnable {
        let path = skill.file_path(&entry.path);
        findings.push(
            skill_finding(
                RuleId::SkillTampered,
                skill,
                &format!("unpinnable:{}", entry.path),
                format!("{} cannot be pinned: {}", path.escape_debug(), entry.reason),
            )
            .at(Location::file(skill.path.clone()))
            .help(entry.help),
        );
    }
    for file in skill.tree.files.iter().filter(|file| file.escapes()) {
        let path = skill.file_path(&file.path);
        findings.push(
            skill_finding(RuleId::SkillTampered, skill, &format!("symlink-escape:{}", file.path), format!(
                "{path} is a symlink to `{}`, outside skill `{}`; evalock never follows it, so what it points at is not pinned",
                file.link_target.as_deref().unwrap_or(""),
                skill.name()
            ))
            .at(Location::file(path.clone()))
            .help(format!("replace the symlink with a copy of the file (`cp --remove-destination \"$(readlink -f {path})\" {path}`), or point it inside the skill")),
        );
    }
    findings
}

/// Locked skill folders that no longer hold a skill.
fn locked_skills_gone(scope: &SkillScope) -> Vec<Finding> {
    let Some(lock) = scope.lock else {
        return Vec::new();
    };
    let present: BTreeSet<&str> = scope
        .skills
        .iter()
        .map(|skill| skill.path.as_str())
        .collect();
    lock.skills
        .iter()
        .filter(|(path, _)| !present.contains(path.as_str()))
        .map(|(path, entry)| {
            let name = entry.name.as_deref().unwrap_or(path);
            Finding::new(
                RuleId::SkillTampered,
                Subject::skill(path),
                format!("skill `{name}` ({path}) is pinned in {LOCK_FILE} but is gone: {path}/{SKILL_FILE} is missing or the folder is no longer under `[skills] roots`"),
            )
            .at(Location::file(format!("{path}/{SKILL_FILE}")))
            .help(format!("restore the committed one with `git restore --source=HEAD --staged --worktree -- {path}`, or run `evalock lock` if removing the skill is intended"))
            .discriminator("gone")
        })
        .collect()
}

/// EL210: registry skills pinned by name and tag alone, and remote marketplace plugins.
pub fn unpinned(scope: &SkillScope) -> Vec<Finding> {
    let mut findings = Vec::new();
    for skill in scope.skills {
        let Some(source) = skill.source() else {
            continue;
        };
        let SourceDecl::Remote(remote) = &source.value else {
            continue;
        };
        if !remote.is_registry() {
            continue;
        }
        let at = Location::line(skill.manifest_path(), source.line);
        let registry = remote.registry.as_deref().unwrap_or("");
        let content = skill.content_digest();
        match remote.version.as_deref() {
            Some(version) if crate::skills::spec::is_semver(version) => {}
            other => findings.push(
                skill_finding(RuleId::SkillUnpinned, skill, "version", format!(
                    "registry skill `{}` ({registry}) is resolved by {}: a publisher can re-publish under the same tag",
                    skill.name(),
                    other.map_or("name alone".to_owned(), |tag| format!("the tag or range `{tag}`"))
                ))
                .at(at.clone())
                .help("set `source.version` in skill.json to the exact version you mirrored and reviewed"),
            ),
        }
        match remote.digest.as_deref().map(normalize_digest) {
            None => findings.push(
                skill_finding(RuleId::SkillUnpinned, skill, "digest", format!(
                    "registry skill `{}` ({registry}) has no content digest: a version tag alone is not a pin",
                    skill.name()
                ))
                .at(at.clone())
                .help(format!("after reviewing the mirrored copy, set `\"digest\": \"{content}\"` under `source` in {}", skill.manifest_path())),
            ),
            Some(declared) if *declared != content.to_string() => findings.push(
                skill_finding(RuleId::SkillUnpinned, skill, "digest-mismatch", format!(
                    "registry skill `{}` does not match its pinned content digest ({} pinned, {} now)",
                    skill.name(),
                    short(&declared),
                    content.short()
                ))
                .at(at.clone())
                .help("restore the mirrored copy of that exact version, or review the new content and update `source.digest` and `source.version` together"),
            ),
            Some(_) => {}
        }
    }
    findings.extend(discovery_findings(
        scope,
        ProblemKind::Remote,
        RuleId::SkillUnpinned,
        "pin it: add the full 40-hex `sha` of the commit you reviewed to the plugin's `source` (or an exact `version` for an npm or pip package), or vendor the plugin into this repository and list its local path",
    ));
    findings
}

fn normalize_digest(text: &str) -> String {
    if text.starts_with("sha256:") {
        text.to_owned()
    } else {
        format!("sha256:{text}")
    }
}

fn short(digest: &str) -> String {
    Digest::parse(digest).map_or_else(
        |_| {
            digest
                .chars()
                .take("sha256:".len() + SHORT_HEX_DIGITS)
                .collect()
        },
        |parsed| parsed.short().to_owned(),
    )
}

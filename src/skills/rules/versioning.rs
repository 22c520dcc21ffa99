//! EL212: compared with the base revision, a skill that has a version and whose files
//! changed must have a new version, as a shipped case must (EL102). `evalock lock` pins
//! whatever the files are, so the lock alone cannot tell an edit from a release.

use super::integrity::Drift;
use super::{field_location, front_matter_location, integrity::lock_drift, skill_finding};
use crate::finding::{Finding, Location};
use crate::project::lock::skills::SkillLock;
use crate::project::lock::Lock;
use crate::rules::RuleId;
use crate::skills::Skill;
use std::collections::{BTreeMap, BTreeSet};

/// EL212 for each skill whose files differ from what the base's lock pinned while its
/// version is the one the base's lock recorded. A skill is followed across a move by its
/// `name`, as EL209 follows it.
pub fn changed_unversioned(
    skills: &[Skill],
    base_lock: &Lock,
    base_description: &str,
) -> Vec<Finding> {
    let current: BTreeSet<&str> = skills.iter().map(|skill| skill.path.as_str()).collect();
    let mut gone_by_name: BTreeMap<&str, &SkillLock> = BTreeMap::new();
    for (path, entry) in &base_lock.skills {
        if let (false, Some(name)) = (current.contains(path.as_str()), &entry.name) {
            gone_by_name.entry(name.as_str()).or_insert(entry);
        }
    }
    let mut findings = Vec::new();
    for skill in skills {
        let Some(base) = base_lock
            .skills
            .get(&skill.path)
            .or_else(|| gone_by_name.get(skill.name()).copied())
        else {
            continue;
        };
        let (Some(then), Some(now)) = (base.version.as_deref(), skill.version()) else {
            continue;
        };
        if then != now || base.digest == skill.digest() {
            continue;
        }
        findings.push(finding(skill, base, now, base_description));
    }
    findings
}

fn finding(skill: &Skill, base: &SkillLock, version: &str, base_description: &str) -> Finding {
    let drift = lock_drift(skill, base);
    let mut changed: Vec<String> = drift
        .iter()
        .take(5)
        .map(|(path, how)| match how {
            Drift::Changed { .. } => format!("{path} changed"),
            Drift::Mode { now, .. } => format!("{path} is now mode `{}`", now.letter()),
            Drift::Unlisted => format!("{path} is new"),
            Drift::Missing => format!("{path} is gone"),
        })
        .collect();
    if drift.len() > changed.len() {
        changed.push(format!("{} more", drift.len() - changed.len()));
    }
    let (location, field) = version_location(skill);
    let next = next_patch(version);
    skill_finding(
        RuleId::SkillChangedUnversioned,
        skill,
        &format!("unversioned:{version}"),
        format!(
            "skill `{}` changed since {base_description} ({}) but is still version {version}: an agent that has {version} cannot tell the two apart",
            skill.name(),
            changed.join(", ")
        ),
    )
    .at(location.clone())
    .help(format!(
        "bump {field} to {next} (or higher) and run `evalock lock`; if the change needs no new version, give a commit since the base the trailer `Evalock-Approved: EL212 {}: <why>`",
        location.path
    ))
}

/// Where the skill writes its version, and how a message names that field.
fn version_location(skill: &Skill) -> (Location, &'static str) {
    if let Some(version) = skill
        .manifest
        .as_ref()
        .and_then(|manifest| manifest.version.as_ref())
    {
        return (
            field_location(skill.manifest_path(), version),
            "`version` in skill.json",
        );
    }
    match skill
        .front_matter
        .as_ref()
        .and_then(|front| front.metadata_version.as_ref())
    {
        Some(version) => (
            field_location(skill.skill_md_path(), version),
            "`metadata.version` in SKILL.md",
        ),
        None => (front_matter_location(skill), "the version"),
    }
}

/// The next patch release of a `MAJOR.MINOR.PATCH` version (`1.2.3` -> `1.2.4`); a
/// version of another shape is named as it is, for the reader to pick the next.
fn next_patch(version: &str) -> String {
    let core = version.split(['-', '+']).next().unwrap_or(version);
    let parts: Vec<&str> = core.split('.').collect();
    match parts.as_slice() {
        [major, minor, patch] => match patch.parse::<u64>() {
            Ok(patch) => format!("{major}.{minor}.{}", patch + 1),
            Err(_) => format!("a version after {version}"),
        },
        _ => format!("a version after {version}"),
    }
}

#[cfg(test)]
mod tests {
    use super::next_patch;

    #[test]
    fn the_next_patch_follows_semver() {
        assert_eq!(next_patch("1.2.3"), "1.2.4");
        assert_eq!(next_patch("1.2.3-rc.1"), "1.2.4");
        assert_eq!(next_patch("1.0"), "a version after 1.0");
    }
}

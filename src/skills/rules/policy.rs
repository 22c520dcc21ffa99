//! EL202 provenance, EL203 version, EL204 permissions and EL209 permission growth
//! against the base revision.

use super::{field_location, front_matter_location, skill_finding};
use crate::finding::{Finding, Location};
use crate::rules::{RuleId, Severity};
use crate::skills::spec::{is_allowed, is_real_commit, is_semver, python_list, python_repr};
use crate::skills::{Located, Skill, SourceDecl};
use std::collections::{BTreeMap, BTreeSet};

/// EL202: a vendored or registry skill records its repository and an exact commit.
pub fn provenance(skill: &Skill) -> Option<Finding> {
    // What is wrong, as the fingerprint keeps it (a commit that changes from missing to
    // a placeholder is another finding), the message, and where.
    let (what, problem, location) = match skill.source() {
        Some(source) => match &source.value {
            SourceDecl::Remote(remote) => {
                let (what, problem) = match (
                    remote.repo.as_deref().map(str::trim),
                    remote.commit.as_deref(),
                ) {
                    (None | Some(""), _) => {
                        ("no-repo".to_owned(), "`source.repo` is missing".to_owned())
                    }
                    (_, None) => (
                        "no-commit".to_owned(),
                        "`source.commit` is missing".to_owned(),
                    ),
                    (_, Some(commit))
                        if commit.len() == 40 && commit.bytes().all(|byte| byte == b'0') =>
                    {
                        (
                            "zeros".to_owned(),
                            "`source.commit` is a placeholder of zeros".to_owned(),
                        )
                    }
                    (_, Some(commit)) if !is_real_commit(commit) => (
                        format!("not-hex:{commit}"),
                        format!(
                            "`source.commit` {} is not 40 lowercase hex digits",
                            python_repr(commit)
                        ),
                    ),
                    _ => return None,
                };
                (
                    what,
                    problem,
                    Location::line(skill.manifest_path(), remote.commit_line),
                )
            }
            SourceDecl::Local if skill.vendored => (
                "vendored-local".to_owned(),
                "it matches `[skills] vendored` but skill.json says `\"source\": \"local\"`"
                    .to_owned(),
                field_location(skill.manifest_path(), source),
            ),
            SourceDecl::Local => return None,
        },
        None if skill.vendored => {
            let location = if skill.manifest.is_some() {
                Location::line(skill.manifest_path(), 1)
            } else {
                front_matter_location(skill)
            };
            (
                "vendored-no-source".to_owned(),
                "it matches `[skills] vendored` but records no `source`".to_owned(),
                location,
            )
        }
        None => return None,
    };
    Some(
        skill_finding(
            RuleId::SkillProvenance,
            skill,
            &format!("source:{what}"),
            format!("skill `{}` needs source.repo and a real 40-char source.commit: {problem}", skill.name()),
        )
        .at(location)
        .help(format!(
            "record where it was copied from in {}: `\"source\": {{\"repo\": \"<url>\", \"commit\": \"<full 40-hex commit>\"}}`",
            skill.manifest_path()
        )),
    )
}

/// EL203: one semver version, the same wherever it is written.
pub fn version(skill: &Skill) -> Option<Finding> {
    let from_manifest = skill
        .manifest
        .as_ref()
        .and_then(|manifest| manifest.version.as_ref());
    let from_front = skill
        .front_matter
        .as_ref()
        .and_then(|front| front.metadata_version.as_ref());
    if skill.front_matter.is_none() && from_manifest.is_none() {
        return None; // EL208 reports the unreadable front matter; nothing to judge yet.
    }
    let finding = |discriminator: &str, message: String| {
        skill_finding(RuleId::SkillVersion, skill, discriminator, message)
    };
    if let (Some(manifest_version), Some(front_version)) = (from_manifest, from_front) {
        if manifest_version.value != front_version.value {
            return Some(
                finding(
                    &format!("disagree:{}:{}", manifest_version.value, front_version.value),
                    format!(
                        "skill `{}`: skill.json says version {} but SKILL.md `metadata.version` says {}",
                        skill.name(),
                        python_repr(&manifest_version.value),
                        python_repr(&front_version.value)
                    ),
                )
                .at(field_location(skill.skill_md_path(), front_version))
                .help("write the same semver version in both places"),
            );
        }
    }
    let (value, location) = match (from_manifest, from_front) {
        (Some(version), _) => (
            &version.value,
            field_location(skill.manifest_path(), version),
        ),
        (None, Some(version)) => (
            &version.value,
            field_location(skill.skill_md_path(), version),
        ),
        (None, None) => {
            return Some(
                // At the closing `---`, where the version goes.
                finding("missing", format!("skill `{}` has no version", skill.name()))
                    .at(match &skill.front_matter {
                        Some(front) => Location::line(skill.skill_md_path(), front.end_line),
                        None => front_matter_location(skill),
                    })
                    .help("add `metadata:` with `version: \"1.0.0\"` to SKILL.md's front matter (or `\"version\"` to skill.json)"),
            );
        }
    };
    if is_semver(value) {
        return None;
    }
    if let Some(read_as) = two_part_version(value) {
        // The agentskills specification's own example writes `version: "1.0"`.
        return Some(
            finding(
                "two-part",
                format!(
                    "skill `{}`: version {} is read as {read_as}",
                    skill.name(),
                    python_repr(value)
                ),
            )
            .severity(Severity::Note)
            .at(location)
            .help(format!("write `{read_as}` to say so yourself")),
        );
    }
    Some({
        finding(
            &format!("semver:{value}"),
            format!(
                "skill `{}`: version {} is not MAJOR.MINOR.PATCH",
                skill.name(),
                python_repr(value)
            ),
        )
        .at(location)
        .help(format!(
            "use a semver version such as {}",
            semver_suggestion(value)
        ))
    })
}

/// `MAJOR.MINOR` (numbers without leading zeros), read as `MAJOR.MINOR.0`.
fn two_part_version(version: &str) -> Option<String> {
    let (major, minor) = version.split_once('.')?;
    let number = |part: &str| {
        !part.is_empty()
            && part.bytes().all(|byte| byte.is_ascii_digit())
            && (part == "0" || !part.starts_with('0'))
    };
    (number(major) && number(minor)).then(|| format!("{version}.0"))
}

/// The semver version a reviewer would write for `version`, or `None` when it is one
/// already.
pub fn semver_for(version: &str) -> Option<String> {
    if is_semver(version) {
        return None;
    }
    Some(two_part_version(version).unwrap_or_else(|| semver_suggestion(version)))
}

fn semver_suggestion(version: &str) -> String {
    let numbers: Vec<&str> = version
        .trim_start_matches('v')
        .split('.')
        .filter(|part| part.parse::<u64>().is_ok())
        .collect();
    match numbers.as_slice() {
        [major] => format!("{major}.0.0"),
        [major, minor] => format!("{major}.{minor}.0"),
        _ => "1.0.0".to_owned(),
    }
}

/// EL204: permissions are declared, and every one is on the allowlist.
pub fn permissions(skill: &Skill, allowlist: &[String]) -> Vec<Finding> {
    let fields = permission_fields(skill);
    let [(_, _, tools), (_, _, declared)] = &fields;
    if skill.front_matter.is_none() && declared.is_none() {
        return Vec::new(); // EL208 reports the unreadable front matter; nothing to judge yet.
    }
    if skill.declared_permissions().is_empty() {
        let location = match (declared, tools) {
            (Some(permissions), _) => field_location(skill.manifest_path(), permissions),
            (None, Some(tools)) => field_location(skill.skill_md_path(), tools),
            (None, None) => front_matter_location(skill),
        };
        return vec![skill_finding(RuleId::SkillPermissions, skill, "none", format!("skill `{}`: no permissions declared", skill.name()))
            .at(location)
            .help("declare what the skill needs: `allowed-tools` in SKILL.md's front matter, or `permissions` in skill.json, within `[skills] allowed_permissions`")];
    }
    let mut findings = Vec::new();
    for (field, path, listed) in fields {
        let Some(listed) = listed else { continue };
        let outside: Vec<&String> = listed
            .value
            .iter()
            .filter(|permission| !is_allowed(allowlist, permission))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        if outside.is_empty() {
            continue;
        }
        findings.push(
            skill_finding(
                RuleId::SkillPermissions,
                skill,
                &format!(
                    "{field}:{}",
                    outside.iter().map(|item| item.as_str()).collect::<Vec<_>>().join(" ")
                ),
                format!("skill `{}`: `{field}` outside allowlist: {}", skill.name(), python_list(&outside)),
            )
            .at(field_location(path, listed))
            .help("remove them, or, after review, add them to `[skills] allowed_permissions` in evalock.toml"),
        );
    }
    findings
}

/// A place a skill lists its permissions: the field, its file, and the list if written.
type PermissionField<'s> = (&'static str, String, Option<&'s Located<Vec<String>>>);

/// SKILL.md `allowed-tools`, then skill.json `permissions`.
fn permission_fields(skill: &Skill) -> [PermissionField<'_>; 2] {
    let tools = skill
        .front_matter
        .as_ref()
        .and_then(|front| front.allowed_tools.as_ref());
    let declared = skill
        .manifest
        .as_ref()
        .and_then(|manifest| manifest.permissions.as_ref());
    [
        ("allowed-tools", skill.skill_md_path(), tools),
        ("permissions", skill.manifest_path(), declared),
    ]
}

/// EL209: compared with the base revision, a skill may not quietly ask for more.
pub fn permission_escalation(
    skills: &[Skill],
    base_skills: &[Skill],
    base_description: &str,
) -> Vec<Finding> {
    let mut findings = Vec::new();
    // Looked up, not searched per skill (a repository can hold thousands of skills); the
    // first base skill wins a key, as a search in base order would find it.
    let mut base_by_path: BTreeMap<&str, &Skill> = BTreeMap::new();
    for base in base_skills {
        base_by_path.entry(base.path.as_str()).or_insert(base);
    }
    let current_paths: BTreeSet<&str> = skills.iter().map(|skill| skill.path.as_str()).collect();
    let mut gone_by_name: BTreeMap<&str, &Skill> = BTreeMap::new();
    for base in base_skills {
        if !current_paths.contains(base.path.as_str()) {
            gone_by_name.entry(base.name()).or_insert(base);
        }
    }
    for skill in skills {
        // The same folder, else a skill of the same name whose folder is gone (a move).
        let counterpart = base_by_path
            .get(skill.path.as_str())
            .or_else(|| gone_by_name.get(skill.name()))
            .copied();
        let Some(base) = counterpart else { continue };
        let before = base.declared_permissions();
        for (field, path, listed) in permission_fields(skill) {
            let Some(listed) = listed else { continue };
            let grown: BTreeSet<&String> = listed
                .value
                .iter()
                .filter(|permission| !before.contains(*permission))
                .collect();
            if grown.is_empty() {
                continue;
            }
            let grown: Vec<&String> = grown.into_iter().collect();
            findings.push(
                skill_finding(
                    RuleId::SkillPermissionEscalation,
                    skill,
                    &format!("{field}:{}", grown.iter().map(|item| item.as_str()).collect::<Vec<_>>().join(" ")),
                    format!(
                        "skill `{}` now asks for {} in `{field}`, which {base_description} did not grant",
                        skill.name(),
                        python_list(&grown)
                    ),
                )
                .at(field_location(path.clone(), listed))
                .help(format!(
                    "review why the skill needs more; if it is intended, give a commit since the base the trailer `Evalock-Approved: EL209 {path}: <why>`, so that the review approves it"
                )),
            );
        }
    }
    findings
}

//! EL207 name collisions across every root, and EL208 names and descriptions that break
//! the agentskills specification or differ from their folder.

use super::{field_location, front_matter_location, skill_finding};
use crate::finding::{Finding, Location};
use crate::rules::RuleId;
use crate::skills::spec::{description_problem, name_problem, MAX_COMPATIBILITY_CHARS};
use crate::skills::{FrontMatter, Located, Skill};
use std::collections::BTreeMap;

/// Where a skill's name is written, for anchors.
fn name_location(skill: &Skill) -> Location {
    match skill
        .front_matter
        .as_ref()
        .and_then(|front| front.name.as_ref())
    {
        Some(name) => field_location(skill.skill_md_path(), name),
        None => front_matter_location(skill),
    }
}

/// EL207: loaders keep one skill per name and silently shadow the others.
pub fn name_collisions(skills: &[Skill]) -> Vec<Finding> {
    let mut by_name: BTreeMap<&str, Vec<&Skill>> = BTreeMap::new();
    for skill in skills {
        by_name.entry(skill.name()).or_default().push(skill);
    }
    let mut findings = Vec::new();
    for (name, group) in by_name.into_iter().filter(|(_, group)| group.len() > 1) {
        for skill in &group {
            let others: Vec<&str> = group
                .iter()
                .filter(|other| other.path != skill.path)
                .map(|other| other.path.as_str())
                .collect();
            findings.push(
                skill_finding(
                    RuleId::SkillNameCollision,
                    skill,
                    &format!("{name}:{}", others.join(",")),
                    format!("skill name `{name}` ({}) is also used by {}; a loader keeps one and shadows the others", skill.path, others.join(", ")),
                )
                .at(name_location(skill))
                .help("rename one of the skills: its folder and its `name` together"),
            );
        }
    }
    findings
}

/// EL208: the front matter parses, `name` and `description` follow the specification,
/// and `name` equals the folder (for skills installed under `[skills] roots`).
pub fn names_invalid(skill: &Skill) -> Vec<Finding> {
    let Some(front) = &skill.front_matter else {
        return vec![front_matter_unreadable(skill)];
    };
    let mut findings = Vec::new();
    match &front.name {
        None => findings.push(name_missing(skill)),
        Some(name) => {
            findings.extend(name_not_as_specified(skill, front, name));
            findings.extend(manifest_name_differs(skill, name));
        }
    }
    findings.extend(description_not_as_specified(skill, front));
    findings.extend(compatibility_length_wrong(skill, front));
    findings
}

/// An EL208 finding about `skill`, anchored at `location`.
fn invalid(skill: &Skill, discriminator: &str, message: String, location: Location) -> Finding {
    skill_finding(RuleId::SkillNameInvalid, skill, discriminator, message).at(location)
}

fn front_matter_unreadable(skill: &Skill) -> Finding {
    let problem = skill
        .front_matter_problem
        .clone()
        .unwrap_or_else(|| crate::skills::Problem::at(1, 1, "SKILL.md cannot be read"));
    invalid(
        skill,
        "front-matter",
        problem.message,
        Location::line(skill.skill_md_path(), problem.line).with_column(problem.column),
    )
    .help(format!(
        "fix line {} of the front matter's YAML (see https://agentskills.io/specification)",
        problem.line
    ))
}

fn name_missing(skill: &Skill) -> Finding {
    invalid(
        skill,
        "name-missing",
        "the front matter has no `name`".to_owned(),
        front_matter_location(skill),
    )
    .help(format!(
        "add `name: {}` to the front matter",
        skill.folder_name()
    ))
}

/// The first of: a name the specification refuses, whitespace around it, a name other
/// than the folder's.
fn name_not_as_specified(
    skill: &Skill,
    front: &FrontMatter,
    name: &Located<String>,
) -> Option<Finding> {
    let at = field_location(skill.skill_md_path(), name);
    if let Some(problem) = name_problem(&name.value) {
        return Some(invalid(skill, &format!("name:{}", name.value), problem, at));
    }
    if let Some(written) = &front.name_as_written {
        // The reference loader trims it; a loader that does not sees another name
        // than the folder's and than the one evalock judged.
        return Some(
            invalid(
                skill,
                "name-whitespace",
                format!(
                    "name {written:?} has whitespace around it; a name is only lowercase letters, digits and hyphens"
                ),
                at,
            )
            .help(format!("write `name: {}`", name.value)),
        );
    }
    if skill.configured && name.value != skill.folder_name() {
        return Some(
            invalid(
                skill,
                &format!("folder:{}", name.value),
                format!(
                    "skill name `{}` differs from its folder `{}`",
                    name.value,
                    skill.folder_name()
                ),
                at,
            )
            .help("rename the folder or the `name` so they match: loaders find skills by folder"),
        );
    }
    None
}

fn manifest_name_differs(skill: &Skill, name: &Located<String>) -> Option<Finding> {
    let manifest_name = skill
        .manifest
        .as_ref()
        .and_then(|manifest| manifest.name.as_ref())?;
    if manifest_name.value == name.value {
        return None;
    }
    Some(
        invalid(
            skill,
            "manifest-name",
            format!(
                "skill.json names the skill `{}` but SKILL.md names it `{}`",
                manifest_name.value, name.value
            ),
            field_location(skill.manifest_path(), manifest_name),
        )
        .help("use the same name in skill.json and SKILL.md"),
    )
}

fn description_not_as_specified(skill: &Skill, front: &FrontMatter) -> Option<Finding> {
    let Some(description) = &front.description else {
        return Some(
            invalid(
                skill,
                "description-missing",
                "the front matter has no `description`".to_owned(),
                front_matter_location(skill),
            )
            .help("add `description:` saying what the skill does and when to use it"),
        );
    };
    let problem = description_problem(&description.value)?;
    Some(invalid(
        skill,
        "description",
        format!("skill `{}`: {problem}", skill.name()),
        field_location(skill.skill_md_path(), description),
    ))
}

fn compatibility_length_wrong(skill: &Skill, front: &FrontMatter) -> Option<Finding> {
    let compatibility = front.compatibility.as_ref()?;
    let length = compatibility.value.chars().count();
    if (1..=MAX_COMPATIBILITY_CHARS).contains(&length) {
        return None;
    }
    Some(invalid(
        skill,
        "compatibility",
        format!("skill `{}`: `compatibility` is {length} characters; it must be 1-{MAX_COMPATIBILITY_CHARS}", skill.name()),
        field_location(skill.skill_md_path(), compatibility),
    ))
}

//! EL205 executable content (undeclared: refuse; declared: a warning until a reviewer
//! acknowledges the exact bytes) and EL206 risky lines, anchored on the line.

use super::{acknowledge_snippet, skill_finding};
use crate::finding::{Finding, Location};
use crate::project::config::SkillsConfig;
use crate::rules::{RuleId, Severity};
use crate::skills::{Acknowledged, Skill, SkillFile};

fn acknowledgement<'a>(
    acknowledged: &'a [Acknowledged],
    rule: RuleId,
    path: &str,
) -> Option<&'a Acknowledged> {
    acknowledged
        .iter()
        .find(|entry| entry.rule == rule && entry.path == path)
}

fn acknowledged_suffix(entry: Option<&Acknowledged>) -> String {
    entry
        .map(|entry| format!(" (acknowledged: {})", entry.reason))
        .unwrap_or_default()
}

/// A line to anchor a file-level finding on: the first line of a text file.
fn file_location(skill: &Skill, file: &SkillFile) -> Location {
    let path = skill.file_path(&file.path);
    if file.binary {
        Location::file(path)
    } else {
        Location::line(path, 1)
    }
}

/// EL205: every file that is executable content is declared; declared ones need review.
pub fn executables(skill: &Skill, config: &SkillsConfig) -> Vec<Finding> {
    let declared = skill.declared_executables();
    let acknowledged = skill.acknowledged(config);
    let mut findings = Vec::new();
    for file in &skill.tree.files {
        let path = skill.file_path(&file.path);
        if declared.contains(&file.path) {
            let entry = acknowledgement(&acknowledged, RuleId::SkillExecutable, &file.path);
            let finding = skill_finding(
                RuleId::SkillExecutable,
                skill,
                &format!("declared:{}", file.path),
                match entry {
                    Some(entry) => {
                        format!("declared executable content, reviewed: {}", entry.reason)
                    }
                    None => "declared executable content: needs sandbox review".to_owned(),
                },
            )
            .at(file_location(skill, file));
            findings.push(match entry {
                Some(_) => finding
                    .severity(Severity::Note)
                    .help("reviewed; any change to the file brings the warning back"),
                None => finding
                    .severity(Severity::Warn)
                    .help("read it and run it once in a disposable environment, then acknowledge the reviewed bytes in evalock.toml")
                    .detail(acknowledge_snippet(RuleId::SkillExecutable, &path, &file.digest)),
            });
        } else if file.is_executable() {
            let signals: Vec<&str> = file
                .executable
                .iter()
                .map(|signal| signal.describe())
                .collect();
            // The signals are part of what was found: an exec bit added to a script
            // adopted for its extension alone is a new finding, not the adopted one.
            findings.push(
                skill_finding(
                    RuleId::SkillExecutable,
                    skill,
                    &format!("undeclared:{}:{}", file.path, signals.join(",")),
                    format!("executable content ({}), not declared", signals.join(", ")),
                )
                .at(file_location(skill, file))
                .help(format!(
                    "add \"{}\" to `executables` in skill.json (or to `metadata.executables` in SKILL.md), then have it reviewed in a sandbox",
                    file.path
                )),
            );
        }
    }
    for missing in declared
        .iter()
        .filter(|path| skill.tree.file(path).is_none())
    {
        findings.push(
            skill_finding(
                RuleId::SkillExecutable,
                skill,
                &format!("declared-missing:{missing}"),
                format!(
                    "skill `{}` declares the executable {missing}, which does not exist",
                    skill.name()
                ),
            )
            .severity(Severity::Error)
            .at(Location::file(skill.skill_md_path()))
            .help("remove the stale declaration, or restore the script"),
        );
    }
    findings
}

/// EL206: each risky line of each text file, Markdown included.
pub fn risky_content(skill: &Skill, config: &SkillsConfig) -> Vec<Finding> {
    let acknowledged = skill.acknowledged(config);
    let mut findings = Vec::new();
    for file in &skill.tree.files {
        let path = skill.file_path(&file.path);
        let entry = acknowledgement(&acknowledged, RuleId::SkillRiskyContent, &file.path);
        for risky in &file.risky {
            let finding = skill_finding(
                RuleId::SkillRiskyContent,
                skill,
                &format!("{}:{}:{}", file.path, risky.pattern, risky.excerpt),
                format!(
                    "{path}:{} matches `{}`: {}{}",
                    risky.line,
                    risky.pattern,
                    risky.excerpt,
                    acknowledged_suffix(entry)
                ),
            )
            .at(Location::line(path.clone(), risky.line).with_column(risky.column));
            findings.push(match entry {
                Some(_) => finding
                    .severity(Severity::Note)
                    .help("reviewed; any change to the file brings the finding back"),
                None => finding
                    .help(format!(
                        "remove line {} (a skill should report a missing tool to the user, not fetch and run code), or acknowledge the reviewed bytes in evalock.toml",
                        risky.line
                    ))
                    .detail(acknowledge_snippet(RuleId::SkillRiskyContent, &path, &file.digest)),
            });
        }
    }
    findings
}

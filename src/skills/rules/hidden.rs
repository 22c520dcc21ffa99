//! EL211: instructions to the model hidden in a skill (its front matter, the parts of its
//! SKILL.md a reader does not see, skill.json) or in the plugin manifests its marketplace
//! reads, found by the one detector of [`crate::text::hidden`].

use super::skill_finding;
use crate::finding::{Finding, Location, Subject};
use crate::rules::{RuleId, Severity};
use crate::skills::discovery::PluginManifest;
use crate::skills::{Skill, MANIFEST_FILE};
use crate::text::hidden::{describe_kinds, scan_markdown, scan_text, HiddenHit};
use crate::text::jsonc::Document;
use std::collections::BTreeMap;

/// Where in a file a group of hits stands, for the message.
#[derive(Clone, Copy)]
enum Place {
    FrontMatter,
    Body,
    Manifest,
}

/// EL211 for one skill: SKILL.md's front matter and body, and skill.json's descriptions.
pub fn hidden_instructions(skill: &Skill) -> Vec<Finding> {
    let mut findings = Vec::new();
    if let Some(bytes) = &skill.tree.skill_md {
        let text = String::from_utf8_lossy(bytes);
        let (front_matter, body_start) = split_front_matter(&text);
        let mut front_hits = scan_text(front_matter);
        // The values as the loader decodes them: YAML escapes (`"\u200b"`) hide from a
        // scan of the text what they give the model.
        if let Some(front) = &skill.front_matter {
            let decoded = front
                .description
                .iter()
                .chain(&front.compatibility)
                .map(|field| (field.line, field.value.as_str()));
            for (line, value) in decoded {
                front_hits.extend(
                    scan_text(value)
                        .into_iter()
                        .map(|hit| HiddenHit { line, ..hit }),
                );
            }
        }
        let path = skill.skill_md_path();
        findings.extend(group(
            &front_hits,
            &path,
            Place::FrontMatter,
            |message, discriminator| {
                skill_finding(
                    RuleId::SkillHiddenInstructions,
                    skill,
                    discriminator,
                    message,
                )
            },
        ));
        let body = &text[body_start.min(text.len())..];
        let first_line = text[..body_start.min(text.len())].matches('\n').count() as u32 + 1;
        let body_hits = scan_markdown(body, first_line);
        findings.extend(group(
            &body_hits,
            &path,
            Place::Body,
            |message, discriminator| {
                skill_finding(
                    RuleId::SkillHiddenInstructions,
                    skill,
                    discriminator,
                    message,
                )
            },
        ));
    }
    if let Some(bytes) = &skill.tree.manifest {
        let path = skill.manifest_path();
        let text = String::from_utf8_lossy(bytes);
        let hits = json_hits(&text);
        findings.extend(group(
            &hits,
            &path,
            Place::Manifest,
            |message, discriminator| {
                skill_finding(
                    RuleId::SkillHiddenInstructions,
                    skill,
                    discriminator,
                    message,
                )
            },
        ));
        debug_assert!(path.ends_with(MANIFEST_FILE));
    }
    findings
}

/// EL211 for the plugin manifests a marketplace reading went through.
pub fn manifests_hidden_instructions(manifests: &[PluginManifest]) -> Vec<Finding> {
    manifests
        .iter()
        .flat_map(|manifest| {
            let hits = json_hits(&manifest.text);
            group(
                &hits,
                &manifest.path,
                Place::Manifest,
                |message, discriminator| {
                    Finding::new(RuleId::SkillHiddenInstructions, Subject::default(), message)
                        .discriminator(discriminator)
                },
            )
        })
        .collect()
}

/// The hits of a JSON manifest: each `description` as the model reads it, and invisible
/// characters anywhere in the file.
fn json_hits(text: &str) -> Vec<HiddenHit> {
    let mut hits: Vec<HiddenHit> = scan_text(text)
        .into_iter()
        .filter(|hit| hit.kind == crate::text::hidden::HiddenKind::Invisible)
        .collect();
    if let Ok(document) = Document::parse(text) {
        for (line, description) in document.strings_named("description") {
            hits.extend(
                scan_text(&description)
                    .into_iter()
                    .map(|hit| HiddenHit { line, ..hit }),
            );
        }
    }
    hits
}

/// SKILL.md's front matter (from the opening `---` to the closing one, inclusive) and
/// the byte offset where its body starts; all body when it opens with no front matter.
fn split_front_matter(text: &str) -> (&str, usize) {
    let mut lines = text.split_inclusive('\n');
    if lines.next().map(str::trim_end) != Some("---") {
        return ("", 0);
    }
    let mut end = text.find('\n').map_or(text.len(), |newline| newline + 1);
    for line in lines {
        end += line.len();
        if matches!(line.trim_end(), "---" | "...") {
            return (&text[..end], end);
        }
    }
    ("", 0)
}

/// One finding per line of `path` that hides something: a refusal when a reader cannot
/// see it, a warning for instructions in visible prose.
fn group(
    hits: &[HiddenHit],
    path: &str,
    place: Place,
    make: impl Fn(String, &str) -> Finding,
) -> Vec<Finding> {
    let mut by_line: BTreeMap<u32, Vec<&HiddenHit>> = BTreeMap::new();
    for hit in hits {
        by_line.entry(hit.line).or_default().push(hit);
    }
    by_line
        .into_iter()
        .map(|(line, hits)| {
            let hidden = hits.iter().any(|hit| !hit.visible);
            let kinds = describe_kinds(hits.iter().copied());
            let mut excerpts: Vec<&str> = hits.iter().map(|hit| hit.excerpt.as_str()).collect();
            excerpts.dedup();
            let column = hits.iter().map(|hit| hit.column).min().unwrap_or(1);
            let what = match (place, hidden) {
                (Place::FrontMatter, _) => "its front matter, which the model reads in every conversation,",
                (Place::Manifest, _) => "a description the model reads,",
                (Place::Body, true) => "text a reader of the rendered file does not see",
                (Place::Body, false) => "its visible text",
            };
            let message = format!(
                "{path}:{line}: {what} holds instructions to the model ({kinds}): {}",
                excerpts.join(" … ")
            );
            let discriminator = format!(
                "hidden\u{1f}{path}\u{1f}{kinds}\u{1f}{}",
                excerpts.join("\u{1f}")
            );
            let finding = make(message, &discriminator)
                .at(Location::line(path, line).with_column(column));
            match hidden {
                true => finding,
                false => finding
                    .severity(Severity::Warn)
                    .help("read the line: a skill may tell the model what to do, but an instruction to override its others, to keep something from the user or to read credentials is how a skill is turned against its user; rewrite it, or adopt it once reviewed"),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn front_matter_ends_at_its_closing_line() {
        let text = "---\nname: a\n---\nbody\n";
        let (front, start) = split_front_matter(text);
        assert_eq!(front, "---\nname: a\n---\n");
        assert_eq!(&text[start..], "body\n");
        assert_eq!(split_front_matter("# no front matter\n"), ("", 0));
        assert_eq!(split_front_matter("---\nnever closed\n"), ("", 0));
    }
}

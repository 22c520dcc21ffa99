//! Fixes a reviewer commits from the pull request (GitHub's suggestion blocks), each the
//! line a finding's comment sits on, replaced:
//! - the line of a case edited in place (EL102), or changed at the version the lock has
//!   (EL101), with its `version` one higher;
//! - the line of a skill's version that is not semver (EL203), with the semver it is read
//!   as, and the closing `---` of a skill with no version, with the version before it;
//! - the line where a case was removed instead of retired (EL103), with the case back
//!   beside it, retired (see [`retire`]).

use crate::finding::{Finding, Suggestion};
use crate::rules::RuleId;
use crate::source::ContentSource;
use serde_json::Value;
use std::collections::HashMap;

mod retire;

/// The highest `version` a case may have (2^53 − 1, as exact in every JSON reader).
const MAX_VERSION: u64 = (1 << 53) - 1;

/// Gives each finding whose fix is a change of one line of the judged content that line,
/// fixed; with the base revision, each case removed instead of retired its restoring. A
/// file that cannot be read, or a line that is not the whole case, gets no suggestion:
/// the finding's own fix says what to do.
pub fn suggest_fixes(
    findings: &mut [Finding],
    source: &dyn ContentSource,
    base: Option<&dyn ContentSource>,
) {
    if let Some(base) = base {
        retire::suggest_restores(findings, source, base);
    }
    let mut files: HashMap<String, Option<Vec<u8>>> = HashMap::new();
    for finding in findings.iter_mut().filter(|finding| {
        matches!(
            finding.rule,
            RuleId::CaseUnlocked | RuleId::CaseEditedInPlace | RuleId::SkillVersion
        )
    }) {
        let Some(location) = &finding.location else {
            continue;
        };
        let (Some(number), true) = (
            location.line,
            location
                .end_line
                .is_none_or(|end| Some(end) == location.line),
        ) else {
            continue;
        };
        let bytes = files
            .entry(location.path.clone())
            .or_insert_with(|| source.read(&location.path).ok().flatten());
        let Some(line) = bytes.as_deref().and_then(|bytes| line_of(bytes, number)) else {
            continue;
        };
        let text = match (finding.rule, finding.subject.case.as_deref()) {
            (RuleId::CaseEditedInPlace, Some(case_id)) => bumped_version(line, case_id),
            // The EL101 of a case changed at its locked version; the others are fixed
            // by `evalock lock` alone.
            (RuleId::CaseUnlocked, Some(case_id))
                if finding.message.contains(" changed but is still version ") =>
            {
                bumped_version(line, case_id)
            }
            (RuleId::SkillVersion, _) if finding.message.ends_with(" has no version") => {
                let text = std::str::from_utf8(bytes.as_deref().unwrap_or_default()).ok();
                text.and_then(|text| version_added(text, number))
            }
            // Two places that disagree: which one is right is the author's call.
            (RuleId::SkillVersion, _) if !finding.message.contains(" but SKILL.md ") => {
                semver_line(line)
            }
            _ => None,
        };
        if let Some(text) = text {
            finding.suggestion = Some(Suggestion { line: number, text });
        }
    }
}

/// A line that holds only a skill's version (`version: 1.0` in SKILL.md's `metadata`,
/// `"version": "1.0",` in skill.json) with the version rewritten as semver; every other
/// byte stays as written. `None` for a version that is semver already, or a line that
/// holds more than the version.
pub fn semver_line(line: &str) -> Option<String> {
    let pattern =
        regex::Regex::new(r#"^(\s*"?version"?\s*:\s*)(["']?)([0-9A-Za-z.+\-]+)(["']?)(\s*,?\s*)$"#)
            .ok()?;
    let parts = pattern.captures(line)?;
    let (open, close) = (&parts[2], &parts[4]);
    if open != close {
        return None;
    }
    let fixed = crate::skills::rules::semver_for(&parts[3])?;
    // YAML reads a bare 1.0.0 as a string, JSON needs the quotes it had.
    Some(format!("{}{open}{fixed}{close}{}", &parts[1], &parts[5]))
}

/// The version a skill with none gets, as SKILL.md's closing `---` (line `close`) with
/// the version written before it: `  version: "1.0.0"` as the last entry of a block
/// `metadata:` that ends the front matter, or a new `metadata:` with it when there is
/// none. `None` when `metadata` is written elsewhere or in flow style: the author places
/// it.
pub fn version_added(skill_md: &str, close: u32) -> Option<String> {
    let lines: Vec<&str> = skill_md.split('\n').collect();
    let close_index = usize::try_from(close.checked_sub(1)?).ok()?;
    if lines.get(close_index)?.trim_end() != "---" || close_index == 0 {
        return None;
    }
    let body = &lines[1..close_index];
    let top_level = |line: &&str| !line.trim().is_empty() && !line.starts_with([' ', '\t', '#']);
    let metadata = body
        .iter()
        .position(|line| line.split(':').next() == Some("metadata"));
    let version = match metadata {
        None => "metadata:\n  version: \"1.0.0\"".to_owned(),
        Some(at) => {
            let (own, rest) = (&body[at], &body[at + 1..]);
            if own.trim_end() != "metadata:" || rest.iter().any(top_level) {
                return None;
            }
            let indent = rest
                .iter()
                .find(|line| line.starts_with([' ', '\t']) && !line.trim_start().starts_with('#'))
                .map_or("  ", |line| &line[..line.len() - line.trim_start().len()]);
            format!("{indent}version: \"1.0.0\"")
        }
    };
    if lines.iter().any(|line| line.ends_with('\r')) {
        return None;
    }
    Some(format!("{version}\n{}", lines[close_index]))
}

/// Line `number` (1-based) of `bytes`, without its line break; `None` past the end, for a
/// line that is not UTF-8 or ends in a carriage return.
fn line_of(bytes: &[u8], number: u32) -> Option<&str> {
    let index = usize::try_from(number.checked_sub(1)?).ok()?;
    let line = bytes.split(|byte| *byte == b'\n').nth(index)?;
    std::str::from_utf8(line)
        .ok()
        .filter(|line| !line.ends_with('\r'))
}

/// `line` with case `id`'s `version` one higher, when the line holds the whole case: the
/// `"version": N` member rewritten where it is written, or `"version": 2` added after the
/// `{` of a case that has none (version 1). Every other byte stays as written, and the
/// result is parsed again to be sure it is the same case at the next version.
pub fn bumped_version(line: &str, id: &str) -> Option<String> {
    let members = case_members(line, id)?;
    let (bumped, next) = match members.get("version") {
        None => {
            let open = line.find('{')?;
            let rest = line[open + 1..].trim_start();
            let separator = if rest.starts_with('}') { "" } else { ", " };
            (
                format!("{}\"version\": 2{separator}{rest}", &line[..=open]),
                2,
            )
        }
        Some(version) => {
            let current = version.as_u64()?;
            let next = current.checked_add(1).filter(|next| *next <= MAX_VERSION)?;
            let pattern = regex::Regex::new(&format!(r#""version"(\s*:\s*){current}\b"#)).ok()?;
            let mut found = pattern.captures_iter(line);
            let only = found.next()?;
            if found.next().is_some() {
                return None;
            }
            let whole = only.get(0)?;
            (
                format!(
                    "{}\"version\"{}{next}{}",
                    &line[..whole.start()],
                    &only[1],
                    &line[whole.end()..]
                ),
                next,
            )
        }
    };
    same_case_with(bumped, members, "version", Value::from(next))
}

/// The members of `line` when it holds exactly one JSON object, case `id`.
fn case_members(line: &str, id: &str) -> Option<serde_json::Map<String, Value>> {
    match serde_json::from_str(line).ok()? {
        Value::Object(members) if members.get("id")?.as_str()? == id => Some(members),
        _ => None,
    }
}

/// `rewritten`, when it parses as the case of `members` with `key` set to `value` and
/// nothing else changed.
fn same_case_with(
    rewritten: String,
    mut members: serde_json::Map<String, Value>,
    key: &str,
    value: Value,
) -> Option<String> {
    let reparsed: Value = serde_json::from_str(&rewritten).ok()?;
    members.insert(key.to_owned(), value);
    let same_case = reparsed.as_object().is_some_and(|reparsed| {
        reparsed.len() == members.len()
            && members
                .iter()
                .all(|(key, value)| reparsed.get(key) == Some(value))
    });
    same_case.then_some(rewritten)
}

#[cfg(test)]
mod tests {
    use super::{bumped_version, semver_line, version_added};

    #[test]
    fn a_skill_without_a_version_gets_one_before_its_closing_line() {
        // No metadata: a new one, before the `---` of line 3.
        assert_eq!(
            version_added("---\nname: a\n---\n# A\n", 3).as_deref(),
            Some("metadata:\n  version: \"1.0.0\"\n---")
        );
        // A block metadata that ends the front matter: one more entry, in its indentation.
        assert_eq!(
            version_added("---\nname: a\nmetadata:\n    author: b\n---\n", 5).as_deref(),
            Some("    version: \"1.0.0\"\n---")
        );
        assert_eq!(
            version_added("---\nname: a\nmetadata:\n---\n", 4).as_deref(),
            Some("  version: \"1.0.0\"\n---")
        );
        // Metadata elsewhere or in flow style, a line that is not the closing one, CRLF.
        for (text, close) in [
            ("---\nmetadata:\n  author: b\nname: a\n---\n", 5),
            ("---\nname: a\nmetadata: {author: b}\n---\n", 4),
            ("---\nname: a\n---\n", 2),
            ("---\r\nname: a\r\n---\r\n", 3),
        ] {
            assert_eq!(version_added(text, close), None, "{text:?}");
        }
    }

    #[test]
    fn a_skill_version_line_is_rewritten_as_semver() {
        assert_eq!(
            semver_line(r#"  version: "1.0""#).as_deref(),
            Some(r#"  version: "1.0.0""#)
        );
        assert_eq!(
            semver_line("  version: v2").as_deref(),
            Some("  version: 2.0.0")
        );
        assert_eq!(
            semver_line(r#"  "version": "0.3","#).as_deref(),
            Some(r#"  "version": "0.3.0","#)
        );
        // Semver already, more than the version on the line, or mismatched quotes.
        assert_eq!(semver_line("  version: 1.2.3"), None);
        assert_eq!(semver_line("metadata: {version: 1.0}"), None);
        assert_eq!(semver_line(r#"  version: "1.0"#), None);
        assert_eq!(semver_line(r#"{"name": "a", "version": "1.0"}"#), None);
    }

    #[test]
    fn the_version_is_bumped_where_it_is_written() {
        assert_eq!(
            bumped_version(r#"{"id": "a", "version": 2, "input": "hi"}"#, "a").as_deref(),
            Some(r#"{"id": "a", "version": 3, "input": "hi"}"#)
        );
        assert_eq!(
            bumped_version(r#"{"id":"a","version" :9}"#, "a").as_deref(),
            Some(r#"{"id":"a","version" :10}"#)
        );
    }

    #[test]
    fn a_case_without_a_version_gets_version_two() {
        assert_eq!(
            bumped_version(r#"{"id": "a", "input": "hi"}"#, "a").as_deref(),
            Some(r#"{"version": 2, "id": "a", "input": "hi"}"#)
        );
        assert_eq!(
            bumped_version(r#"  {  "id": "a"}"#, "a").as_deref(),
            Some(r#"  {"version": 2, "id": "a"}"#)
        );
    }

    #[test]
    fn no_suggestion_where_the_line_is_not_the_whole_case_or_the_version_is_ambiguous() {
        // Another case, part of a multi-line case, a version written twice (one nested).
        assert_eq!(bumped_version(r#"{"id": "b", "version": 2}"#, "a"), None);
        assert_eq!(bumped_version(r#"  "version": 2,"#, "a"), None);
        assert_eq!(
            bumped_version(r#"{"id": "a", "version": 2, "input": {"version": 2}}"#, "a"),
            None
        );
        // A nested version of another number is left alone; the case's own is bumped.
        assert_eq!(
            bumped_version(r#"{"id": "a", "input": {"version": 7}, "version": 2}"#, "a").as_deref(),
            Some(r#"{"id": "a", "input": {"version": 7}, "version": 3}"#)
        );
        // Not a whole number, or at the largest version a case may have.
        assert_eq!(bumped_version(r#"{"id": "a", "version": 2.5}"#, "a"), None);
        assert_eq!(
            bumped_version(r#"{"id": "a", "version": 9007199254740991}"#, "a"),
            None
        );
    }
}

//! Small pieces several reporters share: how a subject is grouped and named, a finding's
//! one-line headline, and cutting text at a character boundary.

use crate::finding::{Finding, Subject};
use crate::rules::Severity;

/// The groups of subjects that are not a suite's.
const BUILT_IN_GROUPS: [&str; 4] = ["skills", "graders", "servers", "project"];

/// The group a subject belongs to: its suite, or `skills`, `graders`, `servers`, `project`. A suite
/// named like a built-in group is `suite:<name>`: sharing the name would merge its cases
/// with the skills (graders, project) in one JUnit test suite or table. No suite can be
/// called that (suite names have no `:`), and the name does not depend on which other
/// groups a report happens to hold.
pub fn subject_group(subject: &Subject) -> String {
    if let Some(suite) = &subject.suite {
        return if BUILT_IN_GROUPS.contains(&suite.as_ref()) {
            format!("suite:{suite}")
        } else {
            suite.to_string()
        };
    }
    if subject.skill.is_some() {
        return "skills".to_owned();
    }
    if subject.grader.is_some() {
        return "graders".to_owned();
    }
    if subject.server.is_some() {
        return "servers".to_owned();
    }
    "project".to_owned()
}

/// How a finding about a suite as a whole (no case) is named within the suite's group.
pub const SUITE_ITSELF: &str = "(suite)";

/// The name of a subject within its group: the case id, skill, grader or server; for a
/// finding about no particular subject, the file it points at.
pub fn subject_name(subject: &Subject, finding: Option<&Finding>) -> String {
    let named = [
        &subject.case,
        &subject.skill,
        &subject.grader,
        &subject.server,
    ]
    .into_iter()
    .flatten()
    .next();
    if let Some(name) = named {
        return name.clone();
    }
    if subject.suite.is_some() {
        return SUITE_ITSELF.to_owned();
    }
    finding
        .and_then(|finding| finding.location.as_ref())
        .map(|location| location.path.clone())
        .unwrap_or_else(|| "(project)".to_owned())
}

/// `text` cut to at most `max_bytes` bytes at a character boundary, and whether it was cut.
pub fn cut(text: &str, max_bytes: usize) -> (&str, bool) {
    if text.len() <= max_bytes {
        return (text, false);
    }
    let mut end = max_bytes;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (&text[..end], true)
}

/// `path:line: ` before a finding's headline; empty for a finding with no location.
pub fn location_prefix(finding: &Finding) -> String {
    finding
        .location
        .as_ref()
        .map(|location| format!("{}: ", location.display()))
        .unwrap_or_default()
}

/// A finding on one line, `path:line: EL102 case-edited-in-place (refuse): message`, with
/// the message as given (each reporter makes it safe for where it goes).
pub fn finding_headline(finding: &Finding, message: &str) -> String {
    format!(
        "{}{} {} ({}): {message}",
        location_prefix(finding),
        finding.rule.id(),
        finding.rule.name(),
        finding.severity
    )
}

/// "2 refused, 1 error, 3 warnings": the severities that have findings, most severe first.
pub fn severity_tally(count: impl Fn(Severity) -> usize) -> Vec<String> {
    [
        (Severity::Refuse, "refused", "refused"),
        (Severity::Error, "error", "errors"),
        (Severity::Warn, "warning", "warnings"),
        (Severity::Note, "note", "notes"),
    ]
    .into_iter()
    .filter(|(severity, _, _)| count(*severity) > 0)
    .map(|(severity, singular, plural_form)| plural(count(severity), singular, plural_form))
    .collect()
}

/// `count` followed by the noun, singular or plural.
pub fn plural(count: usize, singular: &str, plural: &str) -> String {
    if count == 1 {
        format!("1 {singular}")
    } else {
        format!("{count} {plural}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tally_names_each_severity_with_findings_in_singular_or_plural() {
        let counts = |severity| match severity {
            Severity::Refuse => 1,
            Severity::Error => 1,
            Severity::Warn => 0,
            Severity::Note => 3,
        };
        assert_eq!(
            severity_tally(counts),
            vec!["1 refused", "1 error", "3 notes"]
        );
        assert!(severity_tally(|_| 0).is_empty());
        assert_eq!(
            severity_tally(|severity| usize::from(severity == Severity::Warn) * 2),
            vec!["2 warnings"]
        );
    }

    #[test]
    fn cut_respects_character_boundaries() {
        assert_eq!(cut("héllo", 2), ("h", true));
        assert_eq!(cut("héllo", 3), ("hé", true));
        assert_eq!(cut("abc", 3), ("abc", false));
    }

    #[test]
    fn subjects_group_by_suite_then_kind() {
        assert_eq!(subject_group(&Subject::case("support", "a")), "support");
        assert_eq!(subject_group(&Subject::skill("pdf")), "skills");
        assert_eq!(subject_group(&Subject::grader("g")), "graders");
        assert_eq!(subject_group(&Subject::default()), "project");
        for built_in in ["skills", "graders", "project"] {
            assert_eq!(
                subject_group(&Subject::case(built_in, "a")),
                format!("suite:{built_in}")
            );
        }
        assert_eq!(subject_group(&Subject::suite("skills-v2")), "skills-v2");
        assert_eq!(subject_name(&Subject::case("support", "a"), None), "a");
        assert_eq!(subject_name(&Subject::suite("support"), None), "(suite)");
        assert_eq!(subject_name(&Subject::default(), None), "(project)");
    }
}

//! Review comment bodies: what a reviewer reads on the line, and the hidden marker that
//! makes re-runs idempotent.

use super::anchor::{Anchor, Side};
use crate::finding::Finding;
use crate::report::markdown::escape::{code, inline};
use crate::rules::RuleId;
use crate::text::shorten;

/// GitHub rejects comment bodies of 65,536 characters or more. It does not say how it
/// counts them, so every budget here counts UTF-16 code units ([`utf16_len`]): never fewer
/// than code points, and twice as many for an emoji, so the limit holds whichever way
/// GitHub counts.
pub const MAX_BODY_UNITS: usize = 65_536;
/// The completion diff shown inline is cut well before the limit: a reviewer reads the
/// start of a diff, and `evalock review` prints the rest.
const MAX_DIFF_LINES: usize = 120;
/// In UTF-16 units, as the body's limit.
const MAX_DIFF_UNITS: usize = 12_000;
/// Characters of a message and of its fix shown before they are cut. They are cut before
/// they are escaped (escaping at most doubles them, in UTF-16 units as in characters, and
/// an emoji is two units), so a cut never splits an escape or a code span, and a body of
/// every part at its longest stays under [`MAX_BODY_UNITS`].
const MAX_MESSAGE_CHARS: usize = 16_000;
const MAX_HELP_CHARS: usize = 4_000;
/// Characters of a case id, suite name or path in a note.
const MAX_NAME_CHARS: usize = 200;

const FINGERPRINT_MARKER: &str = "<!-- evalock:fp=";
const FINGERPRINT_SEPARATOR: char = ',';
const PROJECT_FIELD: &str = " project=";
const MARKER_END: &str = " -->";
/// Between the findings of one comment.
const SECTION_SEPARATOR: &str = "\n---\n\n";

/// At most this many findings share one comment; more at the same place make more
/// comments. It bounds what a body must hold whatever the findings: each one's short form
/// (a heading and a line) and its fingerprint (at most 64 characters) in the marker.
pub const MAX_FINDINGS_PER_COMMENT: usize = 25;

/// The length of `text` as the body budgets count it: UTF-16 code units.
pub fn utf16_len(text: &str) -> usize {
    text.chars().map(char::len_utf16).sum()
}

/// The hidden marker that identifies a comment across runs by the fingerprints of the
/// findings it shows. It names the project (its folder in the repository, `.` at the top,
/// as the summary marker does) because fingerprints do not: two projects in one
/// repository share suite and case names, and each run must only count and clean up its
/// own project's comments.
pub fn fingerprint_marker(fingerprints: &[&str], prefix: &str) -> String {
    let project = if prefix.is_empty() { "." } else { prefix };
    let fingerprints = fingerprints.join(&FINGERPRINT_SEPARATOR.to_string());
    format!("{FINGERPRINT_MARKER}{fingerprints}{PROJECT_FIELD}{project}{MARKER_END}")
}

/// What the marker of a comment evalock wrote says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marker<'a> {
    /// The fingerprints of the findings the comment shows (one in markers written before
    /// findings at one place shared a comment).
    pub fingerprints: Vec<&'a str>,
    /// The project's folder in the repository (`""` at the top); `None` in markers
    /// written before markers named their project.
    pub project: Option<&'a str>,
}

/// The marker a comment body carries, if evalock wrote it: its last, since evalock
/// writes the marker at the end and a suggested line above it is the pull request's own
/// text, which may hold anything.
pub fn read_marker(body: &str) -> Option<Marker<'_>> {
    let start = body.rfind(FINGERPRINT_MARKER)? + FINGERPRINT_MARKER.len();
    let rest = &body[start..];
    let end = rest.find(MARKER_END)?;
    let (fingerprints, project) = match rest[..end].split_once(PROJECT_FIELD) {
        Some((fingerprints, ".")) => (fingerprints, Some("")),
        Some((fingerprints, project)) => (fingerprints, Some(project)),
        None => (&rest[..end], None),
    };
    let fingerprints: Vec<&str> = fingerprints.split(FINGERPRINT_SEPARATOR).collect();
    fingerprints
        .iter()
        .all(|fingerprint| {
            !fingerprint.is_empty() && fingerprint.bytes().all(|byte| byte.is_ascii_alphanumeric())
        })
        .then_some(Marker {
            fingerprints,
            project,
        })
}

/// The fingerprints a comment body carries, if evalock wrote it.
pub fn marker_fingerprints(body: &str) -> Option<Vec<&str>> {
    read_marker(body).map(|marker| marker.fingerprints)
}

/// The body of one inline or file-level comment: each finding shown at its place (most
/// severe first, as given), then one marker with all their fingerprints. The messages,
/// fixes, case ids and paths come from the pull request's own files: they are escaped,
/// so a case id cannot mention a team, add HTML or end a code span.
///
/// Each finding is shown whole while the body stays under GitHub's limit; one that does
/// not fit any more is shown by its rule only, with a pointer to the full text.
pub fn comment_body(findings: &[Finding], anchor: &Anchor, prefix: &str) -> String {
    let fingerprints: Vec<&str> = findings
        .iter()
        .map(|finding| finding.fingerprint.as_str())
        .collect();
    let marker = fingerprint_marker(&fingerprints, prefix);
    let suggestion = suggestion_block(findings, anchor, prefix)
        .filter(|block| utf16_len(block) + utf16_len(&marker) < MAX_BODY_UNITS / 2)
        .unwrap_or_default();
    let sections: Vec<(String, String)> = findings
        .iter()
        .map(|finding| (section(finding, anchor, prefix), short_section(finding)))
        .collect();
    let fixed = utf16_len(&marker)
        + utf16_len(&suggestion)
        + 2
        + utf16_len(SECTION_SEPARATOR) * sections.len().saturating_sub(1)
        + sections
            .iter()
            .map(|(_, short)| utf16_len(short))
            .sum::<usize>();
    let mut budget = (MAX_BODY_UNITS - 1).saturating_sub(fixed);
    let shown: Vec<String> = sections
        .into_iter()
        .map(|(full, short)| {
            let extra = utf16_len(&full).saturating_sub(utf16_len(&short));
            if extra <= budget {
                budget -= extra;
                full
            } else {
                short
            }
        })
        .collect();
    format!("{}{suggestion}\n{marker}\n", shown.join(SECTION_SEPARATOR))
}

/// The fix of the first finding that has one, as a suggestion block GitHub lets the
/// reviewer commit: only on a comment anchored on exactly the line it replaces, of the
/// new side, so that it replaces that line and nothing else.
fn suggestion_block(findings: &[Finding], anchor: &Anchor, prefix: &str) -> Option<String> {
    let Anchor::Lines {
        path,
        side: Side::Right,
        start_line,
        line,
    } = anchor
    else {
        return None;
    };
    if start_line != line {
        return None;
    }
    findings.iter().find_map(|finding| {
        let suggestion = finding.suggestion.as_ref()?;
        let location = finding.location.as_ref()?;
        let own_path = match prefix.is_empty() {
            true => location.path.clone(),
            false => format!("{prefix}/{}", location.path),
        };
        // A finding about a line is fixed on that line; one about a whole file (a removed
        // case) on the line its suggestion names.
        let elsewhere = location.line.is_some_and(|own| own != *line);
        if own_path != *path || suggestion.line != *line || elsewhere {
            return None;
        }
        let fence = "`".repeat(longest_backtick_run(&suggestion.text).max(2) + 1);
        Some(format!(
            "\n**Suggested fix** (commit it from here, then run `evalock lock`):\n\n{fence}suggestion\n{}\n{fence}\n",
            suggestion.text
        ))
    })
}

fn longest_backtick_run(text: &str) -> usize {
    text.split(|character| character != '`')
        .map(str::len)
        .max()
        .unwrap_or(0)
}

/// One finding as a comment shows it: rule, message, why it sits here, the diff, the fix.
fn section(finding: &Finding, anchor: &Anchor, prefix: &str) -> String {
    let rule = finding.rule.rule();
    let mut body = format!(
        "**{} {}** ({})\n\n{}\n",
        rule.id,
        rule.name,
        finding.severity,
        inline(&shorten(&finding.message, MAX_MESSAGE_CHARS))
    );
    if let Some(note) = anchor_note(finding, anchor, prefix) {
        body.push_str(&format!("\n{note}\n"));
    }
    if let Some(detail) = finding
        .detail
        .as_deref()
        .filter(|detail| !detail.trim().is_empty())
    {
        body.push('\n');
        body.push_str(&diff_block(detail));
    }
    body.push_str(&format!(
        "\n**Fix:** {}\n",
        inline(&shorten(&finding.help, MAX_HELP_CHARS))
    ));
    body
}

/// A finding too long for the comment it is in: its rule, and where to read it. Cutting
/// escaped Markdown could end a code span early, so it is left out rather than cut.
fn short_section(finding: &Finding) -> String {
    format!(
        "**{} {}** ({})\n\n_This finding is too long for a comment: run `evalock check` locally, or read the job log._\n",
        finding.rule.id(),
        finding.rule.name(),
        finding.severity,
    )
}

/// A name (case id, suite, path) as a code span in a note.
fn name(text: &str) -> String {
    code(&shorten(text, MAX_NAME_CHARS))
}

/// Says why a comment sits somewhere other than the finding's own location.
fn anchor_note(finding: &Finding, anchor: &Anchor, prefix: &str) -> Option<String> {
    let location = finding.location.as_ref()?;
    let own_path = if prefix.is_empty() {
        location.path.clone()
    } else {
        format!("{prefix}/{}", location.path)
    };
    let anchored_path = match anchor {
        Anchor::Lines { path, .. } | Anchor::File { path } => path,
        Anchor::Summary => return None,
    };
    if *anchored_path == own_path {
        if matches!(anchor, Anchor::File { .. }) && location.line.is_some() {
            return Some(format!(
                "At {}, outside the lines this pull request changes.",
                name(&location.display())
            ));
        }
        return None;
    }
    if finding.rule == RuleId::CaseRemoved {
        // Shown in the file its old one was renamed to: the case is gone, not unchanged.
        return Some(format!(
            "Removed from {}, which this pull request renamed to this file.",
            name(&own_path)
        ));
    }
    let what = match (&finding.subject.suite, &finding.subject.case) {
        (Some(suite), Some(case)) => format!("case {} of suite {}", name(case), name(suite)),
        (Some(suite), None) => format!("suite {}", name(suite)),
        _ => "it".to_owned(),
    };
    Some(format!(
        "Shown on this change because {what} ({}) did not change in this pull request; this file did, and the suite depends on it.",
        name(&location.display())
    ))
}

/// A ```diff block with a fence longer than any backtick run inside, cut at a line
/// boundary when long.
pub fn diff_block(detail: &str) -> String {
    let (shown, omitted) = truncate_lines(detail, MAX_DIFF_LINES, MAX_DIFF_UNITS);
    // Only the lines shown must not close the fence: a run of backticks further down the
    // detail would otherwise make the fence longer than the lines it holds.
    let fence = "`".repeat(longest_backtick_run(shown).max(2) + 1);
    let mut block = format!("{fence}diff\n{}", shown.trim_end_matches('\n'));
    block.push_str(&format!("\n{fence}\n"));
    if omitted > 0 {
        block.push_str(&format!(
            "\n_{omitted} more line{} not shown: run `evalock review` for the whole diff._\n",
            if omitted == 1 { "" } else { "s" }
        ));
    }
    block
}

/// At most `max_lines` lines and `max_units` UTF-16 units, cut at a line boundary; also
/// returns how many lines were left out.
pub fn truncate_lines(text: &str, max_lines: usize, max_units: usize) -> (&str, usize) {
    let total = text.lines().count();
    let (mut end, mut kept, mut units) = (0, 0, 0);
    for line in text.split_inclusive('\n') {
        units += utf16_len(line);
        if kept == max_lines || units > max_units {
            break;
        }
        end += line.len();
        kept += 1;
    }
    if kept == 0 && !text.is_empty() {
        // One enormous line: cut inside it, on a character boundary.
        let mut units = 0;
        end = text
            .char_indices()
            .find(|(_, character)| {
                units += character.len_utf16();
                units > max_units
            })
            .map_or(text.len(), |(index, _)| index);
        return (&text[..end], total.saturating_sub(1));
    }
    (&text[..end], total - kept)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::{Location, Subject, Suggestion};
    use crate::rules::RuleId;

    /// The strictest way GitHub may count a body: in UTF-16 code units.
    fn units(text: &str) -> usize {
        text.encode_utf16().count()
    }

    fn regressed() -> Finding {
        Finding::new(
            RuleId::Regressed,
            Subject::case("support", "refund"),
            "case `refund` passed at baseline and fails now",
        )
        .at(Location::line("evals/support.jsonl", 3))
        .detail("-Sorry, I need your order id.\n+Sure, refunded!\n")
    }

    #[test]
    fn a_suggestion_is_offered_only_on_its_own_line_of_the_new_side() {
        let mut edited = Finding::new(
            RuleId::CaseEditedInPlace,
            Subject::case("support", "refund"),
            "case `refund` was edited in place",
        )
        .at(Location::line("evals/support.jsonl", 3));
        edited.suggestion = Some(Suggestion {
            line: 3,
            text: "{\"id\": \"refund\", \"version\": 2, \"note\": \"```\"}".into(),
        });
        let lines = |side, start_line, line| Anchor::Lines {
            path: "proj/evals/support.jsonl".into(),
            side,
            start_line,
            line,
        };
        let body = comment_body(
            std::slice::from_ref(&edited),
            &lines(Side::Right, 3, 3),
            "proj",
        );
        // The fence outlasts the backticks in the line.
        assert!(
            body.contains(
                "````suggestion\n{\"id\": \"refund\", \"version\": 2, \"note\": \"```\"}\n````\n"
            ),
            "{body}"
        );
        for anchor in [
            lines(Side::Left, 3, 3),
            lines(Side::Right, 2, 3),
            lines(Side::Right, 4, 4),
            Anchor::File {
                path: "proj/evals/support.jsonl".into(),
            },
            Anchor::Lines {
                path: "proj/evals/other.jsonl".into(),
                side: Side::Right,
                start_line: 3,
                line: 3,
            },
        ] {
            let body = comment_body(std::slice::from_ref(&edited), &anchor, "proj");
            assert!(!body.contains("suggestion"), "{anchor:?}: {body}");
        }
    }

    #[test]
    fn a_body_names_the_rule_shows_the_diff_the_fix_and_the_marker() {
        let finding = regressed();
        let anchor = Anchor::Lines {
            path: "proj/evals/support.jsonl".into(),
            side: Side::Right,
            start_line: 3,
            line: 3,
        };
        let body = comment_body(std::slice::from_ref(&finding), &anchor, "proj");
        assert!(
            body.starts_with("**EL501 regressed** (error)\n\ncase `refund` passed"),
            "{body}"
        );
        assert!(
            body.contains("```diff\n-Sorry, I need your order id.\n+Sure, refunded!\n```\n"),
            "{body}"
        );
        assert!(body.contains("**Fix:** read the diff with `evalock review`"));
        assert_eq!(
            marker_fingerprints(&body),
            Some(vec![finding.fingerprint.as_str()])
        );
        assert!(
            !body.contains("Shown on this change"),
            "anchored on its own line: no note"
        );
    }

    #[test]
    fn a_body_anchored_elsewhere_says_why() {
        let anchor = Anchor::Lines {
            path: "prompts/support.txt".into(),
            side: Side::Right,
            start_line: 2,
            line: 4,
        };
        let body = comment_body(&[regressed()], &anchor, "");
        assert!(
            body.contains(
                "case `refund` of suite `support` (`evals/support.jsonl:3`) did not change"
            ),
            "{body}"
        );
        let file_anchor = Anchor::File {
            path: "evals/support.jsonl".into(),
        };
        assert!(comment_body(&[regressed()], &file_anchor, "")
            .contains("At `evals/support.jsonl:3`, outside the lines"));
    }

    /// A case id edited in place is the pull request author's text: in the comment it
    /// must stay text, never a team mention or an image.
    #[test]
    fn case_ids_and_messages_are_escaped_in_a_body() {
        let id = "x` @octo-org/everyone <img src=x> `y";
        let finding = Finding::new(
            RuleId::CaseEditedInPlace,
            Subject::case("support", id),
            format!("case `{id}` (evals/support.jsonl:3) was edited in place"),
        )
        .at(Location::line("evals/support.jsonl", 3))
        .help(format!(
            "bump `version` of `{id}`, then\n- run `evalock lock`"
        ));
        let anchor = Anchor::Lines {
            path: "prompts/support.txt".into(),
            side: Side::Right,
            start_line: 1,
            line: 1,
        };
        let body = comment_body(std::slice::from_ref(&finding), &anchor, "");
        assert!(
            body.contains("\n\ncase `x` @\u{200B}octo-org/everyone \\<img src=x\\> `y` (evals/support.jsonl:3) was edited in place\n"),
            "{body}"
        );
        assert!(
            body.contains("**Fix:** bump `version` of `x` @\u{200B}octo-org/everyone \\<img src=x\\> `y`, then - run `evalock lock`\n"),
            "{body}"
        );
        // In the note the id is one code span, where nothing mentions or renders.
        assert!(
            body.contains(
                "because case ``x` @octo-org/everyone <img src=x> `y`` of suite `support`"
            ),
            "{body}"
        );
        let outside_code: String = body.split("``").step_by(2).collect();
        assert!(!outside_code.contains("@octo-org"), "{body}");
    }

    #[test]
    fn long_diffs_are_cut_at_a_line_and_fences_survive_backticks() {
        let detail: String = (0..500)
            .map(|index| format!("+line {index} ```` ticks\n"))
            .collect();
        let block = diff_block(&detail);
        assert!(block.starts_with("`````diff\n+line 0"), "{}", &block[..40]);
        assert!(block.contains("+line 119 "));
        assert!(!block.contains("+line 120 "));
        assert!(block.contains("380 more lines not shown: run `evalock review`"));
    }

    #[test]
    fn every_body_stays_under_the_limit_with_its_marker() {
        let huge_message = "é".repeat(100_000);
        let finding = Finding::new(RuleId::Failing, Subject::case("s", "c"), huge_message)
            .detail("x".repeat(200_000));
        let body = comment_body(std::slice::from_ref(&finding), &Anchor::Summary, "");
        assert!(units(&body) < MAX_BODY_UNITS);
        assert_eq!(
            marker_fingerprints(&body),
            Some(vec![finding.fingerprint.as_str()])
        );
        let one_long_line = "y".repeat(50_000);
        let (shown, omitted) = truncate_lines(&one_long_line, 10, 100);
        assert_eq!((shown.len(), omitted), (100, 0));
    }

    /// GitHub may count a body in UTF-16 units, where an emoji is two: a body of
    /// findings full of emoji stays under the limit counted that way, and is cut on
    /// character boundaries.
    #[test]
    fn bodies_full_of_emoji_stay_under_the_limit_in_utf16_units() {
        let emoji = |case: &str| {
            Finding::new(
                RuleId::Regressed,
                Subject::case("s", case),
                "\u{1F600}".repeat(100_000),
            )
            .help("\u{1F4A9}".repeat(10_000))
            .detail(
                (0..200)
                    .map(|_| format!("+{}\n", "\u{1F525}".repeat(400)))
                    .collect::<String>(),
            )
        };
        let one = comment_body(&[emoji("a")], &Anchor::Summary, "");
        assert!(units(&one) < MAX_BODY_UNITS, "{}", units(&one));
        let findings: Vec<Finding> = (0..MAX_FINDINGS_PER_COMMENT)
            .map(|index| emoji(&format!("c{index}")))
            .collect();
        let body = comment_body(&findings, &Anchor::Summary, "");
        assert!(units(&body) < MAX_BODY_UNITS, "{}", units(&body));
        assert!(body.starts_with("**EL501 regressed** (error)\n\n\u{1F600}"));
        assert_eq!(
            marker_fingerprints(&body).map(|fingerprints| fingerprints.len()),
            Some(MAX_FINDINGS_PER_COMMENT)
        );
        // A diff of one enormous line of emoji is cut between two of them.
        let line = "\u{1F600}".repeat(50_000);
        let (shown, omitted) = truncate_lines(&line, 10, 101);
        assert_eq!((units(shown), shown.chars().count(), omitted), (100, 50, 0));
        let lines = format!("{}\n", "\u{1F600}".repeat(60)).repeat(10);
        assert_eq!(truncate_lines(&lines, 10, 121).1, 9);
    }

    #[test]
    fn markers_are_read_back_only_when_well_formed() {
        assert_eq!(
            marker_fingerprints("a\n<!-- evalock:fp=abc123 -->\n"),
            Some(vec!["abc123"])
        );
        // Markers name their project; older ones, without a project, still read.
        assert_eq!(
            read_marker(&fingerprint_marker(&["abc123"], "ai/evals")),
            Some(Marker {
                fingerprints: vec!["abc123"],
                project: Some("ai/evals")
            })
        );
        assert_eq!(
            read_marker(&fingerprint_marker(&["abc123"], "")).and_then(|marker| marker.project),
            Some("")
        );
        assert_eq!(
            read_marker("<!-- evalock:fp=abc123 -->").and_then(|marker| marker.project),
            None
        );
        // Findings at one place share a comment: its marker lists all their fingerprints.
        assert_eq!(
            marker_fingerprints(&fingerprint_marker(&["abc123", "def456"], "")),
            Some(vec!["abc123", "def456"])
        );
        assert_eq!(marker_fingerprints("<!-- evalock:fp=a b -->"), None);
        assert_eq!(marker_fingerprints("<!-- evalock:fp=a,,b -->"), None);
        assert_eq!(marker_fingerprints("<!-- evalock:fp=abc"), None);
        assert_eq!(marker_fingerprints("plain reply"), None);
        // A suggested line that holds a marker of its own does not stand for the comment.
        assert_eq!(
            marker_fingerprints(
                "```suggestion\n{\"id\": \"<!-- evalock:fp=forged -->\"}\n```\n<!-- evalock:fp=abc123 -->\n"
            ),
            Some(vec!["abc123"])
        );
    }

    #[test]
    fn findings_at_one_place_share_a_body_the_most_severe_first() {
        let edited = Finding::new(
            RuleId::CaseEditedInPlace,
            Subject::case("support", "refund"),
            "case `refund` was edited in place",
        )
        .at(Location::line("evals/support.jsonl", 3));
        let unlocked = Finding::new(
            RuleId::CaseUnlocked,
            Subject::case("support", "refund"),
            "case `refund` is not in the lock",
        )
        .at(Location::line("evals/support.jsonl", 3));
        let anchor = Anchor::Lines {
            path: "evals/support.jsonl".into(),
            side: Side::Right,
            start_line: 3,
            line: 3,
        };
        let body = comment_body(&[edited.clone(), unlocked.clone()], &anchor, "");
        let (first, second) = (
            body.find("**EL102 case-edited-in-place**").expect("EL102"),
            body.find("**EL101 case-unlocked**").expect("EL101"),
        );
        assert!(first < second && body.starts_with("**EL102"), "{body}");
        assert_eq!(body.matches("**Fix:**").count(), 2, "{body}");
        assert_eq!(body.matches("<!-- evalock:fp=").count(), 1, "{body}");
        assert_eq!(
            marker_fingerprints(&body),
            Some(vec![
                edited.fingerprint.as_str(),
                unlocked.fingerprint.as_str()
            ])
        );
    }

    #[test]
    fn a_shared_body_stays_under_the_limit_and_shows_what_fits_in_full() {
        let huge = |case: &str| {
            Finding::new(
                RuleId::Failing,
                Subject::case("s", case),
                "é".repeat(100_000),
            )
            .detail("x".repeat(200_000))
        };
        let small = Finding::new(
            RuleId::CaseUnlocked,
            Subject::case("s", "small"),
            "small one",
        );
        let mut findings = vec![huge("a"), small.clone()];
        findings.extend((0..MAX_FINDINGS_PER_COMMENT - 2).map(|index| huge(&format!("c{index}"))));
        let body = comment_body(&findings, &Anchor::Summary, "");
        assert!(units(&body) < MAX_BODY_UNITS);
        assert!(
            body.contains("small one"),
            "a finding that fits is shown whole"
        );
        // The first long ones fit whole beside the small one, the rest by rule only.
        assert!(body.starts_with("**EL502 failing** (error)\n\néé"));
        assert_eq!(
            body.matches("_This finding is too long for a comment")
                .count(),
            MAX_FINDINGS_PER_COMMENT - 3
        );
        assert_eq!(
            marker_fingerprints(&body).map(|fingerprints| fingerprints.len()),
            Some(MAX_FINDINGS_PER_COMMENT)
        );
    }
}

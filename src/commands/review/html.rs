//! `evalock review --format html`: one self-contained page (no script, no request: a
//! content security policy forbids both) with the run's pass rates per suite and stratum,
//! its behaviour matrix against last-good, and each moved, regressed or improved case with
//! where its tool calls part from last-good and its completion beside last-good's.

use super::{Review, ReviewItem};
use crate::run::compare::Verdict;
use crate::run::diff::display_lines;
use similar::{ChangeTag, TextDiff};
use std::fmt::Write;

const STYLE: &str = "\
body{font:14px/1.45 system-ui,sans-serif;margin:2rem;color:#1f2328;background:#fff}\
h1{font-size:1.5rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #d0d7de}\
table{border-collapse:collapse;margin:.5rem 0}td,th{border:1px solid #d0d7de;padding:.2rem .5rem;text-align:left;vertical-align:top}\
th{background:#f6f8fa}.bar{display:inline-block;height:.7rem;background:#1a7f37;vertical-align:middle}\
.REGRESS,.ERROR,.GONE{color:#cf222e;font-weight:600}.GAIN,.NEW{color:#1a7f37;font-weight:600}\
.case{border:1px solid #d0d7de;border-radius:6px;padding:.5rem 1rem;margin:1rem 0}\
.side{width:100%;table-layout:fixed;font:12px/1.4 ui-monospace,monospace}.side td{white-space:pre-wrap;word-break:break-word}\
.del{background:#ffebe9}.ins{background:#dafbe1}.none{background:#f6f8fa}.note{color:#59636e}";

pub fn render(review: &Review) -> String {
    let results = &review.results;
    let mut out = String::from("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
    out.push_str("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">");
    let _ = write!(
        out,
        "<title>evalock review: {}</title><style>{STYLE}</style></head><body>",
        escape(&results.source)
    );
    let _ = write!(
        out,
        "<h1>evalock review</h1><p>Run of {} ({} cases).</p>",
        escape(&results.source),
        results.cases.len()
    );
    pass_rates(&mut out, review);
    matrix(&mut out, review);
    let _ = write!(out, "<h2>Cases ({})</h2>", review.items.len());
    if review.items.is_empty() {
        out.push_str("<p>Nothing moved, regressed or improved.</p>");
    }
    for item in &review.items {
        case(&mut out, item);
    }
    out.push_str("</body></html>\n");
    out
}

fn pass_rates(out: &mut String, review: &Review) {
    out.push_str("<h2>Pass rates</h2><table><tr><th>suite</th><th>stratum</th><th>passing</th><th>rate</th></tr>");
    let mut suites: std::collections::BTreeMap<(&str, Option<&str>), (usize, usize)> =
        std::collections::BTreeMap::new();
    // Errors are not judged: they have no verdict to count.
    for case in review
        .results
        .cases
        .iter()
        .filter(|case| case.status != crate::run::results::Status::Error)
    {
        let passing = usize::from(case.status.is_passing());
        let mut add = |key| {
            let entry: &mut (usize, usize) = suites.entry(key).or_default();
            entry.0 += passing;
            entry.1 += 1;
        };
        add((case.suite.as_str(), None));
        if let Some(stratum) = case.stratum.as_deref() {
            add((case.suite.as_str(), Some(stratum)));
        }
    }
    for ((suite, stratum), (passing, judged)) in suites {
        let rate = 100.0 * passing as f64 / judged.max(1) as f64;
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{passing}/{judged}</td><td><span class=\"bar\" style=\"width:{:.0}px\"></span> {rate:.1} %</td></tr>",
            escape(suite),
            stratum.map_or("<em>all</em>".to_owned(), escape),
            rate
        );
    }
    out.push_str("</table>");
}

fn matrix(out: &mut String, review: &Review) {
    let matrix = &review.matrix;
    out.push_str("<h2>Behaviour against last-good</h2>");
    for change in &matrix.contexts_differ {
        let _ = write!(
            out,
            "<p class=\"note\">contexts differ: {}</p>",
            escape(change)
        );
    }
    let verdicts = [
        Verdict::Regress,
        Verdict::Error,
        Verdict::Gone,
        Verdict::Gain,
        Verdict::New,
        Verdict::Same,
    ];
    out.push_str("<table><tr><th>suite</th>");
    for verdict in verdicts {
        let _ = write!(out, "<th class=\"{0}\">{0}</th>", verdict.as_str());
    }
    out.push_str("</tr>");
    for (suite, tally) in &matrix.per_suite {
        let _ = write!(out, "<tr><td>{}</td>", escape(suite));
        for verdict in verdicts {
            let _ = write!(
                out,
                "<td>{}</td>",
                tally.get(&verdict).copied().unwrap_or(0)
            );
        }
        out.push_str("</tr>");
    }
    out.push_str("</table>");
    let rows: Vec<String> = matrix
        .cases
        .iter()
        .flat_map(|case| {
            case.behaviours
                .iter()
                .filter(|row| row.verdict != Verdict::Same)
                .map(move |row| {
                    let held = |held: Option<bool>| match held {
                        Some(true) => "pass",
                        Some(false) => "fail",
                        None => "-",
                    };
                    format!(
                        "<tr><td>{}/{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"{verdict}\">{verdict}</td></tr>",
                        escape(&case.suite),
                        escape(&case.case_id),
                        escape(&row.behaviour),
                        held(row.old),
                        held(row.new),
                        verdict = row.verdict.as_str(),
                    )
                })
        })
        .collect();
    if !rows.is_empty() {
        out.push_str("<table><tr><th>case</th><th>behaviour</th><th>last-good</th><th>this run</th><th>verdict</th></tr>");
        for row in rows {
            out.push_str(&row);
        }
        out.push_str("</table>");
    }
}

fn case(out: &mut String, item: &ReviewItem) {
    let _ = write!(
        out,
        "<section class=\"case\"><h3><span class=\"{}\">{}</span> {}/{}</h3><p class=\"note\">{}</p>",
        verdict_class(&item.status.to_string()),
        escape(&item.status.to_string()),
        escape(&item.suite),
        escape(&item.case_id),
        escape(&item.at)
    );
    if !item.reasons.is_empty() {
        let _ = write!(out, "<p>reasons: {}</p>", escape(&item.reasons.join(", ")));
    }
    if let Some(trajectory) = &item.trajectory {
        let _ = write!(
            out,
            "<p><strong>trajectory</strong>: {}</p>",
            escape(trajectory)
        );
    }
    if let Some(note) = &item.note {
        let _ = write!(out, "<p class=\"note\">{}</p>", escape(note));
    }
    match &item.baseline {
        Some(baseline) => side_by_side(out, baseline, &item.current),
        None => out.push_str("<p class=\"note\">no last-good completion to compare with</p>"),
    }
    out.push_str("</section>");
}

/// The two completions laid out for reading, line beside line: removed lines on the left
/// in red, added ones on the right in green.
fn side_by_side(out: &mut String, baseline: &str, current: &str) {
    let (old, new) = (display_lines(baseline), display_lines(current));
    let diff = TextDiff::from_lines(&old, &new);
    out.push_str("<table class=\"side\"><tr><th>last-good</th><th>this run</th></tr>");
    let (mut left, mut right): (Vec<String>, Vec<String>) = (Vec::new(), Vec::new());
    let flush = |out: &mut String, left: &mut Vec<String>, right: &mut Vec<String>| {
        for index in 0..left.len().max(right.len()) {
            let cell = |side: &[String], class: &str| match side.get(index) {
                Some(line) => format!("<td class=\"{class}\">{}</td>", escape(line)),
                None => "<td class=\"none\"></td>".to_owned(),
            };
            let _ = write!(out, "<tr>{}{}</tr>", cell(left, "del"), cell(right, "ins"));
        }
        left.clear();
        right.clear();
    };
    for change in diff.iter_all_changes() {
        let line = change.value().trim_end_matches('\n').to_owned();
        match change.tag() {
            ChangeTag::Delete => left.push(line),
            ChangeTag::Insert => right.push(line),
            ChangeTag::Equal => {
                flush(out, &mut left, &mut right);
                let line = escape(&line);
                let _ = write!(out, "<tr><td>{line}</td><td>{line}</td></tr>");
            }
        }
    }
    flush(out, &mut left, &mut right);
    out.push_str("</table>");
}

fn verdict_class(status: &str) -> &'static str {
    match status {
        "REGRESSED" | "FAIL" | "ERROR" => "REGRESS",
        "IMPROVED" => "GAIN",
        _ => "SAME",
    }
}

/// Text as HTML text or attribute content.
fn escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for character in text.chars() {
        match character {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&#39;"),
            _ => escaped.push(character),
        }
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn untrusted_text_stays_text() {
        assert_eq!(
            escape("<script>alert('x')</script> & \"y\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;y&quot;"
        );
    }

    #[test]
    fn completions_are_laid_side_by_side() {
        let mut out = String::new();
        side_by_side(&mut out, "one\ntwo\nthree", "one\nTWO\nthree\nfour");
        assert!(out.contains("<tr><td>one</td><td>one</td></tr>"), "{out}");
        assert!(
            out.contains("<tr><td class=\"del\">two</td><td class=\"ins\">TWO</td></tr>"),
            "{out}"
        );
        assert!(
            out.contains("<tr><td class=\"none\"></td><td class=\"ins\">four</td></tr>"),
            "{out}"
        );
    }
}

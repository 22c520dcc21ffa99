//! Workflow commands (`::error file=…::…`) for when nothing can be posted: GitHub shows
//! at most 10 errors and 10 warnings per step, so the rest are counted in one notice.
//!
//! Stand-in until `report::github` (the workflow-commands reporter) is on main.

use crate::report::Report;
use crate::rules::Severity;

const PER_LEVEL: usize = 10;

pub fn render(report: &Report) -> String {
    let mut text = String::new();
    let mut shown = [0usize; 3];
    let mut left_out = 0;
    for finding in &report.findings {
        let (level, slot) = match finding.severity {
            Severity::Refuse | Severity::Error => ("error", 0),
            Severity::Warn => ("warning", 1),
            Severity::Note => ("notice", 2),
        };
        if shown[slot] == PER_LEVEL {
            left_out += 1;
            continue;
        }
        shown[slot] += 1;
        let mut properties = Vec::new();
        if let Some(location) = &finding.location {
            properties.push(format!("file={}", escape_property(&location.path)));
            if let Some(line) = location.line {
                properties.push(format!("line={line}"));
                properties.push(format!("endLine={}", location.end_line.unwrap_or(line)));
            }
        }
        properties.push(format!(
            "title={}",
            escape_property(&format!("{} {}", finding.rule.id(), finding.rule.name()))
        ));
        let message = format!("{}\nfix: {}", finding.message, finding.help);
        text.push_str(&format!(
            "::{level} {}::{}\n",
            properties.join(","),
            escape_data(&message)
        ));
    }
    if left_out > 0 {
        text.push_str(&format!(
            "::notice::{left_out} more findings are not annotated: see the step summary\n"
        ));
    }
    text
}

fn escape_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::{Finding, Location, Subject};
    use crate::rules::RuleId;

    #[test]
    fn caps_each_level_and_escapes() {
        let mut findings: Vec<Finding> = (0..12)
            .map(|index| {
                Finding::new(
                    RuleId::Regressed,
                    Subject::case("s", &format!("c{index}")),
                    "50% worse\nnow",
                )
            })
            .collect();
        findings.push(
            Finding::new(RuleId::BaselineMissing, Subject::case("s", "w"), "w").at(Location::span(
                "a,b:c.jsonl",
                2,
                3,
            )),
        );
        let text = render(&Report::new("check", "x".into(), None, findings));
        assert_eq!(text.matches("::error ").count(), 10);
        assert!(
            text.contains("::error title=EL501 regressed::50%25 worse%0Anow%0Afix: "),
            "{text}"
        );
        assert!(
            text.contains(
                "::warning file=a%2Cb%3Ac.jsonl,line=2,endLine=3,title=EL404 baseline-missing::w"
            ),
            "{text}"
        );
        assert!(
            text.ends_with("::notice::2 more findings are not annotated: see the step summary\n")
        );
    }
}

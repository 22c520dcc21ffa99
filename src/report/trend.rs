//! A pass-rate trend along the first-parent history (computed by
//! [`crate::commands::trend`]) and its Mermaid charts for the step summary and the sticky
//! pull-request comment, which GitHub renders as pictures.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Trend {
    /// Each point's label, oldest first: a commit's short id, then `this run`.
    pub points: Vec<String>,
    /// By suite.
    pub suites: BTreeMap<String, SuiteTrend>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuiteTrend {
    /// Pass rate in percent at each point; `None` where the suite had no baseline.
    pub rates: Vec<Option<f64>>,
    /// The same by stratum.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub strata: BTreeMap<String, Vec<Option<f64>>>,
}

/// Most suites charted; the others are left to the table.
const MAX_CHARTS: usize = 6;
/// Most rows of the table (suites and strata), so that hundreds of suites keep the
/// comment under GitHub's size limit.
const MAX_ROWS: usize = 60;

/// Mermaid line charts (GitHub renders them), one per suite whose rate moved along the
/// points (else the first few), then the rates by stratum as a table.
pub fn mermaid(trend: &Trend) -> String {
    use crate::report::markdown::escape::{code, inline_cell, table_cell};
    use std::fmt::Write;
    let moved = |rates: &[Option<f64>]| {
        let known: Vec<f64> = rates.iter().flatten().copied().collect();
        known
            .windows(2)
            .any(|pair| (pair[0] - pair[1]).abs() > f64::EPSILON)
    };
    let mut charted: Vec<(&String, &SuiteTrend)> = trend
        .suites
        .iter()
        .filter(|(_, suite)| moved(&suite.rates))
        .collect();
    if charted.is_empty() {
        charted = trend.suites.iter().collect();
    }
    charted.truncate(MAX_CHARTS);
    let labels: Vec<String> = trend
        .points
        .iter()
        .map(|point| format!("\"{}\"", mermaid_text(point)))
        .collect();
    let mut text = format!(
        "### Pass rate along the first-parent history\n\n{} points: the baselines of the last {} commits{}.\n\n",
        trend.points.len(),
        trend.points.iter().filter(|point| *point != "this run").count(),
        match trend.points.last().map(String::as_str) {
            Some("this run") => ", then this run",
            _ => "",
        }
    );
    for (suite, line) in &charted {
        // A line cannot break: it starts at the suite's first baseline, and a commit
        // without one keeps the rate before it.
        let Some(first) = line.rates.iter().position(Option::is_some) else {
            continue;
        };
        let mut last = 0.0;
        let values: Vec<String> = line.rates[first..]
            .iter()
            .map(|rate| {
                last = rate.unwrap_or(last);
                format!("{last:.1}")
            })
            .collect();
        let _ = write!(
            text,
            "```mermaid\nxychart-beta\n    title \"{}: pass rate (%)\"\n    x-axis [{}]\n    y-axis \"pass rate (%)\" 0 --> 100\n    line [{}]\n```\n\n",
            mermaid_text(suite),
            labels[first..].join(", "),
            values.join(", ")
        );
    }
    let rows: Vec<String> = trend
        .suites
        .iter()
        .flat_map(|(suite, line)| {
            std::iter::once((suite, None, &line.rates)).chain(
                line.strata
                    .iter()
                    .map(move |(stratum, rates)| (suite, Some(stratum), rates)),
            )
        })
        .map(|(suite, stratum, rates)| {
            let cells: Vec<String> = rates
                .iter()
                .map(|rate| rate.map_or("–".to_owned(), |rate| format!("{rate:.0} %")))
                .collect();
            format!(
                "| {} | {} | {} |",
                table_cell(&code(suite)),
                stratum.map_or("all".to_owned(), |stratum| inline_cell(stratum)),
                cells.join(" | ")
            )
        })
        .collect();
    let more = rows.len().saturating_sub(MAX_ROWS);
    let mut rows = rows;
    rows.truncate(MAX_ROWS);
    if more > 0 {
        rows.push(format!(
            "| … {more} more rows | | {} |",
            vec![""; trend.points.len().saturating_sub(1)].join(" | ")
        ));
    }
    let header: Vec<String> = trend
        .points
        .iter()
        .map(|point| inline_cell(point))
        .collect();
    let _ = write!(
        text,
        "<details><summary>Pass rate by suite and stratum</summary>\n\n| suite | stratum | {} |\n| --- | --- |{}\n{}\n\n</details>\n\n",
        header.join(" | "),
        " ---: |".repeat(trend.points.len()),
        rows.join("\n")
    );
    text
}

/// Text inside a Mermaid string: no quote, backtick or line break can end it.
fn mermaid_text(text: &str) -> String {
    text.chars()
        .map(|character| match character {
            '"' | '`' | '\n' | '\r' | '#' | ';' => ' ',
            other => other,
        })
        .take(60)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Trend {
        Trend {
            points: vec!["1a2b3c4".into(), "5d6e7f8".into(), "this run".into()],
            suites: BTreeMap::from([
                (
                    "support".to_owned(),
                    SuiteTrend {
                        rates: vec![Some(100.0), Some(100.0), Some(81.8)],
                        strata: BTreeMap::from([(
                            "refund".to_owned(),
                            vec![Some(100.0), None, Some(50.0)],
                        )]),
                    },
                ),
                (
                    "steady\"`".to_owned(),
                    SuiteTrend {
                        rates: vec![Some(90.0), Some(90.0), Some(90.0)],
                        strata: BTreeMap::new(),
                    },
                ),
            ]),
        }
    }

    #[test]
    fn a_suite_whose_rate_moved_is_charted_and_every_stratum_is_tabled() {
        let text = mermaid(&sample());
        assert!(text.contains("```mermaid\nxychart-beta\n    title \"support: pass rate (%)\"\n    x-axis [\"1a2b3c4\", \"5d6e7f8\", \"this run\"]\n    y-axis \"pass rate (%)\" 0 --> 100\n    line [100.0, 100.0, 81.8]\n```"), "{text}");
        assert!(
            !text.contains("title \"steady"),
            "a steady suite is not charted when another moved: {text}"
        );
        assert!(
            text.contains("| `support` | refund | 100 % | – | 50 % |"),
            "{text}"
        );
        assert!(text.contains("| all | 90 % | 90 % | 90 % |"), "{text}");
    }

    #[test]
    fn names_cannot_end_a_mermaid_string() {
        assert_eq!(mermaid_text("a\"b`c\nd"), "a b c d");
    }
}

//! Envelope pins (the seeds' "The Completion Matched. The Envelope Did Not."): a case
//! that still passes can still have become fatter or slower than its last-good run. Size
//! (characters of the normalized completion) and time (milliseconds) are compared with
//! last-good, each with slack: +10 % and +15 % by default, and growth by fewer than 16
//! characters never counts. Time is pinned only where
//! last-good took a second or more: below that, process start-up and scheduling are most
//! of what is measured. Tokens, when the completer's envelope reports `usage:
//! {input_tokens, output_tokens}`, are compared as size is: output tokens, +10 %, growth by
//! fewer than 16 never counts. A channel past its slack is a breach that names it.

use serde::{Deserialize, Serialize};

/// The slack envelope comparisons allow before they call a change a breach.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Slack {
    /// +10 %: a completion may grow by this share of its size.
    pub size: f64,
    /// Growth by fewer characters than this is never a breach (`Yes` to `Yes.` is +33 %).
    pub size_floor_chars: u64,
    /// +15 %: a case may take this share longer.
    pub latency: f64,
    /// Time is pinned only where last-good took at least this many milliseconds.
    pub latency_floor_ms: u64,
}

impl Default for Slack {
    fn default() -> Self {
        Slack {
            size: crate::project::config::EnvelopeSlack::DEFAULT_SIZE,
            size_floor_chars: 16,
            latency: crate::project::config::EnvelopeSlack::DEFAULT_TIME,
            latency_floor_ms: 1000,
        }
    }
}

/// An envelope channel that grew past its slack.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Breach {
    /// `size` (characters) or `time` (milliseconds).
    pub channel: &'static str,
    pub old: u64,
    pub new: u64,
    pub slack: f64,
}

impl Breach {
    /// `size 812 chars against 640 at last-good (+27 %, slack 10 %)`.
    pub fn describe(&self) -> String {
        let unit = match self.channel {
            "size" => "chars",
            "tokens" => "output tokens",
            _ => "ms",
        };
        let growth = match self.old {
            0 => String::new(),
            old => format!("+{:.0} %, ", (self.new as f64 / old as f64 - 1.0) * 100.0),
        };
        format!(
            "{} {} {unit} against {} at last-good ({growth}slack {:.0} %)",
            self.channel,
            self.new,
            self.old,
            self.slack * 100.0
        )
    }
}

/// One side of a comparison: the completion's characters, its output tokens and the
/// case's milliseconds, when known.
#[derive(Debug, Clone, Copy, Default)]
pub struct Envelope {
    pub chars: Option<u64>,
    pub ms: Option<u64>,
    pub tokens: Option<u64>,
}

impl Envelope {
    pub fn of(completion: Option<&str>, ms: Option<u64>) -> Envelope {
        Envelope {
            chars: completion.map(|text| text.chars().count() as u64),
            ms,
            tokens: completion
                .and_then(usage)
                .and_then(|usage| usage.output_tokens),
        }
    }
}

pub use crate::run::results::Usage;

/// The `usage` of a completion that is a JSON envelope reporting whole token counts.
pub fn usage(completion: &str) -> Option<Usage> {
    let trimmed = completion.trim_start();
    if !trimmed.starts_with('{') || !trimmed.contains("\"usage\"") {
        return None;
    }
    let value: serde_json::Value = serde_json::from_str(completion).ok()?;
    let usage = value.get("usage")?;
    let count = |key: &str| usage.get(key).and_then(serde_json::Value::as_u64);
    let found = Usage {
        input_tokens: count("input_tokens"),
        output_tokens: count("output_tokens"),
    };
    (found != Usage::default()).then_some(found)
}

/// The channels of `new` past their slack over `old`.
pub fn breaches(old: Envelope, new: Envelope, slack: &Slack) -> Vec<Breach> {
    let mut found = Vec::new();
    if let (Some(old), Some(new)) = (old.chars, new.chars) {
        if new >= old + slack.size_floor_chars && (new as f64) > (old as f64) * (1.0 + slack.size) {
            found.push(Breach {
                channel: "size",
                old,
                new,
                slack: slack.size,
            });
        }
    }
    if let (Some(old), Some(new)) = (old.tokens, new.tokens) {
        if new >= old + slack.size_floor_chars && (new as f64) > (old as f64) * (1.0 + slack.size) {
            found.push(Breach {
                channel: "tokens",
                old,
                new,
                slack: slack.size,
            });
        }
    }
    if let (Some(old), Some(new)) = (old.ms, new.ms) {
        if old >= slack.latency_floor_ms && (new as f64) > (old as f64) * (1.0 + slack.latency) {
            found.push(Breach {
                channel: "time",
                old,
                new,
                slack: slack.latency,
            });
        }
    }
    found
}

/// Reason codes that say the completion is not the shape its contract asks for: the
/// seeds' schema channel, apart from correctness.
const SCHEMA_REASONS: &[&str] = &[
    "parse_fail",
    "not_object",
    "missing_key:",
    "unexpected_key:",
];

/// The channel a case broke, in the seeds' order: correctness, schema, size (then tokens), time; `None`
/// when it is stable.
pub fn channel(case: &crate::run::results::CaseResult) -> Option<&'static str> {
    let schema = |reason: &String| SCHEMA_REASONS.iter().any(|code| reason.starts_with(code));
    if !case.status.is_passing() {
        return match !case.reasons.is_empty() && case.reasons.iter().all(schema) {
            true => Some("schema"),
            false => Some("correctness"),
        };
    }
    ["size", "tokens", "time"]
        .into_iter()
        .find(|channel| case.envelope.iter().any(|broken| broken == channel))
}

/// `13/14 stable (correctness 1)`: over the cases compared with last-good, how many held
/// every channel and which channels the others broke; `None` when none was compared.
pub fn stable_summary(cases: &[crate::run::results::CaseResult]) -> Option<String> {
    use crate::run::results::BaselineUse;
    let compared: Vec<_> = cases
        .iter()
        .filter(|case| case.baseline == BaselineUse::Compared)
        .collect();
    if compared.is_empty() {
        return None;
    }
    let mut broken: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for case in &compared {
        if let Some(channel) = channel(case) {
            *broken.entry(channel).or_default() += 1;
        }
    }
    let stable = compared.len() - broken.values().sum::<usize>();
    let mut line = format!("{stable}/{} stable", compared.len());
    if !broken.is_empty() {
        let order = ["correctness", "schema", "size", "tokens", "time"];
        let parts: Vec<String> = order
            .iter()
            .filter_map(|channel| {
                broken
                    .get(channel)
                    .map(|count| format!("{channel} {count}"))
            })
            .collect();
        line.push_str(&format!(" ({})", parts.join(", ")));
    }
    Some(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_growth_past_the_slack_is_a_breach() {
        let slack = Slack::default();
        let at = |chars, ms| Envelope {
            chars: Some(chars),
            ms: Some(ms),
            tokens: None,
        };
        assert!(breaches(at(100, 1000), at(110, 1150), &slack).is_empty());
        // A few characters more of a short answer is no breach, however large a share.
        assert!(breaches(at(3, 0), at(4, 0), &slack).is_empty());
        let found = breaches(at(100, 1000), at(200, 2000), &slack);
        assert_eq!(found.len(), 2);
        assert_eq!(
            found[0].describe(),
            "size 200 chars against 100 at last-good (+100 %, slack 10 %)"
        );
        assert_eq!(found[1].channel, "time");
        // A last-good under the floor pins no time: start-up jitter is no breach.
        assert!(breaches(at(100, 300), at(100, 900), &slack).is_empty());
        assert!(breaches(Envelope::default(), at(500, 5000), &slack).is_empty());
    }

    #[test]
    fn output_tokens_the_completer_reports_are_a_channel_of_their_own() {
        let slack = Slack::default();
        let reply = |tokens: u64| {
            format!("{{\"reply\": \"ok\", \"usage\": {{\"input_tokens\": 12, \"output_tokens\": {tokens}}}}}")
        };
        let (old, new) = (reply(200), reply(400));
        let found = breaches(
            Envelope::of(Some(&old), None),
            Envelope::of(Some(&new), None),
            &slack,
        );
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(
            found[0].describe(),
            "tokens 400 output tokens against 200 at last-good (+100 %, slack 10 %)"
        );
        let steady = breaches(
            Envelope::of(Some(&reply(200)), None),
            Envelope::of(Some(&reply(210)), None),
            &slack,
        );
        assert!(steady.is_empty());
        assert_eq!(usage("plain text"), None);
        assert_eq!(
            usage("{\"usage\": {\"input_tokens\": 3}}")
                .unwrap()
                .input_tokens,
            Some(3)
        );
    }
}
